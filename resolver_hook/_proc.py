"""The one subprocess runner. Two kinds of run, and nothing else starts a process.

- :func:`capture`: probes and tool queries (``nvidia-smi``, ``nvcc --version``, another
  interpreter's package list). The command runs in a new session, hence its own process
  group, with no stdin; stdout and stderr are read in chunks up to ``limit`` bytes each;
  one total deadline covers the whole run. On timeout, on output past the cap, and after
  the command exits, the whole group is killed, so a wrapper script's ``sleep`` never
  outlives the query (``subprocess.run`` kills only the direct child, and a grandchild
  holding the pipes open hangs the caller anyway). It never raises for an exit status, a
  timeout or a program that cannot start: the :class:`Result` says what happened.
- :func:`foreground`: installers (pip, uv). The installer stays in the terminal's process
  group, so its prompts and Ctrl-C work as if it were run by hand. SIGTERM received by
  resolver-hook is forwarded to it at once; SIGINT only when the installer is still
  running :data:`FORWARD_SIGINT_AFTER` seconds later, because a terminal's Ctrl-C has
  reached it already and a second SIGINT would interrupt pip's own cleanup of its
  temporary folders. Never SIGKILL first (uv leaves its temporary folders behind when
  killed, docs/facts.md section 3): only :data:`FORWARD_GRACE` seconds after the first
  signal is it killed; then :class:`Interrupted` is raised so the
  caller's ``finally`` removes its temp files and the CLI exits 128+N (130 for Ctrl-C).
  Optionally its stdout is passed through line by line to a callback (``tee``) and the
  tail kept.

Every function takes the runner it needs as an argument defaulting to :func:`capture`
(the :class:`Runner` protocol), so tests feed a fake and never spawn by accident.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from resolver_hook import _timings
from resolver_hook.limits import FORWARD_GRACE, FORWARD_SIGINT_AFTER, MAX_SUBPROCESS_OUTPUT

__all__ = [
    "FORWARD_GRACE",
    "Interrupted",
    "Result",
    "Runner",
    "capture",
    "foreground",
]


_CHUNK = 64 * 1024
_EXIT_DRAIN = 1.0  # seconds to read what is left in the pipes once the command exited
_POSIX = os.name == "posix"


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """What a captured command did.

    ``returncode`` is None when it did not start or did not finish (``timed_out``);
    ``error`` says why it did not start (``missing`` when the program does not exist);
    ``truncated`` when it printed more than the cap and was killed for it.
    """

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    error: str | None = None
    missing: bool = False
    timeout: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.truncated

    @property
    def shown(self) -> str:
        """The command as a shell would show it."""
        return " ".join(shlex.quote(a) for a in self.argv)

    def reason(self) -> str | None:
        """Why it failed, in words; None when it succeeded."""
        name = self.argv[0] if self.argv else "?"
        if self.error is not None:
            return (
                f"{name} is {self.error}"
                if self.error.startswith("not ")
                else f"{name} {self.error}"
            )
        if self.timed_out:
            return f"'{self.shown}' did not finish within {self.timeout:g} s"
        if self.truncated:
            return f"'{self.shown}' printed more than {MAX_SUBPROCESS_OUTPUT // (1024 * 1024)} MiB"
        if self.returncode != 0:
            last = (self.stderr.strip() or self.stdout.strip()).splitlines()
            return f"'{self.shown}' failed: " + (
                last[-1] if last else f"exit code {self.returncode}"
            )
        return None


class Runner(Protocol):
    """Runs ``argv`` to completion with a total deadline; never raises (see :func:`capture`)."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> Result: ...


def _not_started(argv: tuple[str, ...], exc: OSError, timeout: float) -> Result:
    missing = isinstance(exc, FileNotFoundError)
    if missing:
        words = "not found"
    elif isinstance(exc, PermissionError):
        words = "not executable (permission denied)"
    else:
        words = f"cannot run: {exc.strerror or exc}"
    return Result(argv=argv, returncode=None, error=words, missing=missing, timeout=timeout)


def capture(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    limit: int = MAX_SUBPROCESS_OUTPUT,
) -> Result:
    """Run a query in its own process group; see the module docstring. Never raises."""
    args = tuple(argv)
    began = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=_POSIX,
        )
    except OSError as exc:
        return _not_started(args, exc, timeout)
    if not _POSIX:  # pragma: no cover - no process groups: the plain way
        return _capture_simple(proc, args, timeout, limit)
    out, err = bytearray(), bytearray()
    timed_out = truncated = False
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    assert proc.stdout is not None
    assert proc.stderr is not None
    buffers = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map():
                now = time.monotonic()
                if now >= deadline:
                    timed_out = exited_at is None
                    break
                if exited_at is None and _exited(proc):
                    exited_at = now
                if exited_at is not None and now - exited_at > _EXIT_DRAIN:
                    break  # a grandchild holds the pipes open: it is killed below
                for key, _ in sel.select(min(0.05, deadline - now)):
                    data = os.read(key.fd, _CHUNK)
                    buf = buffers[key.fd]
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    buf += data[: max(0, limit - len(buf))]
                    if len(buf) >= limit:
                        truncated = True
                if truncated:
                    break
    finally:
        # The leader is not reaped yet (or, without waitid, a member still holds the
        # group), so its pid still names the group: no reuse race.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
        proc.stderr.close()
        code = proc.wait()
        _timings.child(args, time.perf_counter() - began)
    return Result(
        argv=args,
        returncode=None if timed_out else code,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out,
        truncated=truncated,
        timeout=timeout,
    )


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the command exited, without reaping it (it stays a zombie, keeping its
    group id for the kill that follows)."""
    if not hasattr(os, "waitid"):
        # macOS before Python 3.13 has no waitid: reap it. Its group id stays taken
        # while a member (a grandchild holding the pipes) lives, so the kill is safe.
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid == proc.pid


def _capture_simple(
    proc: subprocess.Popen[bytes], args: tuple[str, ...], timeout: float, limit: int
) -> Result:  # pragma: no cover - Windows
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return Result(argv=args, returncode=None, timed_out=True, timeout=timeout)
    return Result(
        argv=args,
        returncode=proc.returncode,
        stdout=out[:limit].decode("utf-8", "replace"),
        stderr=err[:limit].decode("utf-8", "replace"),
        truncated=len(out) > limit or len(err) > limit,
        timeout=timeout,
    )


# --- installers: in the foreground, with signals forwarded ------------------------


class Interrupted(KeyboardInterrupt):
    """resolver-hook received ``signum`` while a child ran; the child has exited since."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


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
            env=None if env is None else dict(env),
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
        except BaseException:
            _kill(proc)
            proc.wait()
            raise
        finally:
            _timings.child(argv, time.perf_counter() - began)
    if forwarder.received:
        raise Interrupted(forwarder.received[0])
    return code, "".join(tail)
