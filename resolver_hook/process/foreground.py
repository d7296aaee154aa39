"""Installers (pip, uv), run in the foreground with signals forwarded.

The installer stays in the terminal's process group, so its prompts and Ctrl-C work as
if it were run by hand. SIGTERM received by resolver-hook is forwarded to it at once;
SIGINT only when the installer is still running :data:`FORWARD_SIGINT_AFTER` seconds
later, because a terminal's Ctrl-C has reached it already and a second SIGINT would
interrupt pip's own cleanup of its temporary folders. Never SIGKILL first (uv leaves
its temporary folders behind when killed, docs/facts.md section 3): only
:data:`FORWARD_GRACE` seconds after the first signal is it killed; then
:class:`Interrupted` is raised so the caller's ``finally`` removes its temp files and
the CLI exits 128+N (130 for Ctrl-C). Optionally its stdout is passed through line by
line to a callback (``tee``) and the tail kept.

Under a C locale with Python's UTF-8 mode off (``LC_ALL=C PYTHONUTF8=0``), an argument
that is UTF-8 on disk (a requirement file in a folder ``prójekt``) reaches this process
as surrogate escapes, and pip, reading it the same way, fails with a traceback writing
it (its build tracker: ``UnicodeEncodeError: surrogates not allowed``). Such an
installer runs in Python's UTF-8 mode (``PYTHONUTF8=1``, what Python itself turns on
under a C locale unless told not to, PEP 540): it is handed the same bytes and reads
them as the UTF-8 they are (:func:`utf8_env`).

Probes and queries go through :func:`resolver_hook.process.proc.capture`; nothing else starts a
process. This module imports neither ``dataclasses`` nor ``typing``: a replayed install
(:mod:`resolver_hook.install.launch`) starts here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from resolver_hook.ground import timings as _timings
from resolver_hook.ground.tempdir import Interrupted
from resolver_hook.limits import FORWARD_GRACE, FORWARD_SIGINT_AFTER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType
    from typing import Any

__all__ = ["FORWARD_GRACE", "foreground", "utf8_env"]


class _Forwarder:
    """SIGINT/SIGTERM handlers that forward to the installer; installed before it starts.

    A signal that arrives before the installer exists is kept and forwarded as soon as
    it does. SIGTERM is forwarded at once. The first SIGINT is forwarded only if the
    installer is still running ``sigint_after`` seconds later: Ctrl-C in a terminal
    reaches the whole foreground process group, installer included, and a second
    SIGINT a moment later interrupts pip while it removes its temporary folders
    (``kill -INT`` aimed at resolver-hook alone still reaches the installer, late).
    ``grace`` seconds after the first signal the installer is killed. On the main
    thread only (elsewhere Python cannot install handlers: nothing is forwarded).
    """

    def __init__(self, grace: float, sigint_after: float = FORWARD_SIGINT_AFTER) -> None:
        self.grace = grace
        self.sigint_after = sigint_after
        self.received: list[int] = []
        self.proc: subprocess.Popen[str] | None = None
        self._timers: list[threading.Timer] = []
        self._killing = False
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> _Forwarder:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                # None: the old handler was not set from Python; SIG_DFL is what it did.
                self._previous[sig] = signal.signal(sig, self._on_signal) or signal.SIG_DFL
        return self

    def __exit__(self, *exc: object) -> None:
        for timer in self._timers:
            timer.cancel()
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def started(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        if self.received:
            # It arrived before the installer existed: the installer never saw it.
            self._forward(self.received[0], seen=False)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.proc is not None:
            self._forward(signum, seen=len(self.received) == 1)

    def _forward(self, signum: int, *, seen: bool) -> None:
        """``seen``: a first Ctrl-C, which may have reached the installer directly."""
        assert self.proc is not None
        if signum == signal.SIGINT and seen:
            self._later(self.sigint_after, _send, self.proc, signum)
        else:
            # SIGTERM, or Ctrl-C pressed twice: pip and uv both stop on a second SIGINT.
            _send(self.proc, signum)
        if not self._killing:
            self._killing = True
            self._later(self.grace, _kill, self.proc)

    def _later(self, seconds: float, action: Callable[..., None], *args: object) -> None:
        timer = threading.Timer(seconds, action, args)
        timer.daemon = True
        timer.start()
        self._timers.append(timer)


def _send(proc: subprocess.Popen[str], signum: int) -> None:
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.send_signal(signum)


def _kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError):
        proc.kill()


def utf8_env(argv: Sequence[str], env: Mapping[str, str] | None) -> dict[str, str] | None:
    """``env`` (None: this process's) for an installer started with ``argv``, with
    ``PYTHONUTF8=1`` where this process decodes file names as ASCII and an argument is
    UTF-8 that arrived as surrogate escapes (see the module docstring)."""
    if sys.getfilesystemencoding().lower().replace("-", "") == "utf8":
        return None if env is None else dict(env)
    if not any(_escaped_utf8(a) for a in argv):
        return None if env is None else dict(env)
    return {**(os.environ if env is None else env), "PYTHONUTF8": "1"}


def _escaped_utf8(arg: str) -> bool:
    """Whether ``arg`` holds surrogate escapes whose bytes are UTF-8."""
    if arg.isascii():
        return False
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        try:
            os.fsencode(arg).decode("utf-8")
        except (UnicodeError, ValueError):
            return False  # another locale's bytes: UTF-8 mode would read them no better
        return True
    return False


def foreground(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    tee: Callable[[str], None] | None = None,
    grace: float = FORWARD_GRACE,
    tail_lines: int = 200,
    stdin: int | None = None,
    merge_stderr: bool = False,
) -> tuple[int, str]:
    """Run an installer in the terminal's process group; (exit code, kept stdout tail).
    An installer killed by signal N exits 128+N (137 for SIGKILL), as a shell says it.

    With ``tee``, stdout is read line by line, passed to ``tee`` and its last
    ``tail_lines`` lines kept; ``merge_stderr`` reads stderr in the same stream (uv
    prints everything there). Raises :class:`Interrupted` after forwarding a signal
    and seeing the installer exit, and :class:`OSError` when it cannot start.
    """
    tail: list[str] = []
    began = time.perf_counter()
    with _Forwarder(grace) as forwarder:
        proc = subprocess.Popen(
            list(argv),
            env=utf8_env(argv, env),
            stdin=stdin,
            stdout=subprocess.PIPE if tee is not None else None,
            stderr=subprocess.STDOUT if tee is not None and merge_stderr else None,
            text=True,
            errors="replace",
            bufsize=1,
        )
        try:
            forwarder.started(proc)
            if tee is not None:
                assert proc.stdout is not None
                for line in proc.stdout:
                    tee(line)
                    tail.append(line)
                    del tail[:-tail_lines]
                proc.stdout.close()
            code = proc.wait()
            if code < 0:
                # Killed by signal N (Popen says -N): the shell's 128+N, as this
                # command's own exit code says it (sys.exit(-9) would exit 247).
                code = 128 - code
        except BaseException:
            _kill(proc)
            proc.wait()
            raise
        finally:
            _timings.child(argv, time.perf_counter() - began)
    if forwarder.received:
        raise Interrupted(forwarder.received[0])
    return code, "".join(tail)
