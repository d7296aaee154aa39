"""pip's ``cert`` setting, read from pip's configuration files as pip reads them.

The hook runs pip, so pages it reads for pip should trust what pip trusts. pip's
configuration (docs/facts.md section 3, "pip's configuration files") is INI files read
in this order, each overriding the one before: ``$PIP_CONFIG_FILE`` (``os.devnull``
loads no file at all), the global files (``pip/pip.conf`` under each of
``$XDG_CONFIG_DIRS``, default ``/etc/xdg``; then ``/etc/pip.conf``), the user files
(``~/.pip/pip.conf``, then ``$XDG_CONFIG_HOME/pip/pip.conf``, default ``~/.config``), the
site file (``$VIRTUAL_ENV/pip.conf``). A setting in ``[install]`` overrides ``[global]``
for ``pip install``. Only the Linux (XDG) locations are read; a file that cannot be
read or parsed is skipped. ``PIP_CERT`` in the environment beats every file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["config_files", "pip_cert"]

_MAX_CONFIG_BYTES = 1 << 20  # a pip.conf is a few lines


def config_files(env: Mapping[str, str]) -> list[Path]:
    """pip's configuration files for ``env``, in the order pip reads them."""
    chosen = env.get("PIP_CONFIG_FILE")
    if chosen == os.devnull:
        return []
    files = [Path(chosen)] if chosen else []
    for folder in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":"):
        if folder:
            files.append(Path(folder) / "pip" / "pip.conf")
    files.append(Path("/etc/pip.conf"))
    home = env.get("HOME")
    if home:
        files.append(Path(home) / ".pip" / "pip.conf")
    config_home = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
    if config_home:
        files.append(Path(config_home) / "pip" / "pip.conf")
    if env.get("VIRTUAL_ENV"):
        files.append(Path(env["VIRTUAL_ENV"]) / "pip.conf")
    return files


def pip_cert(env: Mapping[str, str]) -> tuple[str, str] | None:
    """``(path, where it was set)`` of pip's ``cert`` for ``pip install``, or None."""
    if env.get("PIP_CERT"):
        return env["PIP_CERT"], "PIP_CERT"
    # Here, not at the top: the install side imports this module for config_files alone.
    import configparser

    found = None
    for path in config_files(env):
        try:
            with path.open("rb") as handle:
                text = handle.read(_MAX_CONFIG_BYTES).decode("utf-8")
            parser = configparser.RawConfigParser()
            parser.read_string(text, source=str(path))
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue  # pip refuses such a file itself, in its own words
        for section in ("global", "install"):
            value = parser.get(section, "cert", fallback=None)
            if value and value.strip():
                found = (value.strip(), f"cert in {path}")
    return found
