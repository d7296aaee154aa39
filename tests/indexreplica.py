"""Loopback replicas of the index pages the inventory reads, and a page source for them.

:class:`PageServer` serves canned responses on 127.0.0.1 (status, body, content type,
a delay per request) and logs every path asked, so a test can say "nothing was read".
:func:`pytorch_html` writes a page the way download.pytorch.org does (PEP 503 HTML,
absolute hrefs with ``#sha256=``, ``data-dist-info-metadata`` / ``data-core-metadata``
on each link, ``data-requires-python`` where set); :func:`pypi_json` the PEP 691 JSON
PyPI answers with (``files`` with ``hashes``, ``requires-python``, ``yanked``,
``core-metadata``). The index client reads them as it reads the real ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import http.server
import json
import socket
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from resolver_hook.inventory.expand import page_of
from resolver_hook.manifest import Manifest
from tests.wheelfactory import serve_loopback


@dataclass
class Response:
    body: bytes
    content_type: str = "text/html"
    status: int = 200


@dataclass
class PageServer:
    """Canned responses by path, served on 127.0.0.1; ``log`` lists the paths asked;
    ``delay`` seconds pass before each page (a path ending in ``/``) is answered;
    ``missing``: the status of a path it has no response for (404: not there)."""

    responses: dict[str, Response] = field(default_factory=dict)
    delay: float = 0.0
    missing: int = 404
    log: list[str] = field(default_factory=list)
    url: str = ""

    @contextmanager
    def serving(self) -> Iterator[PageServer]:
        server_self = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = urllib.parse.urlsplit(self.path).path
                server_self.log.append(path)
                if server_self.delay and path.endswith("/"):  # pages, not files
                    time.sleep(server_self.delay)
                r = server_self.responses.get(path)
                if r is None:
                    r = Response(b"not found", "text/plain", server_self.missing)
                self.send_response(r.status)
                self.send_header("Content-Type", r.content_type)
                self.send_header("Content-Length", str(len(r.body)))
                self.end_headers()
                # A client that stops reading (a page past its bound, a test's deadline)
                # is its own business: no traceback in the next test's output.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(r.body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        # The default listen backlog (5) drops concurrent connects, which then
        # wait a second for the SYN to be sent again.
        with serve_loopback(Handler, backlog=128) as server:
            self.url = f"http://127.0.0.1:{server.server_address[1]}"
            yield self


@dataclass(frozen=True)
class File:
    """One wheel on a replica page; ``metadata`` is its core metadata text (None: the
    page offers no metadata file)."""

    filename: str
    sha256: str = ""
    requires_python: str | None = None
    yanked: str | None = None
    metadata: str | None = None
    url: str | None = None  # where a JSON page says it is (default: the page's folder)

    def digest(self) -> str:
        return self.sha256 or hashlib.sha256(self.filename.encode()).hexdigest()


def metadata_text(name: str, version: str, requires: Sequence[str] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nA long description.\n"


def _meta_hash(f: File) -> str:
    assert f.metadata is not None
    return hashlib.sha256(f.metadata.encode()).hexdigest()


def pytorch_html(
    server: PageServer,
    page: str,
    files_dir: str,
    files: Sequence[File],
    *,
    served_at: str | None = None,
) -> None:
    """A download.pytorch.org-style page at ``page`` (a path), files under ``files_dir``;
    ``served_at``: the path the ``.metadata`` files are served under when ``files_dir``
    is another host's URL (the upstream one, read through a mirror)."""
    rows = []
    for f in files:
        quoted = urllib.parse.quote(f.filename)
        href = f"{files_dir}{quoted}#sha256={f.digest()}"
        attrs = ""
        if f.requires_python:
            attrs += f' data-requires-python="{html.escape(f.requires_python)}"'
        if f.yanked is not None:
            attrs += f' data-yanked="{html.escape(f.yanked)}"'
        if f.metadata is not None:
            meta = f"sha256={_meta_hash(f)}"
            attrs += f' data-dist-info-metadata="{meta}" data-core-metadata="{meta}"'
            server.responses[f"{served_at or files_dir}{quoted}.metadata"] = Response(
                f.metadata.encode(), "binary/octet-stream"
            )
        rows.append(f'<a href="{html.escape(href)}"{attrs}>{html.escape(f.filename)}</a><br/>')
    body = "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n    "
    body += "\n    ".join(rows) + "\n  </body>\n</html>\n"
    server.responses[page] = Response(body.encode())


def pypi_json(server: PageServer, page: str, files_dir: str, files: Sequence[File]) -> None:
    """A PEP 691 JSON project page at ``page`` (as PyPI serves it when asked)."""
    out = []
    for f in files:
        quoted = urllib.parse.quote(f.filename)
        row: dict[str, object] = {
            "filename": f.filename,
            "url": f.url or f"{files_dir}{quoted}",
            "hashes": {"sha256": f.digest()},
            "requires-python": f.requires_python,
            "yanked": f.yanked if f.yanked else False,
        }
        if f.metadata is not None:
            row["core-metadata"] = {"sha256": _meta_hash(f)}
            path = urllib.parse.urlsplit(f"{files_dir}{quoted}.metadata").path
            server.responses[path] = Response(f.metadata.encode(), "binary/octet-stream")
        else:
            row["core-metadata"] = False
        out.append(row)
    doc = {"meta": {"api-version": "1.1"}, "name": page.strip("/").rsplit("/", 1)[-1]}
    doc["files"] = out
    server.responses[page] = Response(
        json.dumps(doc).encode(), "application/vnd.pypi.simple.v1+json"
    )


def dead_host_flags(manifests: Iterable[Manifest]) -> list[str]:
    """CLI flags that send every page ``manifests`` list (and PyPI's) to a loopback port
    that refuses connections (bound, then closed: nothing listens there): a flavour
    host that is down, and no test reading the internet."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    roots = {"https://pypi.org"}
    for man in manifests:
        for f in man.indexes:
            page = page_of(f) or f.template  # a computed page's host too
            if page is not None:
                parts = urllib.parse.urlsplit(page)
                roots.add(f"{parts.scheme}://{parts.netloc}")
    flags = ["--allow-insecure-urls"]
    for i, root in enumerate(sorted(roots)):
        flags += ["--mirror", f"{root}=http://127.0.0.1:{port}/host{i}"]
    return flags
