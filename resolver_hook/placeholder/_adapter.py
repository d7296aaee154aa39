"""TEMPORARY: read a flavour manifest until ``resolver_hook.manifest`` lands on main.

It returns objects with the attribute names of ``resolver_hook.manifest``'s
``Manifest``/``WheelFlavour``/``IndexFlavour`` so that switching to
``load_manifest`` deletes this file and changes one import.
"""

from __future__ import annotations

import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from resolver_hook.cuda import KernelTarget, parse_target
from resolver_hook.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["load_manifest"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFlavour:
    url: str
    filename: str
    name: str
    version: Version
    tags: frozenset[Tag]
    sha256: str | None = None
    cuda: SpecifierSet | None = None
    gpu: tuple[KernelTarget, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFlavour:
    url: str
    version: Version
    cuda: SpecifierSet | None = None
    gpu: tuple[KernelTarget, ...] = ()
    platforms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    name: str
    display_name: str
    homepage: str | None = None
    downloads: str | None = None
    wheels: tuple[WheelFlavour, ...] = ()
    indexes: tuple[IndexFlavour, ...] = field(default_factory=tuple)


def load_manifest(path: str | Path) -> Manifest:
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not valid TOML: {exc}") from None
    pkg: dict[str, Any] = data.get("package") or {}
    raw_name = pkg.get("name")
    if not isinstance(raw_name, str):
        raise UsageError(f"{where}: package.name: missing")
    name = canonicalize_name(raw_name)

    def spec(value: Any, key: str) -> SpecifierSet | None:
        if value is None:
            return None
        try:
            return SpecifierSet(value)
        except (InvalidSpecifier, TypeError):
            raise UsageError(f"{where}: {key}: {value!r} is not a version specifier") from None

    def targets(value: Any, key: str) -> tuple[KernelTarget, ...]:
        try:
            return tuple(parse_target(t) for t in value or ())
        except (ValueError, AttributeError) as exc:
            raise UsageError(f"{where}: {key}: {exc}") from None

    wheels = []
    for i, w in enumerate(data.get("wheel") or ()):
        url = w.get("url")
        filename = urllib.parse.unquote(str(url).rsplit("/", 1)[-1])
        try:
            wname, version, _, tags = parse_wheel_filename(filename)
        except InvalidWheelFilename as exc:
            raise UsageError(f"{where}: wheel[{i}].url: {exc}") from None
        wheels.append(WheelFlavour(url=url, filename=filename, name=wname, version=version,
                                   tags=tags, sha256=w.get("sha256"),
                                   cuda=spec(w.get("cuda"), f"wheel[{i}].cuda"),
                                   gpu=targets(w.get("gpu"), f"wheel[{i}].gpu")))
    indexes = []
    for i, x in enumerate(data.get("index") or ()):
        indexes.append(IndexFlavour(url=x.get("url"), version=Version(x.get("version")),
                                    cuda=spec(x.get("cuda"), f"index[{i}].cuda"),
                                    gpu=targets(x.get("gpu"), f"index[{i}].gpu"),
                                    platforms=tuple(x.get("platforms") or ())))
    return Manifest(name=name, display_name=raw_name, homepage=pkg.get("homepage"),
                    downloads=pkg.get("downloads"), wheels=tuple(wheels),
                    indexes=tuple(indexes))
