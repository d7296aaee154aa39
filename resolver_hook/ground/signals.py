"""SIGTERM as an exception: :class:`Interrupted`, raised while :func:`sigterm_raises` holds.

Kept apart from :mod:`resolver_hook.ground.tempdir` (and the ``tempfile`` and ``shutil`` it
may import, ~3 ms): the cache's writer (:mod:`resolver_hook.ground.cache`) guards its
temporary file with it on every run that stores what it read.
"""

from __future__ import annotations

import contextlib
import signal
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType
    from typing import Any

__all__ = ["Interrupted", "sigterm_raises"]


class Interrupted(KeyboardInterrupt):
    """resolver-hook received ``signum`` while a child ran; the child has exited since."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Interrupted` (as Ctrl-C raises KeyboardInterrupt) meanwhile."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous: Any = signal.signal(signal.SIGTERM, on_term) or signal.SIG_DFL
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
