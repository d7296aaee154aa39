"""A few threads for I/O that Ctrl-C does not wait for.

The index client reads pages, and the inventory metadata files, a few at a time. With
:class:`concurrent.futures.ThreadPoolExecutor` a Ctrl-C reaches the main thread at once,
but leaving the ``with`` block, and then the interpreter's exit, join every worker: a
worker blocked on a silent server holds the command until its deadline (up to
:data:`~resolver_hook.limits.NETWORK_DEADLINE`). :func:`map_threads` runs the work on
daemon threads instead, waits for them in short, interruptible steps, and on an
interrupt hands out no more work and returns at once; what a worker was doing is
abandoned with the process (the page cache writes each entry atomically).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["map_threads"]

T = TypeVar("T")
R = TypeVar("R")

_POLL_SECONDS = 0.05


def map_threads(fn: Callable[[T], R], items: Sequence[T], *, workers: int, name: str) -> list[R]:
    """``[fn(x) for x in items]``, run on up to ``workers`` daemon threads; the first
    exception (in the order of ``items``) is raised once every call has ended."""
    if not items:
        return []
    outcome: list[tuple[bool, object] | None] = [None] * len(items)
    pending = iter(range(len(items)))
    lock = threading.Lock()
    finished = threading.Event()
    state = {"left": len(items), "stop": False}

    def work() -> None:
        while True:
            with lock:
                i = None if state["stop"] else next(pending, None)
            if i is None:
                return
            try:
                outcome[i] = (True, fn(items[i]))
            except BaseException as exc:  # handed to the caller, as a pool would
                outcome[i] = (False, exc)
            with lock:
                state["left"] -= 1
                if not state["left"]:
                    finished.set()

    for n in range(min(workers, len(items))):
        threading.Thread(target=work, name=f"{name}-{n}", daemon=True).start()
    try:
        while not finished.wait(_POLL_SECONDS):
            pass
    finally:
        with lock:
            state["stop"] = True
    out: list[R] = []
    for got in outcome:
        assert got is not None
        ok, value = got
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        out.append(value)  # type: ignore[arg-type]
    return out
