"""Build the TOML text of a flavour manifest from wheel entries (scan and import share it).

The form written is the flat one the resolver accepts::

    schema = 1
    [package]
    name = "tilert"
    downloads = "https://..."       # optional

    [[wheel]]
    url = "https://.../tilert-...-manylinux_2_28_x86_64.whl"
    sha256 = "<64 hex>"             # omitted when unknown
    cuda = ">=13.0"                 # omitted when no CUDA runtime is needed
    gpu = ["sm_100f"]               # omitted when no kernels
    requires = ["torch==2.13.*"]    # omitted when no couplings
    [wheel.cuda_floors]             # omitted when one floor holds for every target
    sm_89 = ">=12.0"
    compute_89 = ">=12.9"
"""

from __future__ import annotations

from collections.abc import Iterable

import tomli_w

from resolver_hook.ground.valueclass import valueclass

__all__ = ["SCHEMA", "WheelEntry", "manifest_document", "render_manifest"]

SCHEMA = 1


@valueclass
class WheelEntry:
    """One ``[[wheel]]`` of a manifest."""

    url: str
    sha256: str | None = None
    cuda: str | None = None
    gpu: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()  # PEP 825 properties kept as written (other namespaces)
    cuda_floors: tuple[tuple[str, str], ...] = ()  # (target, specifier), targets of gpu

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"url": self.url}
        if self.sha256:
            out["sha256"] = self.sha256
        if self.cuda:
            out["cuda"] = self.cuda
        if self.gpu:
            out["gpu"] = list(self.gpu)
        if self.requires:
            out["requires"] = list(self.requires)
        if self.properties:
            out["properties"] = list(self.properties)
        if self.cuda_floors:
            out["cuda_floors"] = dict(self.cuda_floors)
        return out


def manifest_document(
    name: str,
    wheels: Iterable[WheelEntry],
    *,
    homepage: str | None = None,
    downloads: str | None = None,
) -> dict[str, object]:
    """The manifest as a mapping (what ``tomllib`` reads back from :func:`render_manifest`)."""
    package: dict[str, object] = {"name": name}
    if homepage:
        package["homepage"] = homepage
    if downloads:
        package["downloads"] = downloads
    return {"schema": SCHEMA, "package": package, "wheel": [w.to_dict() for w in wheels]}


def render_manifest(
    name: str,
    wheels: Iterable[WheelEntry],
    *,
    homepage: str | None = None,
    downloads: str | None = None,
    comment: str | None = None,
) -> str:
    """The manifest as TOML text, optionally headed by ``# comment`` lines."""
    text = tomli_w.dumps(manifest_document(name, wheels, homepage=homepage, downloads=downloads))
    if comment:
        text = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines()) + text
    return text
