"""Issue 42, maintainer side: ``placeholder build --index-url`` refuses a 200 answer that
is no project page (a sign-in page too), and a version past the bounds is not blamed on
``--version``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import cli
from tests.indexreplica import PageServer, Response
from tests.placeholder_support import TILERT

NINES = "9" * 32  # the longest number a version may hold (limits.MAX_VERSION_DIGITS)


def _build(
    capsys: pytest.CaptureFixture[str], server: PageServer, out: Path
) -> tuple[int, str, str]:
    """``placeholder build TILERT -o OUT --index-url SERVER/simple/`` (loopback allowed)."""
    index = f"{server.url}/simple/"
    return cli(capsys, "placeholder", "build", str(TILERT), "-o", str(out),
               "--index-url", index, "--allow-insecure-urls")  # fmt: skip


@pytest.mark.parametrize(
    ("response", "said"),
    [
        (Response(b'{"message": "rate limited"}', "application/json"), "it is application/json"),
        (Response(b"slow down, please", "text/plain"), "it is text/plain"),
        (Response(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "image/png"), "it is image/png"),
        (Response(b"rate limited", "text/html"), "it holds no HTML"),
    ],
    ids=["json", "text", "image", "html-without-markup"],
)
def test_an_answer_that_is_no_project_page_builds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], response: Response, said: str
) -> None:
    server = PageServer(responses={"/simple/tilert/": response})
    out = tmp_path / "dist"
    with server.serving():
        code, stdout, err = _build(capsys, server, out)
    assert code == 1
    assert err.startswith(
        f"error: {server.url}/simple/tilert/: the index answered with no project page ({said}: "
    )
    assert "no version was chosen and nothing was built" in err
    assert "0.0.0.dev0" not in stdout + err
    assert not out.exists() or list(out.iterdir()) == []


def test_a_sign_in_page_builds_nothing_and_names_the_page_without_credentials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that wants credentials answers 200 with a form: no empty project."""
    page = Response(
        b'<!DOCTYPE html><html><head><title>Sign in</title></head><body><form method="post">'
        b'<input name="user"><input type="password" name="pw"><button>Sign in</button>'
        b"</form></body></html>",
        "text/html; charset=utf-8",
    )
    server = PageServer(responses={"/simple/tilert/": page})
    out = tmp_path / "dist"
    with server.serving():
        index = f"{server.url.replace('//', '//maintainer:s3cret@')}/simple/"
        code, stdout, err = cli(capsys, "placeholder", "build", str(TILERT), "-o", str(out),
                                "--index-url", index, "--allow-insecure-urls")  # fmt: skip
    assert code == 1
    shown = server.url.replace("//", "//****@")
    error, hint = err.splitlines()
    assert error == (
        f"error: {shown}/simple/tilert/: not an index page: an HTML form and no package files "
        "(a sign-in page?); no version was chosen and nothing was built"
    )
    assert hint.startswith("hint: the server may want credentials")
    assert "s3cret" not in stdout + err
    assert "0.0.0.dev0" not in stdout + err
    assert not out.exists() or list(out.iterdir()) == []


def test_an_empty_project_page_is_still_a_project_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = Response(b"<!DOCTYPE html><html><body></body></html>", "text/html")
    server = PageServer(responses={"/simple/tilert/": page})
    with server.serving():
        code, stdout, err = _build(capsys, server, tmp_path)
    assert code == 0, err
    assert stdout.startswith(str(tmp_path / "tilert-0.0.0.dev0.tar.gz"))


def test_no_free_version_within_the_bounds_does_not_name_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index's placeholder is 0.0.N.devN (N: 32 nines): the next one, by its micro
    or its dev number, has a 33-digit number. The refusal names the bound, not a
    --version that was not given."""
    href = f"tilert-0.0.{NINES}.dev{NINES}.tar.gz"
    page = Response(f'<html><body><a href="{href}">{href}</a></body></html>'.encode())
    server = PageServer(responses={"/simple/tilert/": page})
    with server.serving():
        code, _, err = _build(capsys, server, tmp_path)
    assert code == 1
    assert "--version:" not in err
    assert err.startswith(
        f"error: {server.url}/simple/tilert/: no placeholder version is free above "
        f"0.0.{NINES}.dev{NINES} within the bounds on a version (numbers of at most 32 "
        "digits)\n"
    )
    assert list(tmp_path.iterdir()) == []
