"""Build small, real wheels and serve them from a loopback HTTP index.

The wheels are valid (METADATA, WHEEL, RECORD with hashes) so real pip and uv
install them. The index is static files: ``/simple/NAME/`` (PEP 503 pages with
``#sha256=`` fragments), per-flavour find-links pages ``/links/FLAVOUR/NAME/``,
and the wheels under ``/files/``. The server binds 127.0.0.1 on a free port.

With ``core_metadata`` the pages serve each wheel's core metadata apart, as PyPI and
download.pytorch.org do (PEP 658, https://peps.python.org/pep-0658/, and PEP 714,
https://peps.python.org/pep-0714/; docs/facts.md, "Index pages"): the wheel's
``*.dist-info/METADATA`` at ``<wheel URL>.metadata``, and on each anchor
``data-core-metadata`` (PEP 714's name) and ``data-dist-info-metadata`` (the name
PEP 658 gave it, which older clients read; PyPI sends both), valued ``sha256=<hex>`` of
that metadata file.
"""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import sys
import threading
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from packaging.utils import canonicalize_name, parse_wheel_filename

FIXED_DATE = (2020, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class BuiltWheel:
    path: Path
    name: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        return self.path.name


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build_wheel(
    out: Path,
    name: str,
    version: str,
    *,
    tag: str = "py3-none-any",
    requires: Sequence[str] = (),
    module: str | None = None,
    filename_name: str | None = None,
    code: str | None = None,
    variant: tuple[str, str] | None = None,
    binaries: Mapping[str, bytes] | None = None,
) -> BuiltWheel:
    """Write ``NAME-VERSION-TAG.whl`` into ``out``; its module records the version.

    ``filename_name`` writes another project's name into the filename (the
    wrong-project case); ``code`` replaces the module's body. ``variant`` is a PEP 825
    ``(label, variant.json text)``: the label ends the filename, the text goes into
    ``*.dist-info/variant.json``. ``binaries`` adds members as they are (an nvcc-built
    library).
    """
    dist = name.replace("-", "_")
    module = module or dist
    file_dist = (filename_name or name).replace("-", "_")
    filename = f"{file_dist}-{version}-{tag}{'-' + variant[0] if variant else ''}.whl"
    info = f"{dist}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files: dict[str, str | bytes] = {
        f"{module}/__init__.py": (code or f"__version__ = {version!r}\nFLAVOUR = {version!r}\n"),
        f"{info}/METADATA": "\n".join(meta) + "\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: resolver-hook-tests\n"
            f"Root-Is-Purelib: {'true' if tag.endswith('-any') else 'false'}\n"
            f"Tag: {tag}\n"
        ),
    }
    if variant:
        files[f"{info}/variant.json"] = variant[1]
    files.update(binaries or {})
    out.mkdir(parents=True, exist_ok=True)
    path = out / filename
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, text in files.items():
            data = text.encode() if isinstance(text, str) else text
            zf.writestr(zipfile.ZipInfo(arcname, FIXED_DATE), data)
            record.append(f"{arcname},{_record_hash(data)},{len(data)}")
        record.append(f"{info}/RECORD,,")
        zf.writestr(zipfile.ZipInfo(f"{info}/RECORD", FIXED_DATE), "\n".join(record) + "\n")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return BuiltWheel(path=path, name=name, version=version, sha256=sha)


def core_metadata(wheel: Path) -> bytes:
    """The wheel's ``*.dist-info/METADATA`` as it is stored (PEP 658's metadata file)."""
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [
            n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
        ]
        return zf.read(name)


