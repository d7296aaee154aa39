"""enable / disable against a venv's pip.conf that a careless user or a hostile setup shaped.

Threat model: pip.conf that cannot be written, edited by the user while the hook is on,
a symlink (also a dangling one), read-only, and a venv whose path has a space (pip
splits a configuration list value on whitespace, docs/facts.md section 3).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.install import venvhook
from tests.clirun import cli
from tests.installenv import clean_env
from tests.paths import REPO
from tests.wheelfactory import build_wheel

TARGET = "linux-x86_64-py312"


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    path = tmp_path / "venv"
    path.mkdir()
    (path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return path


def enable(capsys: pytest.CaptureFixture[str], venv: Path) -> tuple[int, str, str]:
    return cli(capsys, "enable", "--venv", str(venv), "--target", TARGET)


def disable(capsys: pytest.CaptureFixture[str], venv: Path) -> tuple[int, str, str]:
    return cli(capsys, "disable", "--venv", str(venv))


@pytest.mark.parametrize(
    ("command", "path", "error"),
    [
        ("enable", "", "error: --venv '': an empty path is not a folder"),
        ("status", "", "error: --venv '': an empty path is not a folder"),
        ("status", "/nonexistent-venv", "error: /nonexistent-venv is not a virtual environment "
         "(no pyvenv.cfg)"),
    ],
)  # fmt: skip
def test_a_venv_that_is_none_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str, path: str,
    error: str,
) -> None:  # fmt: skip
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    code, out, err = cli(capsys, command, "--venv", path)
    assert (code, out, err) == (2, "", error + "\n")


def test_failed_enable_leaves_nothing_behind(
    venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pip.conf cannot be written: a link into a folder that does not exist (this works
    # as root too, where permission bits would not stop the write).
    conf = venv / "pip.conf"
    conf.symlink_to(tmp_path / "missing-folder" / "pip.conf")
    code, _, err = enable(capsys, venv)
    assert code == 1
    assert err.count("error:") == 1
    assert "pip.conf: cannot write" in err
    assert not venvhook.hook_dir(venv).exists()
    assert conf.is_symlink()
    code, out, _ = cli(capsys, "status", "--venv", str(venv))
    assert (code, out.strip()) == (1, f"off in {venv}")
    # The user fixes it and writes a configuration of their own: the next enable and
    # disable give back the user's file, not a stale copy from the failed attempt.
    conf.unlink()
    conf.write_text("[global]\ntimeout = 60\n")
    assert enable(capsys, venv)[0] == 0
    assert disable(capsys, venv)[0] == 0
    assert conf.read_text() == "[global]\ntimeout = 60\n"


def test_disable_after_no_edit_restores_byte_for_byte(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = "# mine\n[global]\ntimeout = 60\n\n[install]\nno-compile = yes\n"
    conf = venv / "pip.conf"
    conf.write_text(original)
    assert enable(capsys, venv)[0] == 0
    code, out, _ = disable(capsys, venv)
    assert code == 0
    assert "pip configuration restored" in out
    assert conf.read_text() == original


@pytest.mark.parametrize("had_conf", [True, False], ids=["had-pip-conf", "no-pip-conf"])
def test_disable_after_a_user_edit_keeps_the_edit(
    venv: Path, capsys: pytest.CaptureFixture[str], had_conf: bool
) -> None:
    conf = venv / "pip.conf"
    if had_conf:
        conf.write_text("[global]\ntimeout = 60\n")
    assert enable(capsys, venv)[0] == 0
    ours = str(venvhook.hook_dir(venv) / "constraints.txt")
    with conf.open("a") as f:
        f.write("[install]\nno-compile = yes\n")
    code, out, _ = disable(capsys, venv)
    assert code == 0
    assert "edited since 'enable'" in out
    text = conf.read_text()
    assert "no-compile = yes" in text
    assert ("timeout = 60" in text) is had_conf
    assert ours not in text
    assert "resolver-hook" not in text
    assert not venvhook.hook_dir(venv).exists()


def test_symlinked_pip_conf_stays_a_symlink(
    venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "pip.conf"
    real.parent.mkdir()
    real.write_text("[global]\ntimeout = 60\n")
    conf = venv / "pip.conf"
    conf.symlink_to(real)
    assert enable(capsys, venv)[0] == 0
    assert conf.is_symlink()
    assert "constraints.txt" in real.read_text()
    assert disable(capsys, venv)[0] == 0
    assert conf.is_symlink()
    assert os.readlink(conf) == str(real)
    assert real.read_text() == "[global]\ntimeout = 60\n"


def test_dangling_symlink_is_kept(
    venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "later.conf"
    conf = venv / "pip.conf"
    conf.symlink_to(target)
    assert enable(capsys, venv)[0] == 0
    assert conf.is_symlink()
    assert target.exists()  # written through the link
    assert disable(capsys, venv)[0] == 0
    assert conf.is_symlink()
    assert not target.exists()  # dangling again, as before


def test_read_only_pip_conf_keeps_its_mode(venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = venv / "pip.conf"
    conf.write_text("[global]\ntimeout = 60\n")
    conf.chmod(0o444)
    assert enable(capsys, venv)[0] == 0
    assert conf.stat().st_mode & 0o777 == 0o444
    assert disable(capsys, venv)[0] == 0
    assert conf.stat().st_mode & 0o777 == 0o444
    assert conf.read_text() == "[global]\ntimeout = 60\n"


def test_disable_that_cannot_write_is_one_error_line(
    venv: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = venv / "pip.conf"
    conf.write_text("[global]\ntimeout = 60\n")
    assert enable(capsys, venv)[0] == 0
    enabled = conf.read_bytes()

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Every way of putting pip.conf back (rename, or a write into the folder) fails.
    monkeypatch.setattr(os, "replace", refuse)
    code, _, err = disable(capsys, venv)
    assert code == 1
    assert err == f"error: {conf}: cannot write: Permission denied\n"
    monkeypatch.undo()
    assert conf.read_bytes() == enabled  # still on, and it says so
    assert cli(capsys, "status", "--venv", str(venv))[1].startswith("on in")
    assert [p.name for p in venv.iterdir() if p.name.startswith(".pip.conf.")] == []


# --- a venv whose path has a space, with real pip --------------------------------------


@pytest.mark.integration
def test_venv_path_with_a_space_keeps_pip_working(tmp_path: Path) -> None:
    """pip splits `constraint = /a b/c.txt` into two paths; enable writes a form pip reads."""
    venv = tmp_path / "with space" / "venv"
    # Without pip of its own: the base interpreter's pip runs, with this venv's prefix,
    # so it reads this venv's pip.conf (pip's "site" configuration).
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
        check=True,
    )
    python = venv / "bin" / "python"
    empty = tmp_path / "empty.conf"
    empty.write_text("")
    # A real file (not os.devnull, which makes pip skip every configuration file) keeps
    # the user's own configuration out while the site one is read.
    env = clean_env(tmp_path, PIP_CONFIG_FILE=str(empty), PYTHONPATH=str(REPO))
    hook = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "enable", "--venv", str(venv), "--target", TARGET],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert hook.returncode == 0, hook.stderr
    cons = venvhook.hook_dir(venv) / "constraints.txt"
    # Pin a local wheel through the generated constraints file: only a pip that opened
    # that file refuses version 2.0.
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "demo", "1.0")
    build_wheel(wheels, "demo", "2.0")
    cons.write_text("demo==1.0\n")
    pip = [str(python), "-m", "pip", "install", "--dry-run", "--no-index"]
    pip += ["--find-links", str(wheels), "--report", "-", "--quiet"]
    pinned = subprocess.run(
        [*pip, "demo"], env=env, capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert pinned.returncode == 0, pinned.stderr
    assert '"version": "1.0"' in pinned.stdout
    refused = subprocess.run(
        [*pip, "demo==2.0"], env=env, capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert refused.returncode != 0
    assert "Could not open requirements file" not in refused.stderr
