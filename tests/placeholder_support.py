"""Helpers shared by the placeholder tests: other interpreters, built placeholders."""

from __future__ import annotations

import functools
import glob
import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
TILERT = DATA / "tilert.toml"


@functools.cache
def find_python(version: str) -> str | None:
    """An interpreter of ``version`` (``"3.12"``) on this machine, or None.

    Looks on PATH, then beside the running interpreter (pyenv-style
    ``versions/3.12.1/bin/python3``). Each candidate is asked for its version: pyenv
    shims exist for versions that are not selected and fail when run.
    """
    candidates = [shutil.which(f"python{version}")]
    base = Path(sys.base_prefix).parent
    candidates += sorted(glob.glob(str(base / f"{version}*" / "bin" / "python3")))
    for candidate in candidates:
        if not candidate:
            continue
        try:
            out = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == version:
            return candidate
    return None
