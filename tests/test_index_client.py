"""The one index client (resolver_hook.index) against loopback replicas of real pages.

A PyTorch-style PEP 503 HTML page (``#sha256=`` on every link, PEP 658 metadata files)
and a PyPI-style PEP 691 JSON page, served by an http.server bound to 127.0.0.1 that
logs every request it answers and is stopped at the end of each test. Nothing here
reaches beyond this machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.ground import credentials
from resolver_hook.ground.valueclass import fields
from resolver_hook.index import IndexClient, Link, PageError, apply_mirrors, mirrors_from
from resolver_hook.index.cache import CacheEntry, PageCache, links_from_json, links_to_json

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
METADATA = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0+cu130\nRequires-Dist: filelock\nRequires-Dist: nvidia-cublas==13.1.0.3; platform_system == 'Linux'\nRequires-Python: >=3.10\n\nThe description.\n"  # noqa: E501
META_SHA = hashlib.sha256(METADATA).hexdigest()
WHEEL = "torch-2.15.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
OLD = "torch-2.14.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
HA, HB = "a" * 64, "b" * 64

# download.pytorch.org/whl/cu130/torch/ in form (docs/facts.md section 3).
HTML = (
    "<!DOCTYPE html><html><body><h1>Links for torch</h1>\n"
    f'<a href="/whl/cu130/{WHEEL}#sha256={HA}" data-requires-python="&gt;=3.10" '
    f'data-dist-info-metadata="sha256={META_SHA}" data-core-metadata="sha256={META_SHA}">'
    f"{WHEEL}</a><br/>\n"
    f'<a href="/whl/cu130/{OLD}#sha256={HB}" data-yanked="broken CUDA build">{OLD}</a><br/>\n'
    "</body></html>\n"
)
# pypi.org/simple/torch/ asked for with Accept: application/vnd.pypi.simple.v1+json.
JSON = json.dumps(
    {
        "meta": {"api-version": "1.4"},
        "name": "torch",
        "files": [
            {
                "filename": WHEEL.replace("%2B", "+"),
                "url": f"/files/{WHEEL}",
                "hashes": {"sha256": HA},
                "requires-python": ">=3.10",
                "core-metadata": {"sha256": META_SHA},
                "yanked": False,
            },
            {"filename": OLD, "url": f"/files/{OLD}", "hashes": {}, "yanked": "broken"},
        ],
    }
)


class _Quiet(http.server.ThreadingHTTPServer):
    """A client that gave up (the point of several tests) is no traceback on stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    etag: str | None = None


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


