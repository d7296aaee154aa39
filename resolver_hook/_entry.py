"""The ``resolver-hook`` program: ``detect --json`` at once, else the command line.

Kept apart from :mod:`resolver_hook.cli` so that the plain ``detect --json`` runs before
``argparse`` and the command modules are imported: warm, from the cache
(:func:`resolver_hook.ground.hostkey.cached_detect_json`); cold (a miss, ``--no-cache``),
detection itself, printed as the command line prints it. ``plan`` and the installs
go through the store of earlier plans (:mod:`resolver_hook._plancache`), which
replays one where nothing it read has changed and runs the command line otherwise.
"""

from __future__ import annotations

import gc
import os
import sys

__all__ = ["main", "program"]

# typing is not imported at run time: this module starts every command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class _Early(Protocol):
        """What an install starts early (pip's interpreter, uv's query of the
        interpreter), stopped where no session took it."""

        def close(self) -> None: ...


def program() -> int:
    """The ``resolver-hook`` command: :func:`main`, then the process ends (:func:`_end`);
    returns the exit code where the interpreter's own exit must run."""
    code = main()
    _end(code)
    return code


def main() -> int:
    """The command line, its exit code returned (the process goes on)."""
    try:
        return _main()
    finally:
        # The process ends now: the collection the interpreter runs at exit walks every
        # object still alive (a plan's pages and candidates), 30 ms and more for nothing.
        # Frozen, they are not walked; atexit handlers still run, and every file the
        # commands write is closed (and temporary ones removed) before this point.
        gc.freeze()


def _end(code: int) -> None:
    """End the process with ``code`` without the interpreter's teardown, which frees
    every object still alive one by one (a plan's pages and candidates: some 4 ms of a
    plan made anew) only for the process to end. What the interpreter's exit does that
    matters is done first: the atexit handlers run (``weakref.finalize`` ones among
    them), and stdout and stderr are flushed. Returns, for the interpreter's own exit,
    where a thread other than this one is alive (that exit waits for it) or a flush
    fails (that exit says so, with status 120)."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    import atexit

    atexit._run_exitfuncs()  # and forgets them: none runs twice if this returns
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _main() -> int:
    argv = sys.argv[1:]
    if argv[:1] != ["detect"]:
        # Any other command: nothing below is for it, and the first import there (json,
        # re) is not needed before a checked uv install starts uv's query.
        return _command_line(argv)
    from resolver_hook.ground.hostkey import cached_detect_json, plain_detect

    text = cached_detect_json(argv, os.environ)
    if text is None:
        use_cache = plain_detect(argv, os.environ)
        if use_cache is None:
            return _command_line(argv)
        # Detection imports the profile model, packaging's tags and the probes, and the
        # process ends once it prints: the collector's passes over those modules' young
        # objects (some twenty of them) free a few hundred objects and cost more than
        # the probes themselves. Off, as for a plan.
        gc.disable()
        try:
            text = _detect_json(use_cache=use_cache)
        except KeyboardInterrupt:  # as the command line says it
            sys.stderr.write("error: interrupted\n")
            return 130
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `detect --json | head -1`: the rest is dropped, as on the full path
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0


def _command_line(argv: list[str]) -> int:
    """Any other command; ``plan``, ``pip`` and ``uv`` through the store of earlier plans
    (:mod:`resolver_hook._plancache`), which runs the command line on a miss with the
    recorder its readers declare their inputs to."""

    from resolver_hook.ground.record import NOWHERE, Recorder

    started: list[_Early] = []  # what was started early: stopped whatever happens
    unchecked_pip = argv[:1] == ["pip"] and "--no-proof" in argv

    def full(record: Recorder = NOWHERE) -> int:
        if unchecked_pip:
            # An unchecked pip install the store did not answer: pip's interpreter imports
            # pip while the plan is made, and runs the install itself. (A replay starts
            # pip once its few milliseconds are done: an interpreter started beside them
            # made it slower, measured, not quicker.)
            _start(started, "pip", argv)
        from resolver_hook.cli import main as cli_main

        return cli_main(record=record)

    if argv[:1] in (["plan"], ["pip"], ["uv"]):
        # A plan makes some 100,000 small objects and next to no cyclic garbage (about a
        # thousand objects), and the process ends when it is printed, or when the
        # installer it starts ends: the collector's hundred passes over the young objects
        # (the modules imported first, the plan then) cost 5% of it and free nothing of note.
        gc.disable()
        if argv[:1] == ["uv"] and "--no-proof" not in argv:  # (a replay is unchecked)
            # A checked uv install with uv's cache off: uv asks the interpreter for its
            # facts while the modules below are imported and the plan is made.
            _start(started, "uv", argv)
        elif argv[:1] == ["pip"] and not unchecked_pip:
            # A checked pip install: its dry run's interpreter imports pip meanwhile.
            _start(started, "pip", argv)
        try:  # from here on, what was started early is stopped whatever happens
            from resolver_hook._plancache import run_stored
            from resolver_hook.errors import ResolverHookError

            try:
                return run_stored(argv, os.environ, full)
            except (ResolverHookError, KeyboardInterrupt, BrokenPipeError) as exc:
                # A replayed install stopped (the full path says its own).
                from resolver_hook.cli import exit_for

                return exit_for(exc)
        finally:
            for early in started:  # where the session did not take it
                early.close()
    return full()


def _start(started: list[_Early], tool: str, argv: list[str]) -> None:
    """The installer's work begun early for ``argv`` (pip's interpreter, uv's query of
    the interpreter), where there is any: kept in ``started``, for the caller to stop."""
    early: _Early | None
    if tool == "uv":
        from resolver_hook.install import uvcache

        early = uvcache.start_early(argv, os.environ)
    else:
        from resolver_hook.install import pipearly

        early = pipearly.start_early(argv, os.environ)
    if early is not None:
        started.append(early)


def _detect_json(*, use_cache: bool) -> str:
    """``detect --json [--no-cache]`` on a cache miss: detection (which writes the
    cache), printed as ``resolver_hook/cli/detect.py`` prints it, without ``argparse``
    and the command modules. No override variable is set (:func:`plain_detect`), so
    detection cannot fail."""
    from resolver_hook.ground.hostkey import profile_json
    from resolver_hook.host.detect import detect

    return profile_json(detect(use_cache=use_cache).to_dict())
