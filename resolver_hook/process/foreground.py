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
from resolver_hook.ground.signals import Interrupted
from resolver_hook.limits import FORWARD_GRACE, FORWARD_SIGINT_AFTER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType
    from typing import Any

__all__ = ["FORWARD_GRACE", "PipSteps", "foreground", "utf8_env"]


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


def _without_width(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without ``COLUMNS``: what an interpreter started ahead runs with."""
    return {k: v for k, v in env.items() if k != "COLUMNS"}


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
    started: Callable[[], None] | None = None,
) -> tuple[int, str]:
    """Run an installer in the terminal's process group; (exit code, kept stdout tail).
    An installer killed by signal N exits 128+N (137 for SIGKILL), as a shell says it.

    With ``tee``, stdout is read line by line, passed to ``tee`` and its last
    ``tail_lines`` lines kept; ``merge_stderr`` reads stderr in the same stream (uv
    prints everything there). ``started`` is called once the installer runs, before it
    is waited for: work of the caller's that need not wait for it. Raises
    :class:`Interrupted` after forwarding a signal and seeing the installer exit, and
    :class:`OSError` when it cannot start.
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
            if started is not None:
                started()
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


# --- pip's dry run and its install, one interpreter --------------------------------

# The line the driver prints on stdout when a step ends, with its exit code.
_STEP_DONE = "\x00resolver-hook: step done "

# Run by the environment's own interpreter: pip's own entry point (what its `pip`
# script calls) runs the dry run, whose words follow on the command line as they would
# after `-m pip` (a word there is a word of this process's command line); an
# interpreter started ahead of its first step (no words after the control descriptor)
# imports pip and its install command and waits for that step on the control
# descriptor, as one JSON line: its words, and for an install run as the only step,
# the variables it runs with (an empty line: stop, nothing run). After a dry run, the
# install's words and variables arrive as one JSON line on the control descriptor, or
# an empty line: stop, with the dry run's exit code. The install ends the process.
_PIP_STEPS = (
    "import json, os, signal, sys\n"
    # As pip's own __main__ does: the current folder is not where pip looks for what
    # is installed.
    "if sys.path[0] in ('', os.getcwd()): sys.path.pop(0)\n"
    # Started ahead: a Ctrl-C before its dry run is asked for is the hook's to say.
    "ahead = len(sys.argv) == 2\n"
    "if ahead: signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    # pip's console entry point: `cli` from pip 26.3 on (`python -m pip` runs it: an
    # install then blocks later imports until the process exits), `main` before.
    "try:\n"
    "    from pip._internal.cli.main import cli as main\n"
    "except ImportError:\n"
    "    from pip._internal.cli.main import main\n"
    "control = os.fdopen(int(sys.argv[1]), encoding='utf-8')\n"
    "if ahead:\n"
    # pip's install command (most of a small dry run's time is importing it), imported
    # while the words are not known yet; pip's own import of it says what fails.
    "    try:\n"
    "        import pip._internal.commands.install\n"
    "    except Exception:\n"
    "        pass\n"
    "    line = control.readline()\n"
    "    if not line.strip(): sys.exit(0)\n"
    "    step = json.loads(line)\n"
    # The command line the step would have had (pip reads sys.argv for --no-color).
    "    sys.argv[2:] = step['args']\n"
    "    signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    # An install (its variables given) is the only step: the process ends with it.
    "    if 'env' in step:\n"
    "        os.environ.clear(); os.environ.update(step['env'])\n"
    "        sys.exit(main(step['args']))\n"
    "code = main(sys.argv[2:])\n"
    "sys.stdout.flush(); sys.stderr.flush()\n"
    f"sys.stdout.write({_STEP_DONE!r} + str(code) + '\\n'); sys.stdout.flush()\n"
    # A Ctrl-C while the hook judges is the hook's to say: none of pip's tracebacks.
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "line = control.readline()\n"
    "if not line.strip(): sys.exit(code)\n"
    "step = json.loads(line)\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "os.environ.clear(); os.environ.update(step['env'])\n"
    "sys.exit(main(step['args']))\n"
)


class PipSteps:
    """pip's dry run and then its install, run by one interpreter: the install does not
    start Python and import pip again (most of a small install's time). Started
    :meth:`ahead`, it may run an unchecked install as its only step. Each step runs
    as :func:`foreground` runs an installer (the terminal's process group, signals
    forwarded, stdout passed through ``tee`` and its tail kept, a timing record each);
    between them the process waits for :meth:`install` or :meth:`close`.

    ``command``: the interpreter's ``python -m pip``; ``args``: the dry run's words
    after it."""

    def __init__(
        self,
        command: Sequence[str],
        args: Sequence[str] | None,
        *,
        env: Mapping[str, str],
        tee: Callable[[str], None],
        grace: float = FORWARD_GRACE,
    ) -> None:
        self.grace = grace
        self._tee = tee
        self._command = list(command)
        read, self._control = os.pipe()
        argv = [command[0], "-c", _PIP_STEPS, str(read), *(args or ())]
        self.argv = [*command, *(args or ())]  # as the timing record names it
        # The variables it starts with, as a dry run of ``args`` would start.
        self.env = utf8_env(argv, env)
        # Started ahead (``args`` None): it waits for :meth:`dry_run`'s words, and its
        # signals are forwarded from then on.
        self._ahead = args is None
        self._forwarder: _Forwarder | None = None
        try:
            self._step_began = time.perf_counter()
            if not self._ahead:
                self._forwarder = _Forwarder(grace).__enter__()
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                argv,
                env=self.env,
                stdout=subprocess.PIPE,
                text=True,
                errors="replace",
                bufsize=1,
                pass_fds=(read,),
            )
        except BaseException:
            if self._forwarder is not None:
                self._forwarder.__exit__()
            os.close(self._control)
            raise
        finally:
            os.close(read)
        if self._forwarder is not None:
            self._forwarder.started(self.proc)

    @classmethod
    def ahead(
        cls, command: Sequence[str], *, env: Mapping[str, str], grace: float = FORWARD_GRACE
    ) -> PipSteps:
        """The interpreter started before its first step's words are known: it imports
        pip while the plan is made, then runs the dry run :meth:`fits` and
        :meth:`dry_run` give it, or the unchecked install it :meth:`takes` (its start-up
        no longer waits on the plan); :meth:`close` stops it where neither is asked for.
        Started with ``env`` but ``COLUMNS``: a dry run's output is read line by line,
        unwrapped, and an install's step sets the width again."""
        return cls(command, None, env=_without_width(env), tee=lambda _: None, grace=grace)

    def fits(self, command: Sequence[str], args: Sequence[str], env: Mapping[str, str]) -> bool:
        """Whether this interpreter, started ahead and waiting, runs the dry run
        ``command`` ``args`` with ``env`` as one started for it would: the same
        interpreter, started with the same variables (``COLUMNS`` aside, see
        :meth:`ahead`)."""
        argv = [command[0], "-c", _PIP_STEPS, "0", *args]
        return (
            self._ahead
            and self.proc is not None
            and list(command) == self._command
            and utf8_env(argv, _without_width(env)) == self.env
        )

    def dry_run(
        self,
        args: Sequence[str] | None = None,
        tee: Callable[[str], None] | None = None,
        tail_lines: int = 200,
    ) -> tuple[int, str]:
        """The dry run's exit code and its stdout tail (the process ended: 128+N for a
        signal N, as :func:`foreground` says it). ``args`` and ``tee``: the dry run's
        words and where its output goes, for an interpreter started :meth:`ahead`
        (one that :meth:`fits` them)."""
        if self._ahead:
            assert args is not None
            assert tee is not None
            self._ahead = False
            # Timed from here: its start-up ran beside the plan, not after it.
            self._hand([*self._command, *args], {"args": list(args)}, tee)
        return self._step(tail_lines)

    def takes(self, argv: Sequence[str], env: Mapping[str, str]) -> bool:
        """Whether ``argv`` is a pip command of this interpreter, still waiting, to run
        with ``env``. One started :meth:`ahead` and still waiting for its first step only
        where it :meth:`fits` them (the step sets ``COLUMNS`` before pip reads it)."""
        n = len(self._command)
        if self.proc is None or list(argv[:n]) != self._command:
            return False
        return not self._ahead or self.fits(self._command, argv[n:], env)

    def install(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        tee: Callable[[str], None],
        started: Callable[[], None] | None = None,
    ) -> tuple[int, str]:
        """Run the install ``argv`` (a command :meth:`takes`) in this process: after its
        dry run, or as the first step of one started :meth:`ahead` (an unchecked
        install: pip's start-up ran beside the plan); its exit code and stdout tail.
        ``started``: called once it has its words, before it is waited for, as
        :func:`foreground` calls it."""
        args = list(argv[len(self._command) :])
        self._ahead = False
        self._hand(argv, {"args": args, "env": dict(utf8_env(argv, env) or {})}, tee)
        self._close_control()
        return self._step(200, started)

    def _hand(
        self, argv: Sequence[str], step: Mapping[str, object], tee: Callable[[str], None]
    ) -> None:
        """Hand the waiting process its next step (``step``: its words, and for the
        install its variables, as one JSON line), timed and its signals forwarded from
        now; ``argv``: the command as the timing record names it."""
        import json

        assert self.proc is not None
        self._tee = tee
        self.argv = list(argv)
        self._step_began = time.perf_counter()
        self._forwarder = _Forwarder(self.grace).__enter__()
        self._forwarder.started(self.proc)
        line = json.dumps(step) + "\n"
        with contextlib.suppress(OSError):  # it ended already: its exit code says how
            os.write(self._control, line.encode("utf-8"))

    def close(self) -> None:
        """Stop it where it waits (an empty line: no install), and wait for it; nothing
        when it ended already. One started :meth:`ahead` and never given a step is
        stopped at once: it has run nothing of pip's yet, and the hook that refuses or
        stops before its dry run or install does not wait for pip's imports to end."""
        self._close_control()
        proc, self.proc = self.proc, None
        if proc is not None:
            if self._ahead:
                proc.terminate()
            if proc.stdout is not None:
                for _ in proc.stdout:
                    pass
                proc.stdout.close()
            proc.wait()

    def _close_control(self) -> None:
        if self._control >= 0:
            os.close(self._control)
            self._control = -1

    def _step(self, tail_lines: int, started: Callable[[], None] | None = None) -> tuple[int, str]:
        proc = self.proc
        assert proc is not None
        assert proc.stdout is not None
        tail: list[str] = []
        code: int | None = None
        forwarder = self._forwarder
        assert forwarder is not None
        try:
            if started is not None:
                started()
            for line in proc.stdout:
                mark = line.find(_STEP_DONE)
                if mark >= 0:  # after the step's last words, were they a line or not
                    if line[:mark]:
                        self._tee(line[:mark])
                        tail.append(line[:mark])
                    code = int(line[mark + len(_STEP_DONE) :].strip() or "1")
                    break
                self._tee(line)
                tail.append(line)
                del tail[:-tail_lines]
            if code is None:  # it ended: pip's own exit, or a signal
                proc.stdout.close()
                code = proc.wait()
                if code < 0:
                    code = 128 - code
                self.proc = None
                self._close_control()
        except BaseException:
            _kill(proc)
            proc.wait()
            self.proc = None
            self._close_control()
            raise
        finally:
            forwarder.__exit__()
            _timings.child(self.argv, time.perf_counter() - self._step_began)
        if forwarder.received:
            self.close()
            raise Interrupted(forwarder.received[0])
        return code, "".join(tail)
