"""Build a placeholder: render the project and make the sdist with hatchling.

The sdist comes from hatchling's own sdist builder, used as a library: it writes
standard core metadata (static: no ``Dynamic`` field) and is reproducible by default
(entries in a fixed order, uid/gid 0, modes 644/755, every mtime and the gzip header
time set from ``SOURCE_DATE_EPOCH``, else hatchling's fixed 2020-02-02).

There is no placeholder wheel: pip and uv prefer a wheel to an sdist and install it
without running any of its code, so a placeholder wheel installs silently (the
message could come at import at the earliest). Only the sdist's build can refuse.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.sdist import SdistBuilder
from packaging.utils import canonicalize_name

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.manifest import load_manifest
from resolver_hook.publish.placeholder.data import DEFAULT_VERSION, placeholder_data, retired_data
from resolver_hook.publish.placeholder.render import render_project

__all__ = [
    "BuiltPlaceholder",
    "build_from_data",
    "build_placeholder",
    "build_retired",
    "placeholder_name",
    "read_retired_file",
]


@valueclass
class BuiltPlaceholder:
    """What ``placeholder build`` made."""

    name: str
    version: str
    sdist: Path


def build_placeholder(
    manifest_path: str | Path,
    out_dir: str | Path,
    *,
    version: str = DEFAULT_VERSION,
    import_name: str | None = None,
    allow_insecure: bool = False,
) -> BuiltPlaceholder:
    """Build the placeholder sdist of the manifest at ``manifest_path``.

    A TOML file with a ``[retired]`` table (see :func:`read_retired_file`) builds a
    retired-name placeholder instead. ``allow_insecure``: the manifest may hold loopback
    ``http://`` and ``file:`` URLs (``--allow-insecure-urls``).
    """
    retired = read_retired_file(manifest_path)
    if retired is not None:
        name, replacement, homepage, given = retired
        data = retired_data(
            name,
            replacement,
            version,
            import_as=import_name or given,
            homepage=homepage,
            where=f"{manifest_path}: retired.name",
        )
        return build_from_data(data, out_dir)

    manifest = load_manifest(manifest_path, allow_insecure=allow_insecure)
    return build_from_data(placeholder_data(manifest, version, import_as=import_name), out_dir)


def build_retired(
    name: str,
    replacement: str,
    out_dir: str | Path,
    *,
    version: str = DEFAULT_VERSION,
    import_name: str | None = None,
    homepage: str | None = None,
) -> BuiltPlaceholder:
    """Build the placeholder sdist of the retired name ``name`` -> ``replacement``."""
    data = retired_data(name, replacement, version, import_as=import_name, homepage=homepage)
    return build_from_data(data, out_dir)


def placeholder_name(manifest_path: str | Path, *, allow_insecure: bool = False) -> str:
    """The project name the placeholder of ``manifest_path`` (a manifest or a
    ``[retired]`` file) will have, canonical; the same errors as :func:`build_placeholder`."""

    retired = read_retired_file(manifest_path)
    if retired is not None:
        return str(canonicalize_name(retired[0]))

    return str(load_manifest(manifest_path, allow_insecure=allow_insecure).name)


_RETIRED_KEYS = {"name", "replacement", "homepage", "import-name"}


def read_retired_file(path: str | Path) -> tuple[str, str, str | None, str | None] | None:
    """``(name, replacement, homepage, import name)`` of a retired-name file, or None
    when ``path`` is not one (a flavour manifest).

    The file is TOML with one table::

        [retired]
        name = "sklearn"
        replacement = "scikit-learn"
        homepage = "https://scikit-learn.org"   # optional
        import-name = "sklearn"                  # optional

    Only a file that reads as TOML and has ``[retired]`` is one; anything else is left
    to the manifest loader, which words its own errors.
    """
    if not Path(path).is_file():  # FIFOs, folders, missing: the manifest loader says why
        return None
    try:
        with open(path, "rb") as handle:
            raw = handle.read(1 << 20)
        doc = toml_loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, TomlError, RecursionError):
        return None
    table = doc.get("retired")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: retired: expected a table")
    unknown = sorted(set(table) - _RETIRED_KEYS)
    if unknown:
        raise UsageError(
            f"{path}: retired: unknown key {unknown[0]!r}",
            hint="keys: name, replacement, homepage, import-name",
        )
    for key in ("name", "replacement"):
        if not isinstance(table.get(key), str):
            raise UsageError(f"{path}: retired.{key}: missing or not a string")
    for key in ("homepage", "import-name"):
        if key in table and not isinstance(table[key], str):
            raise UsageError(f"{path}: retired.{key}: not a string")
    return table["name"], table["replacement"], table.get("homepage"), table.get("import-name")


def build_from_data(data: dict[str, Any], out_dir: str | Path) -> BuiltPlaceholder:
    """Build from data made by :func:`placeholder_data`."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OperationalError(
            f"{out}: cannot make the output folder: {exc.strerror or exc}"
        ) from None
    # The sdist is made in a staging folder inside ``out`` and renamed into place, so
    # an interrupted build never leaves half an sdist where installers look.
    try:
        staging_dir = tempfile.TemporaryDirectory(prefix=".staging-", dir=out)
    except OSError as exc:  # a folder that exists but cannot be written to
        raise OperationalError(f"{out}: cannot write in it: {exc.strerror or exc}") from None
    with (
        tempfile.TemporaryDirectory(prefix="resolver-hook-placeholder-") as tmp,
        staging_dir as staging,
    ):
        tree = render_project(data, Path(tmp) / "project")
        sdist = _publish(_hatchling_sdist(tree, Path(staging)), out)
    return BuiltPlaceholder(name=data["name"], version=data["version"], sdist=sdist)


def _publish(artifact: Path, out: Path) -> Path:
    target = out / artifact.name
    os.replace(artifact, target)
    return target


def _hatchling_sdist(tree: Path, out: Path) -> Path:

    # hatchling writes its tarball to a temporary file first (tempfile.mkstemp) and leaves
    # it when the build fails: made beside the tree, it goes when the tree's folder goes.
    previous, tempfile.tempdir = tempfile.tempdir, str(tree.parent)
    try:
        artifacts = list(SdistBuilder(str(tree)).build(directory=str(out), versions=["standard"]))
    except Exception as exc:  # hatchling reports bad metadata with plain exceptions
        raise OperationalError(f"hatchling could not build the sdist: {exc}") from exc
    finally:
        tempfile.tempdir = previous
    built = Path(artifacts[0])
    if not built.resolve().is_relative_to(out.resolve()):
        raise OperationalError(f"build produced {built}, outside {out}")
    return built
