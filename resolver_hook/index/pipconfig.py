"""pip's configuration, read as pip reads it: one reader for every setting the hook takes.

The hook runs pip, so pages it reads for pip trust what pip trusts (``cert``) and take
its proxy (``proxy``), and plans see the constraints pip reads (``constraint``). pip's
rules (docs/facts.md section 3, "pip's configuration files"; pip's
``configuration.py`` and ``cli/parser.py``):

- the files, lowest priority first, each overriding the one before: the global files
  (``pip/pip.conf`` under each of ``$XDG_CONFIG_DIRS``, default ``/etc/xdg``; then
  ``/etc/pip.conf``), the user files (``~/.pip/pip.conf``, then
  ``$XDG_CONFIG_HOME/pip/pip.conf``, default ``~/.config``; not read when
  ``$PIP_CONFIG_FILE`` names a file that exists), the site file (``PREFIX/pip.conf`` of
  the environment pip runs in), then ``$PIP_CONFIG_FILE``; ``os.devnull`` loads none;
- a ``PIP_<NAME>`` variable beats every file;
- ``--isolated`` among pip's arguments: no user file and no ``PIP_*`` variable is read
  (the global, site and ``$PIP_CONFIG_FILE`` files still are);
- the values are merged per section and key first (a later file's empty value replaces
  an earlier one's), then a command's own section (``[install]``) beats ``[global]``
  wherever each was set, and an empty value counts as not set.

Only the Linux (XDG) locations are read; a file that cannot be read or parsed is
skipped (pip refuses it itself, in its own words). pip's base-prefix file is not read.

The files are read, and each read declared to the recorder, on every call; what a
file's text says is kept, in the process and in the user cache, by that text
(:func:`_file_values`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from resolver_hook.ground.contentcache import kept
from resolver_hook.ground.record import NOWHERE, Recorder, file_bytes, path_kind, sha256_hex
from resolver_hook.ground.valueclass import valueclass

__all__ = ["Given", "PipFiles", "config_files", "pip_settings"]

_MAX_CONFIG_BYTES = 1 << 20  # a pip.conf is a few lines


@valueclass
class Given:
    """pip's ``cert`` and ``proxy`` as the installer's own arguments give them
    (``--cert``, ``--proxy``), each ``(value, where)``: they beat the variables and files."""

    cert: tuple[str, str] | None = None
    proxy: tuple[str, str] | None = None
    isolated: bool = False  # pip's --isolated: its user files and PIP_* variables unread


def config_files(
    env: Mapping[str, str],
    site: str | os.PathLike[str] | None = None,
    record: Recorder = NOWHERE,
    *,
    isolated: bool = False,
) -> list[str]:
    """pip's configuration files for ``env``, lowest priority first, as pip joins their
    paths (``os.path``: pathlib costs a plan ~1 ms to import). ``site``: the environment
    pip runs in (default ``$VIRTUAL_ENV``); its ``pip.conf`` is the site file.
    ``isolated``: pip runs with ``--isolated`` (no user file)."""
    chosen = env.get("PIP_CONFIG_FILE")
    if chosen == os.devnull:
        return []
    files = []
    for folder in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":"):
        if folder:
            files.append(os.path.join(folder, "pip", "pip.conf"))
    files.append("/etc/pip.conf")
    if not isolated and not (chosen and path_kind(chosen, record) is not None):
        home = env.get("HOME")
        if home:
            files.append(os.path.join(home, ".pip", "pip.conf"))
        config_home = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
        if config_home:
            files.append(os.path.join(config_home, "pip", "pip.conf"))
    if site is None and env.get("VIRTUAL_ENV"):
        site = env["VIRTUAL_ENV"]
    if site is not None:
        files.append(os.path.join(site, "pip.conf"))
    if chosen:
        files.append(chosen)
    return files


def _normalized(name: str) -> str:
    """A key as pip compares it: lower case, ``-`` for ``_``, no leading ``--``."""
    return name.lower().replace("_", "-").removeprefix("--")


def pip_settings(
    env: Mapping[str, str],
    *names: str,
    command: str = "install",
    site: str | os.PathLike[str] | None = None,
    record: Recorder = NOWHERE,
    isolated: bool = False,
) -> dict[str, tuple[str, str]]:
    """``{name: (value, where it was set)}`` of those of pip's settings ``names`` that are
    set for pip's ``command``: ``PIP_<NAME>`` (``where`` is the variable), else the files
    (``NAME in PATH``), read once for all the names (none when every name has its
    variable), each read declared to ``record``, and parsed once for as long as they
    hold the same text (:func:`_merged`). ``isolated``: as pip ``--isolated``
    reads them (no variable, no user file). :class:`PipFiles` answers several calls
    from one reading."""
    return _answer(env, names, command, isolated, lambda: _texts(env, site, record, isolated))


class PipFiles:
    """pip's files for ``env`` (``isolated``: as pip ``--isolated`` finds them), read
    when a setting first needs them and then not again, each read declared to
    ``record``: one value serves a command's :func:`~resolver_hook.index.userindex.no_index`
    and :func:`~resolver_hook.index.userindex.user_index`, so the files are read once
    for both."""

    def __init__(
        self, env: Mapping[str, str], *, record: Recorder = NOWHERE, isolated: bool = False
    ) -> None:
        self.env, self.isolated, self._record = env, isolated, record

    @functools.cached_property
    def _texts(self) -> tuple[tuple[str, str], ...]:
        return _texts(self.env, None, self._record, self.isolated)

    def settings(self, *names: str, command: str = "install") -> dict[str, tuple[str, str]]:
        """:func:`pip_settings` of ``names``, the files read at most once."""
        return _answer(self.env, names, command, self.isolated, lambda: self._texts)


def _texts(
    env: Mapping[str, str], site: str | os.PathLike[str] | None, record: Recorder, isolated: bool
) -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of each of pip's files there is, lowest priority first, each read
    declared to ``record``."""
    texts = []
    for path in config_files(env, site, record, isolated=isolated):
        try:
            data = file_bytes(path, _MAX_CONFIG_BYTES, record)
            if data is not None:
                texts.append((path, data.decode("utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return tuple(texts)


def _answer(
    env: Mapping[str, str],
    names: tuple[str, ...],
    command: str,
    isolated: bool,
    texts: Callable[[], tuple[tuple[str, str], ...]],
) -> dict[str, tuple[str, str]]:
    """:func:`pip_settings` of ``names``, the files' ``texts`` asked for only when a
    name has no variable."""
    found: dict[str, tuple[str, str]] = {}
    for name in names:
        variable = "PIP_" + name.upper().replace("-", "_")
        if not isolated and env.get(variable):
            found[name] = (env[variable], variable)
    rest = [name for name in names if name not in found]
    if not rest:
        return found
    read = texts()
    if not read:
        return found
    merged = _merged(read)
    for name in rest:
        for section in (command, "global"):
            value, where = merged.get((section, _normalized(name)), ("", ""))
            if value.strip():
                found[name] = (value.strip(), f"{name} in {where}")
                break
    return found


@functools.lru_cache(maxsize=16)
def _merged(texts: tuple[tuple[str, str], ...]) -> Mapping[tuple[str, str], tuple[str, str]]:
    """``{(section, key): (value, path)}`` of the files ``texts`` (``(path, text)``,
    lowest priority first), merged. Kept by the files' paths and texts, which every
    :func:`pip_settings` call still reads (and declares): a command that asks for the
    index and then for ``no-index`` (or a page client for ``cert``) parses them once."""
    merged: dict[tuple[str, str], tuple[str, str]] = {}
    for path, text in texts:
        for section, key, value in _file_values(path, text) or ():
            merged[section, key] = (value, path)
    return MappingProxyType(merged)


def _file_values(path: str, text: str) -> list[list[str]] | None:
    """``[section, key, value]`` of one file as pip's parser reads it, in its order,
    each key :func:`_normalized`; None for a file the parser refuses. Kept in the user
    cache (``pip-config/``, one entry per file) by the text and the code that reads it
    (:func:`~resolver_hook.ground.contentcache.kept`: the tool and Python, whose
    configparser it is): a command whose pip.conf files have not changed neither
    imports configparser (~1 ms) nor parses them. A text with an ``@`` in it (a user
    name or password in an index URL, or in a proxy given without its scheme) is parsed
    every time: nothing cached holds them."""
    if "@" in text:
        return _parsed(path, text)
    return kept(
        "pip-config",
        sha256_hex(os.fsencode(os.path.abspath(path)))[:32],
        text,
        make=lambda: _parsed(path, text),
        dump=lambda values: {"values": values},
        rebuild=_kept_values,
    )


def _kept_values(data: dict[str, Any]) -> list[list[str]] | None:
    """The ``values`` of a kept entry, as :func:`_parsed` gives them; a ValueError for
    anything else (the entry is then parsed again)."""
    values = data["values"]
    if values is None or (
        isinstance(values, list)
        and all(
            isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) for x in v)
            for v in values
        )
    ):
        return values
    raise ValueError("not the values of a pip configuration file")


def _parsed(path: str, text: str) -> list[list[str]] | None:
    """:func:`_file_values`, read by configparser (as pip reads its files)."""
    # Here, not at the top: for files that exist and are not kept only.
    import configparser

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source=path)
    except configparser.Error:
        return None
    return [
        [section, _normalized(key), value]
        for section in parser.sections()
        for key, value in parser.items(section)
    ]
