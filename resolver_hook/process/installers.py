"""What the installers are: the interpreter a ``pip`` on PATH runs, pip's and a venv's
Python's versions, used by the install side and by ``placeholder check`` alike (where
uv and a venv's interpreter are: :mod:`resolver_hook.process.which`).

:func:`pip_python` finds the interpreter a ``pip`` on PATH runs: from pip's own script
(its ``#!`` line, or distlib's ``/bin/sh`` trampoline); when ``pip`` is a wrapper script
(pyenv's shims are ``#!/usr/bin/env bash``, distributions wrap pip too) by asking it
``pip --version`` and taking the interpreter that imports that very pip. A wrapper's
interpreter is never taken for Python.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from pathlib import Path

from resolver_hook.errors import OperationalError
from resolver_hook.ground.record import NOWHERE, Recorder, file_bytes, folder_names, path_kind
from resolver_hook.process.proc import Runner, capture
from resolver_hook.process.which import which

__all__ = [
    "QUERY_TIMEOUT",
    "parse_pip_version",
    "pip_python",
    "pip_said",
    "pip_version",
    "venv_declared_python",
    "venv_pip_version",
    "venv_python_version",
]

# Seconds a query of an installer or an interpreter may take.
QUERY_TIMEOUT = 60.0


# The patterns of a pip found on PATH (outside the active virtual environment), compiled
# (and cached by re) where one is looked at: ~0.2 ms that every other install skips.
# distlib (pip's script maker) writes "#!/bin/sh" and this exec line when the
# interpreter's path has a space or is too long for a "#!" line.
_TRAMPOLINE = rb"""'''exec' "?(.+?)"? "\$0" "\$@"\s*"""
# What an interpreter's file is called: python, python3, python3.12, pypy3, python.exe.
_PYTHON_NAME = r"(python|pypy)(\d+(\.\d+)?)?[tdm]?(\.exe)?"  # any case
# `pip --version`: "pip 24.0 from /x/lib/python3.12/site-packages/pip (python 3.12)".
_PIP_VERSION = r"pip \S+ from (?P<dir>.+) \(python (?P<py>\d+\.\d+)\)\s*"


def _shebang_python(script: str, record: Recorder = NOWHERE) -> str | None:
    """The Python named by ``script``'s ``#!`` line; None when it names something else."""
    try:
        f = io.BytesIO(file_bytes(script, 512 + 4096, record) or b"")
    except OSError:
        return None
    first, second = f.readline(512), f.readline(4096)
    if not first.startswith(b"#!"):
        return None
    m = re.fullmatch(_TRAMPOLINE, second)
    if first.strip() == b"#!/bin/sh" and m:
        path = m.group(1).decode(errors="replace")
        return path if _is_python_name(path) and path_kind(path, record) is not None else None
    parts = first[2:].strip().split()
    if not parts:
        return None
    path = parts[0].decode(errors="replace")
    if path.endswith("/env") and len(parts) > 1:
        name = parts[1].decode(errors="replace")
        return which(name, None, record) if _is_python_name(name) else None
    return path if _is_python_name(path) and path_kind(path, record) is not None else None


def _is_python_name(path: str) -> bool:
    return re.fullmatch(_PYTHON_NAME, os.path.basename(path), re.IGNORECASE) is not None


def pip_python(
    pip: str,
    run: Runner = capture,
    env: Mapping[str, str] | None = None,
    record: Recorder = NOWHERE,
) -> str:
    """The interpreter whose pip the script ``pip`` runs. OperationalError when no
    interpreter can be shown to run it (a wrapper whose pip cannot be found)."""
    python = _shebang_python(pip, record)
    if python is not None:
        return python
    record.refuse(f"{pip} --version asked")
    done = run([pip, "--version"], timeout=QUERY_TIMEOUT, env=None if env is None else dict(env))
    m = re.fullmatch(_PIP_VERSION, done.stdout) if done.returncode == 0 else None
    if m is None:
        raise OperationalError(
            f"{pip} (the pip on PATH) is a wrapper script, and 'pip --version' did not say "
            "which Python it runs",
            hint="activate the virtual environment to install into, or run "
            "'python3 -m resolver_hook pip install ...' with the Python whose pip to use",
        )
    pip_dir = m.group("dir")
    for candidate in _pythons_near(Path(pip_dir), m.group("py")):
        check = run(
            [candidate, "-c", "import os, pip; print(os.path.realpath(pip.__path__[0]))"],
            timeout=QUERY_TIMEOUT,
        )
        if check.returncode == 0 and check.stdout.strip() == os.path.realpath(pip_dir):
            return candidate
    raise OperationalError(
        f"{pip} (the pip on PATH) is a wrapper script running the pip in {pip_dir}, and "
        "no Python beside that folder imports it",
        hint="activate the virtual environment to install into, or run "
        "'python3 -m resolver_hook pip install ...' with the Python whose pip to use",
    )


def _pythons_near(pip_dir: Path, version: str) -> list[str]:
    """Interpreters that may own ``pip_dir`` (``PREFIX/lib/pythonX.Y/site-packages/pip``,
    ``PREFIX/Lib/site-packages/pip``, ``/usr/lib/python3/dist-packages/pip``), nearest
    prefix first."""
    names = [f"python{version}", "python3", "python"]
    found: list[str] = []
    for prefix in list(pip_dir.parents)[1:5]:
        for folder in (prefix / "bin", prefix / "Scripts", prefix):
            for name in names:
                for path in (folder / name, folder / f"{name}.exe"):
                    if path.is_file() and str(path) not in found:
                        found.append(str(path))
    if pip_dir.parts[:3] == ("/", "usr", "lib"):  # a distribution's pip: /usr/bin/python3
        found += [p for p in (f"/usr/bin/python{version}", "/usr/bin/python3") if p not in found]
    return found


def pip_version(python: str, run: Runner = capture) -> tuple[int, int] | None:
    """The major.minor of the pip ``python -m pip`` runs; None when it does not say.
    Read from a virtual environment's pip metadata where :func:`venv_pip_version` can,
    else by asking it."""
    return parse_pip_version(pip_said(python, run)[0])


def pip_said(python: str, run: Runner = capture, record: Recorder = NOWHERE) -> tuple[str, bool]:
    """What :func:`pip_version` reads: ``pip 24.0 ...`` ("" when pip does not say), and
    whether that is all there was to it (read from the metadata, or asked and answered
    with nothing on standard error): asking again would show nothing more."""
    found = venv_pip_version(python, record)
    if found is not None:
        return f"pip {found}", True
    record.refuse(f"{python} -m pip --version asked")
    done = run([python, "-m", "pip", "--version"], timeout=QUERY_TIMEOUT)
    if done.returncode != 0:
        return "", False
    return done.stdout, not done.stderr


def parse_pip_version(text: str) -> tuple[int, int] | None:
    """The major.minor of ``pip X.Y ...``; None for any other text."""
    m = re.match(r"pip (\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def venv_pip_version(python: str, record: Recorder = NOWHERE) -> str | None:
    """The version of the pip in the virtual environment of ``python`` (``24.0``), read from
    the ``__version__`` line of the one ``pip/__init__.py`` of its site-packages (the code
    ``python -m pip`` runs), without starting an interpreter (which costs more than the
    rest of a small install's planning); None when ``python`` is no venv's, or it holds no
    such file or more than one, or the file does not say.

    The folder of installed packages is never listed: an install changes it, and what a
    plan read must stay as it was for a stored plan to be replayed
    (:mod:`resolver_hook._plancache`). What is read is declared to ``record``
    (:mod:`resolver_hook.ground.record`), so a venv made again with the same pip replays it."""
    prefix = os.path.dirname(os.path.dirname(python))
    if path_kind(os.path.join(prefix, "pyvenv.cfg"), record) != 1:
        return None
    try:
        places = [os.path.join(prefix, "lib", n) for n in _lib_pythons(prefix, record)]
        places.append(os.path.join(prefix, "Lib"))  # Windows
        inits = [os.path.join(p, "site-packages", "pip", "__init__.py") for p in places]
        found = [
            data for f in inits if (data := file_bytes(f, _PIP_INIT_LIMIT, record)) is not None
        ]
    except OSError:
        return None
    if len(found) != 1:
        return None
    m = re.search(_PIP_VERSION_LINE, found[0].decode("utf-8", "replace"))
    return m.group(1) if m else None


def venv_declared_python(python: str, record: Recorder = NOWHERE) -> tuple[int, int] | None:
    """The major.minor a virtual environment's ``pyvenv.cfg`` gives for its Python
    (``version`` as ``python -m venv`` writes it, ``version_info`` as uv and virtualenv
    do), read without running anything; None when ``python`` is no venv's or the file
    does not say."""
    cfg = os.path.join(os.path.dirname(os.path.dirname(python)), "pyvenv.cfg")
    try:
        data = file_bytes(cfg, _PYVENV_LIMIT, record)
    except OSError:
        return None
    for line in [] if data is None else data.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        m = _MAJOR_MINOR.match(value) if sep else None
        if key.strip() in ("version", "version_info") and m:
            return int(m.group(1)), int(m.group(2))
    return None


def venv_python_version(python: str, record: Recorder = NOWHERE) -> tuple[int, int] | None:
    """The major.minor of a virtual environment's Python where two of its files agree:
    ``pyvenv.cfg`` (:func:`venv_declared_python`) and the one ``lib/pythonX.Y`` folder
    (``pythonX.Yt`` free-threaded) its packages go in. None otherwise (a Windows venv,
    whose ``Lib`` names no version; a venv whose files disagree): then the interpreter
    is asked."""
    declared = venv_declared_python(python, record)
    if declared is None:
        return None
    try:
        found = _lib_pythons(os.path.dirname(os.path.dirname(python)), record)
    except OSError:
        return None
    x_y = f"python{declared[0]}.{declared[1]}"
    return declared if found in ([x_y], [x_y + "t"]) else None


def _lib_pythons(prefix: str, record: Recorder = NOWHERE) -> list[str]:
    """The ``pythonX.Y`` folders in a venv's ``lib/`` (declared); OSError where it
    cannot be listed."""
    names = folder_names(os.path.join(prefix, "lib"), record) or ()
    return [n for n in names if n.startswith("python")]


_PYVENV_LIMIT = 1 << 16
_MAJOR_MINOR = re.compile(r"\s*(\d+)\.(\d+)")

# pip's __init__.py is a few hundred bytes; its version line reads `__version__ = "24.0"`
# (compiled when first used: a uv install reads none).
_PIP_INIT_LIMIT = 1 << 16
_PIP_VERSION_LINE = r"""(?m)^__version__\s*=\s*["']([0-9][0-9A-Za-z.+!-]*)["']"""
