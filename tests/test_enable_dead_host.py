"""enable with a flavour host down: pip.conf names no page that could not be read (pip
would retry each one on every later install), and one line says what was left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.manifest import builtin_manifests
from tests.clirun import cli
from tests.frozen import frozen_manifests
from tests.indexreplica import dead_host_flags
from tests.test_venvhook import pip_reads


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return tmp_path / "venv"


def test_enable_writes_no_page_it_could_not_read(
    venv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_CONSTRAINT", raising=False)
    flags = dead_host_flags(frozen_manifests().values())
    argv = ["enable", "--venv", str(venv), "--target", "linux-x86_64-py312-cuda13.0-sm100"]
    code, out, _ = cli(capsys, *argv, *flags)
    assert code == 0, out
    # Every page was on the dead host: pip.conf names none of them.
    assert pip_reads(venv / "pip.conf", "global", "find-links") == []
    constraints = (venv / "resolver-hook" / "constraints.txt").read_text()
    assert not any(x.startswith("torch==") for x in constraints.splitlines())
    (said,) = [x for x in out.splitlines() if x.startswith("  left out ")]
    assert "torch" in said.split(":", 1)[0]
    assert "127.0.0.1 unreachable (connection refused)" in said
    assert "run 'resolver-hook enable' again" in said
    assert "UV_FIND_LINKS" not in out


@pytest.mark.builtin_data
def test_a_computed_page_that_follows_a_left_out_build_is_left_out(
    venv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # pyg-lib's page is computed from torch's build; torch's page is down, so torch is
    # left out, and so is the page that names its build (never read: nothing says it is
    # up, and pip would not be held to the torch it is for).
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    flags = dead_host_flags(builtin_manifests().values())
    argv = ["enable", "--venv", str(venv), "--target", "linux-x86_64-py312", *flags]
    code, out, _ = cli(capsys, *argv)
    assert code == 0, out
    (said,) = [x for x in out.splitlines() if x.startswith("  left out ")]
    names = said.removeprefix("  left out ").split(":", 1)[0].split(", ")
    assert {"torch", "pyg-lib"} <= set(names)
    assert "its page follows torch's build, left out" in said
    assert pip_reads(venv / "pip.conf", "global", "find-links") == []
