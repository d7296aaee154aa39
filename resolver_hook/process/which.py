"""Where a program is: a virtual environment's interpreter, uv, a name on PATH.

Kept apart from :mod:`resolver_hook.process.installers` (which asks the installers, and
imports ``re``, ``pathlib`` and the process runner for it): a checked uv install looks
for uv and the venv's interpreter as the program starts, before those imports
(:func:`resolver_hook.install.uvcache.start_early`).

One contract: each ``find_*`` returns what it found or None (never raises); the caller
that cannot go on without it says so with :func:`missing_uv` or its own words.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from resolver_hook.errors import OperationalError
from resolver_hook.ground.record import NOWHERE, Recorder, path_kind

__all__ = ["find_uv", "missing_uv", "venv_python", "which"]


def venv_python(venv: str | os.PathLike[str]) -> str:
    """The interpreter of a virtual environment."""
    if sys.platform == "win32":
        return os.path.join(venv, "Scripts", "python.exe")
    return os.path.join(venv, "bin", "python")


def find_uv(env: Mapping[str, str] | None = None, record: Recorder = NOWHERE) -> str | None:
    """The uv that typing ``uv`` runs (PATH), else the binary of the ``uv`` package on
    PyPI (an installed package: the plan store's key holds ``sys.path``), else None."""
    found = which("uv", None if env is None else env.get("PATH"), record)
    if found:
        return found
    try:
        from uv import find_uv_bin  # the `uv` package from PyPI ships the binary

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return None


def which(name: str, path: str | None, record: Recorder = NOWHERE) -> str | None:
    """``shutil.which(name, path=path)``, each place looked in declared to ``record``
    (the folders of PATH before the one it is in hold no such program)."""
    if sys.platform == "win32":
        if record.active:
            record.refuse(f"{name} looked for on PATH")
        import shutil

        return shutil.which(name, path=path)
    if not record.active:
        return _which(name, path)
    for folder in (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if path_kind(candidate, record) == 1 and os.access(candidate, os.X_OK):
            return candidate
    return None


def _which(name: str, path: str | None) -> str | None:
    """``shutil.which(name, path=path)`` off Windows, step by step as it goes, without
    importing shutil: it imports the compression modules (zlib, bz2, lzma: ~1.7 ms), and
    every ``uv`` install looks for uv."""
    if os.path.dirname(name):
        return name if _runnable(name) else None
    if path is None:
        path = os.environ.get("PATH", None)
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:  # PATH='' finds nothing, PATH=':' looks in the current folder
        return None
    for folder in dict.fromkeys(os.path.normcase(d) for d in os.fsdecode(path).split(os.pathsep)):
        candidate = os.path.join(folder, name)
        if _runnable(candidate):
            return candidate
    return None


def _runnable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.F_OK | os.X_OK) and not os.path.isdir(path)


def missing_uv() -> OperationalError:
    """The error for a command that needs uv where :func:`find_uv` found none."""
    return OperationalError("uv not found on PATH", hint="install it: python3 -m pip install uv")
