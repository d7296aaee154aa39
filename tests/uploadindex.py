"""A loopback package index that takes uploads: PEP 503 pages plus the legacy upload API.

What twine speaks to PyPI (``POST`` of ``multipart/form-data`` with ``:action`` =
``file_upload``, the file in the ``content`` part) is accepted here and the file is then
served on ``/simple/<name>/`` with its ``#sha256=``, as PyPI does; a file name that is
already there is refused with 400, as PyPI refuses it. A project's PEP 792 status is
written as ``<meta name="pypi:project-status">``. Bound to 127.0.0.1 only.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import html
import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

from tests.wheelfactory import serve_loopback

__all__ = ["UploadIndex"]


def _project(filename: str) -> str:
    if filename.endswith(".whl"):
        return str(parse_wheel_filename(filename)[0])
    return str(parse_sdist_filename(filename)[0])


class UploadIndex:
    """Files under ``root``; ``serving()`` starts the server and sets ``url``."""

    def __init__(self, root: Path) -> None:
        self.files = root / "files"
        self.files.mkdir(parents=True, exist_ok=True)
        self.url = ""
        self.status: dict[str, str] = {}  # canonical name -> PEP 792 status
        self.uploads: list[str] = []  # file names taken through the upload API
        self._lock = threading.Lock()

    @property
    def simple(self) -> str:
        return f"{self.url}/simple/"

    def add(self, path: Path) -> None:
        """Put a file on the index directly (what was there before the test)."""
        shutil.copy2(path, self.files / path.name)

    def _page(self, name: str) -> str | None:
        links = [
            f'<a href="../../files/{f.name}#sha256={hashlib.sha256(f.read_bytes()).hexdigest()}"'
            f">{html.escape(f.name)}</a><br>"
            for f in sorted(self.files.iterdir())
            if _project(f.name) == name
        ]
        if not links:
            return None
        status = self.status.get(name)
        meta = f'<meta name="pypi:project-status" content="{status}">' if status else ""
        return (
            f'<!DOCTYPE html><html><head><meta name="pypi:repository-version" content="1.0">'
            f"{meta}<title>Links for {name}</title></head><body>{''.join(links)}</body></html>"
        )

    def _upload(self, content_type: str, body: bytes) -> tuple[int, str]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        fields: dict[str, str] = {}
        upload: tuple[str, bytes] | None = None
        for part in message.iter_parts():
            key = part.get_param("name", header="content-disposition")
            filename = part.get_filename()
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            if key == "content" and filename:
                upload = (filename, payload)
            elif isinstance(key, str):
                fields[key] = payload.decode()
        if fields.get(":action") != "file_upload" or upload is None:
            return 400, "not a file upload"
        filename, data = upload
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", filename):
            return 400, "bad file name"
        if canonicalize_name(fields.get("name", "")) != _project(filename):
            return 400, "the name field does not match the file"
        if fields.get("sha256_digest") not in (None, hashlib.sha256(data).hexdigest()):
            return 400, "sha256_digest does not match"
        with self._lock:
            target = self.files / filename
            if target.exists():
                return 400, "File already exists"
            target.write_bytes(data)
            self.uploads.append(filename)
        return 200, "OK"

    @contextmanager
    def serving(self) -> Iterator[UploadIndex]:
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _send(
                self, code: int, body: bytes, kind: str = "text/html", reason: str | None = None
            ) -> None:
                self.send_response(code, reason)  # PyPI puts its refusal in the reason
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if match := re.fullmatch(r"/simple/([a-z0-9-]+)/", path):
                    page = index._page(match.group(1))
                    if page is not None:
                        return self._send(200, page.encode())
                elif match := re.fullmatch(r"/files/([A-Za-z0-9_.+-]+)", path):
                    target = index.files / match.group(1)
                    if target.is_file():
                        return self._send(200, target.read_bytes(), "application/octet-stream")
                return self._send(404, b"not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                code, text = index._upload(self.headers.get("Content-Type", ""), body)
                self._send(code, text.encode(), "text/plain", reason=text)

            def log_message(self, format: str, *args: object) -> None:
                pass

        with serve_loopback(Handler) as server:
            self.url = f"http://127.0.0.1:{server.server_address[1]}"
            yield self
