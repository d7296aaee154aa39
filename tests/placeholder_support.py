"""Helpers shared by the placeholder tests: other interpreters, built placeholders, the
host dict the runtime reads."""

from __future__ import annotations

import functools
import glob
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def host(**changes: Any) -> dict[str, Any]:
    """A host dict as the runtime's detect() returns it: Linux x86_64, CPython 3.12."""
    base: dict[str, Any] = {
        "os": "linux",
        "arch": "x86_64",
        "python": [3, 12],
        "implementation": "cpython",
        "free_threaded": False,
        "libc": "glibc",
        "libc_version": "2.39",
        "nvidia": None,
        "nvidia_reason": "nvidia-smi not found",
        "overridden": [],
    }
    base.update(changes)
    return base