class Server:
    """Routes by path; ``/negotiated`` answers JSON or HTML by the request's Accept."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.log: list[Seen] = []
        self.active = 0
        self.most_active = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with owner.lock:
                    owner.log.append(Seen(self.path, dict(self.headers.items())))
                    owner.active += 1
                    owner.most_active = max(owner.most_active, owner.active)
                try:
                    owner.answer(self)
                finally:
                    with owner.lock:
                        owner.active -= 1

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.stopped = threading.Event()
        self.httpd = _Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, h: http.server.BaseHTTPRequestHandler) -> None:
        path = h.path
        if path == "/negotiated/":
            wants_json = JSON_TYPE in h.headers.get("Accept", "")
            route = Route(
                body=(JSON if wants_json else HTML).encode(),
                content_type=JSON_TYPE if wants_json else "text/html",
            )
        else:
            route = self.routes.get(path, Route(status=404, body=b"not here"))
        if route.delay and self.stopped.wait(route.delay):
            return
        if route.etag and h.headers.get("If-None-Match") == route.etag:
            h.send_response(304)
            h.send_header("ETag", route.etag)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(route.status)
        h.send_header("Content-Type", route.content_type)
        h.send_header("Content-Length", str(len(route.body)))
        if route.etag:
            h.send_header("ETag", route.etag)
        for k, v in route.headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(route.body)

    def stop(self) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    s.routes["/whl/cu130/torch/"] = Route(body=HTML.encode(), etag='"v1"')
    s.routes[f"/whl/cu130/{WHEEL}.metadata"] = Route(body=METADATA, content_type="binary/x")
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def client(tmp_path: Path) -> Callable[..., IndexClient]:
    def make(**kw: object) -> IndexClient:
        kw.setdefault("allow_insecure", True)
        kw.setdefault("cache_dir", tmp_path / "cache")
        # No pip configuration of this machine's (its cert would change what is trusted).
        kw["env"] = {"PIP_CONFIG_FILE": os.devnull, **kw.get("env", {})}  # type: ignore[dict-item]
        kw.setdefault("timeout", 5.0)
        return IndexClient(**kw)  # type: ignore[arg-type]

    return make


# --- the two page forms ------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://download.pytorch.org/whl/cu130/torch/",
        "http://127.0.0.1:8080/simple/x/",
        "https://[::1",  # not a URL: the policy says why; not a file either
        "HTTPS://x.org/",
        "file:///srv/simple/x/",
        "FILE:///srv/simple/x/",
        " file:///srv/x/",
        "\tfile:///srv/x/",
        "fi\tle:///srv/x/",
        "file:x",
        "/srv/simple/x/",
        "C:/srv/x/",
    ],
)
def test_a_file_url_is_told_as_urlsplit_tells_it(url: str) -> None:
    """An index's URL is told from its start; any other as ``urlsplit`` reads it."""
    from urllib.parse import urlsplit

    from resolver_hook.index.client import _is_file_url

    try:
        expected = urlsplit(url).scheme.lower() == "file"
    except ValueError:
        expected = False
    assert _is_file_url(url) is expected


