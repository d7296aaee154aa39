"""The constraint files an installer reads besides ``-c``: so the plan sees them too.

pip merges ``PIP_CONSTRAINT`` (or, when unset, a ``constraint`` from its configuration
files) with the command line's ``-c`` (docs/facts.md section 3); uv reads
``UV_CONSTRAINT``. A plan made without them announces a flavour the installer then
cannot pick (ResolutionImpossible); with them it refuses with the reason, as for ``-c``.

pip's configuration files, in pip's order (pip/_internal/configuration.py and
pip/_internal/utils/appdirs.py; later ones override earlier ones): the global files
(``$XDG_CONFIG_DIRS/pip/pip.conf``, ``/etc/pip.conf``), the user files
(``~/.pip/pip.conf``, ``$XDG_CONFIG_HOME/pip/pip.conf``: skipped when
``PIP_CONFIG_FILE`` names a file that exists), the site file (``PREFIX/pip.conf``), then
``PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` loads none. In each, ``[install]``
overrides ``[global]``. Windows' and macOS's own folders are not read (the README says so).
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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
    for path in _config_files(env, prefix):
        found = _constraint_in(path)
        if found is not None:
            value, where = found, str(path)
    if not value:
        return ImpliedConstraints()
    return ImpliedConstraints(files=tuple(value.split()), source=f"constraint in {where}")


def _config_files(env: Mapping[str, str], prefix: Path | None) -> list[Path]:
    named = env.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    dirs = [d for d in env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep) if d]
    files = [Path(d) / "pip" / "pip.conf" for d in reversed(dirs)] + [Path("/etc/pip.conf")]
    if not (named and os.path.exists(named)):
        xdg = env.get("XDG_CONFIG_HOME") or ""
        user = Path(xdg) if os.path.isabs(xdg) else home / ".config"
        files += [home / ".pip" / "pip.conf", user / "pip" / "pip.conf"]
    if prefix is not None:
        files.append(prefix / "pip.conf")
    if named:
        files.append(Path(named))
    return files


def _constraint_in(path: Path) -> str | None:
    parser = configparser.RawConfigParser()
    try:
        text = path.read_text(encoding="utf-8")
        parser.read_string(text)
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None  # pip says so itself when it reads the file
    value = None
    for section in ("global", "install"):
        if parser.has_section(section):
            for key, v in parser.items(section):
                name = key.lower().replace("_", "-").removeprefix("--")
                if name == "constraint":
                    value = v
    return value
