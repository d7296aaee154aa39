"""The package's own data files (built-in manifests, the snapshot, the examples): paths
beside its modules.

Not :mod:`importlib.resources`: resolver-hook is installed as files (its placeholder
builder reads its template from the folder too), and importing that module costs a
plan more (~10 ms: ``tempfile``, ``zipfile``, the resource readers) than reading a few
files takes.
"""

from __future__ import annotations

import os

__all__ = ["data_path"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def data_path(*parts: str) -> str:
    """The path of a file or folder of the package: ``data_path("manifests",
    "torch.toml")``."""
    return os.path.join(_PACKAGE, *parts)
