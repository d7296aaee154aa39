"""Threat model: a hostile or broken index server given to ``manifest import``.

The page is someone else's HTML over someone else's server. Whatever the server does
(a charset nobody knows, a status line of garbage, a byte a second, a body cut short)
and whatever the hrefs say (spaces, ``--index-url``, shell metacharacters), the import
ends in a manifest of clean URLs or one ``error:`` line, within ``--timeout`` in all.

Servers here are bound to 127.0.0.1 on a free port and stopped by the test.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from resolver_hook.cli import main

HEX = "ab" * 32
Behaviour = Callable[[socket.socket, threading.Event], None]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    behaviour: Behaviour
    stop: threading.Event


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.request.settimeout(5)
        try:
            self.request.recv(65536)  # the request; its content does not matter here
            self.server.behaviour(self.request, self.server.stop)
        except OSError:
            pass  # the client gave up: that is the point of several tests


@pytest.fixture
def serve() -> Iterator[Callable[[Behaviour], str]]:
    """``serve(behaviour)`` -> the base URL of a raw TCP server on 127.0.0.1."""
    servers: list[tuple[_Server, threading.Thread]] = []

    def start(behaviour: Behaviour) -> str:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.behaviour = behaviour
        server.stop = threading.Event()
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server, thread in servers:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def page(body: str, *, content_type: str = "text/html; charset=utf-8") -> Behaviour:
    data = body.encode()

    def send(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(
            f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )

    return send


def wheel_links(*hrefs: str) -> str:
    return "<html><body>" + "".join(f'<a href="{h}">x</a>' for h in hrefs) + "</body></html>"


GOOD = f"pkg-1.0-py3-none-any.whl#sha256={HEX}"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["manifest", "import", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("charset", ["x-no-such-charset", "hex", "rot13", "idna"])
def test_unknown_charset_is_read_as_utf8(
    charset: str, serve: Callable[[Behaviour], str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(page(wheel_links(GOOD), content_type=f"text/html; charset={charset}"))
    code, out, _ = run([url + "/", "--allow-insecure-urls"], capsys)
    assert code == 0
    assert "pkg-1.0-py3-none-any.whl" in out


def test_garbage_status_line_is_one_error(
    serve: Callable[[Behaviour], str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(lambda sock, stop: sock.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"))
    code, _, err = run([url + "/", "--allow-insecure-urls"], capsys)
    assert code == 1
    assert err.startswith(f"error: {url}/: not a valid HTTP answer (BadStatusLine")


def test_truncated_body_fails_and_writes_nothing(
    serve: Callable[[Behaviour], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = wheel_links(GOOD, f"pkg-2.0-py3-none-any.whl#sha256={HEX}").encode()

    def cut_short(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
            + f"Content-Length: {len(body) + 5000}\r\n\r\n".encode()
            + body
        )

    url = serve(cut_short)
    out_file = tmp_path / "m.toml"
    code, _, err = run([url + "/", "--allow-insecure-urls", "-o", str(out_file)], capsys)
    assert code == 1
    assert f"the page ended after {len(body)} of its {len(body) + 5000} bytes" in err
    assert not out_file.exists()


def test_timeout_is_one_deadline_for_a_trickling_server(
    serve: Callable[[Behaviour], str], capsys: pytest.CaptureFixture[str]
) -> None:
    def trickle(sock: socket.socket, stop: threading.Event) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
        sock.sendall(head)
        while not stop.wait(0.2):  # a byte every 0.2 s: each read succeeds, none ends
            sock.sendall(b" ")

    url = serve(trickle)
    code, _, err = run([url + "/", "--allow-insecure-urls", "--timeout", "1"], capsys)
    assert code == 1
    assert err.startswith(f"error: {url}/: no complete answer within 1 s")


def test_timeout_also_bounds_a_server_trickling_its_headers(
    serve: Callable[[Behaviour], str], capsys: pytest.CaptureFixture[str]
) -> None:
    def trickle_headers(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\n")
        while not stop.wait(0.2):
            sock.sendall(b"X")  # one endless header line, a byte at a time

    url = serve(trickle_headers)
    code, _, err = run([url + "/", "--allow-insecure-urls", "--timeout", "1"], capsys)
    assert code == 1
    assert "no complete answer within 1 s" in err


@pytest.mark.parametrize(
    ("location", "words"),
    [
        ("https://[::1", "is not a URL"),
        ("https://localhost:abc/", "is not a URL"),
        ("https://example.org/a;touch$IFS/tmp/x;/", "contains ';'"),
    ],
)
def test_malformed_page_url_is_a_usage_error(
    location: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([location], capsys)
    assert code == 2
    assert words in err


@pytest.mark.parametrize("value", ["inf", "1e300", "-inf", "nan", "3601"])
def test_timeout_must_be_finite_and_bounded(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["manifest", "import", "page.html", "--timeout", value])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("error: argument --timeout: ")


@pytest.mark.parametrize(
    "href",
    [
        "pkg-1.1-py3-none-any.whl --index-url https://evil.example/simple",
        "pkg 1.2-py3-none-any.whl",
        "https://example.org/a;touch$IFS/tmp/x;/pkg-1.3-py3-none-any.whl",
        "https://example.org/`id`/pkg-1.4-py3-none-any.whl",
        "https://example.org/$(id)/pkg-1.5-py3-none-any.whl",
        "https://[::1/pkg-1.6-py3-none-any.whl",
        "https://example.org/%0a/pkg-1.7-py3-none-any.whl\x1b[2J",
    ],
    ids=["index-url", "space", "semicolon", "backtick", "dollar", "bad-host", "escape"],
)
def test_hostile_hrefs_are_skipped_with_a_note_never_copied(
    href: str,
    serve: Callable[[Behaviour], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = serve(page(wheel_links(GOOD, href)))
    out_file = tmp_path / "m.toml"
    code, _, err = run([url + "/", "--allow-insecure-urls", "-o", str(out_file)], capsys)
    assert code == 0
    text = "".join(line for line in out_file.read_text().splitlines(True) if line[:1] != "#")
    assert text.count("[[wheel]]") == 1
    assert "pkg-1.0-py3-none-any.whl" in text
    for bad in ("--index-url", ";", "`", "$", "\x1b", " 1.2"):
        assert bad not in text
    assert "note: skipped " in err
    assert "\x1b" not in err  # a note shows hostile text quoted, not as terminal escapes


def test_hostile_homepage_flag_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["page.html", "--homepage", "https://example.org/$(id)"], capsys)
    assert code == 2
    assert err.startswith("error: --homepage: ")


def test_the_old_flag_name_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["manifest", "import", "page.html", "--allow-insecure-loopback"])
    assert exc.value.code == 2
    capsys.readouterr()


def test_link_with_a_5000_digit_version_is_skipped_with_a_note() -> None:
    from resolver_hook.index.htmlpage import parse_html as parse_links
    from resolver_hook.publish.indexpage import import_manifest

    huge = f"pkg-1.{'1' * 5000}-py3-none-any.whl"
    links = parse_links(wheel_links(GOOD, huge), "https://index.example/simple/pkg/")
    result = import_manifest(links)
    assert [w.url for w in result.wheels] == [
        "https://index.example/simple/pkg/pkg-1.0-py3-none-any.whl"
    ]
    assert any("not a valid wheel file name" in note for note in result.notes)
    assert all(len(note) < 400 for note in result.notes)


def test_a_page_the_html_parser_chokes_on_still_imports(
    serve: Callable[[Behaviour], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # "<![OCTYPE": a typo html.parser answered with an AssertionError (Python 3.11.7).
    url = serve(page("<![OCTYPE html>" + wheel_links(GOOD)))
    code, out, _ = run([url + "/", "--allow-insecure-urls"], capsys)
    assert code == 0
    assert "pkg-1.0-py3-none-any.whl" in out


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("variable", "location"),
    [("HTTPS_PROXY", "https://index.example/simple/pkg/"), ("http_proxy", "http://127.0.0.1:1/")],
)
def test_a_proxy_that_cannot_be_reached_is_named(
    variable: str,
    location: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    proxy = f"http://user:secret@127.0.0.1:{_closed_port()}"
    monkeypatch.setenv(variable, proxy)
    code, _, err = run([location, "--allow-insecure-urls", "--timeout", "5"], capsys)
    assert code == 1
    shown = proxy.replace("user:secret@", "****@")
    assert err.startswith(f"error: {location}: cannot reach the proxy {shown} (from {variable}): ")
    assert "secret" not in err
    assert f"hint: check {variable}" in err
