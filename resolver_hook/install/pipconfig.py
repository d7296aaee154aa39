"""The constraint files an installer reads besides ``-c``: so the plan sees them too.

pip merges ``PIP_CONSTRAINT`` (or, when unset, a ``constraint`` from its configuration
files) with the command line's ``-c`` (docs/facts.md section 3); uv reads
``UV_CONSTRAINT``. A plan made without them announces a flavour the installer then
cannot pick (ResolutionImpossible); with them it refuses with the reason, as for ``-c``.

pip's configuration files are found by :func:`resolver_hook.index.pipconfig.config_files`
(the environment installed into gives the site file); in each, ``[install]`` overrides
``[global]``. Windows' and macOS's own folders are not read (the README says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from resolver_hook.index.pipconfig import config_files

__all__ = ["ImpliedConstraints", "implied_constraints"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ImpliedConstraints:
    """Constraint files the installer reads without a ``-c``, and where they come from."""

    files: tuple[str, ...] = ()
    source: str = ""


def implied_constraints(
    tool: str, env: Mapping[str, str], prefix: Path | None
) -> ImpliedConstraints:
    """The constraint files ``tool`` reads from its environment and configuration.

    ``prefix``: the environment installed into (its ``pip.conf`` is pip's site file).
    """
    if tool == "uv":
        files = tuple(env.get("UV_CONSTRAINT", "").split())
        return ImpliedConstraints(files=files, source="UV_CONSTRAINT" if files else "")
    if env.get("PIP_CONSTRAINT", "").strip():
        # pip splits a list option's environment value on whitespace.
        return ImpliedConstraints(
            files=tuple(env["PIP_CONSTRAINT"].split()), source="PIP_CONSTRAINT"
        )
    value, where = None, ""
    site = {"VIRTUAL_ENV": str(prefix)} if prefix is not None else {}
    for path in config_files({**env, **site}):
        found = _constraint_in(path)
        if found is not None:
            value, where = found, str(path)
    if not value:
        return ImpliedConstraints()
    return ImpliedConstraints(files=tuple(value.split()), source=f"constraint in {where}")


def _constraint_in(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # pip says so itself when it reads the file
    import configparser  # for a file that exists only: most machines have none

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return None  # as above
    value = None
    for section in ("global", "install"):
        if parser.has_section(section):
            for key, v in parser.items(section):
                name = key.lower().replace("_", "-").removeprefix("--")
                if name == "constraint":
                    value = v
    return value
