"""Issue 49: JSON nested too deeply for the decoder (``[`` 100,000 deep) in a file the
user's other processes can write is read as that file not being JSON: the same error
line, note or fallback as ``{not json``, never a RecursionError traceback. Each case
runs the CLI as a user would, and compares the deep file with a plainly broken one."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from resolver_hook.install.kernels import cached_scan
from resolver_hook.install.venvhook import enable, hook_dir
from tests.clirun import cli
from tests.installenv import _site_packages, make_venv
from tests.test_venvhook import LINKS, PIN, PROFILE

TARGET = "linux-x86_64-py312-cuda13.0-sm100"
DEEP = b"[" * 100_000
BROKEN = b"{not json"
# A number past the interpreter's bound on the digits of an int it reads (4,300 by
# default): json.loads raises a plain ValueError, neither a JSONDecodeError nor a
# RecursionError.
HUGE = b'{"profile": ' + b"9" * 5_000 + b"}"


def _without_parse_error(text: str) -> list[str]:
    return [x.split(": not valid JSON")[0].split("unreadable (")[0] for x in text.splitlines()]


def _same_as_broken(
    run: Callable[[Path, bytes], tuple[int, str, str]], tmp_path: Path, bad: bytes = DEEP
) -> tuple[int, str, str]:
    """``run(folder, content)`` for the ``bad`` file (by default the deep one) and for a
    broken one, each in a folder of the same name: the bad one answers as the broken one
    does, with no traceback."""
    answers = []
    for i, content in enumerate((BROKEN, bad)):
        folder = tmp_path / str(i) / "case"
        folder.mkdir(parents=True)
        code, out, err = run(folder, content)
        assert "Traceback" not in out + err
        answers.append((code, out.replace(str(folder), "CASE"), err.replace(str(folder), "CASE")))
    broken, deep = answers
    assert deep[0] == broken[0], (deep, broken)
    for d, b in zip(deep[1:], broken[1:], strict=True):  # the parse error's words differ
        assert _without_parse_error(d) == _without_parse_error(b)
    return deep


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (DEEP, "nested too deeply"),
        (HUGE, f"a number of more than {sys.get_int_max_str_digits()} digits"),
    ],
    ids=["nested", "huge-number"],
)
def test_a_profile_file_nested_too_deeply_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: bytes, said: str
) -> None:
    def run(folder: Path, content: bytes) -> tuple[int, str, str]:
        (folder / "profile.json").write_bytes(content)
        return cli(capsys, "plan", "torch", "--profile", str(folder / "profile.json"), "--offline")

    code, _, err = _same_as_broken(run, tmp_path, bad)
    assert code == 2
    assert err.startswith("error: --profile CASE/profile.json: not valid JSON")
    assert said in err.splitlines()[0]


@pytest.mark.parametrize("command", ["status", "disable"])
def test_a_hook_state_nested_too_deeply_reads_as_a_broken_one(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(folder: Path, content: bytes) -> tuple[int, str, str]:
        (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (folder / "pip.conf").write_text("[global]\ntimeout = 60\n")
        enable(folder, PROFILE, [PIN], [LINKS])
        (hook_dir(folder) / "state.json").write_bytes(content)
        return cli(capsys, command, "--venv", str(folder))

    _same_as_broken(run, tmp_path)


def test_a_direct_url_json_nested_too_deeply_is_no_recorded_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(folder: Path, content: bytes) -> tuple[int, str, str]:
        python = make_venv(folder / "venv", with_pip=False)
        info = _site_packages(folder / "venv") / "deep-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deep\nVersion: 1.0\n")
        (info / "direct_url.json").write_bytes(content)
        return cli(capsys, "doctor", "--python", str(python), "--target", TARGET)

    _same_as_broken(run, tmp_path)


def test_a_toolkit_version_json_nested_too_deeply_is_not_its_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(folder: Path, content: bytes) -> tuple[int, str, str]:
        (folder / "bin").mkdir()
        (folder / "version.json").write_bytes(content)
        monkeypatch.setenv("CUDA_HOME", str(folder))
        return cli(capsys, "doctor", "--build", "--target", TARGET)

    _same_as_broken(run, tmp_path)


@pytest.mark.parametrize("content", [DEEP, BROKEN], ids=["nested", "not-json"])
def test_a_kernel_scan_cache_entry_nested_too_deeply_is_a_miss(
    content: bytes, tmp_path: Path
) -> None:
    sha = "ab" * 32
    (tmp_path / f"{sha}.json").write_bytes(content)
    os.chmod(tmp_path / f"{sha}.json", 0o600)
    assert cached_scan(sha, tmp_path) is None
