"""How the command line writes: colour on a terminal only, -q/-v, a progress line.

Colour: only when the stream is a terminal, unless ``NO_COLOR`` (any non-empty value:
never) or ``FORCE_COLOR`` (non-empty, not ``0``: always, even in a pipe) say otherwise
(https://no-color.org; ``FORCE_COLOR`` as Node.js and many CLIs read it). JSON output
is never coloured: callers do not pass it through :func:`paint`.

Verbosity: ``-q`` (errors only) is -1, the default 0, ``-v`` 1 and more. It is
resolver-hook's own option on every command (given before an installer's command
word: ``resolver-hook pip -v install ...``; ``-v`` after ``install`` is pip's).

Progress: :class:`Progress` draws one line on stderr, redrawn in place, for work that
can take over a second (scan, placeholder check, manifest import, regenerating
placeholders); only on a terminal, never with ``-q``, and erased when done.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import TextIO

__all__ = [
    "Progress",
    "add_output_options",
    "paint",
    "set_verbosity",
    "use_colour",
    "verbosity",
]

_VERBOSITY = [0]

_STYLES = {
    "error": "1;31",
    "warning": "1;33",
    "hint": "36",
    "ok": "32",
    "dim": "2",
    "bold": "1",
}


def add_output_options(parser: object) -> None:
    """``-q``/``-v`` on a parser (every command gets them)."""
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    group = parser.add_argument_group("output")
    group.add_argument(
        "-q", "--quiet", action="store_true", help="print errors only (resolver-hook's own)"
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="every rejected flavour and probe detail (resolver-hook's own; before an "
        "installer's command word)",
    )


def set_verbosity(quiet: bool, verbose: int) -> None:
    _VERBOSITY[0] = -1 if quiet else verbose


def verbosity() -> int:
    """-1 with ``-q``, 0 by default, 1+ with ``-v``."""
    return _VERBOSITY[0]


def use_colour(stream: TextIO) -> bool:
    """Whether to colour what goes to ``stream`` (see the module docstring)."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, style: str, stream: TextIO) -> str:
    """``text`` in ``style`` (error, warning, hint, ok, dim, bold) when colour is on."""
    if not use_colour(stream):
        return text
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"


def paint_lines(text: str, stream: TextIO) -> str:
    """Colour the ``error:``, ``warning:`` and ``hint:`` heads of each line."""
    if not use_colour(stream):
        return text
    out = []
    for line in text.split("\n"):
        head = next((h for h in ("error", "warning", "hint") if line.startswith(f"{h}:")), None)
        out.append(paint(f"{head}:", head, stream) + line[len(head) + 1 :] if head else line)
    return "\n".join(out)


class Progress:
    """A progress line on stderr: ``scan: 3/10 members, 120.0 MB``; terminal only.

    Use as a context manager; call :meth:`update` as work goes on (redrawn at most
    ten times a second) and the line is erased at the end.
    """

    def __init__(self, what: str, total: int | None = None, *, stream: TextIO | None = None):
        self.what = what
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.on = tty and verbosity() >= 0
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, detail: str = "", *, force: bool = False) -> None:
        if not self.on:
            return
        now = time.monotonic()
        last = self.total is not None and done >= self.total
        if not (force or last) and self._drawn and now - self._last < 0.1:
            return
        self._last = now
        count = f"{done}/{self.total}" if self.total is not None else str(done)
        line = f"{self.what}: {count}" + (f" {detail}" if detail else "")
        self.stream.write(f"\r{line[:200]}\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.on and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"
