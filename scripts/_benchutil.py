"""Shared by the benchmarks: measure the tool as `pip install` leaves it.

`pip install` compiles every module to bytecode; an editable checkout run with
PYTHONDONTWRITEBYTECODE=1 (as on our CI machines) compiles resolver_hook from source
at every start instead, which is not what users run. So the benchmarks compile it
first, into the usual (git-ignored) __pycache__ folders.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "resolver_hook"


def compile_package() -> None:
    """Write resolver_hook's bytecode, as installing the package would."""
    compileall.compile_dir(str(PACKAGE), quiet=1)
