"""Build a placeholder: render the project, make the sdist with hatchling, maybe a wheel.

The sdist comes from hatchling's own sdist builder, used as a library: it writes
standard core metadata (static: no ``Dynamic`` field) and is reproducible by default
(entries in a fixed order, uid/gid 0, modes 644/755, every mtime and the gzip header
time set from ``SOURCE_DATE_EPOCH``, else hatchling's fixed 2020-02-02). The wheel,
built only on request, comes from the placeholder's own in-tree backend with the
escape hatch set, which is exactly what pip and uv would build and cache.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resolver_hook._proc import capture
from resolver_hook.errors import OperationalError
from resolver_hook.placeholder.check import extract_sdist
from resolver_hook.placeholder.data import DEFAULT_VERSION, placeholder_data
from resolver_hook.placeholder.render import render_project, runtime

__all__ = ["BuiltPlaceholder", "build_from_data", "build_placeholder"]

# Seconds the placeholder's own backend may take to write its (tiny) wheel.
BACKEND_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltPlaceholder:
    """What ``placeholder build`` made."""

    name: str
    version: str
    sdist: Path
    wheel: Path | None = None


def build_placeholder(
    manifest_path: str | Path,
    out_dir: str | Path,
    *,
    version: str = DEFAULT_VERSION,
    wheel: bool = False,
) -> BuiltPlaceholder:
    """Build the placeholder sdist (and wheel) of the manifest at ``manifest_path``."""
    from resolver_hook.manifest import load_manifest

    return build_from_data(
        placeholder_data(load_manifest(manifest_path), version), out_dir, wheel=wheel
    )


def build_from_data(
    data: dict[str, Any], out_dir: str | Path, *, wheel: bool = False
) -> BuiltPlaceholder:
    """Build from data made by :func:`placeholder_data`."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OperationalError(
            f"{out}: cannot make the output folder: {exc.strerror or exc}"
        ) from None
    # Artifacts are made in a staging folder inside ``out`` and renamed into place, so
    # an interrupted build never leaves half an sdist or wheel where installers look.
    try:
        staging_dir = tempfile.TemporaryDirectory(prefix=".staging-", dir=out)
    except OSError as exc:  # a folder that exists but cannot be written to
        raise OperationalError(f"{out}: cannot write in it: {exc.strerror or exc}") from None
    with (
        tempfile.TemporaryDirectory(prefix="resolver-hook-placeholder-") as tmp,
        staging_dir as staging,
    ):
        tree = render_project(data, Path(tmp) / "project")
        sdist = _hatchling_sdist(tree, Path(staging))
        built_wheel = (
            _backend_wheel(sdist, Path(tmp), Path(staging), data["name"]) if wheel else None
        )
        sdist = _publish(sdist, out)
        built_wheel = _publish(built_wheel, out) if built_wheel else None
    return BuiltPlaceholder(
        name=data["name"], version=data["version"], sdist=sdist, wheel=built_wheel
    )


def _publish(artifact: Path, out: Path) -> Path:
    target = out / artifact.name
    os.replace(artifact, target)
    return target


def _inside(path: Path, folder: Path) -> Path:
    if not path.resolve().is_relative_to(folder.resolve()):
        raise OperationalError(f"build produced {path}, outside {folder}")
    return path


def _hatchling_sdist(tree: Path, out: Path) -> Path:
    from hatchling.builders.sdist import SdistBuilder

    try:
        artifacts = list(SdistBuilder(str(tree)).build(directory=str(out), versions=["standard"]))
    except Exception as exc:  # hatchling reports bad metadata with plain exceptions
        raise OperationalError(f"hatchling could not build the sdist: {exc}") from exc
    return _inside(Path(artifacts[0]), out)


def _backend_wheel(sdist: Path, tmp: Path, out: Path, name: str) -> Path:
    root = extract_sdist(sdist, tmp / "unpacked")
    env = dict(os.environ)
    env[runtime().escape_hatch(name)] = "1"
    env["PYTHONPATH"] = str(root / "_placeholder_backend")
    code = "import sys, placeholder_backend as b; sys.stdout.write(b.build_wheel(sys.argv[1]))"
    proc = capture(
        [sys.executable, "-c", code, str(out.resolve())],
        cwd=str(root),
        env=env,
        timeout=BACKEND_TIMEOUT,
    )
    if not proc.ok:
        said = (proc.stderr or proc.stdout).strip() or proc.reason()
        raise OperationalError(f"the placeholder backend could not build a wheel: {said}")
    return _inside(out / proc.stdout.strip(), out)
