"""What the build modules share: the verdict line, and running a tool on the one runner.

:class:`Check` is one line of a judgement (``doctor --build``, ``[build] needs``,
preflight). :func:`tool_output` runs a command through :mod:`resolver_hook.process.proc` (its
own process group, killed whole on timeout, capped output) and turns whatever went wrong
into a reason; :func:`which` and :func:`path_dirs` read the given environment's PATH,
never the process's own; :func:`probe_tool` finds a tool (cmake, ninja) on PATH and
reads ``--version``; :func:`release` reads a major.minor. The records are written as
JSON by :func:`resolver_hook.ground.plain.plain`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from typing import Literal

from resolver_hook.ground.patterns import version_numbers
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.process.proc import Runner, capture

__all__ = [
    "DEFAULT_TIMEOUT",
    "IS_WINDOWS",
    "Check",
    "Output",
    "Runner",
    "Status",
    "Tool",
    "path_dirs",
    "probe_tool",
    "release",
    "run_subprocess",
    "tool_output",
    "which",
]

Status = Literal["ok", "warn", "fail", "skip"]
"""ok, warn (works, but look), fail (a build will fail), skip (could not be checked)."""

DEFAULT_TIMEOUT = 10.0
IS_WINDOWS = os.name == "nt"


# The runner (resolver_hook.process.proc): the command runs in its own process group, killed
# whole on timeout (a wrapper script's grandchild would otherwise keep the pipes open
# and hang the caller), with capped output.
run_subprocess: Runner = capture


@valueclass(kw_only=False)
class Output:
    """What a command said: ``text`` is stdout + stderr; ``reason`` is set when it failed."""

    code: int | None
    text: str
    reason: str | None


def tool_output(
    args: Sequence[str], *, env: Mapping[str, str], run: Runner, timeout: float
) -> Output:
    shown = " ".join(shlex.quote(a) for a in args)
    done = run(args, timeout=timeout, env=env)
    if done.missing:
        return Output(None, "", f"{args[0]} does not exist")
    if done.error is not None:
        return Output(None, "", str(done.reason()))
    if done.timed_out:
        return Output(None, "", f"'{shown}' did not finish within {timeout:g} s")
    if done.truncated:
        return Output(None, "", str(done.reason()))
    text = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        return Output(
            done.returncode, text, f"'{shown}' exited with status {done.returncode}: {first[:200]}"
        )
    return Output(0, text, None)


def which(name: str, env: Mapping[str, str]) -> str | None:
    """``shutil.which`` against the given environment's PATH (never the process's own)."""
    return shutil.which(name, path=env.get("PATH", ""))


def path_dirs(env: Mapping[str, str]) -> list[str]:
    """The existing folders on the environment's PATH, each once, in order."""
    seen: list[str] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry and entry not in seen and os.path.isdir(entry):
            seen.append(entry)
    return seen


def release(version: str | None) -> str | None:
    """'13.0.88' -> '13.0'."""
    parts = version_numbers(version)
    return f"{parts[0]}.{parts[1]}" if len(parts) >= 2 else None


@valueclass
class Check:
    """One line of the report: ``name``, ``status``, what was found and why, and the fix."""

    name: str
    status: Status
    summary: str
    fix: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@valueclass
class Tool:
    """A build tool (cmake, ninja, pkg-config): where it is and its version, or why not."""

    name: str
    path: str | None = None
    version: str | None = None
    reason: str | None = None


def probe_tool(
    name: str,
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
) -> Tool:
    """``name`` on PATH and the first version number in ``name --version``."""
    env = os.environ if env is None else env
    path = which(name, env)
    if path is None:
        return Tool(name=name, reason=f"{name} not found on PATH")
    out = tool_output([path, "--version"], env=env, run=run, timeout=timeout)
    if out.reason:
        return Tool(name=name, path=path, reason=out.reason)
    match = re.search(r"(\d+\.\d+(?:\.\d+)*)", out.text)
    if not match:
        first = " ".join(out.text.split())[:80] or "nothing"
        return Tool(name=name, path=path, reason=f"'{name} --version' printed {first!r}")
    return Tool(name=name, path=path, version=match.group(1))
