"""Twin distributions: different projects that install the same import package.

``onnxruntime`` and ``onnxruntime-gpu`` both install ``onnxruntime/``; installed side
by side, the one unpacked last wins file by file, so ``import onnxruntime`` may load
the CPU build although the GPU build is installed too (docs/facts.md section 6.16).
pip and uv do not know this: to them they are unrelated projects.

A family is a set of such distributions. The built-in families are in
``twins.toml`` beside this module, each with its public source; a manifest adds
its own with ``[package] twins = [...]`` (the package and the distributions listed).
:func:`twins_among` finds the families of which a set of names holds more than one.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook._data import data_path
from resolver_hook.errors import ManifestError
from resolver_hook.ground.patterns import is_project_name
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.manifest.document import builtin_document
from resolver_hook.manifest.model import Manifest
from resolver_hook.manifest.urls import url_problem

__all__ = [
    "Family",
    "builtin_families",
    "families",
    "parse_families",
    "twins_among",
]


@valueclass
class Family:
    """Distributions that install the same import package (``imports``)."""

    names: tuple[NormalizedName, ...]  # the package first, as written
    imports: str = ""  # the import package they share ("cv2"); "" when not stated
    evidence: str | None = None
    checked: datetime.date | None = None
    source: str = "built-in"


def parse_families(data: Mapping[str, Any], *, source: str) -> tuple[Family, ...]:
    """The ``[[family]]`` tables of a twins document; ManifestError lists every problem."""
    problems: list[str] = []
    out: list[Family] = []
    tables = data.get("family", [])
    if not isinstance(tables, list):
        raise ManifestError([f"{source}: family: expected an array of tables ([[family]])"])
    for i, t in enumerate(tables):
        where = f"{source}: family[{i}]"
        if not isinstance(t, Mapping):
            problems.append(f"{where}: expected a table")
            continue
        unknown = sorted(set(t) - {"names", "imports", "evidence", "checked"})
        problems += [
            f"{where}.{k}: unknown key (known: names, imports, evidence, checked)" for k in unknown
        ]
        names = t.get("names")
        if not isinstance(names, list) or len(names) < 2:
            problems.append(f"{where}.names: expected a list of two or more project names")
            continue
        bad = [n for n in names if not isinstance(n, str) or not is_project_name(n)]
        if bad:
            problems.append(f"{where}.names: {bad[0]!r} is not a valid project name")
            continue
        evidence = t.get("evidence")
        if evidence is not None and (not isinstance(evidence, str) or url_problem(evidence)):
            problems.append(f"{where}.evidence: not an https URL")
            continue
        checked = t.get("checked")
        if checked is not None and not isinstance(checked, datetime.date):
            try:
                checked = datetime.date.fromisoformat(str(checked))
            except ValueError:
                problems.append(f"{where}.checked: {checked!r} is not a date like '2026-12-03'")
                continue
        imports = t.get("imports", "")
        out.append(
            Family(
                names=tuple(dict.fromkeys(canonicalize_name(n) for n in names)),
                imports=imports if isinstance(imports, str) else "",
                evidence=evidence,
                checked=checked,
                source=source,
            )
        )
    if problems:
        raise ManifestError(problems)
    return tuple(out)


@functools.cache
def builtin_families() -> tuple[Family, ...]:
    """The families shipped with the package (``twins.toml``)."""
    with open(data_path("manifest", "twins.toml"), encoding="utf-8") as f:
        text = f.read()
    where = "built-in twins"
    return parse_families(builtin_document("twins.toml", text, where), source=where)


def families(
    manifests: Mapping[str, Manifest] | None = None, names: Iterable[str] | None = None
) -> tuple[Family, ...]:
    """The built-in families and those the manifests name (``[package] twins``); a
    manifest's family joins a built-in one it shares a name with. ``names``: read only
    the manifests of these (a lazy set parses no other; every one when None)."""
    out = list(builtin_families())
    given = manifests or {}
    if names is None:
        read = list(given.values())
    else:
        keys = dict.fromkeys(canonicalize_name(n) for n in names)
        read = [given[k] for k in keys if k in given]
    for man in read:
        if not man.twins:
            continue
        mine = (man.name, *man.twins)
        hit = next((i for i, f in enumerate(out) if set(f.names) & set(mine)), None)
        if hit is None:
            out.append(Family(names=mine, source=man.source))
        else:
            f = out[hit]
            out[hit] = Family(
                names=tuple(dict.fromkeys((*f.names, *mine))),
                imports=f.imports,
                evidence=f.evidence,
                checked=f.checked,
                source=f.source,
            )
    return tuple(out)


def twins_among(
    names: Iterable[str], known: Iterable[Family]
) -> list[tuple[Family, tuple[NormalizedName, ...]]]:
    """Each family of which ``names`` hold more than one, with those names (in the
    family's order)."""
    have = {canonicalize_name(n) for n in names}
    out = []
    for f in known:
        found = tuple(n for n in f.names if n in have)
        if len(found) > 1:
            out.append((f, found))
    return out
