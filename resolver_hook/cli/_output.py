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
placeholders, the index pages a plan reads once the wait passes a second); only on a
terminal, never with ``-q`` or ``--json``, and erased when done.

Width: :func:`columns` is the width of the stream written to, as
:func:`shutil.get_terminal_size` reads it (``COLUMNS`` first, then the terminal;
:data:`PIPE_COLUMNS` in a pipe or a file). :func:`fit` wraps each line within it at
spaces, a continuation indented under its line; a word longer than a whole line (a
URL) is cut in the middle with ``...`` unless ``-v`` asked for every detail, which
keeps words whole. ``--json`` is never fitted.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import textwrap
import threading
import time
from types import TracebackType
from typing import TextIO

__all__ = [
    "PIPE_COLUMNS",
    "Progress",
    "add_output_options",
    "columns",
    "fit",
    "paint",
    "set_verbosity",
    "use_colour",
    "verbosity",
]

_VERBOSITY = [0]

#: The width of output that goes to no terminal (a pipe, a file): the fallback
#: :func:`shutil.get_terminal_size` uses too.
PIPE_COLUMNS = 80
# Narrower than this, wrapping leaves too little room for a word: fit to this anyway.
_MIN_COLUMNS = 40
_CUT = "..."

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


def columns(stream: TextIO | None = None) -> int:
    """The width to fit ``stream`` (stdout when None) to: ``COLUMNS`` when set to a
    positive number, else the terminal's width, else :data:`PIPE_COLUMNS`
    (:func:`shutil.get_terminal_size`, asked of the stream itself, since stdout and
    stderr may go different ways)."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return max(int(given), _MIN_COLUMNS)
    target = stream if stream is not None else sys.stdout
    try:
        width = os.get_terminal_size(target.fileno()).columns
    except (AttributeError, ValueError, OSError):  # no file descriptor, or not a terminal
        width = PIPE_COLUMNS
    return max(width or PIPE_COLUMNS, _MIN_COLUMNS)


def fit(text: str, width: int, *, cut: bool = True, hang: int | None = None) -> str:
    """Every line of ``text`` within ``width`` columns: wrapped at spaces, each
    continuation indented ``hang`` columns (None: two more than its line), a word too
    long for that indent moved left as far as it needs; a word too long for a line
    indented two more than its own cut in the middle (``cut``), else kept whole on a
    line of its own."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = " " * min(len(line) - len(body), width // 2)
        more = indent + "  " if hang is None else " " * min(hang, width // 2)
        if cut:  # the spaces between words kept as they are: a table's columns stay
            body = re.sub(
                r"\S+", functools.partial(_shorten_match, room=width - len(indent) - 2), body
            )
        wrapped = textwrap.wrap(
            body,
            width,
            initial_indent=indent,
            subsequent_indent=more,
            break_long_words=False,
            break_on_hyphens=False,
        )
        for x in wrapped or [line]:
            word = x.lstrip(" ")  # longer than width: one word, too long for its indent
            out.append(x if len(x) <= width else " " * max(len(indent), width - len(word)) + word)
    return "\n".join(out)


def _shorten_match(match: re.Match[str], *, room: int) -> str:
    return _shorten(match.group(), room)


def _shorten(word: str, room: int) -> str:
    """``word`` cut in the middle to ``room`` characters (``https://host/...tail``)."""
    if len(word) <= room:
        return word
    head = (room - len(_CUT)) // 2
    return word[:head] + _CUT + word[len(word) - (room - len(_CUT) - head) :]


class Progress:
    """A progress line on stderr: ``scan: 3/10 members, 120.0 MB``; terminal only.

    Use as a context manager; call :meth:`update` (or :meth:`advance`, from any
    thread) as work goes on (redrawn at most ten times a second) and the line is erased
    at the end. With ``delay``, a wait: nothing is drawn before ``delay`` seconds have
    passed, and from then on the line is redrawn with the seconds waited even while
    nothing advances (a host that accepts and never answers). ``enabled=False`` (a
    command printing ``--json``) draws nothing.
    """

    def __init__(
        self,
        what: str,
        total: int | None = None,
        *,
        stream: TextIO | None = None,
        delay: float = 0.0,
        enabled: bool = True,
    ):
        self.what = what
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.on = enabled and tty and verbosity() >= 0
        self._last = 0.0
        self._drawn = False
        self._delay = delay
        self._start = time.monotonic()
        self._done = 0
        self._detail = ""
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def update(self, done: int, detail: str = "", *, force: bool = False) -> None:
        if not self.on:
            return
        with self._lock:
            self._done, self._detail = done, detail
            now = time.monotonic()
            if now - self._start < self._delay:
                return
            last = self.total is not None and done >= self.total
            if not (force or last) and self._drawn and now - self._last < 0.1:
                return
            self._last = now
            count = f"{done}/{self.total}" if self.total is not None else str(done)
            line = f"{self.what}: {count}" + (f" {detail}" if detail else "")
            if self._delay:
                line += f", {now - self._start:.0f} s"
            self.stream.write(f"\r{line[: columns(self.stream) - 1]}\x1b[K")
            self.stream.flush()
            self._drawn = True

    def advance(self, detail: str = "") -> None:
        """One more item done (thread-safe)."""
        with self._lock:
            self.update(self._done + 1, detail or self._detail)

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            with self._lock:
                self.update(self._done, self._detail, force=True)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self.on and self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self._drawn = False

    def __enter__(self) -> Progress:
        if self.on and self._delay > 0:
            self._ticker = threading.Thread(
                target=self._tick, name="resolver-hook-progress", daemon=True
            )
            self._ticker.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
