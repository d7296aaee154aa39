"""Where manifests come from: built-in data, files, folders, pyproject.toml, entry points.

Precedence, lowest first (a later source's manifest for a name replaces an
earlier one, and the replaced sources are recorded in ``Manifest.replaced``):

1. built-in data: ``resolver_hook/manifests/*.toml`` inside the package;
2. entry points in the group ``resolver_hook.manifests``: each resolves (after
   ``EntryPoint.load()``, calling it when callable) to an ``os.PathLike`` or a
   ``str`` path of a TOML file or a folder of them, to a ``str`` of TOML text
   (any string containing a newline), or to a mapping in the manifest format;
3. folders named in ``RESOLVER_HOOK_MANIFESTS`` (``os.pathsep``-separated; every
   ``*.toml`` inside; a file name also works);
4. the current project's ``pyproject.toml``: ``[tool.resolver-hook]`` with
   ``manifests = ["path", ...]`` (files or folders, relative to the pyproject) and/or
   ``[[tool.resolver-hook.manifest]]`` tables written in the manifest format;
5. ``--manifest FILE`` (repeatable).

Two manifests for one name from the same level are an error: which one wins
would be an accident of ordering.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from resolver_hook._data import data_path
from resolver_hook.errors import ManifestError
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.record import NOWHERE, Recorder, folder_names, path_kind
from resolver_hook.ground.toml import TomlError, kept_file
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import replace
from resolver_hook.manifest.document import builtin_document, document
from resolver_hook.manifest.model import Manifest
from resolver_hook.manifest.nvidialibs import nvidia_sources
from resolver_hook.manifest.stored import kept_builtin

# pathlib (~1 ms to import) only where the user names a manifest file or folder: a plan
# over the built-in manifests looks for ./pyproject.toml by its path as text.
if TYPE_CHECKING:
    from pathlib import Path

    from resolver_hook.manifest.validate import parse_manifest
else:

    def parse_manifest(*args: Any, **kwargs: Any) -> Manifest:
        # The validator imported when a manifest is first validated: a plan over the
        # built-in manifests makes them again from the user cache (stored.kept_builtin)
        # and imports none of validate, templates, variantname.
        from resolver_hook.manifest.validate import parse_manifest as parse

        return parse(*args, **kwargs)


__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_INSECURE",
    "ENV_MANIFESTS",
    "ManifestSet",
    "builtin_manifests",
    "collect_manifests",
    "load_manifest",
    "loads_manifest",
]

ENV_MANIFESTS = "RESOLVER_HOOK_MANIFESTS"
ENV_INSECURE = "RESOLVER_HOOK_ALLOW_INSECURE_URLS"
ENTRY_POINT_GROUP = "resolver_hook.manifests"


def loads_manifest(text: str, *, source: str, allow_insecure: bool = False) -> Manifest:
    """Parse TOML text into a manifest; ManifestError names ``source``."""
    return parse_manifest(document(text, source), source=source, allow_insecure=allow_insecure)


def load_manifest(
    path: str | os.PathLike[str],
    *,
    allow_insecure: bool = False,
    source: str | None = None,
    record: Recorder = NOWHERE,
) -> Manifest:
    """Read and validate one manifest file (declared to ``record``)."""
    from pathlib import Path

    from resolver_hook.ground.input import InputError, read_text_input

    p = Path(path)
    try:
        # Folders, devices refused; pipes with a cap and deadline.
        text = read_text_input(p, record=record)
    except InputError as exc:
        raise ManifestError([exc.message]) from None
    shown = source or str(p)
    data = kept_file(p, text, lambda: document(text, shown))
    return parse_manifest(data, source=shown, allow_insecure=allow_insecure)


class ManifestSet(Mapping[str, Manifest]):
    """Manifests by canonical name; the built-in ones are read on first use.

    A plan of five packages needs five manifests, not every one shipped: a built-in
    manifest is named by its file (``torch.toml`` describes ``torch``; a test holds every
    shipped file to that) and parsed only when looked up. Iterating the names reads
    nothing; looking at a value reads that one file.
    """

    def __init__(
        self, loaded: Mapping[str, Manifest], lazy: Mapping[str, Callable[[], Manifest]]
    ) -> None:
        self._loaded = dict(loaded)
        self._lazy = {k: v for k, v in lazy.items() if k not in self._loaded}
        # The built-in manifests alone, none of the user's: what the tool's own files
        # say (a key of what is read from them needs no more than the tool's).
        self.builtin_only = not self._loaded and bool(self._lazy)

    def __getitem__(self, name: str) -> Manifest:
        if name not in self._loaded:
            self._loaded[name] = self._lazy.pop(name)()  # KeyError for an unknown name
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._loaded, *self._lazy])

    def __len__(self) -> int:
        return len(self._loaded) + len(self._lazy)

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._lazy


@functools.cache
def _parse_builtin(file_name: str) -> Manifest:
    with open(data_path("manifests", file_name), encoding="utf-8") as f:
        text = f.read()
    source = f"built-in ({file_name})"
    # Validated once per text and tool (resolver_hook.manifest.stored).
    return kept_builtin(
        file_name,
        text,
        lambda: parse_manifest(builtin_document(file_name, text, source), source=source),
    )


def _builtin_sources() -> dict[str, tuple[str, Callable[[], Manifest]]]:
    """Canonical name -> (source, parser) of every built-in manifest, none parsed yet."""
    return {
        name.removesuffix(".toml"): (
            f"built-in ({name})",
            functools.partial(_parse_builtin, name),
        )
        for name in sorted(os.listdir(data_path("manifests")))
        if name.endswith(".toml")
    }


def _builtin() -> tuple[Manifest, ...]:
    return tuple(parse() for _, parse in _builtin_sources().values())


def builtin_manifests() -> dict[str, Manifest]:
    """The manifests shipped inside resolver-hook, by canonical name."""
    return {m.name: m for m in _builtin()}


def _folder_files(
    named: str | os.PathLike[str], where: str, record: Recorder = NOWHERE
) -> list[Path]:
    """The manifest file ``named``, or the ``*.toml`` files of the folder ``named``."""
    from pathlib import Path

    path = Path(named)
    kind = path_kind(str(path), record)
    if kind == 2:
        names = folder_names(str(path), record) or []
        files = [path / n for n in names if os.path.splitext(n)[1] == ".toml"]
        return sorted(f for f in files if path_kind(str(f), record) == 1)
    if kind == 1:
        return [path]
    raise ManifestError([f"{where}: {str(path)!r} is neither a file nor a folder"])


def _from_entry_point(ep: Any, allow_insecure: bool, record: Recorder) -> list[Manifest]:
    where = f"entry point {ep.name} ({ep.value})"
    try:
        obj = ep.load()
        if callable(obj):
            obj = obj()
    except Exception as exc:  # a third-party plugin may raise anything
        raise ManifestError([f"{where}: failed to load: {type(exc).__name__}: {exc}"]) from None
    if isinstance(obj, Mapping):
        return [parse_manifest(obj, source=where, allow_insecure=allow_insecure)]
    if isinstance(obj, str) and "\n" in obj:
        return [loads_manifest(obj, source=where, allow_insecure=allow_insecure)]
    if isinstance(obj, (str, os.PathLike)):
        files = _folder_files(obj, where, record)
        return [
            load_manifest(f, allow_insecure=allow_insecure, source=f"{where}: {f}", record=record)
            for f in files
        ]
    raise ManifestError(
        [f"{where}: resolved to {type(obj).__name__}; expected a path, TOML text or a mapping"]
    )


def _entry_points() -> Iterable[Any]:
    """The plugins of the ``resolver_hook.manifests`` entry-point group.

    Finding them reads the metadata of every installed distribution, on every command.
    The list found is kept in the user cache, keyed by ``sys.path`` and what each of its
    folders holds (:func:`resolver_hook.ground.cache.sys_path_state`): installing or
    removing a distribution changes it, and a new path is a new key.
    """
    folder = _cache.cache_dir(os.environ)
    key = {"format": 1, "group": ENTRY_POINT_GROUP, "path": _cache.sys_path_state()}
    path = os.path.join(folder, "entry-points.json") if folder else None
    if path is not None:
        found, _ = _cache.read(path, key)
        if isinstance(found, list) and all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x)
            for x in found
        ):
            if not found:
                return []  # the usual case: no plugins, and no importlib.metadata (~15 ms)
            from importlib.metadata import EntryPoint

            return [EntryPoint(name=n, value=v, group=ENTRY_POINT_GROUP) for n, v in found]
    import importlib_metadata

    eps = list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP))
    if path is not None:
        _cache.write(path, key, [[e.name, e.value] for e in eps])
    return eps


def _from_pyproject(cwd: str, allow_insecure: bool, record: Recorder) -> list[Manifest]:
    pyproject = os.path.join(cwd, "pyproject.toml")
    if path_kind(pyproject, record) != 1:
        return []  # none there: that absence is an input too
    try:
        with open(pyproject, "rb") as handle:
            raw = handle.read()
        record.file(pyproject, raw)
        # As read_text reads it: universal newlines.
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        data = kept_file(pyproject, text, lambda: toml_loads(text))
    except (OSError, UnicodeDecodeError, TomlError) as exc:
        raise ManifestError([f"{pyproject}: cannot read: {exc}"]) from None
    tool = data.get("tool", {}).get("resolver-hook") if isinstance(data.get("tool"), dict) else None
    if tool is None:
        return []
    from resolver_hook.manifest.tables import TableReader  # a table of ours to read: rare

    where = f"{pyproject} [tool.resolver-hook]"
    if not isinstance(tool, dict):
        raise ManifestError([f"{where}: expected a table"])
    r = TableReader(where)
    for key in tool:
        if key not in ("manifests", "manifest", "env"):  # env: read by `resolver-hook env`
            r.bad(key, "unknown key (known: manifests, manifest, env)")
    out: list[Manifest] = []
    paths = tool.get("manifests", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        r.bad("manifests", "expected a list of paths")
        paths = []
    tables = tool.get("manifest", [])
    if isinstance(tables, dict):
        tables = [tables]
    if not isinstance(tables, list):
        r.bad("manifest", "expected [[tool.resolver-hook.manifest]] tables")
        tables = []
    if r.found:
        raise ManifestError(r.problems)
    for p in paths:
        for f in _folder_files(os.path.join(cwd, p), f"{where}: manifests", record):
            out.append(load_manifest(f, allow_insecure=allow_insecure, record=record))
    for i, t in enumerate(tables):
        out.append(
            parse_manifest(
                t,
                source=f"{pyproject} [[tool.resolver-hook.manifest]][{i}]",
                allow_insecure=allow_insecure,
            )
        )
    return out


def collect_manifests(
    files: Iterable[str | os.PathLike[str]] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    allow_insecure: bool = False,
    entry_points: Callable[[], Iterable[Any]] | None = _entry_points,
    builtin: bool = True,
    record: Recorder = NOWHERE,
) -> ManifestSet:
    """Every manifest from every source, by canonical name (see the module docstring).
    Each file and folder read is declared to ``record`` (the built-in manifests are the
    tool's own; the plugins are found by ``sys.path``, which the plan store's key holds).

    ``env`` defaults to ``os.environ`` and ``cwd`` to the current directory;
    ``entry_points=None`` skips plugins. Problems from all sources are reported
    together in one ManifestError.
    """
    env = os.environ if env is None else env
    here = os.getcwd() if cwd is None else os.fspath(cwd)
    problems: list[str] = []
    levels: list[list[Manifest]] = []

    def gather(make: Callable[[], list[Manifest]]) -> None:
        try:
            levels.append(make())
        except ManifestError as exc:
            problems.extend(exc.problems)
            levels.append([])

    # NVIDIA's CUDA library wheels: one table, a manifest per name (nvidialibs.py).
    lazy = {**nvidia_sources(), **_builtin_sources()} if builtin else {}
    if entry_points is not None:
        eps = entry_points
        gather(
            lambda: [
                m
                for ep in sorted(eps(), key=lambda e: e.name)
                for m in _from_entry_point(ep, allow_insecure, record)
            ]
        )
    folders = [f for f in env.get(ENV_MANIFESTS, "").split(os.pathsep) if f.strip()]
    gather(
        lambda: [
            load_manifest(f, allow_insecure=allow_insecure, record=record)
            for folder in folders
            for f in _folder_files(folder, ENV_MANIFESTS, record)
        ]
    )
    gather(lambda: _from_pyproject(here, allow_insecure, record))
    levels.append(_load_each(list(files), allow_insecure, problems, record))
    result: dict[str, Manifest] = {}
    replaced: dict[str, tuple[str, ...]] = {name: (source,) for name, (source, _) in lazy.items()}
    for level in levels:
        seen: dict[str, Manifest] = {}
        for m in level:
            if m.name in seen:
                problems.append(
                    f"{m.source}: package {m.display_name!r} is also described by "
                    f"{seen[m.name].source}: keep one"
                )
                continue
            seen[m.name] = m
            old = result.get(m.name)
            before = (*old.replaced, old.source) if old else replaced.get(m.name, ())
            result[m.name] = replace(m, replaced=before) if before else m
    if problems:
        raise ManifestError(problems)
    return ManifestSet(result, {name: parse for name, (_, parse) in lazy.items()})


def _load_each(
    files: list[str | os.PathLike[str]], allow_insecure: bool, problems: list[str], record: Recorder
) -> list[Manifest]:
    out: list[Manifest] = []
    for f in files:
        try:
            out.append(load_manifest(f, allow_insecure=allow_insecure, record=record))
        except ManifestError as exc:
            problems.extend(exc.problems)
    return out
