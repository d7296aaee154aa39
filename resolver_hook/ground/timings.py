"""An opt-in record of where an install's time goes, for the install benchmark.

Off unless ``RESOLVER_HOOK_TIMINGS`` names a file. Then the install command times its
phases (:func:`phase`) and every child process it runs (:mod:`resolver_hook.process.proc`
reports each to :func:`child`), and writes one JSON object to that file when it ends
(atomically, replacing what was there)::

    {"schema": 1, "total_ms": 412.0, "started": 1767225600.125, "ended": 1767225600.537,
     "phases": {"manifests": 3.1, "plan": 20.5, "proof": 180.2, "install": 190.0},
     "children": [{"phase": "proof", "argv": ["/v/bin/python", "-m", "pip", "install"],
                   "ms": 175.0}, ...]}

``total_ms`` runs from the command's start (after the interpreter and the command line
were set up) to its end, ``started`` and ``ended`` (seconds since the epoch) say when,
so a caller that knows when it started the process sees what came before and after; a
child's ``phase`` is the phase it ran in, ``"other"`` outside any. Only the first words
of a child's command are kept (never its arguments: they may name private URLs).
Nothing is recorded or written when the variable is unset.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence

from resolver_hook.errors import ResolverHookError

# typing is not imported at run time: a replayed install starts the record.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ENV", "child", "finish", "phase", "start", "stop"]

ENV = "RESOLVER_HOOK_TIMINGS"
# Words kept of a child's command: the program and its subcommand (`python -m pip install`).
_ARGV_WORDS = 4
# Children recorded at most (a session runs a handful; the bound keeps the file small).
_MAX_CHILDREN = 64


class _Record:
    def __init__(self, path: str) -> None:
        self.path = path
        self.started = time.perf_counter()
        self.started_at = time.time()
        self.phases: dict[str, float] = {}
        self.children: list[dict[str, Any]] = []
        self.current = "other"


_record: _Record | None = None


def start(env: Mapping[str, str]) -> None:
    """Begin a record when ``env`` asks for one (a no-op otherwise)."""
    global _record  # noqa: PLW0603 - one record per process, as the command is
    path = env.get(ENV, "")
    _record = _Record(path) if path else None


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as phase ``name`` (added up when it runs again)."""
    record = _record
    if record is None:
        yield
        return
    before, record.current = record.current, name
    began = time.perf_counter()
    try:
        yield
    finally:
        spent = (time.perf_counter() - began) * 1000
        record.phases[name] = record.phases.get(name, 0.0) + spent
        record.current = before


def child(argv: Sequence[str], seconds: float) -> None:
    """A child process ran for ``seconds`` (wall clock, start to exit)."""
    record = _record
    if record is None or len(record.children) >= _MAX_CHILDREN:
        return
    record.children.append(
        {
            "phase": record.current,
            "argv": [os.fspath(a) for a in argv[:_ARGV_WORDS]],
            "ms": round(seconds * 1000, 3),
        }
    )


def stop() -> None:
    """Write the record (when there is one) and end it."""
    global _record
    record, _record = _record, None
    if record is None:
        return
    from resolver_hook.ground.fs import write_atomic

    total = (time.perf_counter() - record.started) * 1000
    data = {
        "schema": 1,
        "total_ms": round(total, 3),
        "started": record.started_at,
        "ended": time.time(),
        "phases": {k: round(v, 3) for k, v in record.phases.items()},
        "children": record.children,
    }
    # No fsync: the record is read at once by whoever asked for it, and the time an fsync
    # takes after ``ended`` would be counted as the command's exit.
    write_atomic(record.path, json.dumps(data, indent=1) + "\n", sync=False)


def finish() -> None:
    """:func:`stop`, with a file that cannot be written said as a warning: the record is
    never the command's outcome."""
    try:
        stop()
    except ResolverHookError as exc:
        sys.stderr.write(f"warning: {ENV}: {exc}\n")
