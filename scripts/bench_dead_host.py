#!/usr/bin/env python3
"""How long `plan` takes to give up on flavour hosts that accept and never answer.

Every host the built-in manifests read (and PyPI) is mirrored to a loopback port that
accepts each connection and then sends nothing: a host that is up but hung. `plan
torch` for a B200 is timed there with the default deadline and with `--timeout 2`,
beside the same plan against a port that refuses connections (a host that is down,
which gives up at once): the baseline, measured in the same run.

Each run is a whole `resolver-hook` process with an empty page cache; the page cache
is a temporary folder. Prints the median of each and its difference to the baseline.
Not a test: the figures go in notes. Goals (issue 44): under 12 s with the default,
under 3 s with `--timeout 2`.

Usage: python3 scripts/bench_dead_host.py [--runs N]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from resolver_hook.manifest import builtin_manifests
from tests.indexreplica import dead_host_flags

TARGET = "linux-x86_64-py312-cuda13.0-sm100"


@contextlib.contextmanager
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and answers nothing, until closed."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def _seconds(flags: list[str], extra: list[str]) -> float:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        env.pop("RESOLVER_HOOK_OFFLINE", None)
        env.pop("RESOLVER_HOOK_TIMEOUT", None)
        argv = [sys.executable, "-m", "resolver_hook", "plan", "torch", "--target", TARGET]
        start = time.perf_counter()
        subprocess.run([*argv, *flags, *extra], env=env, capture_output=True, check=False)
        return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    refused = dead_host_flags(builtin_manifests().values())
    with silent_port() as port:
        hung = [re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{port}", f) for f in refused]
        rows = {
            "host down (baseline)": (refused, []),
            "host hung, default deadline": (hung, []),
            "host hung, --timeout 2": (hung, ["--timeout", "2"]),
        }
        figures = {
            name: [_seconds(f, e) for _ in range(args.runs)] for name, (f, e) in rows.items()
        }
    base = statistics.median(figures["host down (baseline)"])
    print(f"plan torch --target {TARGET}, {args.runs} runs each, whole process, seconds")
    for name, runs in figures.items():
        med = statistics.median(runs)
        print(f"  {name:<30} median {med:6.2f}  (min {min(runs):.2f}, max {max(runs):.2f})"
              f"  baseline +{med - base:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
