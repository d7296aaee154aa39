"""Which pip runs when no venv is active and ``pip`` on PATH is not pip's own script.

Threat model: pyenv's shims (``#!/usr/bin/env bash`` scripts that exec the real pip),
distributions' wrappers, and a wrapper that is no pip at all. The interpreter named by
a wrapper's ``#!`` line (sh, bash) is never run as a Python: the real pip runs, or one
error line says why it cannot be found. A file named ``pip`` in the current folder
(what ``sh -m pip`` would have run) never runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError
from resolver_hook.install.args import parse_install_args
from resolver_hook.install.backends import find_installer
from tests.installenv import clean_env, make_venv
from tests.paths import REPO
from tests.wheelfactory import build_wheel


def _wrapper(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pip = folder / "pip"
    pip.write_text(f"#!/usr/bin/env bash\n{body}\n")
    pip.chmod(0o755)
    return pip


@pytest.fixture
def real_venv(tmp_path: Path) -> Path:
    return make_venv(tmp_path / "real")


@pytest.mark.integration
@pytest.mark.parametrize(
    "body",
    ['exec "{venv}/bin/pip" "$@"', 'exec "{venv}/bin/python" -m pip "$@"'],
    ids=["shim-to-script", "shim-to-module"],
)
def test_a_shell_wrapper_runs_the_pip_it_wraps(tmp_path: Path, real_venv: Path, body: str) -> None:
    shims = tmp_path / "shims"
    _wrapper(shims, body.format(venv=real_venv.parent.parent))
    env = {"PATH": f"{shims}:/usr/bin:/bin"}
    installer = find_installer("pip", parse_install_args("pip", []), env=env)
    # The venv's own interpreter (python3.X beside python), never bash.
    assert Path(installer.python).parent == real_venv.parent
    assert installer.command == (installer.python, "-m", "pip", "install")


@pytest.mark.integration
def test_a_wrapper_through_the_cli_installs_with_the_real_pip(
    tmp_path: Path, real_venv: Path
) -> None:
    shims = tmp_path / "shims"
    _wrapper(shims, f'exec "{real_venv.parent}/pip" "$@"')
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "ran-the-wrong-pip"
    # What '/bin/sh -m pip' ran: a file named pip in the current folder.
    (work / "pip").write_text(f"touch {marker}\n")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "demo", "1.0")
    env = clean_env(tmp_path, PATH=f"{shims}:/usr/bin:/bin", PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "pip", "install", "--no-index",
         "--find-links", str(wheels), "demo"],
        env=env, cwd=work, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    listed = subprocess.run(
        [str(real_venv), "-m", "pip", "show", "demo"], capture_output=True, text=True, check=False
    )
    assert "Version: 1.0" in listed.stdout


def test_a_wrapper_that_is_no_pip_is_one_clear_error(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    pip = _wrapper(shims, "echo hello")
    with pytest.raises(OperationalError) as info:
        find_installer("pip", parse_install_args("pip", []), env={"PATH": f"{shims}:/usr/bin:/bin"})
    assert info.value.message == (
        f"{pip} (the pip on PATH) is a wrapper script, and 'pip --version' did not say "
        "which Python it runs"
    )
    assert info.value.hint is not None
    assert "activate the virtual environment" in info.value.hint


def test_a_wrapper_naming_a_pip_no_python_imports_is_one_clear_error(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    fake = tmp_path / "nowhere" / "lib" / "python3.99" / "site-packages" / "pip"
    pip = _wrapper(shims, f"echo 'pip 99.0 from {fake} (python 3.99)'")
    with pytest.raises(OperationalError) as info:
        find_installer("pip", parse_install_args("pip", []), env={"PATH": f"{shims}:/usr/bin:/bin"})
    assert info.value.message == (
        f"{pip} (the pip on PATH) is a wrapper script running the pip in {fake}, and "
        "no Python beside that folder imports it"
    )
