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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from resolver_hook._toml import TomlError
from resolver_hook._toml import loads as toml_loads
from resolver_hook.limits import MAX_MANIFEST_BYTES
from resolver_hook.manifest.schema import Manifest, ManifestError, parse_manifest

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_INSECURE",
    "ENV_MANIFESTS",
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
    if len(text) > MAX_MANIFEST_BYTES:
        raise ManifestError([f"{source}: larger than the {MAX_MANIFEST_BYTES} bytes allowed"])
    try:
        data = toml_loads(text)
    except TomlError as exc:
        raise ManifestError([f"{source}: not valid TOML: {exc}"]) from None
    return parse_manifest(data, source=source, allow_insecure=allow_insecure)


def load_manifest(
    path: str | os.PathLike[str], *, allow_insecure: bool = False, source: str | None = None
) -> Manifest:
    """Read and validate one manifest file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ManifestError([f"{p}: not UTF-8 text"]) from None
    return loads_manifest(text, source=source or str(p), allow_insecure=allow_insecure)


@functools.lru_cache(maxsize=1)
def _builtin() -> tuple[Manifest, ...]:
    out = []
    folder = resources.files("resolver_hook") / "manifests"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.append(
                loads_manifest(entry.read_text(encoding="utf-8"), source=f"built-in ({entry.name})")
            )
    return tuple(out)


def builtin_manifests() -> dict[str, Manifest]:
    """The manifests shipped inside resolver-hook, by canonical name."""
    return {m.name: m for m in _builtin()}


def _folder_files(path: Path, where: str) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".toml" and p.is_file())
    if path.is_file():
        return [path]
    raise ManifestError([f"{where}: {str(path)!r} is neither a file nor a folder"])


def _from_entry_point(ep: Any, allow_insecure: bool) -> list[Manifest]:
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
        files = _folder_files(Path(obj), where)
        return [
            load_manifest(f, allow_insecure=allow_insecure, source=f"{where}: {f}") for f in files
        ]
    raise ManifestError(
        [f"{where}: resolved to {type(obj).__name__}; expected a path, TOML text or a mapping"]
    )


def _entry_points() -> Iterable[Any]:
    import importlib_metadata

    return importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)


def _from_pyproject(cwd: Path, allow_insecure: bool) -> list[Manifest]:
    pyproject = cwd / "pyproject.toml"
    if not pyproject.is_file():
        return []
    try:
        data = toml_loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TomlError) as exc:
        raise ManifestError([f"{pyproject}: cannot read: {exc}"]) from None
    tool = data.get("tool", {}).get("resolver-hook") if isinstance(data.get("tool"), dict) else None
    if tool is None:
        return []
    where = f"{pyproject} [tool.resolver-hook]"
    if not isinstance(tool, dict):
        raise ManifestError([f"{where}: expected a table"])
    problems = []
    for key in tool:
        if key not in ("manifests", "manifest"):
            problems.append(f"{where}: {key}: unknown key (known: manifests, manifest)")
    out: list[Manifest] = []
    paths = tool.get("manifests", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        problems.append(f"{where}: manifests: expected a list of paths")
        paths = []
    tables = tool.get("manifest", [])
    if isinstance(tables, dict):
        tables = [tables]
    if not isinstance(tables, list):
        problems.append(f"{where}: manifest: expected [[tool.resolver-hook.manifest]] tables")
        tables = []
    if problems:
        raise ManifestError(problems)
    for p in paths:
        for f in _folder_files(cwd / p, f"{where}: manifests"):
            out.append(load_manifest(f, allow_insecure=allow_insecure))
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
) -> dict[str, Manifest]:
    """Every manifest from every source, by canonical name (see the module docstring).

    ``env`` defaults to ``os.environ`` and ``cwd`` to the current directory;
    ``entry_points=None`` skips plugins. Problems from all sources are reported
    together in one ManifestError.
    """
    env = os.environ if env is None else env
    here = Path.cwd() if cwd is None else Path(cwd)
    problems: list[str] = []
    levels: list[list[Manifest]] = []

    def gather(make: Callable[[], list[Manifest]]) -> None:
        try:
            levels.append(make())
        except ManifestError as exc:
            problems.extend(exc.problems)
            levels.append([])

    if builtin:
        levels.append(list(_builtin()))
    if entry_points is not None:
        eps = entry_points
        gather(
            lambda: [
                m
                for ep in sorted(eps(), key=lambda e: e.name)
                for m in _from_entry_point(ep, allow_insecure)
            ]
        )
    folders = [f for f in env.get(ENV_MANIFESTS, "").split(os.pathsep) if f.strip()]
    gather(
        lambda: [
            load_manifest(f, allow_insecure=allow_insecure)
            for folder in folders
            for f in _folder_files(Path(folder), ENV_MANIFESTS)
        ]
    )
    gather(lambda: _from_pyproject(here, allow_insecure))
    levels.append(_load_each(list(files), allow_insecure, problems))
    result: dict[str, Manifest] = {}
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
            result[m.name] = replace(m, replaced=(*old.replaced, old.source)) if old else m
    if problems:
        raise ManifestError(problems)
    return result


def _load_each(
    files: list[str | os.PathLike[str]], allow_insecure: bool, problems: list[str]
) -> list[Manifest]:
    out: list[Manifest] = []
    for f in files:
        try:
            out.append(load_manifest(f, allow_insecure=allow_insecure))
        except ManifestError as exc:
            problems.extend(exc.problems)
    return out
