"""What the install side learns about the target environment without starting it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook.install.args import parse_install_args
from resolver_hook.install.backends import Installer, python_version_of
from resolver_hook.install.checked import proof_unavailable
from resolver_hook.process.installers import (
    pip_said,
    pip_version,
    venv_declared_python,
    venv_pip_version,
    venv_python_version,
)
from resolver_hook.process.proc import Result
from tests.installenv import installed, make_venv


class Asked:
    """A runner that answers ``pip --version`` as ``answer`` and counts its calls."""

    def __init__(self, answer: str, *, stderr: str = "", returncode: int = 0) -> None:
        self.answer = answer
        self.stderr = stderr
        self.returncode = returncode
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], **kwargs: object) -> Result:
        self.calls.append(tuple(argv))
        return Result(
            argv=tuple(argv), returncode=self.returncode, stdout=self.answer, stderr=self.stderr
        )


def _venv(root: Path, *pips: str, cfg: bool = True) -> str:
    """A venv whose site-packages hold ``pips`` (one per Python, as pip's __init__.py
    says its version: ``""`` for a file with no version line)."""
    (root / "lib").mkdir()
    for minor, version in enumerate(pips, start=12):
        package = root / "lib" / f"python3.{minor}" / "site-packages" / "pip"
        package.mkdir(parents=True)
        line = f'__version__ = "{version}"\n' if version else "# no version here\n"
        (package / "__init__.py").write_text(f"from typing import List, Optional\n\n{line}")
    if cfg:
        (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "bin").mkdir()
    return str(root / "bin" / "python")


def test_a_venvs_pip_is_read_from_its_package(tmp_path: Path) -> None:
    python = _venv(tmp_path, "24.0")
    asked = Asked("pip 21.0.1 from /elsewhere (python 3.12)\n")
    assert venv_pip_version(python) == "24.0"
    assert pip_version(python, asked) == (24, 0)
    assert asked.calls == []


@pytest.mark.parametrize(
    ("pips", "cfg"),
    [(("24.0", "23.2.1"), True), ((), True), (("",), True), (("24.0",), False)],
    ids=["two pips", "no pip", "no version line", "no venv"],
)
def test_pip_is_asked_where_its_package_does_not_say(
    tmp_path: Path, pips: tuple[str, ...], cfg: bool
) -> None:
    python = _venv(tmp_path, *pips, cfg=cfg)
    asked = Asked("pip 21.0.1 from /x/site-packages/pip (python 3.12)\n")
    assert venv_pip_version(python) is None
    assert pip_version(python, asked) == (21, 0)
    assert asked.calls == [(python, "-m", "pip", "--version")]


def test_the_package_of_a_real_venvs_pip_names_its_version(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    assert venv_pip_version(str(python)) == installed(python)["pip"]


ANSWER = "pip 24.0 from /x/site-packages/pip (python 3.12)\n"


@pytest.mark.parametrize(
    ("stderr", "returncode", "said"),
    [
        ("", 0, (ANSWER, True)),
        ("WARNING: Ignoring invalid distribution ~ip\n", 0, (ANSWER, False)),
        ("", 1, ("", False)),
    ],
    ids=["answered", "with a warning", "failed"],
)
def test_what_pip_said_is_all_there_was_only_without_other_words(
    tmp_path: Path, stderr: str, returncode: int, said: tuple[str, bool]
) -> None:
    """A second query could only show what the first one hid: its standard error."""
    python = _venv(tmp_path, cfg=False)
    asked = Asked(ANSWER, stderr=stderr, returncode=returncode)
    assert pip_said(python, asked) == said
    assert asked.calls == [(python, "-m", "pip", "--version")]


def test_pip_metadata_is_all_there_was(tmp_path: Path) -> None:
    python = _venv(tmp_path, "24.0")
    asked = Asked(ANSWER)
    assert pip_said(python, asked) == ("pip 24.0", True)
    assert asked.calls == []


def test_the_proof_check_takes_what_pip_said_already(tmp_path: Path) -> None:
    """Given pip's words, the check starts no pip of its own: this interpreter does not
    exist, and asked, it would be "a pip that does not answer"."""
    python = str(tmp_path / "absent" / "bin" / "python")
    installer = Installer(tool="pip", command=(python, "-m", "pip", "install"), python=python)
    parsed = parse_install_args("pip", ["demo"])
    assert proof_unavailable(installer, parsed, said=ANSWER) is None
    asked_itself = proof_unavailable(installer, parsed)
    assert asked_itself is not None
    assert asked_itself.startswith("a pip that does not answer cannot report")
    old = proof_unavailable(installer, parsed, said="pip 21.0 from /x (python 3.12)\n")
    assert old is not None
    assert old.startswith("pip 21.0 cannot report")


VERSION_QUESTION = "import sys; print('%d.%d' % sys.version_info[:2])"


def _venv_of(root: Path, cfg: str, *libs: str) -> str:
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(cfg)
    for name in libs:
        (root / name / "site-packages").mkdir(parents=True)
    return str(root / "bin" / "python")


@pytest.mark.parametrize(
    ("cfg", "libs", "expected"),
    [
        ("home = /usr/bin\nversion = 3.12.4\n", ["lib/python3.12"], (3, 12)),  # python -m venv
        ("version_info = 3.13.1\n", ["lib/python3.13t"], (3, 13)),  # uv, free-threaded
        ("version = 3.9.0\n", ["lib/python3.12"], None),  # the two disagree: ask it
        ("version = 3.12.4\n", ["lib/python3.12", "lib/python3.11"], None),
        ("version = 3.12.4\n", ["Lib"], None),  # Windows: Lib names no version
        ("home = /usr/bin\n", ["lib/python3.12"], None),
    ],
)
def test_a_venv_s_python_is_read_where_its_files_agree(
    tmp_path: Path, cfg: str, libs: list[str], expected: tuple[int, int] | None
) -> None:
    python = _venv_of(tmp_path / "v", cfg, *libs)
    assert venv_python_version(python) == expected
    asked = Asked("3.10\n")
    assert python_version_of(python, asked) == (expected or (3, 10))
    assert asked.calls == ([] if expected else [(python, "-c", VERSION_QUESTION)])


def test_no_pyvenv_cfg_is_no_venv(tmp_path: Path) -> None:
    (tmp_path / "lib" / "python3.12").mkdir(parents=True)
    assert venv_python_version(str(tmp_path / "bin" / "python")) is None
    assert venv_declared_python(str(tmp_path / "bin" / "python")) is None
