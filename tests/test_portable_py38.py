"""resolver_hook/portable/ runs on Python 3.8 with nothing installed.

Placeholders embed these modules verbatim and run wherever pip or uv builds them, so
they must parse as Python 3.8 and run on a bare 3.8 interpreter. The syntax check
always runs; the run on a real 3.8 needs one on this machine (pyenv or PATH).
"""

from __future__ import annotations

import ast
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from resolver_hook.publish.placeholder.render import PORTABLE_MODULES

PORTABLE = Path(__file__).resolve().parents[1] / "resolver_hook" / "portable"


def python38() -> str | None:
    """A Python 3.8 that runs: pyenv's own binaries first (its shims may refuse)."""
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    candidates += [p for p in [shutil.which("python3.8")] if p]
    for exe in candidates:
        try:
            proc = subprocess.run([exe, "-c", "pass"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0:
            return exe
    return None


@pytest.mark.parametrize("path", sorted(PORTABLE.glob("*.py")), ids=lambda p: p.name)
def test_portable_modules_parse_as_python_38(path: Path) -> None:
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 8))


def test_every_embedded_module_is_portable() -> None:
    names = {p.stem for p in PORTABLE.glob("*.py")} - {"__init__"}
    assert set(PORTABLE_MODULES) == names  # the placeholder embeds every one


SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import cuda, overrides, platforms, visible
assert sys.version_info[:2] == (3, 8), sys.version
assert cuda.cuda_for_driver("580.95.05") == ((13, 0), True)
assert not cuda.parse_target("sm_80").runs_on((8, 7))
assert cuda.decode_cuda_version(13000) == (13, 0)
assert visible.select("0,2,-1,1", [(0, None), (1, None), (2, None)])[0] == [0, 2]
assert platforms.parse_platform("win32")["arch"] == "i686"
assert platforms.linux_platforms("x86_64", "glibc", "2.17")[1] == "manylinux2014_x86_64"
assert platforms.is_free_threaded() is False
assert overrides.ENV_OVERRIDES["sm"] == "RESOLVER_HOOK_OVERRIDE_SM"
print("ok")
"""


def test_portable_modules_run_on_python_38() -> None:
    exe = python38()
    if exe is None:
        pytest.skip("no Python 3.8 on this machine (the syntax check above still ran)")
    out = subprocess.run(
        [exe, "-I", "-c", SCRIPT, str(PORTABLE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n"
