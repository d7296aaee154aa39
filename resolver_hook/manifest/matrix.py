"""``[[matrix]]`` tables: a template of ``[[wheel]]`` entries over axes of values.

:func:`_expand_matrix` bounds the work before it starts and yields plain wheel tables;
the validator reads each one as it reads a written ``[[wheel]]``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from resolver_hook.limits import MAX_MATRIX_EXCLUDES, MAX_MATRIX_WHEELS, MAX_URL_LENGTH
from resolver_hook.manifest.needs import _ABOUT_KEYS, _FACT_KEYS, _NEEDS_KEYS
from resolver_hook.manifest.tables import TableReader, _join, kind_of

__all__: list[str] = []

_MATRIX_KEYS = ("url", "sha256", "axes", "exclude", *_NEEDS_KEYS, *_ABOUT_KEYS)
_AXIS_ATTRS = (
    "cuda",
    "gpu",
    "rocm",
    "gfx",
    "l4t",
    "properties",
    "requires",
    *_ABOUT_KEYS,
    *_FACT_KEYS,
)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _substitute(text: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _expand_matrix(  # noqa: PLR0915 - one pass over the template
    c: TableReader,
    t: Mapping[str, Any],
    path: str,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Expand a ``[[matrix]]`` template into ``[[wheel]]`` tables, each with its key path.

    ``url`` (and ``requires``) hold ``{placeholders}``; ``[matrix.axes]`` gives each
    placeholder a list of values. A value is a string, or a table with ``value``,
    optional flavour needs (``cuda``, ``rocm``, ``gpu``, ``properties``, ``requires``:
    they apply to the wheels of that value) and any other keys as extra template
    variables (e.g. a release tag that differs per platform). ``exclude`` lists
    partial combinations to leave out. Every combination becomes one wheel table.
    """
    c.keys(t, _MATRIX_KEYS, path)
    url = c.url_string(t, path, required=True)
    axes_t = t.get("axes")
    if axes_t is None:
        c.bad(_join(path, "axes"), "missing (a table of placeholder = [values])")
        return
    axes = c.table(axes_t, _join(path, "axes"))
    if axes is None or url is None:
        return
    axis_values: list[list[tuple[str, dict[str, str], Mapping[str, Any]]]] = []
    names = list(axes)
    ok = True
    for axis in names:
        apath = f"{path}.axes.{axis}"
        values = axes[axis]
        if not isinstance(values, list) or not values:
            c.bad(apath, f"expected a non-empty array of values, got {kind_of(values)}")
            ok = False
            continue
        items: list[tuple[str, dict[str, str], Mapping[str, Any]]] = []
        for i, v in enumerate(values):
            if isinstance(v, str):
                items.append((v, {axis: v}, {}))
            elif isinstance(v, Mapping):
                value = v.get("value")
                if not isinstance(value, str):
                    c.bad(f"{apath}[{i}].value", "missing (each table value needs 'value')")
                    ok = False
                    continue
                extra = {k: x for k, x in v.items() if k != "value" and k not in _AXIS_ATTRS}
                avars = {axis: value}
                for k, x in extra.items():
                    if not isinstance(x, str):
                        c.bad(
                            f"{apath}[{i}].{k}",
                            f"a template variable must be a string, got {kind_of(x)}",
                        )
                        ok = False
                    else:
                        avars[k] = x
                items.append((value, avars, {k: x for k, x in v.items() if k in _AXIS_ATTRS}))
            else:
                c.bad(f"{apath}[{i}]", f"expected a string or a table, got {kind_of(v)}")
                ok = False
        axis_values.append(items)
    excludes = []
    for i, ex in enumerate(t.get("exclude", []) if isinstance(t.get("exclude", []), list) else []):
        ext = c.table(ex, f"{path}.exclude[{i}]")
        if ext is not None:
            for k in ext:
                if k not in names:
                    c.bad(f"{path}.exclude[{i}].{k}", f"not an axis (axes: {', '.join(names)})")
            excludes.append(ext)
    if not isinstance(t.get("exclude", []), list):
        c.bad(f"{path}.exclude", "expected an array of tables")
    if not ok:
        return
    if not _matrix_within_bounds(c, t, path, url, axis_values, excludes=len(excludes)):
        return
    all_vars = set(names) | {k for items in axis_values for _, tv, _ in items for k in tv}
    for placeholder in _PLACEHOLDER.findall(url):
        if placeholder not in all_vars:
            c.bad(_join(path, "url"), f"placeholder {{{placeholder}}} has no axis or variable")
            return
    base = {k: v for k, v in t.items() if k in _AXIS_ATTRS}
    for combo in itertools.product(*axis_values):
        chosen = dict(zip(names, (v for v, _, _ in combo), strict=True))
        if any(all(chosen.get(k) == x for k, x in ex.items()) for ex in excludes):
            continue
        tvars: dict[str, str] = {}
        for _, tv, _ in combo:
            tvars.update(tv)
        entry: dict[str, Any] = {"url": _substitute(url, tvars)}
        if "sha256" in t:
            entry["sha256"] = t["sha256"]
        # evidence, checked and cuda_runtime: the matrix's, unless an axis value gives one.
        # Needs: axis values override the matrix-wide 'cuda'/'rocm', add to the lists.
        for key in _AXIS_ATTRS:
            parts = [base] + [attrs for _, _, attrs in combo]
            for p in parts:
                if key not in p:
                    continue
                v = p[key]
                if key in ("cuda", "rocm", "l4t"):
                    entry[key] = _substitute(v, tvars) if isinstance(v, str) else v
                elif isinstance(v, list):
                    entry.setdefault(key, [])
                    entry[key] = entry[key] + [
                        _substitute(x, tvars) if isinstance(x, str) else x for x in v
                    ]
                else:
                    entry[key] = v
        label = ", ".join(f"{k}={v}" for k, v in chosen.items())
        yield f"{path}({label})", entry