def _page(title: str, links: list[tuple[str, str, str | None]]) -> str:
    """A PEP 503 page: (href, text, sha256 of the file's core metadata or None)."""

    def anchor(href: str, text: str, meta: str | None) -> str:
        attrs = f'href="{html.escape(href)}"'
        if meta is not None:
            attrs += f' data-dist-info-metadata="sha256={meta}"'
            attrs += f' data-core-metadata="sha256={meta}"'
        return f"<a {attrs}>{html.escape(text)}</a><br/>"

    body = "\n".join(anchor(*link) for link in links)
    return (
        f"<!DOCTYPE html>\n<html><head><title>{html.escape(title)}</title></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


class LoopbackIndex:
    """A static package index under ``root``, served on 127.0.0.1."""

    def __init__(self, root: Path, *, core_metadata: bool = False) -> None:
        self.root = root
        self.core_metadata = core_metadata
        self._metadata: dict[str, str] = {}  # wheel filename -> sha256 of its .metadata
        self.files = root / "files"
        self.files.mkdir(parents=True, exist_ok=True)
        self.url = ""
        self._server: http.server.ThreadingHTTPServer | None = None
        self._simple: dict[str, list[BuiltWheel]] = {}
        self._links: dict[tuple[str, str], list[BuiltWheel]] = {}
        # Every request served, "GET /files/x.whl" (the server's threads append).
        self.requests: list[str] = []
        # (user, password) every request must carry as HTTP Basic auth (401 otherwise).
        self.credentials: tuple[str, str] | None = None

    def gets(self, wheel: BuiltWheel) -> int:
        """How many times the server was asked for the wheel's file (GET)."""
        return sum(1 for r in self.requests if r == f"GET /files/{wheel.filename}")

    def metadata_gets(self, wheel: BuiltWheel) -> int:
        """How many times the server was asked for the wheel's core metadata file (GET)."""
        return sum(1 for r in self.requests if r == f"GET /files/{wheel.filename}.metadata")

    def add(self, wheel: BuiltWheel, *, simple: bool = True, flavour: str | None = None) -> None:
        """Publish a wheel: on the simple index and/or a flavour's find-links page."""
        target = self.files / wheel.filename
        if wheel.path != target:
            target.write_bytes(wheel.path.read_bytes())
        if self.core_metadata:
            data = core_metadata(target)
            (self.files / f"{wheel.filename}.metadata").write_bytes(data)
            self._metadata[wheel.filename] = hashlib.sha256(data).hexdigest()
        name = str(canonicalize_name(parse_wheel_filename(wheel.filename)[0]))
        if simple:
            self._simple.setdefault(name, []).append(wheel)
        if flavour:
            self._links.setdefault((flavour, name), []).append(wheel)
        self._write_pages()

    def wheel_url(self, wheel: BuiltWheel) -> str:
        return f"{self.url}/files/{wheel.filename}"

    def links_url(self, flavour: str, name: str) -> str:
        return f"{self.url}/links/{flavour}/{name}/"

    @property
    def simple_url(self) -> str:
        return f"{self.url}/simple/"

    def _text(self, wheel: BuiltWheel) -> tuple[str, str | None]:
        """An anchor's text and the sha256 of the wheel's core metadata, where served."""
        return wheel.filename, self._metadata.get(wheel.filename)

    def _write_pages(self) -> None:
        simple = self.root / "simple"
        simple.mkdir(exist_ok=True)
        (simple / "index.html").write_text(
            _page("Simple index", [(f"{n}/", n, None) for n in sorted(self._simple)])
        )
        for name, wheels in self._simple.items():
            d = simple / name
            d.mkdir(exist_ok=True)
            (d / "index.html").write_text(
                _page(
                    name,
                    [
                        (f"../../files/{w.filename}#sha256={w.sha256}", *self._text(w))
                        for w in wheels
                    ],
                )
            )
        for (flavour, name), wheels in self._links.items():
            d = self.root / "links" / flavour / name
            d.mkdir(parents=True, exist_ok=True)
            (d / "index.html").write_text(
                _page(
                    name,
                    [
                        (f"../../../files/{w.filename}#sha256={w.sha256}", *self._text(w))
                        for w in wheels
                    ],
                )
            )

    @contextmanager
    def serving(self) -> Iterator[LoopbackIndex]:
        root = str(self.root)
        seen = self.requests
        index = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, directory=root, **kwargs)  # type: ignore[arg-type]

            def send_head(self) -> object:
                seen.append(f"{self.command} {unquote(self.path.split('?', 1)[0])}")
                if index.credentials is not None:
                    token = base64.b64encode(":".join(index.credentials).encode()).decode()
                    if self.headers.get("Authorization") != f"Basic {token}":
                        seen[-1] += " 401"
                        self.send_response(401)
                        self.send_header("WWW-Authenticate", 'Basic realm="index"')
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return None
                return super().send_head()

            def log_message(self, format: str, *args: object) -> None:
                pass

        with serve_loopback(Handler) as server:
            self.url = f"http://127.0.0.1:{server.server_address[1]}"
            self._server = server
            try:
                yield self
            finally:
                self._server = None


@contextmanager
def serve_loopback(
    handler: type[http.server.BaseHTTPRequestHandler], *, backlog: int = 5
) -> Iterator[http.server.ThreadingHTTPServer]:
    """A threaded HTTP server on 127.0.0.1 (a free port) while the block runs; ``backlog``
    is its listen queue (the standard library's default is 5)."""

    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = backlog

        def handle_error(self, request: Any, client_address: Any) -> None:
            # A client that hangs up early (a size bound, a refused hash) is the point
            # of some tests, not a server fault; anything else is still printed.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
