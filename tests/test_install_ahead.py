"""pip's dry-run interpreter started before the plan (resolver_hook.install.session
pip_started, resolver_hook.install.checked pip_ahead): started as soon as the command
line is read for a checked pip install in an active virtual environment whose pip
writes reports, taken by the session for that interpreter, stopped unused otherwise."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from resolver_hook.install.args import parse_install_args
from resolver_hook.install.backends import Installer
from resolver_hook.install.checked import pip_ahead
from resolver_hook.install.session import pip_started


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A virtual environment's files as the hook reads them (pyvenv.cfg, pip's version in
    its __init__.py), its python this interpreter, and a stand-in for pip's entry point
    on PYTHONPATH; the variables of a run in it."""
    root = tmp_path / "venv"
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink(sys.executable, root / "bin" / "python")
    pip = root / "lib" / "python3.99" / "site-packages" / "pip"
    (pip / "_internal" / "cli").mkdir(parents=True)
    (pip / "__init__.py").write_text('__version__ = "26.0"\n')
    (pip / "_internal" / "__init__.py").write_text("")
    (pip / "_internal" / "cli" / "__init__.py").write_text("")
    (pip / "_internal" / "cli" / "main.py").write_text(
        "def main(args):\n    print('ran', ' '.join(args))\n    return 0\n"
    )
    env = {**os.environ, "VIRTUAL_ENV": str(root), "PYTHONPATH": str(pip.parent)}
    env.pop("COLUMNS", None)
    return root, env


def _command(root: Path) -> list[str]:
    return [str(root / "bin" / "python"), "-m", "pip"]


def test_a_checked_pip_install_starts_its_dry_runs_interpreter_first(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, env = venv
    parsed = parse_install_args("pip", ["demo"])
    started = pip_started("pip", parsed, env, proof=True)
    assert started is not None
    try:
        args = ["install", "--dry-run", "demo"]
        assert started.fits(_command(root), args, env)
        seen: list[str] = []
        assert started.dry_run(args, seen.append)[0] == 0
        assert "".join(seen) == "ran install --dry-run demo\n"
    finally:
        started.close()


@pytest.mark.parametrize(
    ("tool", "words", "proof", "version"),
    [
        ("pip", ["demo"], False, "26.0"),  # --no-proof: no dry run
        ("uv", ["demo"], True, "26.0"),  # uv's dry run is a process of its own
        ("pip", ["--report", "r.json", "demo"], True, "26.0"),  # the user's report
        ("pip", ["demo"], True, "22.1"),  # --report came in pip 22.2
    ],
)
def test_nothing_starts_where_no_dry_run_of_this_pip_comes(
    venv: tuple[Path, dict[str, str]], tool: str, words: list[str], proof: bool, version: str
) -> None:
    root, env = venv
    init = next((root / "lib").glob("python*/site-packages/pip/__init__.py"))
    init.write_text(f'__version__ = "{version}"\n')
    assert pip_started(tool, parse_install_args(tool, words), env, proof=proof) is None


def test_nothing_starts_outside_a_virtual_environment(venv: tuple[Path, dict[str, str]]) -> None:
    _, env = venv
    env = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    assert pip_started("pip", parse_install_args("pip", ["demo"]), env, proof=True) is None


def test_the_session_takes_the_one_started_for_its_interpreter(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, env = venv
    parsed = parse_install_args("pip", ["demo"])
    python = str(root / "bin" / "python")
    installer = Installer(tool="pip", command=(python, "-m", "pip", "install"), python=python)
    started = pip_started("pip", parsed, env, proof=True)
    assert started is not None
    assert pip_ahead(installer, parsed, env, started=started) is started
    started.close()
    # Where the session's own checks disagree (here: the uv of --python), it is stopped.
    other = pip_started("pip", parsed, env, proof=True)
    assert other is not None
    uv = Installer(tool="uv", command=("uv", "pip", "install"), python=python)
    assert pip_ahead(uv, parse_install_args("uv", ["demo"]), env, started=other) is None
    assert other.proc is None  # stopped
