"""The constraint files an installer reads besides ``-c``: so the plan sees them too.

pip merges ``PIP_CONSTRAINT`` (or, when unset, a ``constraint`` from its configuration
files) with the command line's ``-c`` (docs/facts.md section 3); uv reads
``UV_CONSTRAINT``. A plan made without them announces a flavour the installer then
cannot pick (ResolutionImpossible); with them it refuses with the reason, as for ``-c``.

pip's setting is read by :func:`resolver_hook.index.pipconfig.pip_settings`, pip's own
order (the environment installed into gives the site file). Windows' and macOS's own
folders are not read (the README says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index.pipconfig import pip_settings

__all__ = ["ImpliedConstraints", "implied_constraints"]


@valueclass
class ImpliedConstraints:
    """Constraint files the installer reads without a ``-c``, and where they come from."""

    files: tuple[str, ...] = ()
    source: str = ""


def implied_constraints(
    tool: str,
    env: Mapping[str, str],
    prefix: Path | None,
    record: Recorder = NOWHERE,
    *,
    isolated: bool = False,
) -> ImpliedConstraints:
    """The constraint files ``tool`` reads from its environment and configuration.

    ``prefix``: the environment installed into (its ``pip.conf`` is pip's site file);
    ``isolated``: pip runs with ``--isolated`` (no ``PIP_CONSTRAINT``, no user file).
    """
    if tool == "uv":
        files = tuple(env.get("UV_CONSTRAINT", "").split())
        return ImpliedConstraints(files=files, source="UV_CONSTRAINT" if files else "")
    found = pip_settings(env, "constraint", site=prefix, record=record, isolated=isolated).get(
        "constraint"
    )
    # pip splits a list option's value on whitespace.
    if found is None or not found[0].split():
        return ImpliedConstraints()
    return ImpliedConstraints(files=tuple(found[0].split()), source=found[1])
