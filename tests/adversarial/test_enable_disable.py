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
from tests.installenv import clean_env, make_uv_venv
from tests.paths import REPO
from tests.wheelfactory import build_wheel

TARGET = "linux-x86_64-py312"
SAME_PY = f"linux-x86_64-py{sys.version_info[0]}{sys.version_info[1]}"  # a real venv's Python


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
        [sys.executable, "-m", "resolver_hook", "enable", "--venv", str(venv), "--target", SAME_PY],
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


# --- the user's own lines, kept as bytes --------------------------------------------------

USERS = (
    "# my pip settings, keep this comment\n"
    "[global]\n"
    "Index-URL = https://example.org/simple\n"
    "; an old-style comment\n"
    "\n"
    "[install]\n"
    "Constraint = /mine.txt\n"
    "    /also-mine.txt\n"
    "no-compile = yes\n"
)


def test_enable_keeps_every_line_and_disable_after_an_edit_gives_them_back(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = venv / "pip.conf"
    conf.write_text(USERS)
    assert enable(capsys, venv)[0] == 0
    enabled = conf.read_text().splitlines()
    # Every line of the user's is there, in order, as written: ours only go between.
    it = iter(enabled)
    assert all(any(line == e for e in it) for line in USERS.splitlines())
    with conf.open("a") as f:
        f.write("[list]\nformat = columns\n")
    code, out, _ = disable(capsys, venv)
    assert code == 0
    assert "edited since 'enable'" in out
    assert conf.read_text() == USERS + "[list]\nformat = columns\n"


def test_enable_adds_our_constraint_as_pip_reads_it(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import configparser

    conf = venv / "pip.conf"
    conf.write_text(USERS)
    assert enable(capsys, venv)[0] == 0
    parser = configparser.RawConfigParser()  # as pip reads it
    parser.read_string(conf.read_text())
    ours = str(venvhook.hook_dir(venv) / "constraints.txt")
    assert parser.get("install", "constraint").split() == ["/mine.txt", "/also-mine.txt", ours]
    assert parser.get("global", "constraint").split() == [ours]
    assert parser.get("global", "index-url") == "https://example.org/simple"


# --- enable, disable and status at the same time, in real processes ----------------------


_WORKER = """
import random, sys
from pathlib import Path
from resolver_hook.host import HostProfile
from resolver_hook.install import venvhook

venv, seed = Path(sys.argv[1]), int(sys.argv[2])
profile = HostProfile(os="linux", arch="x86_64", python="3.12")
rng = random.Random(seed)
for _ in range(40):
    step = rng.choice(["enable", "disable", "status"])
    if step == "enable":
        venvhook.enable(venv, profile, ["demo==1.0"], ["https://example.org/links/"])
    elif step == "disable":
        venvhook.disable(venv)
    else:
        state = venvhook.read_state(venv)
        # One whole answer: on with its constraints, never half of a state.
        assert not state.enabled or state.constraints == ("demo==1.0",), state
"""


@pytest.mark.integration
@pytest.mark.parametrize("seed", range(3))
def test_concurrent_enable_disable_status_lose_nothing(
    venv: Path, tmp_path: Path, seed: int
) -> None:
    """Four processes each enable, disable and read the state 40 times in a random order."""
    conf = venv / "pip.conf"
    conf.write_text(USERS)
    env = clean_env(tmp_path, PYTHONPATH=str(REPO))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(venv), str(seed * 10 + n)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    # What the last of them left is coherent: on with its files, or off with the user's file.
    state = venvhook.read_state(venv)
    if state.enabled:
        assert conf.read_text().startswith("# resolver-hook: generated")
        assert (venvhook.hook_dir(venv) / "constraints.txt").is_file()
        assert venvhook.disable(venv).restored
    assert conf.read_text() == USERS
    assert not venvhook.hook_dir(venv).exists()


def test_a_held_lock_is_one_error_line_after_the_wait(
    venv: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver_hook import limits

    with subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(60)\n",
         str(venv)],
        stdout=subprocess.PIPE, text=True,
    ) as holder:  # fmt: skip
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "held\n"
            monkeypatch.setattr(limits, "HOOK_LOCK_SECONDS", 0.3)
            for command in ("enable", "disable", "status"):
                extra = ["--target", TARGET] if command == "enable" else []
                code, _, err = cli(capsys, command, "--venv", str(venv), *extra)
                assert code == 1, command
                assert err.startswith(f"error: {venv}: another resolver-hook enable/disable/status")
                assert "(waited 0.3 s for it)" in err
                assert err.count("\n") == 2
                assert "hint:" in err
            assert not venvhook.hook_dir(venv).exists()
        finally:
            holder.kill()
    assert enable(capsys, venv)[0] == 0  # free again


# --- the uv variables enable prints ------------------------------------------------------


def test_uv_find_links_is_printed_comma_separated(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    code, out, _ = enable(capsys, venv)
    assert code == 0
    (line,) = [x for x in out.splitlines() if "UV_FIND_LINKS=" in x]
    value = shlex.split(line.split("=", 1)[1])[0]
    pages = venvhook.read_state(venv).find_links
    assert len(pages) > 1  # the built-in manifests give several pages for this target
    assert value.split(",") == list(pages)


@pytest.mark.integration
def test_uv_reads_a_comma_separated_find_links_variable(tmp_path: Path) -> None:
    """What the line above relies on: uv splits UV_FIND_LINKS on commas."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    build_wheel(one, "alpha", "1.0")
    build_wheel(two, "beta", "1.0")
    venv = make_uv_venv(tmp_path / "uvenv")
    env = clean_env(tmp_path, UV_FIND_LINKS=f"{one},{two}")
    done = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "install", "--dry-run", "--no-index",
         "--python", str(venv / "bin" / "python"), "alpha", "beta"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "alpha==1.0" in done.stderr
    assert "beta==1.0" in done.stderr


# --- a target whose Python is not the venv's ---------------------------------------------


@pytest.mark.integration
def test_enable_for_another_python_than_the_venvs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    other = f"linux-x86_64-py{sys.version_info[0]}{sys.version_info[1] + 1}"
    code, out, err = cli(capsys, "enable", "--venv", str(venv), "--target", other)
    have = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: --target {other} names Python {sys.version_info[0]}.{sys.version_info[1] + 1}, "
        f"but {venv / 'bin' / 'python'} is Python {have}: pip.conf would pin builds"
    )
    assert not venvhook.hook_dir(venv).exists()
    assert cli(capsys, "enable", "--venv", str(venv), "--target", SAME_PY)[0] == 0
