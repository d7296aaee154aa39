"""Standard output that survives its reader going away (``resolver-hook plan | head -1``).

Kept out of :mod:`resolver_hook.cli`: a replayed install (:mod:`resolver_hook.install.launch`)
wraps its standard output the same way without importing the command line.
"""

from __future__ import annotations

import contextlib
import io
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["DropAfterClose"]


class DropAfterClose(io.TextIOBase):
    """stdout that drops what is written once its reader has gone (``| head -1``).

    Python's recipe for a closed pipe (docs/facts.md section 3): point
    the descriptor at ``os.devnull`` so the final flush at exit does not fail again.
    """

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._inner.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._inner.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError):  # ValueError: no descriptor (tests)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._inner.fileno())
            os.close(devnull)

    def fileno(self) -> int:
        return self._inner.fileno()

    def isatty(self) -> bool:
        return self._inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._inner.encoding
