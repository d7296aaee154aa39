"""Issue 42, installs: real pip and uv on the loopback index of tests/installenv.py.

- a dry run killed by a signal is 128+N, not the 247 of ``sys.exit(-9)``;
- an optional package whose put-back fails is not said to be put back;
- ``--verify-kernels`` says a wheel holds no kernels instead of "runs on every GPU";
- two ``env create DIR`` at once: the second removes nothing it did not make.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.installenv import GpuIndex, make_venv
from tests.test_install import B200, install, versions

pytestmark = pytest.mark.integration

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/cmdline")

# A .pth line: the interpreter kills itself (SIGKILL) when its command line holds the
# given word, so the real pip dies at the very start of the run that has it.
_KILL_WHEN = (
    "import os; b'{word}' in open('/proc/self/cmdline', 'rb').read().split(b'\\0') "
    "and os.kill(os.getpid(), 9)\n"
)


def _site(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python*/site-packages")
    return site


@LINUX
def test_a_dry_run_killed_by_sigkill_exits_137(gpu_index: GpuIndex, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    (_site(venv) / "zz_kill_dry_run.pth").write_text(_KILL_WHEN.format(word="--dry-run"))
    before = versions(venv)
    proc = install("pip", gpu_index, venv, "demo-gpu", target=B200)
    assert proc.returncode == 137, proc.stderr
    assert "nothing was installed: pip's dry run failed (exit 137)" in proc.stderr
    assert versions(venv) == before
