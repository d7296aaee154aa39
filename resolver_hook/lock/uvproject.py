"""``[tool.uv.sources]`` and ``[[tool.uv.index]]`` text for uv's project mode. Pure.

uv's project mode (``uv lock`` / ``uv sync``) has no hardware detection; users steer
flavours by hand with per-package sources carrying a ``marker`` and an ``index``
(or a ``url``), and index tables with ``explicit = true`` so the index serves only
the packages that name it (docs/facts.md section 3). This module writes that text
for the flavours a plan chose, per target:

- a wheel flavour -> ``{ url = "<wheel URL>", marker = ... }``;
- an index flavour (a per-package find-links page) -> ``{ index = NAME, marker = ... }``
  and a ``[[tool.uv.index]]`` table with ``format = "flat"`` and ``explicit = true``;
- a package that passes through (no manifest, or the plain build) -> nothing.

``[tool.uv] environments`` limits uv's universal resolution to the targets, so uv does
not look for the flavoured packages on the default index for platforms nobody asked for.
The text is meant to be pasted: it is never written into a ``pyproject.toml``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from resolver_hook.ground.valueclass import valueclass
from resolver_hook.lock.lines import target_markers

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import Plan

__all__ = ["UvTarget", "uv_project_text"]


@valueclass
class UvTarget:
    spec: str
    profile: HostProfile
    plan: Plan


def _q(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, with non-ASCII as \\uXXXX)."""
    return json.dumps(text, ensure_ascii=True)


def _index_name(package: str, version: str | None, url: str, taken: set[str]) -> str:
    try:
        label = (Version(version).local or "") if version else ""
    except InvalidVersion:
        label = ""
    if not label:
        parts = [p for p in url.rstrip("/").split("/") if p]
        label = parts[-2] if len(parts) >= 2 else "flavour"
    base = re.sub(r"[^a-z0-9_-]+", "-", f"{package}-{label}".lower()).strip("-") or "flavour"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def uv_project_text(targets: Sequence[UvTarget], header: Sequence[str] = ()) -> str:
    """The TOML text to paste into a project's ``pyproject.toml``."""

    markers = target_markers(
        ((t.spec, t.profile) for t in targets),
        clash="uv sources select by marker, so one project holds one",
        hint="write the sources for one of them",
    )
    # package -> source (as text) -> targets using it
    sources: dict[str, dict[tuple[str, str], list[str]]] = {}
    indexes: dict[str, str] = {}  # page URL -> index name
    taken: set[str] = set()
    for t in targets:
        for p in t.plan.packages:
            if p.action != "rewrite" or p.url is None:
                continue
            if p.find_links:
                if p.find_links not in indexes:
                    indexes[p.find_links] = _index_name(p.name, p.version, p.find_links, taken)
                key = ("index", indexes[p.find_links])
            else:
                key = ("url", p.url)
            sources.setdefault(p.name, {}).setdefault(key, []).append(t.spec)
    # A flavour that is another distribution or extras (cupy as cupy-cuda12x) cannot be
    # a uv source: the dependency itself must name it.
    renamed = sorted(
        {
            f"{p.name} -> {p.installs} ({t.spec})"
            for t in targets
            for p in t.plan.packages
            if p.action == "rewrite" and p.installs is not None
        }
    )
    lines = [f"# {h}" for h in header]
    lines += [
        f"# Not a source: write this dependency under its flavour's name: {r}" for r in renamed
    ]
    lines += [
        "# Paste into pyproject.toml (merge with tables you already have).",
        "# Each package also needs to be in [project] dependencies: "
        + (", ".join(sorted(sources)) or "(none: nothing is flavoured)"),
        "",
        "[tool.uv]",
        "environments = [",
        *(f"    {_q(markers[t.spec])}," for t in targets),
        "]",
        "",
        "[tool.uv.sources]",
    ]
    for name, by_source in sources.items():
        lines.append(f"{name} = [")
        for (kind, value), specs in by_source.items():
            fields = [f"{kind} = {_q(value)}"]
            if len(specs) < len(targets) or len(targets) == 1:
                mk = (
                    " or ".join(f"({markers[s]})" for s in specs)
                    if len(specs) > 1
                    else markers[specs[0]]
                )
                fields.append(f"marker = {_q(mk)}")
            lines.append(f"    {{ {', '.join(fields)} }},")
        lines.append("]")
    for url, name in indexes.items():
        lines += [
            "",
            "[[tool.uv.index]]",
            f"name = {_q(name)}",
            f"url = {_q(url)}",
            'format = "flat"',
            "explicit = true",
        ]
    return "\n".join(lines) + "\n"
