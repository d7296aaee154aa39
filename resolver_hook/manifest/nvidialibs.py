"""NVIDIA's CUDA library wheels (``nvidia-cublas-cu12``, ``nvidia-nccl-cu13``, ...) as
built-in manifests made from one table (``nvidia_wheels.toml`` beside this module).

One rule holds for the whole family: a ``-cuNN`` wheel needs a driver of CUDA NN or
newer (docs/facts.md 1.8), so the floor is read from the name; what differs per
release (its platforms on PyPI, with the page that shows them) is a table row. Each
name becomes a manifest of plain-build ``[[index]]`` entries, judged as any other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from resolver_hook._data import data_path
from resolver_hook.manifest.document import builtin_document
from resolver_hook.manifest.model import Manifest

__all__ = ["nvidia_sources"]

_FILE = "nvidia_wheels.toml"
_MAJOR = r"nvidia-[a-z0-9-]+-cu(\d+)"  # compiled when a manifest is made of a row


@functools.cache
def _rows() -> dict[str, list[dict[str, Any]]]:
    with open(data_path("manifest", _FILE), encoding="utf-8") as f:
        data = builtin_document(_FILE, f.read(), f"built-in ({_FILE})")
    by_name: dict[str, list[dict[str, Any]]] = {}
    for row in data["library"]:
        by_name.setdefault(str(row["name"]), []).append(row)
    return by_name


@functools.cache
def _manifest(name: str) -> Manifest:
    major = re.fullmatch(_MAJOR, name)
    assert major is not None, name  # a test holds every name of the table to it
    entries = [
        {k: v for k, v in row.items() if k != "name"} | {"cuda": f">={major.group(1)}.0"}
        for row in _rows()[name]
    ]
    doc = {
        "schema": 1,
        # The table lists the releases read, not every release: it judges exact pins
        # only (an unpinned line beside torch must stay free to take torch's release).
        "package": {
            "name": name,
            "downloads": f"https://pypi.org/project/{name}/",
            "pins_only": True,
        },
        "index": entries,
    }
    # Imported here: a plan over kept manifests validates none (see load.parse_manifest).
    from resolver_hook.manifest.validate import parse_manifest

    return parse_manifest(doc, source=f"built-in ({_FILE})")


def nvidia_sources() -> dict[str, tuple[str, Callable[[], Manifest]]]:
    """Canonical name -> (source, parser) of each library the table lists, none parsed."""
    return {name: (f"built-in ({_FILE})", functools.partial(_manifest, name)) for name in _rows()}
