"""Plain data (JSON) from frozen dataclasses, field by field, so JSON cannot drift.

A hand-written ``to_dict`` forgets the field added last; this walks
:func:`dataclasses.fields` instead. A field whose metadata says ``{"json": False}``
is left out (a back-reference, say); ``{"json": "inline"}`` writes a dataclass field's
own fields in its place (what a flavour needs). A class attribute ``kind`` (the flavour kinds)
is written too. Values: sequences (tuples, lists) as lists, sets sorted, mappings with
string keys, ``packaging`` objects and kernel targets as their text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data (dict, list, str, int, float, bool, None)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = getattr(type(value), "kind", None)
        if isinstance(kind, str):
            out["kind"] = kind
        for f in dataclasses.fields(value):
            if f.metadata.get("json") == "inline":
                out.update(plain(getattr(value, f.name)))
            elif f.metadata.get("json", True):
                out[f.name] = plain(getattr(value, f.name))
        return out
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=str)
    return str(value)
