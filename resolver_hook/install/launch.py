"""The last step of an install: the installer run on the plan's files, and the words
for its failure.

Two callers share it: a session (:mod:`resolver_hook.install.session`), at the end of
its plan, and the replay of a stored install plan (:mod:`resolver_hook._plancache`),
which reaches it without importing the planner, the manifests or ``packaging``: this
module needs only the process runner, and reads a failed installer's output (the
proof's parsers) only when it failed.

What the failure is explained with is the plan's pins
(:attr:`~resolver_hook.resolve.Plan.pins`, each a :class:`~resolver_hook.resolve.PackagePlan`);
a stored plan keeps the fields of each that the words read (:data:`PIN_FIELDS`),
and a replay gives them back as they were, without importing the planner.
"""

from __future__ import annotations

import contextlib
import os
import sys

# typing is not imported at run time: a replayed install starts here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from resolver_hook.install.proof import Pin
    from resolver_hook.process.foreground import PipSteps


__all__ = ["PIN_FIELDS", "install_main", "replay", "run_installer"]

#: What a stored plan keeps of each pin: the fields of
#: :class:`~resolver_hook.install.proof.Pin`, by name.
PIN_FIELDS = ("name", "version", "reason", "find_links", "url")


def run_installer(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    tee: bool,
    out: Callable[[str], None],
    stdin: int | None = None,
    started: Callable[[], None] | None = None,
) -> tuple[int, str]:
    """Run the installer in the foreground; with ``tee``, pass its stdout through, keep the tail.

    pip prints the lines that explain a resolution conflict on stdout; keeping
    them lets us name a dependency's exact pin on another flavour. Raises
    :class:`~resolver_hook.ground.signals.Interrupted` after forwarding SIGINT/SIGTERM and seeing
    the installer exit. ``started``: called once it runs, before it is waited for.
    """
    from resolver_hook.errors import OperationalError
    from resolver_hook.process.foreground import foreground

    try:
        return foreground(argv, env=env, tee=out if tee else None, stdin=stdin, started=started)
    except OSError as exc:  # the installer is missing or cannot be executed
        raise OperationalError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None


def install_main(
    tool: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    pins: Callable[[], Sequence[Pin]],
    *,
    out: Callable[[str], None],
    error: Callable[[str, str], None],
    stdin: int | None = None,
    steps: PipSteps | None = None,
    started: Callable[[], None] | None = None,
) -> int:
    """Run the install; when it fails, say which of the plan's pins (``pins()``, asked
    only then) it involved. The installer's exit code. ``steps``: pip's process, waiting
    (after its dry run, or started ahead of an unchecked install): it runs the install
    when it :meth:`takes <resolver_hook.process.foreground.PipSteps.takes>` ``argv``,
    else it is stopped before another starts. ``started``: called once the installer
    runs, before it is waited for."""
    if steps is not None and stdin is None and steps.takes(argv, env):
        code, output = steps.install(argv, env, out, started)
    else:
        if steps is not None:
            steps.close()  # (the caller's close after it is nothing)
        code, output = run_installer(
            argv, env, tee=tool == "pip", out=out, stdin=stdin, started=started
        )
    if code != 0:
        from resolver_hook.install.checked import explain_failure

        for text, hint in explain_failure(output, pins(), tool):
            error(text, hint)
    return code


def replay(launch: Mapping[str, Any], command: Sequence[str]) -> int:
    """Start the installer as a stored plan's session started it (a fresh private
    folder in place of the one recorded, the same files in it; an argument stored as
    ``[2, n]`` is word ``n`` of ``command``, this run's own arguments, which are the
    recorded run's); the exit code. What stops it is raised, for the program to say as
    the command line says it."""
    from resolver_hook.ground import timings as _timings
    from resolver_hook.ground.stdout import DropAfterClose

    _timings.start(os.environ)
    stdout = sys.stdout
    sys.stdout = DropAfterClose(stdout)  # as the command line's: `| head -1` drops the rest
    try:
        return _replay(launch, command)
    finally:
        _timings.finish()
        with contextlib.suppress(BrokenPipeError):
            sys.stdout.flush()
        sys.stdout = stdout


def _replay(launch: Mapping[str, Any], command: Sequence[str]) -> int:
    from resolver_hook.errors import OperationalError
    from resolver_hook.ground import timings as _timings
    from resolver_hook.ground.tempdir import private_folder, write_new

    env = {**os.environ, **launch["env"]}
    for name in launch["unset"]:
        env.pop(name, None)
    with private_folder() as folder:
        for name, text in launch["files"].items():
            try:
                write_new(folder, name, text)
            except (OSError, ValueError) as exc:
                raise OperationalError(f"{folder}/{name}: cannot write: {exc}") from None
        argv = [
            os.path.join(folder, a[1]) if a[0] == 1 else command[a[1]] if a[0] == 2 else a[1]
            for a in launch["argv"]
        ]
        with _timings.phase("install"):
            code = install_main(
                launch["tool"],
                argv,
                env,
                lambda: _pins(launch["pins"]),
                out=_write_out,
                error=_write_error,
            )
    if code == 0 and launch["twins"]:
        # Twin distributions the install left side by side, said as the first run said
        # them (only a launch whose plan names a family member reads the environment).
        from resolver_hook.install.twins import replayed_twins

        for text in replayed_twins(launch["twins"]):
            sys.stderr.write(f"warning: {text}\n")
    return code


def _pins(stored: Sequence[Mapping[str, Any]]) -> list[Pin]:
    """The plan's pins as a stored plan kept them (:data:`PIN_FIELDS`)."""
    from types import SimpleNamespace

    return [SimpleNamespace(**p) for p in stored]


def _write_out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_error(text: str, hint: str) -> None:
    sys.stderr.write(f"error: {text}\n" + (f"hint: {hint}\n" if hint else ""))
