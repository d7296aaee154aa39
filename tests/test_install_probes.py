"""What the install side learns about the target environment without starting it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook._installers import pip_version, venv_pip_version
from resolver_hook._proc import Result
from tests.installenv import installed, make_venv


class Asked:
    """A runner that answers ``pip --version`` as ``answer`` and counts its calls."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], **kwargs: object) -> Result:
        self.calls.append(tuple(argv))
        return Result(argv=tuple(argv), returncode=0, stdout=self.answer)


def _venv(root: Path, *pips: str, cfg: bool = True) -> str:
    site = root / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    for version in pips:
        (site / f"pip-{version}.dist-info").mkdir()
    if cfg:
        (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "bin").mkdir()
    return str(root / "bin" / "python")


def test_a_venvs_pip_is_read_from_its_metadata(tmp_path: Path) -> None:
    python = _venv(tmp_path, "24.0")
    asked = Asked("pip 21.0.1 from /elsewhere (python 3.12)\n")
    assert venv_pip_version(python) == "24.0"
    assert pip_version(python, asked) == (24, 0)
    assert asked.calls == []


@pytest.mark.parametrize(
    ("pips", "cfg"),
    [(("24.0", "23.2.1"), True), ((), True), (("24.0",), False)],
    ids=["two pips", "no pip metadata", "no venv"],
)
def test_pip_is_asked_where_the_metadata_does_not_say(
    tmp_path: Path, pips: tuple[str, ...], cfg: bool
) -> None:
    python = _venv(tmp_path, *pips, cfg=cfg)
    asked = Asked("pip 21.0.1 from /x/site-packages/pip (python 3.12)\n")
    assert venv_pip_version(python) is None
    assert pip_version(python, asked) == (21, 0)
    assert asked.calls == [(python, "-m", "pip", "--version")]


def test_the_metadata_of_a_real_venv_names_the_pip_it_runs(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    assert venv_pip_version(str(python)) == installed(python)["pip"]
