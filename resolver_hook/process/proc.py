"""The subprocess runner of probes and queries; :mod:`resolver_hook.process.foreground` runs the
installers. Nothing else starts a process.

- :func:`capture`: probes and tool queries (``nvidia-smi``, ``nvcc --version``, another
  interpreter's package list). The command runs in a new session, hence its own process
  group, with no stdin; stdout and stderr are read in chunks up to ``limit`` bytes each;
  one total deadline covers the whole run. On timeout, on output past the cap, and after
  the command exits, the whole group is killed, so a wrapper script's ``sleep`` never
  outlives the query (``subprocess.run`` kills only the direct child, and a grandchild
  holding the pipes open hangs the caller anyway). It never raises for an exit status, a
  timeout or a program that cannot start: the :class:`Result` says what happened.
- :func:`resolver_hook.process.foreground.foreground`: installers (pip, uv), in the terminal's
  process group with signals forwarded; a module of its own so that a replayed install
  (:mod:`resolver_hook.install.launch`) starts one without this module's value classes.

Every function takes the runner it needs as an argument defaulting to :func:`capture`
(the :class:`Runner` protocol), so tests feed a fake and never spawn by accident.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from resolver_hook.ground import timings as _timings
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_SUBPROCESS_OUTPUT

__all__ = ["Result", "Runner", "capture"]


_CHUNK = 64 * 1024
_EXIT_DRAIN = 1.0  # seconds to read what is left in the pipes once the command exited
_POSIX = os.name == "posix"


@valueclass
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
        import shlex  # here: shown only when a command is reported

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
