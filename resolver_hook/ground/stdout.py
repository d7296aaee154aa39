"""Standard output that survives its reader going away (``resolver-hook plan | head -1``),
and text the terminal's encoding cannot show written without an error.

Kept out of :mod:`resolver_hook.cli`: a replayed install (:mod:`resolver_hook.install.launch`)
and a replayed plan (:mod:`resolver_hook._plancache`) write the same way without
importing the command line.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["DropAfterClose", "never_unencodable"]

_ERRORS = "resolver-hook-shown"


def _shown(exc: UnicodeError) -> tuple[str | bytes, int]:
    """The encoding error handler of :func:`never_unencodable`."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    part = exc.object[exc.start : exc.end]
    if all("\udc80" <= c <= "\udcff" for c in part):
        # A file name's bytes that this locale could not decode (surrogate escapes):
        # UTF-8 ones as they are, what a terminal shows as the name; others as \xNN.
        raw = bytes(ord(c) - 0xDC00 for c in part)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return "".join(f"\\x{b:02x}" for b in raw), exc.end
        return raw, exc.end
    return codecs.backslashreplace_errors(exc)


def never_unencodable(*streams: object) -> None:
    """Text ``streams``' encoding cannot show (non-ASCII markers under ``LC_ALL=C
    PYTHONUTF8=0``) is written as ``\\xNN`` escapes, never a UnicodeEncodeError; a
    file name's bytes this locale could not decode are written as the bytes they are
    (the name as ``ls`` shows it) where they are UTF-8, else as ``\\xNN``."""
    try:
        codecs.lookup_error(_ERRORS)
    except LookupError:
        codecs.register_error(_ERRORS, _shown)
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError, io.UnsupportedOperation):
                reconfigure(errors=_ERRORS)


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
        # Closed under it (a test's captured output, the interpreter's exit): nothing to do.
        if not self.gone and not self._inner.closed:
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