def _matrix_within_bounds(
    c: TableReader,
    t: Mapping[str, Any],
    path: str,
    url: str,
    axis_values: Sequence[Sequence[tuple[str, dict[str, str], Mapping[str, Any]]]],
    *,
    excludes: int,
) -> bool:
    """Refuse, before expanding, a matrix whose expansion would be too much work.

    A 1 KB matrix can stand for millions of wheels (40 values on 4 axes), URLs of
    megabytes ({a}{a}{a}... with long values) or millions of needs to parse (a long
    ``requires`` list copied into every wheel): all are bounded by MAX_MATRIX_WHEELS.
    """
    count = math.prod(len(items) for items in axis_values)
    if count > MAX_MATRIX_WHEELS:
        sizes = " x ".join(str(len(items)) for items in axis_values)
        c.bad(
            _join(path, "axes"),
            f"expands into {sizes} = {count} wheels, more than the {MAX_MATRIX_WHEELS} allowed",
        )
        return False
    if excludes > MAX_MATRIX_EXCLUDES:
        c.bad(f"{path}.exclude", f"{excludes} entries, more than the {MAX_MATRIX_EXCLUDES} allowed")
        return False
    longest: dict[str, int] = {}
    for items in axis_values:
        for _, tvars, _ in items:
            for k, v in tvars.items():
                longest[k] = max(longest.get(k, 0), len(v))
    url_bound = len(url) + sum(longest.get(p, 0) for p in _PLACEHOLDER.findall(url))
    if url_bound > MAX_URL_LENGTH:
        c.bad(_join(path, "url"), f"expands into URLs longer than {MAX_URL_LENGTH} characters")
        return False

    def needs(attrs: Mapping[str, Any]) -> int:
        return sum(
            len(v) if isinstance(v, list) else 1 for k, v in attrs.items() if k in _AXIS_ATTRS
        )

    per_wheel = 1 + needs(t) + sum(max(needs(a) for _, _, a in items) for items in axis_values)
    if count * per_wheel > MAX_MATRIX_WHEELS * 10:
        c.bad(
            _join(path, "axes"),
            f"expands into {count} wheels of {per_wheel} entries each, more than the "
            f"{MAX_MATRIX_WHEELS * 10} allowed in all",
        )
        return False
    return True
