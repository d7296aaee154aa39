"""Benchmark the index client: pages read concurrently, and from a warm cache.

A loopback server (127.0.0.1) answers every page after a 200 ms delay, as a distant
index might. Prints, each the fastest of three runs: one page cold; five pages cold
read one after another (the baseline: what a client without concurrency takes); five
pages cold through ``IndexClient.pages``; five pages from a warm cache. The goal for
five cold pages is at most one delay plus half a delay beyond the warm time (1.5 x 200
ms). Run from the repository root:

    PYTHONPATH=. python3 scripts/bench_index.py
"""

from __future__ import annotations

import http.server
import sys
import tempfile
import threading
import time
from pathlib import Path

from resolver_hook.index import IndexClient

DELAY = 0.2
PAGES = 5
REPEAT = 3
BODY = (
    "<html><body>"
    + "".join(
        f'<a href="torch-2.{i}.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl#sha256={"a" * 64}">'
        f"torch</a>"
        for i in range(200)
    )
    + "</body></html>"
).encode()


class _Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        time.sleep(DELAY)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def best(run: object) -> float:
    assert callable(run)
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    urls = [f"{base}/p{i}/" for i in range(PAGES)]
    try:
        with tempfile.TemporaryDirectory() as tmp:

            def cold() -> IndexClient:
                return IndexClient(allow_insecure=True, cache=False, env={})

            one = best(lambda: cold().page(urls[0]))
            serial = best(lambda: [cold().page(u) for u in urls])
            concurrent = best(lambda: cold().pages(urls))
            warm_client = IndexClient(allow_insecure=True, cache_dir=Path(tmp), env={})
            warm_client.pages(urls)
            warm = best(lambda: warm_client.pages(urls))
    finally:
        httpd.shutdown()
        httpd.server_close()
    print(f"server delay per page         {DELAY * 1000:7.1f} ms")
    print(f"one page, cold                {one * 1000:7.1f} ms")
    print(f"{PAGES} pages, cold, one by one    {serial * 1000:7.1f} ms  (baseline)")
    print(f"{PAGES} pages, cold, concurrent    {concurrent * 1000:7.1f} ms")
    print(f"{PAGES} pages, warm cache          {warm * 1000:7.1f} ms")
    beyond = concurrent - warm
    print(f"cold beyond warm: {beyond / DELAY:.2f} x the delay (goal <= 1.5)")
    return 0 if beyond <= 1.5 * DELAY else 1


if __name__ == "__main__":
    sys.exit(main())
