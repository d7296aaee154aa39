"""Tests for `resolver-hook manifest import` (resolver_hook.publish.indexpage) against saved pages.

Pages are served by an http.server bound to 127.0.0.1 on a free port, stopped at
teardown; nothing here touches the internet.
"""

from __future__ import annotations

import http.server
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.index.htmlpage import parse_html as parse_links
from resolver_hook.manifest.urls import check_read_url
from resolver_hook.publish.indexpage import import_manifest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PAGES = Path(__file__).parent / "data" / "index"
HA, HB, HC = "a" * 64, "b" * 64, "c" * 64


class _Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/redirect-to-http":
            self.send_response(302)
            self.send_header("Location", "http://example.org/simple/tilert/")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """Serve tests/data/index as /simple/tilert/index.html etc. on 127.0.0.1."""
    root = tmp_path / "www"
    (root / "simple" / "tilert").mkdir(parents=True)
    shutil.copy(PAGES / "simple-tilert.html", root / "simple" / "tilert" / "index.html")
    shutil.copy(PAGES / "find-links-mixed.html", root / "links.html")

    def handler(*args: object, **kwargs: object) -> _Handler:
        return _Handler(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_import_simple_page_over_loopback(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tilert.toml"
    page = f"{server}/simple/tilert/"
    code = main([
        "manifest", "import", page, "-o", str(out), "--allow-insecure-urls",
        "--gpu", "cu130=sm_100f,sm_120", "--gpu", "*=sm_90a",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    doc = tomllib.loads(out.read_text())
    files = f"{server}/files"
    assert doc == {
        "schema": 1,
        "package": {"name": "tilert", "downloads": page},
        "wheel": [
            {
                "url": f"{files}/tilert-0.1.5%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                "sha256": HA,
                "cuda": ">=13.0",
                "gpu": ["sm_100f", "sm_120"],
            },
            {
                "url": f"{files}/tilert-0.1.5%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                "sha256": HB,
                "cuda": ">=12.0",
                "gpu": ["sm_90a"],
            },
            {
                "url": f"{files}/tilert-0.1.5%2Btorch2130cu130-cp312-cp312-"
                "manylinux_2_28_aarch64.whl",
                "sha256": HC,
                "cuda": ">=13.0",
                "gpu": ["sm_90a"],
                "requires": ["torch==2.13.0"],
            },
        ],
    }
    assert "note: skipped tilert-0.1.4-cp312-cp312-manylinux_2_28_x86_64.whl: yanked" in err


def test_import_cuda_map_overrides_label(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([
        "manifest", "import", f"{server}/simple/tilert/", "--allow-insecure-urls",
        "--cuda-map", "cu126=>=12.6",
    ])  # fmt: skip
    assert code == 0
    wheels = tomllib.loads(capsys.readouterr().out)["wheel"]
    assert [w["cuda"] for w in wheels] == [">=13.0", ">=12.6", ">=13.0"]


def test_loopback_http_needs_the_flag(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "import", f"{server}/simple/tilert/"]) == 2
    err = capsys.readouterr().err
    assert "plain http" in err
    assert "hint: add --allow-insecure-urls" in err


def test_redirect_to_non_loopback_http_is_refused(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["manifest", "import", f"{server}/redirect-to-http", "--allow-insecure-urls"])
    assert code == 2
    err = capsys.readouterr().err
    assert "'http://example.org/simple/tilert/' is plain http: only https" in err


def test_missing_page_is_an_operational_error(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["manifest", "import", f"{server}/nope/", "--allow-insecure-urls"])
    assert code == 1
    assert capsys.readouterr().err.startswith(f"error: {server}/nope/: HTTP 404")


def test_mixed_page_needs_package(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["manifest", "import", str(PAGES / "find-links-mixed.html")])
    assert code == 2
    err = capsys.readouterr().err
    assert "several projects: flash-attn, torch" in err
    assert "hint: pick one with --package NAME" in err


def test_local_file_with_package_filter(capsys: pytest.CaptureFixture[str]) -> None:
    page = PAGES / "find-links-mixed.html"
    assert main(["manifest", "import", str(page), "--package", "flash-attn"]) == 0
    captured = capsys.readouterr()
    doc = tomllib.loads(captured.out)
    # A saved page's file: URL is no download location (the loader would refuse it).
    assert doc["package"] == {"name": "flash-attn"}
    assert doc["wheel"] == [
        {
            "url": "https://download.example.org/whl/cu130/"
            "flash_attn-2.8.0%2Bcu13torch2.13-cp312-cp312-linux_x86_64.whl",
            "sha256": HB,
            "cuda": ">=13.0",
            "requires": ["torch==2.13.*"],
        },
        {"url": (PAGES / "flash_attn-2.8.0-cp312-cp312-linux_x86_64.whl").resolve().as_uri()},
    ]
    assert "skipped flash_attn-2.8.0+cu126torch2.12-cp312-cp312-linux_x86_64.whl" in captured.err
    assert "no #sha256= on the page" in captured.err


@pytest.mark.parametrize(
    "url",
    ["http://example.org/x", "ftp://example.org/x", "http://10.0.0.1/x", "gopher://127.0.0.1/"],
)
def test_check_url_refuses(url: str) -> None:
    with pytest.raises(UsageError):
        check_read_url(url, allow_insecure=True)


@pytest.mark.parametrize("url", ["https://x.org/", "http://127.0.0.1:8/", "http://[::1]/"])
def test_check_url_allows(url: str) -> None:
    check_read_url(url, allow_insecure=True)


def test_parse_links_base_href_and_fragment() -> None:
    html = (
        '<base href="https://mirror.example/pkgs/">'
        f'<a href="a-1.0-py3-none-any.whl#md5=00&sha256={HA.upper()}">a</a>'
        '<a href="b-1.0-py3-none-any.whl#sha256=short">b</a>'
    )
    links = parse_links(html, "https://index.example/simple/a/")
    assert [(link.url, link.sha256) for link in links] == [
        ("https://mirror.example/pkgs/a-1.0-py3-none-any.whl", HA),
        ("https://mirror.example/pkgs/b-1.0-py3-none-any.whl", None),
    ]


def test_import_no_wheels_is_an_error() -> None:
    with pytest.raises(OperationalError, match="no wheels of nothing-here on the page"):
        import_manifest(parse_links("<a href='x.tar.gz'>x</a>", "https://e/"),
                        package="nothing-here")  # fmt: skip


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--gpu", "cu130=sm_9x"], "is not a kernel target"),
        (["--cuda-map", "cu130=thirteen"], "is not a version specifier"),
        (["--gpu", "novalue"], "expected LABEL=VALUE"),
    ],
)
def test_bad_flags_are_usage_errors(
    flag: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["manifest", "import", str(PAGES / "simple-tilert.html"), *flag]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("page", ["https://index.example/simple/x/", "http://127.0.0.1:9/x/"])
def test_remote_page_cannot_point_at_local_files(page: str) -> None:
    # cli/manifest.py: "the same rule applies to redirects and to the wheel links".
    links = parse_links(
        "<a href='file:///etc/x-1.0-py3-none-any.whl'>x</a><a href='x-1.0-py3-none-any.whl'>x</a>",
        page,
    )
    result = import_manifest(links, allow_insecure=True)
    assert [w.url for w in result.wheels] == [page + "x-1.0-py3-none-any.whl"]
    assert result.notes[0] == (
        "skipped x-1.0-py3-none-any.whl: file:///etc/x-1.0-py3-none-any.whl:"
        " a file: link on a page that is not a local file"
    )


@pytest.mark.parametrize("value", ["0", "-5", "abc", "nan"])
def test_timeout_must_be_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    from resolver_hook.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["manifest", "import", "page.html", "--timeout", value])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("error: argument --timeout: ")


def test_wheel_hashing_refuses_a_redirect_the_url_policy_refuses(server: str) -> None:
    """Hashing a wheel for a lock follows redirects through the index pages' handler,
    with its own message prefix ("page:", as before the handlers were one)."""
    from resolver_hook.errors import UsageError
    from resolver_hook.lock.wheels import NetFetcher
    from resolver_hook.settings import Settings

    with pytest.raises(UsageError) as caught:
        NetFetcher(Settings(allow_insecure=True)).sha256(f"{server}/redirect-to-http")
    assert str(caught.value).startswith(
        "page: 'http://example.org/simple/tilert/' is plain http: only https"
    )
