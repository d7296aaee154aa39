"""Files the user names: folders, devices, FIFOs with no writer, and pipes that do work.

Threat model: a careless ``-r some-folder``, ``--profile /dev/zero``, a FIFO nobody
writes to (it used to block forever), and the natural ``-r <(...)`` / ``--profile
<(...)`` that pip accepts too: those keep working, read with a size cap and a total
deadline.
"""

from __future__ import annotations

import codecs
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from resolver_hook.ground import input as _input
from tests.clirun import cli
from tests.paths import python_child
from tests.wheelfactory import build_wheel

TARGET = "linux-x86_64-py312"


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_input, "INPUT_DEADLINE", 0.3)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "folder"
    path.mkdir()
    return path


def surfaces(path: str, tmp: Path) -> dict[str, list[str]]:
    """Every command-line input that reads a file the user names, given ``path``."""
    include = tmp / "include.in"
    include.write_text(f"-r {path}\n")
    return {
        "-r": ["plan", "--target", TARGET, "-r", path],
        "-c": ["plan", "--target", TARGET, "six", "-c", path],
        "-r include": ["plan", "--target", TARGET, "-r", str(include)],
        "--profile": ["plan", "--profile", path, "six"],
        "--manifest": ["plan", "--target", TARGET, "--manifest", path, "six"],
        "manifest import": ["manifest", "import", path, "--base-url", "https://example.org/"],
        "scan": ["scan", path],
        "lint": ["lint", path],
    }


SURFACES = list(surfaces("x", Path("/tmp")))


def _code(surface: str) -> int:
    # A FIFO, folder or device is bad input on every surface: exit 2 (scan still goes on
    # with the other wheels, and keeps exit 1 for a corrupt wheel: README "Exit codes").
    return 2


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("surface", SURFACES)
def test_a_fifo_with_no_writer_is_an_error_not_a_hang(
    surface: str, fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, *surfaces(str(fifo), tmp_path)[surface])
    assert code == _code(surface), err
    assert "Traceback" not in err
    (line,) = _error_lines(err)
    assert str(fifo) in line
    if surface in ("scan", "lint"):  # archives are read by seeking: a pipe is refused
        assert "is a pipe" in line
    else:
        assert "a pipe that did not finish within 0.3 s" in line
    assert "no such file" not in line


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("kind", ["folder", "device"])
def test_folders_and_devices_are_refused_at_open(
    surface: str, kind: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(folder) if kind == "folder" else "/dev/zero"
    code, _, err = cli(capsys, *surfaces(path, tmp_path)[surface])
    assert code == _code(surface), err
    (line,) = _error_lines(err)
    assert f"{path}: is {'a folder' if kind == 'folder' else 'a device'}, not a file" in line


@pytest.fixture
def feed(fifo: Path) -> Iterator[Callable[[bytes], str]]:
    """Write ``data`` into the FIFO from another thread, as ``<(...)`` does."""
    threads: list[threading.Thread] = []

    def start(data: bytes) -> str:
        def write() -> None:
            with open(fifo, "wb") as f:
                f.write(data)

        t = threading.Thread(target=write, daemon=True)
        t.start()
        threads.append(t)
        return str(fifo)

    yield start
    for t in threads:
        t.join(timeout=5)


def test_requirements_through_a_pipe(
    feed: Callable[[bytes], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = feed(b"six\n")
    code, out, _ = cli(capsys, "plan", "--target", TARGET, "-r", path)
    assert code == 0
    assert "six" in out


def test_profile_through_a_pipe(
    feed: Callable[[bytes], str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, saved, _ = cli(capsys, "detect", "--json", "--target", TARGET)
    assert code == 0
    path = feed(saved.encode())
    code, out, err = cli(capsys, "plan", "--profile", path, "six", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["profile"]["python"] == "3.12"


def test_manifest_import_of_a_page_through_a_pipe(
    feed: Callable[[bytes], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = build_wheel(tmp_path, "demo", "1.0").path
    page = f'<a href="{wheel.name}#sha256={"a" * 64}">{wheel.name}</a>'
    path = feed(page.encode())
    code, out, err = cli(capsys, "manifest", "import", path, "--base-url", "https://example.org/w/")
    assert code == 0, err
    assert f"https://example.org/w/{wheel.name}" in out


def test_a_pipe_larger_than_the_cap_is_refused(
    feed: Callable[[bytes], str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(_input, "MAX_INPUT_BYTES", 1000)
    path = feed(b"six\n" * 1000)
    code, _, err = cli(capsys, "plan", "--target", TARGET, "-r", path)
    assert code == 2
    assert err.strip() == f"error: {path}: more than 1000 bytes"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        codecs.BOM_UTF8,
        codecs.BOM_UTF8 + b"x = 1\n",
        codecs.BOM_UTF8 * 2 + b"a",
        codecs.BOM_UTF8[:2],
        "h\u00e9".encode(),
        b"\xff",
    ],
)
def test_a_text_input_is_decoded_as_the_utf_8_sig_codec_does(tmp_path: Path, data: bytes) -> None:
    """UTF-8 with one leading BOM dropped, as pip reads a file: what the utf-8-sig codec
    gives, and "not UTF-8 text" where it fails."""
    path = tmp_path / "manifest.toml"
    path.write_bytes(data)
    try:
        want = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        with pytest.raises(_input.InputError, match="not UTF-8 text"):
            _input.read_text_input(path)
    else:
        assert _input.read_text_input(path) == want


def test_a_text_input_is_decoded_without_the_utf_8_sig_codec(tmp_path: Path) -> None:
    """The codec's module (encodings.utf_8_sig: ~0.15 ms of an install that reads a
    manifest) is not imported to drop the BOM."""
    path = tmp_path / "manifest.toml"
    path.write_bytes(codecs.BOM_UTF8 + b"x = 1\n")
    child = (
        "import sys\n"
        "from resolver_hook.ground.input import read_text_input\n"
        f"print(repr(read_text_input({str(path)!r})), 'encodings.utf_8_sig' in sys.modules)\n"
    )
    done = python_child(child)
    assert done.stdout.split() == ["'x", "=", "1\\n'", "False"], done.stderr