def test_html_page_links_hashes_requires_python_yanked_and_metadata(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    page = client().page(server.url + "/whl/cu130/torch/")
    new, old = page.links
    assert new.url == f"{server.url}/whl/cu130/{WHEEL}"
    assert new.filename == WHEEL.replace("%2B", "+")
    assert (new.sha256, new.requires_python, new.is_yanked) == (HA, ">=3.10", False)
    assert new.core_metadata == {"sha256": META_SHA}
    assert (old.sha256, old.yanked, old.core_metadata) == (HB, "broken CUDA build", None)
    assert page.source == "network"
    assert page.fetched is not None


def test_json_is_asked_for_by_accept_and_html_is_the_fallback(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    page = client().page(server.url + "/negotiated/")
    assert JSON_TYPE in server.log[-1].headers["Accept"]
    assert "text/html" in server.log[-1].headers["Accept"]
    new, old = page.links
    assert new.url == f"{server.url}/files/{WHEEL}"
    assert (new.sha256, new.requires_python, new.core_metadata) == (
        HA,
        ">=3.10",
        {"sha256": META_SHA},
    )
    assert (old.hashes, old.yanked) == ({}, "broken")


def test_metadata_is_read_and_hash_checked(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    c = client()
    link = c.page(server.url + "/whl/cu130/torch/").links[0]
    meta = c.metadata(link)
    assert (meta.name, meta.version, meta.requires_python) == ("torch", "2.15.0+cu130", ">=3.10")
    assert meta.requires_dist == ("filelock", "nvidia-cublas==13.1.0.3; platform_system == 'Linux'")


def test_metadata_with_another_hash_is_refused(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    server.routes[f"/whl/cu130/{WHEEL}.metadata"] = Route(body=METADATA + b"Requires-Dist: evil\n")
    c = client()
    link = c.page(server.url + "/whl/cu130/torch/").links[0]
    with pytest.raises(PageError, match=f"its sha256 is .*, not the {META_SHA} the page gives"):
        c.metadata(link)


def test_metadata_not_offered_is_one_error_and_reads_nothing(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    c = client()
    old = c.page(server.url + "/whl/cu130/torch/").links[1]
    before = len(server.log)
    with pytest.raises(PageError, match="the page offers no metadata file"):
        c.metadata(old)
    assert len(server.log) == before


# --- the cache ------------------------------------------------------------------------


def test_a_fresh_page_is_not_asked_for_again(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    url = server.url + "/whl/cu130/torch/"
    client().page(url)
    again = client().page(url)
    assert len(server.log) == 1
    assert again.source == "cache"
    assert again.links == client().page(url).links


def test_refresh_revalidates_and_a_304_keeps_the_page(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    url = server.url + "/whl/cu130/torch/"
    first = client().page(url)
    again = client(refresh=True).page(url)
    assert [s.headers.get("If-None-Match") for s in server.log] == [None, '"v1"']
    assert again.source == "cache"
    assert again.links == first.links


def test_a_stale_page_is_revalidated_and_a_new_one_replaces_it(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    url = server.url + "/whl/cu130/torch/"
    client().page(url)
    cache = PageCache(tmp_path / "cache")
    key = f"page\n{url}"
    entry, _ = cache.get(key)
    assert entry is not None
    cache.put(key, CacheEntry(**{**_fields(entry), "fetched": entry.fetched - 3600}))
    server.routes["/whl/cu130/torch/"] = Route(body=HTML.replace(HB, HA).encode(), etag='"v2"')
    page = client().page(url)
    assert server.log[-1].headers.get("If-None-Match") == '"v1"'
    assert page.source == "network"
    assert page.links[1].sha256 == HA


def _fields(entry: CacheEntry) -> dict[str, object]:
    return {f.name: getattr(entry, f.name) for f in fields(CacheEntry)}


def test_offline_reads_nothing(server: Server, client: Callable[..., IndexClient]) -> None:
    url = server.url + "/whl/cu130/torch/"
    with pytest.raises(PageError, match="not in the page cache, and --offline reads no network"):
        client(offline=True).page(url)
    assert server.log == []
    client().page(url)
    assert client(offline=True, refresh=True).page(url).source == "cache"
    assert len(server.log) == 1


def test_cache_files_are_private_and_a_corrupt_one_is_a_note(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    url = server.url + "/whl/cu130/torch/"
    client().page(url)
    path = PageCache(tmp_path / "cache").path(f"page\n{url}")
    kept = PageCache(tmp_path / "cache").path(f"links\n{url}")
    assert sorted((tmp_path / "cache").iterdir()) == sorted([path, kept])
    assert {p.stat().st_mode & 0o777 for p in (path, kept)} == {0o600}
    path.write_bytes(path.read_bytes().replace(b"Links for", b"Links f0r"))
    kept.unlink()  # the page is parsed again: its body is read, and checked
    c = client()
    assert c.page(url).source == "network"
    assert any("ignored: corrupt (the page does not match its hash)" in n for n in c.notes)


def test_an_entry_of_an_older_release_is_no_entry_and_says_nothing(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    """After an upgrade that changes the files' format, each page written by the older
    release is fetched again, silently (a note for each is noise); another format
    than ours and theirs is still said."""
    url = server.url + "/whl/cu130/torch/"
    client().page(url)
    path = PageCache(tmp_path / "cache").path(f"page\n{url}")
    head, _, body = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    for older, said in ((1, False), (99, True)):
        path.write_bytes(json.dumps({**header, "format": older}).encode() + b"\n" + body)
        c = client(offline=True)
        with pytest.raises(PageError):  # offline, no entry: the page is not there
            c.page(url)
        assert any("not a page cache entry of this version" in n for n in c.notes) is said


@pytest.mark.parametrize("offline", [True, False])
def test_a_page_whose_links_are_kept_is_served_from_its_header_its_body_not_read(
    offline: bool, server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    """A cached page served as it is (offline, or fresh) whose links are kept beside it
    is not read past its header, which names its body's sha256 (and the file's size):
    a ~400 kB page is not read and hashed only to match the links, which are checked
    against their own hash. A file of another size than its header says is read whole
    and checked as before (as is a page whose links were kept for another body)."""
    url = server.url + "/whl/cu130/torch/"
    first = client().page(url)
    path = PageCache(tmp_path / "cache").path(f"page\n{url}")
    whole = path.read_bytes()
    path.write_bytes(whole.replace(b"Links for", b"Links f0r"))  # the same size
    c = client(offline=offline)
    page = c.page(url)
    assert (page.source, page.links, c.notes) == ("cache", first.links, [])
    assert len(server.log) == 1
    path.write_bytes(whole + b" ")  # a body that is not the size its header says
    c = client(offline=True)
    with pytest.raises(PageError, match="not in the page cache"):
        c.page(url)
    assert c.notes == [f"cache {path} ignored: corrupt (the page does not match its hash)"]


def test_links_kept_beside_a_page_are_used_only_for_that_very_page(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    url = server.url + "/whl/cu130/torch/"
    first = client().page(url)
    cache = PageCache(tmp_path / "cache")
    kept = cache.path(f"links\n{url}")
    # Links kept for another body of the page are not used: the page is parsed again.
    other = links_to_json(first.links[:1], "0" * 64)
    cache.put(f"links\n{url}", CacheEntry(url=url, body=other, fetched=0))
    assert client().page(url).links == first.links
    assert links_from_json(cache.get(f"links\n{url}")[0].body, "0" * 64) is None  # type: ignore[union-attr]
    assert kept.exists()


@pytest.mark.parametrize("url", ["https://x.org/simple/a/", "https://x.org/" + "a" * 5000])
def test_a_cache_entry_read_to_its_header_is_the_header_the_whole_read_checks(
    url: str, tmp_path: Path
) -> None:
    """``get(key, whole=False)``: the entry of the header alone (its body not read, the
    header's sha256); a header longer than the first read is read with its body, as
    is any file whose header does not vouch for it (of another size)."""
    cache = PageCache(tmp_path)
    body = b"<a>x</a>" * 1000
    cache.put(f"page\n{url}", CacheEntry(url=url, body=body, fetched=1.0))
    whole, note = cache.get(f"page\n{url}")
    head, _ = cache.get(f"page\n{url}", whole=False)
    assert note is None
    assert whole is not None
    assert head is not None
    assert head.sha256 == whole.sha256 == hashlib.sha256(body).hexdigest()
    assert head.body == (body if len(url) > 4000 else b"")
    assert _fields(head) == {**_fields(whole), "body": head.body}
    path = cache.path(f"page\n{url}")
    path.write_bytes(path.read_bytes()[:-1])
    said = f"cache {path} ignored: corrupt (the page does not match its hash)"
    assert cache.get(f"page\n{url}", whole=False) == (None, said)


def test_the_cache_keeps_its_bound_oldest_first(tmp_path: Path) -> None:
    cache = PageCache(tmp_path, max_bytes=3000)
    for i in range(5):
        cache.put(f"page\n{i}", CacheEntry(url=str(i), body=b"x" * 1000, fetched=i))
        path = cache.path(f"page\n{i}")
        os.utime(path, ns=(i * 10**9, i * 10**9))
    kept = [i for i in range(5) if cache.get(f"page\n{i}")[0] is not None]
    assert kept == [3, 4]


# --- failures, each one PageError within its bound ------------------------------------


def test_500_and_not_an_index_page(server: Server, client: Callable[..., IndexClient]) -> None:
    server.routes["/boom/"] = Route(status=500, body=b"oops")
    server.routes["/logo/"] = Route(body=b"\x89PNG", content_type="image/png")
    with pytest.raises(PageError, match="HTTP 500"):
        client().page(server.url + "/boom/")
    with pytest.raises(PageError, match=r"not an index page \(served as image/png\)"):
        client().page(server.url + "/logo/")


SIGN_IN = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    b'<form method="post" action="/login"><input name="user"><input type="password" name="pw">'
    b'<button>Sign in</button></form><a href="/help">Help</a></body></html>'
)


# Links of every shape the stored form holds: several hashes, none; requires-python,
# yanked with and without a reason, metadata offered with and without a hash, or not.
KEPT_LINKS = (
    Link(url=f"https://h/{WHEEL}", filename=WHEEL, hashes={"sha256": HA, "md5": "c" * 32},
         requires_python=">=3.10", core_metadata={"sha256": META_SHA}),
    Link(url=f"https://h/{OLD}", filename=OLD, yanked="broken CUDA build", core_metadata={}),
    Link(url="https://h/demo-1.0.tar.gz", filename="demo-1.0.tar.gz", yanked=""),
)  # fmt: skip


def test_kept_links_read_back_as_they_were() -> None:
    data = links_to_json(KEPT_LINKS, "0" * 64)
    assert links_from_json(data, "0" * 64) == KEPT_LINKS
    assert links_from_json(links_to_json((), "0" * 64), "0" * 64) == ()
    assert links_from_json(data, "1" * 64) is None  # kept for another body of the page


# Values of a wrong type for each stored field (a JSON object's keys are strings).
WRONG = {
    "url": [None, 1, ["u"], {"u": "v"}],
    "filename": [None, 1.5, ["f"], {}],
    "hashes": [None, "x", [], {"sha256": 1}, {"sha256": None}, {"sha256": ["a"]}],
    "requires_python": [1, True, [">=3"], {}],
    "yanked": [False, True, 0, ["r"], {}],
    "core_metadata": ["sha256=x", [], True, {"sha256": 1}, {"sha256": None}],
}


@pytest.mark.parametrize("row", [0, 1, 2], ids=["first", "middle", "last"])
@pytest.mark.parametrize(
    ("name", "bad"), [(name, bad) for name, bads in WRONG.items() for bad in bads]
)
def test_kept_links_with_a_value_of_a_wrong_type_in_any_row_are_not_used(
    row: int, name: str, bad: object
) -> None:
    """Another process can write the cache folder: a wrong type anywhere (any field of
    any link) makes the kept links unusable, and the page is parsed again."""
    stored = json.loads(links_to_json(KEPT_LINKS, "0" * 64))
    stored["links"][name][row] = bad
    assert links_from_json(json.dumps(stored).encode(), "0" * 64) is None


@pytest.mark.parametrize(
    "change",
    [
        "not an object", "no links", "links a list", "a column missing", "a column more",
        "a column not a list", "a column shorter", "an old parser", "rows of an old parser",
    ],
)  # fmt: skip
def test_kept_links_of_another_shape_are_not_used(change: str) -> None:
    stored = json.loads(links_to_json(KEPT_LINKS, "0" * 64))
    columns = stored["links"]
    if change == "not an object":
        stored = [stored]
    elif change == "no links":
        del stored["links"]
    elif change == "links a list":
        stored["links"] = list(columns.values())
    elif change == "a column missing":
        del columns["yanked"]
    elif change == "a column more":
        columns["size"] = [1, 2, 3]
    elif change == "a column not a list":
        columns["url"] = dict.fromkeys(columns["url"], "x")
    elif change == "a column shorter":
        columns["requires_python"].pop()
    elif change == "an old parser":
        stored["parser"] -= 1
    else:  # the layout of parser 2 (a row per link), numbered as today
        stored["links"] = [[columns[k][i] for k in columns] for i in range(len(KEPT_LINKS))]
    assert links_from_json(json.dumps(stored).encode(), "0" * 64) is None


def test_a_sign_in_page_is_not_an_index_page(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    """A server that wants credentials answers 200 with a form: not an empty project;
    a page with a form beside its package files, and one with no form and no links, are
    pages. Links an earlier parser kept for the very same body are parsed again."""
    server.routes["/login/"] = Route(body=SIGN_IN)
    server.routes["/search/"] = Route(body=HTML.replace("<h1>", "<form></form><h1>").encode())
    server.routes["/empty/"] = Route(body=b"<!DOCTYPE html><html><body></body></html>")
    url = server.url + "/login/"
    cache = PageCache(tmp_path / "cache")
    old = json.dumps({"page_sha256": hashlib.sha256(SIGN_IN).hexdigest(), "links": []})
    cache.put(f"links\n{url}", CacheEntry(url=url, body=old.encode(), fetched=0))
    for asked in (url, url.replace("//", "//user:secret@")):
        with pytest.raises(PageError) as caught:
            client().page(asked)
        assert caught.value.message == (
            f"{url}: not an index page: an HTML form and no package files (a sign-in page?)"
        )
        assert "credentials" in str(caught.value.hint)
    assert len(client().page(server.url + "/search/").links) == 2
    assert client().page(server.url + "/empty/").links == ()


def test_timeout_is_one_error(server: Server, client: Callable[..., IndexClient]) -> None:
    server.routes["/slow/"] = Route(body=HTML.encode(), delay=3)
    start = time.monotonic()
    with pytest.raises(PageError, match=r"no complete answer within 0\.5 s"):
        client(timeout=0.5).page(server.url + "/slow/")
    assert time.monotonic() - start < 2.5


def test_redirect_to_plain_http_is_refused(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    server.routes["/moved/"] = Route(status=302, headers={"Location": "http://example.org/x/"})
    with pytest.raises(UsageError, match=r"redirect: 'http://example\.org/x/' is plain http"):
        client().page(server.url + "/moved/")


def _raw_server(send: Callable[[socket.socket], None]) -> tuple[str, Callable[[], None]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)

    def serve() -> None:
        conn, _ = sock.accept()
        with conn:
            conn.recv(65536)
            with contextlib.suppress(OSError):
                send(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def stop() -> None:
        sock.close()
        thread.join(timeout=5)

    return f"http://127.0.0.1:{sock.getsockname()[1]}/", stop


def test_truncated_body_is_one_error(client: Callable[..., IndexClient]) -> None:
    body = HTML.encode()

    def cut(conn: socket.socket) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body) + 100}\r\n\r\n"
        conn.sendall(head.encode() + body)

    url, stop = _raw_server(cut)
    try:
        with pytest.raises(PageError, match=f"ended after {len(body)} of its {len(body) + 100}"):
            client().page(url)
    finally:
        stop()


def test_a_body_past_the_bound_is_streamed_and_stopped(client: Callable[..., IndexClient]) -> None:
    sent = [0]

    def endless(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
        chunk = b"<a>" * (1 << 16)
        while sent[0] < 256 << 20:
            conn.sendall(chunk)
            sent[0] += len(chunk)

    url, stop = _raw_server(endless)
    try:
        with pytest.raises(PageError, match="larger than 65536 bytes"):
            client().transport.get(url, max_bytes=1 << 16)
    finally:
        stop()
    assert sent[0] < 64 << 20  # the reader stopped; the server could not send it all


def test_a_declared_length_past_the_bound_is_refused_before_reading(
    client: Callable[..., IndexClient],
) -> None:
    def huge(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n<a>")

    url, stop = _raw_server(huge)
    try:
        with pytest.raises(PageError, match="larger than"):
            client().page(url)
    finally:
        stop()


# --- credentials ----------------------------------------------------------------------


def test_credentials_in_the_url_are_sent_never_shown_never_cached(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    host = server.url.removeprefix("http://")
    c = client()
    page = c.page(f"http://user:s3cret@{host}/whl/cu130/torch/")
    assert server.log[-1].headers["Authorization"] == "Basic dXNlcjpzM2NyZXQ="
    assert "s3cret" not in page.url
    assert all("s3cret" not in x.url for x in page.links)
    with pytest.raises(PageError) as caught:
        c.page(f"http://user:s3cret@{host}/nowhere/")
    assert "s3cret" not in str(caught.value)
    assert str(caught.value) == f"http://{host}/nowhere/: HTTP 404 Not Found"
    for path in (tmp_path / "cache").iterdir():
        assert b"s3cret" not in path.read_bytes()
        assert b"user" not in path.read_bytes().partition(b"\n")[0]


def test_credentials_a_page_wrote_into_a_link_are_split_off_and_kept(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    """A link holding ``user:password@`` is kept without them, its host's credentials
    kept; the other links of the page are as they were (an "@" in a path too)."""
    at = f'<a href="https://files.example/a@b/{OLD}">{OLD}</a>'
    body = HTML.replace(
        "</body>", f'<a href="https://tok:pw@files.example/{OLD}#sha256={HB}">{OLD}</a>{at}</body>'
    )
    server.routes["/creds/"] = Route(body=body.encode())
    plain = client().page(server.url + "/whl/cu130/torch/").links
    assert credentials.kept("https://files.example/other") is None
    page = client().page(server.url + "/creds/")
    assert page.links[:2] == plain
    assert page.links[2].url == f"https://files.example/{OLD}"
    assert page.links[3].url == f"https://files.example/a@b/{OLD}"
    assert credentials.kept("https://files.example/other") == ("tok", "pw")


def test_netrc_credentials_go_to_their_host_only(
    server: Server, client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login me password n3trc\n")
    netrc.chmod(0o600)
    port = server.url.rsplit(":", 1)[1]
    server.routes["/away/"] = Route(
        status=302, headers={"Location": f"http://localhost:{port}/whl/cu130/torch/"}
    )
    server.routes["/here/"] = Route(status=301, headers={"Location": "/whl/cu130/torch/"})
    c = client(env={"NETRC": str(netrc)})
    c.page(server.url + "/away/")
    first, second = server.log
    assert first.headers["Authorization"] == "Basic bWU6bjN0cmM="
    assert "Authorization" not in second.headers  # localhost is another host
    c.page(server.url + "/here/")
    assert [s.headers.get("Authorization") for s in server.log[2:]] == ["Basic bWU6bjN0cmM="] * 2


# --- concurrency and mirrors ------------------------------------------------------------


def test_pages_are_fetched_concurrently_and_a_failure_is_a_value(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    urls = []
    for i in range(5):
        server.routes[f"/p{i}/"] = Route(body=HTML.encode(), delay=0.4)
        urls.append(f"{server.url}/p{i}/")
    urls.append(server.url + "/missing/")
    got = client().pages(urls)
    assert list(got) == urls
    assert all(not isinstance(got[u], Exception) for u in urls[:5])
    assert isinstance(got[urls[5]], PageError)
    assert server.most_active >= 3  # the delays overlapped


def test_mirrors_map_pages_and_links_and_obey_the_url_policy(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    env = {"RESOLVER_HOOK_MIRRORS": f"https://download.pytorch.org/whl={server.url}/whl"}
    mirrors = mirrors_from(env, allow_insecure=True)
    page = client(mirrors=mirrors).page("https://download.pytorch.org/whl/cu130/torch/")
    assert server.log[-1].path == "/whl/cu130/torch/"
    assert page.links[0].url == f"{server.url}/whl/cu130/{WHEEL}"
    # A page's links to the upstream itself are mirrored too.
    upstream = HTML.replace('href="/whl/', 'href="https://download.pytorch.org/whl/')
    server.routes["/whl/cu130/whole/"] = Route(body=upstream.encode())
    page = client(mirrors=mirrors).page("https://download.pytorch.org/whl/cu130/whole/")
    assert [x.url for x in page.links] == [
        f"{server.url}/whl/cu130/{WHEEL}",
        f"{server.url}/whl/cu130/{OLD}",
    ]
    assert apply_mirrors("https://download.pytorch.org/whlx/", mirrors) == (
        "https://download.pytorch.org/whlx/"
    )
    with pytest.raises(UsageError, match=r"RESOLVER_HOOK_MIRRORS: mirror .* is plain http"):
        mirrors_from(env)
    with pytest.raises(UsageError, match="expected UPSTREAM=MIRROR"):
        mirrors_from({}, ["https://a.example/"])


def test_a_link_built_by_hand_reads_its_metadata_through_the_mirror(
    server: Server, client: Callable[..., IndexClient]
) -> None:
    mirrors = mirrors_from({}, [f"https://download.pytorch.org/whl={server.url}/whl"],
                           allow_insecure=True)  # fmt: skip
    link = Link(
        url=f"https://download.pytorch.org/whl/cu130/{WHEEL}",
        filename=WHEEL,
        core_metadata={"sha256": META_SHA},
    )
    assert client(mirrors=mirrors).metadata(link).version == "2.15.0+cu130"


def test_a_refused_url_never_shows_its_password(client: Callable[..., IndexClient]) -> None:
    with pytest.raises(UsageError) as caught:
        client(allow_insecure=False).page("http://me:pa55@example.org/simple/x/")
    assert "pa55" not in str(caught.value)
    assert "is plain http" in str(caught.value)
    from resolver_hook.index import redact

    assert redact("https://me:pa55@h.example/x/") == "https://****@h.example/x/"


def test_a_certificate_file_that_cannot_be_loaded_names_its_variable(
    client: Callable[..., IndexClient], tmp_path: Path
) -> None:
    bad = tmp_path / "no-such.pem"
    with pytest.raises(UsageError) as caught:
        client(env={"SSL_CERT_FILE": str(bad)}).page("https://index.example/simple/x/")
    assert str(caught.value).startswith(
        f"cannot load the certificates of {bad} (from SSL_CERT_FILE): "
    )


def test_manifest_import_revalidates_its_page_and_says_when_a_cache_entry_is_corrupt(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    from resolver_hook.cli import main

    url = server.url + "/whl/cu130/torch/"
    assert main(["manifest", "import", url, "--allow-insecure-urls"]) == 0
    first = capsys.readouterr().out
    assert main(["manifest", "import", url, "--allow-insecure-urls"]) == 0
    assert capsys.readouterr().out == first
    # The second import asked whether the page changed, and was answered 304.
    assert [x.headers.get("If-None-Match") for x in server.log] == [None, '"v1"']
    entry = PageCache(Path(os.environ["RESOLVER_HOOK_CACHE_DIR"]) / "index").path(f"page\n{url}")
    entry.write_bytes(b"not a cache entry")
    assert main(["manifest", "import", url, "--allow-insecure-urls"]) == 0
    err = capsys.readouterr().err
    assert f"note: cache {entry} ignored: corrupt (no header)" in err
    assert server.log[-1].headers.get("If-None-Match") is None


def test_pips_cert_setting_is_read_from_its_configuration_files(tmp_path: Path) -> None:
    from resolver_hook.index.fetch import Settings
    from resolver_hook.index.pipconfig import config_files, pip_settings

    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text("[global]\ncert = /etc/ssl/corp.pem\n")
    venv = tmp_path / "venv"
    venv.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "none")}
    assert pip_settings(env, "cert").get("cert") == (
        "/etc/ssl/corp.pem",
        f"cert in {home}/.config/pip/pip.conf",
    )
    # The site file comes later and wins; [install] beats [global] within a file.
    (venv / "pip.conf").write_text("[install]\ncert = /v/a.pem\n[global]\ncert = /v/b.pem\n")
    assert pip_settings({**env, "VIRTUAL_ENV": str(venv)}, "cert").get("cert") == (
        "/v/a.pem",
        f"cert in {venv}/pip.conf",
    )
    assert pip_settings({**env, "PIP_CERT": "/x.pem"}, "cert").get("cert") == ("/x.pem", "PIP_CERT")
    assert config_files({**env, "PIP_CONFIG_FILE": os.devnull}) == []
    # pip's setting comes before OpenSSL's variable.
    both = {**env, "SSL_CERT_FILE": "/o.pem"}
    assert Settings.from_env(both).cafile == (
        "/etc/ssl/corp.pem",
        f"cert in {home}/.config/pip/pip.conf",
    )
    assert Settings.from_env({"SSL_CERT_FILE": "/o.pem", "PIP_CONFIG_FILE": os.devnull}).cafile == (
        "/o.pem",
        "SSL_CERT_FILE",
    )
