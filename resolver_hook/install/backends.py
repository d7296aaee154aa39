"""pip and uv behind one interface, as pypa/build puts its installers.

An :class:`Installer` knows one installer for one environment: where it is, the
interpreter whose environment it installs into, and how to build its command lines
(install, uninstall, the options that hand it a plan). :func:`find_installer` finds the
one that typing ``pip`` / ``uv pip`` would run. Both are driven only through their
command lines (docs/facts.md section 3).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from resolver_hook.errors import OperationalError
from resolver_hook.ground.record import NOWHERE, Recorder, path_kind
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.process.installers import QUERY_TIMEOUT, pip_python, venv_python_version
from resolver_hook.process.proc import Runner, capture
from resolver_hook.process.which import find_uv, missing_uv, venv_python, which

if TYPE_CHECKING:
    from resolver_hook.install.args import InstallArgs
    from resolver_hook.resolve import Plan

__all__ = [
    "Installer",
    "find_installer",
    "python_version_of",
]

# uv (0.13.9, observed) installs a variant wheel only with this preview flag
# (docs/facts.md section 3).
UV_PREVIEW = ("--preview-features", "wheel-variants")


@valueclass
class Installer:
    """How to run one installer (``tool``: "pip" or "uv") for one environment."""

    tool: str
    command: tuple[str, ...]  # e.g. (python, "-m", "pip", "install") or (uv, "pip", "install")
    python: str  # the interpreter whose environment is installed into

    def argv(self, user_args: Sequence[str], extra: Sequence[str]) -> list[str]:
        # Ours first: after a user's "--" every argument is read as a requirement.
        return [*self.command, *extra, *user_args]

    def uninstall_argv(self, names: Sequence[str]) -> list[str]:
        if self.tool == "pip":
            return [self.python, "-m", "pip", "uninstall", "-y", *names]
        return [self.command[0], "pip", "uninstall", "--python", self.python, *names]

    def plan_options(self, plan: Plan, folder: Path, env: Mapping[str, str]) -> list[str]:
        """The options that hand the plan to the installer (files written by the caller)."""
        extra: list[str] = []
        if plan.constraints:
            extra += ["-c", str(folder / "constraints.txt")]
            if self.tool == "uv":
                # uv replaces UV_CONSTRAINT with a command-line -c: pass the user's along.
                for f in env_files(env, "UV_CONSTRAINT"):
                    extra += ["-c", f]
                # Only uv can replace a dependency's exact pin on another flavour.
                extra += ["--overrides", str(folder / "overrides.txt")]
                for f in env_files(env, "UV_OVERRIDE"):
                    extra += ["--overrides", f]
        for page in plan.find_links:
            extra += ["--find-links", page]
        if self.tool == "uv" and plan.variants:
            extra += UV_PREVIEW
        return extra


def env_files(env: Mapping[str, str], name: str) -> list[str]:
    """Files named by ``UV_CONSTRAINT`` / ``UV_OVERRIDE`` (space-separated, as uv reads them)."""
    return env.get(name, "").split()


def find_installer(
    tool: str,
    parsed: InstallArgs,
    env: Mapping[str, str] | None = None,
    run: Runner = capture,
    record: Recorder = NOWHERE,
) -> Installer:
    """The installer and environment that typing ``pip`` / ``uv pip`` would hit.

    pip: the active virtual environment, else the ``pip`` first on PATH (its
    interpreter, :func:`~resolver_hook.process.installers.pip_python`: a wrapper script is
    asked, never run as a Python), else this Python. (pip
    refuses ``--python`` after ``install``, "must be placed before the pip
    subcommand name" since pip 22.3: that pip says so itself.)
    uv: ``--python``, else the active virtual environment, else what
    ``uv python find`` answers (uv's own discovery: ``.venv`` and so on). What it
    looked at is declared to ``record``; a program asked makes it unstorable.
    """
    env = dict(os.environ) if env is None else env
    venv = env.get("VIRTUAL_ENV")
    if tool == "pip":
        if venv and path_kind(venv_python(venv), record) is not None:
            python = venv_python(venv)
        else:
            pip = which("pip", env.get("PATH"), record)
            python = pip_python(pip, run, env, record) if pip else sys.executable
        return Installer(tool="pip", command=(python, "-m", "pip", "install"), python=python)
    uv = find_uv(env, record)
    if uv is None:
        raise missing_uv()
    given = path_kind(parsed.python, record) if parsed.python else None
    if parsed.python and given is not None:
        python = parsed.python
        if given == 2:
            python = venv_python(python)
    elif (
        not parsed.python
        and "--system" not in parsed.options
        and venv
        and path_kind(venv_python(venv), record) is not None
    ):
        python = venv_python(venv)
    else:
        record.refuse("uv python find asked")
        # `uv pip install --system` skips virtual environments: so does `uv python find`.
        system = ["--system"] if "--system" in parsed.options else []
        argv = [uv, "python", "find", *system] + ([parsed.python] if parsed.python else [])
        done = run(argv, timeout=QUERY_TIMEOUT, env=env)
        if done.timed_out:
            raise OperationalError(
                f"uv python find did not answer in {QUERY_TIMEOUT:g} s",
                hint="activate a virtual environment or pass --python",
            )
        if done.returncode != 0 or not done.stdout.strip():
            first = (done.stderr.strip().splitlines() or [done.error or "no interpreter found"])[-1]
            raise OperationalError(
                f"uv found no Python environment to install into: {first}",
                hint="activate a virtual environment or pass --python",
            )
        python = done.stdout.strip().splitlines()[-1]
    return Installer(tool="uv", command=(uv, "pip", "install"), python=python)


_VERSION = r"(\d+)\.(\d+)\s*"  # compiled when an installer is asked its Python


def python_version_of(
    python: str, run: Runner = capture, record: Recorder = NOWHERE
) -> tuple[int, int]:
    """The major.minor of an interpreter, without a subprocess when it is us or a virtual
    environment's whose files say it (:func:`~resolver_hook.process.installers.venv_python_version`:
    a run that starts no program can store its plan); else asked."""
    # The venv's own files first: declared by what they say, they leave a stored plan
    # valid for a venv made again the same; anything else is not stored.
    said = venv_python_version(python, record)
    if said is not None:
        return said
    record.refuse(f"{python}: its version found by its links or by asking it")
    try:
        same = os.path.realpath(python) == os.path.realpath(sys.executable)
    except OSError:
        same = False
    if same:
        return sys.version_info[0], sys.version_info[1]
    done = run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout=QUERY_TIMEOUT
    )
    if done.error is not None or done.timed_out:
        raise OperationalError(f"cannot run the target interpreter {python}: {done.reason()}")
    m = re.fullmatch(_VERSION, done.stdout)
    if done.returncode != 0 or not m:
        raise OperationalError(f"cannot ask {python} for its version")
    return int(m.group(1)), int(m.group(2))
