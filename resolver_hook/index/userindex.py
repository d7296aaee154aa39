"""The user's index: the one the installer reads by default, so that the plan reads it too.

A flavour that is a build on the default index (torch's plain build, onnxruntime-gpu,
cupy-cuda13x: ``[[index]]`` without ``url``) is read from ``<index>/<name>/``. That index
is the user's, found in the order of the installer that runs (docs/facts.md section 3,
"The user's index"):

- ``pip``: ``--index-url``/``-i`` in its arguments, then ``PIP_INDEX_URL``, then pip's
  configuration files (:func:`resolver_hook.index.pipconfig.pip_settings`);
- ``uv``: ``--default-index``, then ``--index-url``/``-i``, then ``UV_DEFAULT_INDEX``,
  then ``UV_INDEX_URL``, then uv's configuration files (:class:`UvConfig`);
- a command that runs no one installer (``plan``, ``lock``, ``env``, ``sync``): our
  ``--index-url``, then ``UV_DEFAULT_INDEX``, ``UV_INDEX_URL``, ``PIP_INDEX_URL``, then
  pip's configuration files, then uv's (the lock's order, :mod:`resolver_hook.lock.indexes`).

Nothing set: PyPI. Each file read is declared to the recorder.

An ``-i URL`` (``--index-url URL``) line of a requirements file (:func:`file_index`)
names the index too, with each installer's own weight: pip's wins over its flag, its
variable and its files (a requirements file's option line replaces the finder's index
list as the line is read: pip's ``handle_option_line``), the last line winning; uv's is
read only when none of uv's own settings names one (seen with uv 0.13.9, docs/facts.md
section 3); a command that runs no one installer takes pip's weight below our own
``--index-url``. ``--extra-index-url`` adds an index and leaves the default one as it is.

An installer told to read no index (:func:`no_index`: pip's ``--no-index``,
``PIP_NO_INDEX`` or pip.conf's ``no-index``; uv's ``--no-index``, ``UV_NO_INDEX`` or
``no-index`` in its configuration files; :func:`no_index_line`: a ``--no-index`` line of
a requirements file for either) reads the ``--find-links`` pages only: the plan then
reads no page of the default index, pins no file from it, and leaves those builds to the
installer (:meth:`resolver_hook.planner.Planner.pages`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from resolver_hook.ground.record import NOWHERE, Recorder, file_bytes
from resolver_hook.ground.toml import TomlError, kept_file, loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index.pipconfig import PipFiles

if TYPE_CHECKING:
    from collections.abc import Iterable

    from resolver_hook.reqfile import ReqEntry

__all__ = [
    "UserIndex",
    "UvConfig",
    "file_index",
    "no_index",
    "no_index_line",
    "user_index",
]

_MAX_CONFIG_BYTES = 1 << 20  # a uv.toml is a few lines
# uv's yes spellings for UV_NO_CONFIG (resolver_hook.settings.yes_no reads the same).
_YES = frozenset(("1", "true", "yes", "on", "y", "t"))


@valueclass(kw_only=False)
class UserIndex:
    """The default index and where it was set (``PIP_INDEX_URL``, ``index-url in PATH``)."""

    url: str
    where: str


def _toml(path: str, record: Recorder) -> dict[str, Any] | None:
    try:
        data = file_bytes(path, _MAX_CONFIG_BYTES, record)
        if data is None:
            return None
        text = data.decode("utf-8")
        return kept_file(path, text, lambda: loads(text))
    except (OSError, UnicodeDecodeError, TomlError):
        return None  # uv refuses it itself, in its own words


def _default_entry(table: Mapping[str, Any]) -> str | None:
    """The URL of the ``[[index]]`` marked ``default = true`` in a uv settings table."""
    indexes = table.get("index")
    for entry in indexes if isinstance(indexes, list) else ():
        if isinstance(entry, dict) and entry.get("default") is True:
            url = entry.get("url")
            return url if isinstance(url, str) else None
    return None


def _pip_section(table: Mapping[str, Any]) -> str | None:
    pip = table.get("pip")
    url = pip.get("index-url") if isinstance(pip, dict) else None
    return url if isinstance(url, str) else None


def _top_level(table: Mapping[str, Any]) -> str | None:
    url = table.get("index-url")
    return url if isinstance(url, str) else None


def _project_file(cwd: str, record: Recorder) -> tuple[str, dict[str, Any]] | None:
    """The project's settings: the nearest folder with a ``uv.toml``, or a
    ``pyproject.toml`` with a ``[tool.uv]`` table (``uv.toml`` first in one folder), in
    ``cwd`` or a folder above it."""
    folder = cwd
    while True:
        path = os.path.join(folder, "uv.toml")
        data = _toml(path, record)
        if data is not None:
            return path, data
        path = os.path.join(folder, "pyproject.toml")
        data = _toml(path, record)
        tool = data.get("tool") if data is not None else None
        if isinstance(tool, dict) and isinstance(tool.get("uv"), dict):
            return path, tool["uv"]
        folder, below = os.path.dirname(folder), folder
        if folder == below:
            return None


def _uv_files(
    env: Mapping[str, str], cwd: str | os.PathLike[str] | None, record: Recorder
) -> list[tuple[str, dict[str, Any]]]:
    """uv's configuration files, in the order it merges them: ``UV_CONFIG_FILE`` alone
    when set (even beside ``UV_NO_CONFIG``, which stops only the search); none with
    ``UV_NO_CONFIG``; else the project's file (``cwd`` and its
    parents), the user's (``$XDG_CONFIG_HOME/uv/uv.toml``, default ``~/.config``), then
    the system's (the first ``uv/uv.toml`` of ``$XDG_CONFIG_DIRS``, else
    ``/etc/uv/uv.toml``)."""
    if env.get("UV_CONFIG_FILE"):
        path = env["UV_CONFIG_FILE"]
        data = _toml(path, record)
        return [(path, data)] if data is not None else []
    if env.get("UV_NO_CONFIG", "").strip().lower() in _YES:
        return []
    files: list[tuple[str, dict[str, Any]]] = []
    project = _project_file(os.fspath(cwd) if cwd else os.getcwd(), record)
    files += [project] if project is not None else []
    home = env.get("HOME")
    config_home = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
    if config_home:
        path = os.path.join(config_home, "uv", "uv.toml")
        data = _toml(path, record)
        files += [(path, data)] if data is not None else []
    dirs = [d for d in env.get("XDG_CONFIG_DIRS", "").split(":") if d]
    for path in [os.path.join(d, "uv", "uv.toml") for d in dirs] + ["/etc/uv/uv.toml"]:
        data = _toml(path, record)
        if data is not None:
            files.append((path, data))
            break
    return files


class UvConfig:
    """uv's configuration files for ``env`` (:func:`_uv_files`), read when first asked
    and then not again, each read declared to ``record``: what they say of the default
    index, of ``no-index`` and of ``offline``. One value serves a command's :func:`user_index` and
    :func:`no_index`, so the files are read once for both."""

    def __init__(
        self,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
        record: Recorder = NOWHERE,
    ) -> None:
        self._env, self._cwd, self._record = env, cwd, record

    @cached_property
    def _files(self) -> list[tuple[str, dict[str, Any]]]:
        return _uv_files(self._env, self._cwd, self._record)

    def index(self) -> UserIndex | None:
        """The default index the files name, or None."""
        # uv merges the files key by key, the project's first; of the merged keys the
        # [[index]] marked default wins, then [pip] index-url, then the top-level index-url
        # (seen with uv 0.13.9, docs/facts.md section 3).
        for key in (_default_entry, _pip_section, _top_level):
            for path, table in self._files:
                url = key(table)
                if url and url.strip():
                    return UserIndex(url.strip(), f"index in {path}")
        return None

    def no_index(self) -> str | None:
        """Where the files say ``no-index = true``, or None. Merged as the index is:
        ``[pip] no-index`` of every file first, then the top-level key, the project's
        file first; the first file that sets the key decides (a project's ``false``
        beats a user's ``true``; seen with uv 0.13.9, docs/facts.md section 3)."""
        for section in ("pip", None):
            for path, table in self._files:
                found = table.get(section) if section else table
                value = found.get("no-index") if isinstance(found, dict) else None
                if isinstance(value, bool):
                    return f"no-index in {path}" if value else None
        return None

    def offline(self) -> str | None:
        """Where the files say ``offline = true``, or None: a top-level key only (uv
        refuses it under ``[pip]``); the first file that sets it decides, the project's
        first (seen with uv 0.13.9, which then opens no connection)."""
        for path, table in self._files:
            value = table.get("offline")
            if isinstance(value, bool):
                return f"offline in {path}" if value else None
        return None


def user_index(
    env: Mapping[str, str],
    *,
    tool: str | None = None,
    given: str | None = None,
    flag: str | None = None,
    record: Recorder = NOWHERE,
    uv: UvConfig | None = None,
    isolated: bool = False,
    pip: PipFiles | None = None,
) -> UserIndex | None:
    """The index ``tool`` reads by default in ``env`` (see the module's docstring);
    ``given``: the one its arguments name (:attr:`InstallArgs.index_url
    <resolver_hook.install.args.InstallArgs.index_url>`); ``flag``: our own
    ``--index-url``; ``uv``: uv's files (default: read here); ``isolated``: pip's
    ``--isolated`` (its user files and ``PIP_*`` variables unread); ``pip``: pip's files
    as ``isolated`` finds them in ``env``, where the caller has them (default: read
    here). None: PyPI."""
    if flag:
        return UserIndex(flag, "--index-url")
    if tool == "pip":
        if given:
            return UserIndex(given, "pip's --index-url")
        pip = pip or PipFiles(env, record=record, isolated=isolated)
        found = pip.settings("index-url").get("index-url")
        return None if found is None else UserIndex(found[0].strip(), found[1])
    if tool == "uv" and given:
        return UserIndex(given, "uv's --default-index")
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", *(() if tool else ("PIP_INDEX_URL",))):
        if env.get(name, "").strip():
            return UserIndex(env[name].strip(), name)
    if tool is None:  # no pip runs: no --isolated
        pip = pip or PipFiles(env, record=record)
        found = pip.settings("index-url").get("index-url")
        if found is not None:
            return UserIndex(found[0].strip(), found[1])
    return (uv or UvConfig(env, record=record)).index()


def file_index(
    default: UserIndex | None, lines: Iterable[ReqEntry], tool: str | None = None
) -> UserIndex | None:
    """The default index once the requirements files' option ``lines`` are read too:
    their last ``-i URL`` where it wins over ``default`` for ``tool`` (see the module's
    docstring), else ``default``."""
    named = [o for o in lines if o.option in ("-i", "--index-url") and o.value]
    if not named or not (url := (named[-1].value or "").strip()):
        return default
    found = UserIndex(url, f"-i in {named[-1].where}")
    if tool == "uv":
        return default or found
    if tool is None and default is not None and default.where == "--index-url":
        return default
    return found


def no_index(
    env: Mapping[str, str],
    *,
    tool: str | None = None,
    flag: bool = False,
    record: Recorder = NOWHERE,
    uv: UvConfig | None = None,
    isolated: bool = False,
    pip: PipFiles | None = None,
) -> str | None:
    """Where ``tool`` was told to read no index, or None: ``flag`` (its own
    ``--no-index``), then pip's ``PIP_NO_INDEX`` and pip.conf (pip, or no one
    installer), then ``UV_NO_INDEX`` and uv's configuration files (``uv``, default: read
    here; uv, or no one installer). A value pip or uv would read as no is off.
    ``isolated``: pip's ``--isolated`` (its user files and ``PIP_*`` variables unread);
    ``pip``: pip's files, as :func:`user_index` takes them."""
    if flag:
        return f"{tool or 'the installer'}'s --no-index"
    if tool in ("pip", None):
        pip = pip or PipFiles(env, record=record, isolated=isolated)
        found = pip.settings("no-index").get("no-index")
        if found is not None and found[0].strip().lower() in _YES:
            return found[1]
    if tool in ("uv", None):
        if env.get("UV_NO_INDEX", "").strip().lower() in _YES:
            return "UV_NO_INDEX"
        return (uv or UvConfig(env, record=record)).no_index()
    return None


def no_index_line(lines: Iterable[ReqEntry]) -> str | None:
    """Where a requirements file's option ``lines`` say ``--no-index``, or None."""
    line = next((o for o in lines if o.option == "--no-index"), None)
    return None if line is None else f"--no-index in {line.where}"
