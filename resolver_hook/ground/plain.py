"""Plain data (JSON) from value classes, field by field, so JSON cannot drift.

A hand-written ``to_dict`` forgets the field added last; this walks
:func:`~resolver_hook.ground.valueclass.fields` instead. A field whose metadata says
``{"json": False}`` is left out (a back-reference, say); ``{"json": "inline"}`` writes a
value field's own fields in its place (what a flavour needs). A class attribute ``kind``
(the flavour kinds) is written too. Values: sequences (tuples, lists) as lists, sets
sorted, mappings with string keys, ``packaging`` objects and kernel targets as their text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from resolver_hook.ground.valueclass import fields, is_value

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data (dict, list, str, int, float, bool, None)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if is_value(value):
        out: dict[str, Any] = {}
        kind = getattr(type(value), "kind", None)
        if isinstance(kind, str):
            out["kind"] = kind
        for f in fields(value):
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
