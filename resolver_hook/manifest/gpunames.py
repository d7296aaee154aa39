"""Distributions whose wheels are CUDA builds, by name (``gpu_names.toml`` beside this
module, each family with its public source).

On a machine with an NVIDIA GPU, a requirement for one of them that no manifest
describes (or a release its manifest does not list) cannot be judged: the plan says so
(cause ``unjudged``) rather than hand it to the installer in silence (issue 50).
"""

from __future__ import annotations

import fnmatch
import functools

from resolver_hook._data import data_path
from resolver_hook.manifest.document import builtin_document

__all__ = ["cuda_distribution"]


@functools.cache
def _families() -> tuple[tuple[tuple[str, ...], str, str], ...]:
    with open(data_path("manifest", "gpu_names.toml"), encoding="utf-8") as f:
        data = builtin_document("gpu_names.toml", f.read(), "built-in (gpu_names.toml)")
    return tuple((tuple(x["names"]), str(x["what"]), str(x["evidence"])) for x in data["family"])


def cuda_distribution(name: str) -> tuple[str, str] | None:
    """(what its wheels are, the page that says so) for a canonical name whose wheels
    are CUDA builds; None for any other name."""
    for patterns, what, evidence in _families():
        # fnmatch compiles a pattern into a regular expression the first time (~50 us
        # each): a name is matched only against those it starts as (most names none).
        if any(
            name.startswith(_literal_start(p)) and fnmatch.fnmatchcase(name, p) for p in patterns
        ):
            return what, evidence
    return None


@functools.cache  # once per pattern, not once per name asked about
def _literal_start(pattern: str) -> str:
    """What every name ``pattern`` matches starts with: the text before its first
    wildcard (``*``, ``?`` or ``[``)."""
    for i, c in enumerate(pattern):
        if c in "*?[":
            return pattern[:i]
    return pattern
