"""The page a template flavour computes: its template filled from the build chosen for
the package it is coupled with."""

from __future__ import annotations

import re
from collections.abc import Mapping

from packaging.utils import canonicalize_name

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, IndexFlavour
from resolver_hook.manifest.templates import fill_template
from resolver_hook.resolve.model import PackagePlan, runtime_of
from resolver_hook.resolve.rules import Machine
from resolver_hook.resolve.solve import Slot

__all__ = [
    "coupled_build",
    "fill_page",
]


def coupled_build(p: PackagePlan, slots: Mapping[str, Slot]) -> tuple[str | None, Flavour | None]:
    """The package a template flavour's page follows, and the build chosen for it."""
    f = p.flavour
    if not isinstance(f, IndexFlavour) or f.coupled is None or f.coupled not in slots:
        return None, None
    return f.coupled, slots[f.coupled].chosen


def fill_page(f: IndexFlavour, slots: Mapping[str, Slot], m: Machine) -> str | None:
    """The page of a template flavour, from the build chosen for its coupled package
    (the search only chooses it when that build has every fact the template reads)."""
    assert f.template is not None
    values = {"py": _py_tag(m.profile), "platform": _platform_tag(m.profile)}
    other = slots[f.coupled].chosen if f.coupled is not None and f.coupled in slots else None
    if other is not None:
        pkg = other.name
        public = other.version.public
        release = other.version.release
        values |= {
            f"{pkg}.version": public,
            f"{pkg}.local": other.version.local or "",
            f"{pkg}.minor": ".".join(str(x) for x in release[:2]),
        }
        runtime = runtime_of(other)
        if runtime is not None:
            values["cuda"] = f"cu{runtime.major}{runtime.minor}"
            values["cuda_major"] = str(runtime.major)
        if other.cxx11abi is not None:
            values["cxx11abi"] = "TRUE" if other.cxx11abi else "FALSE"
    return fill_template(f.template, _spellings(values, f.template))


def _spellings(values: dict[str, str], template: str) -> dict[str, str]:
    """Map each ``{pkg.fact}`` as the template spells the package to its value."""
    out = dict(values)
    for part in re.findall(r"\{([^{}]*)\}", template):
        pkg, dot, fact = part.rpartition(".")
        if dot:
            key = f"{canonicalize_name(pkg)}.{fact}"
            if key in values:
                out[part] = values[key]
    return out


def _py_tag(p: HostProfile) -> str:
    """``cp312`` (``cp313t`` free-threaded)."""
    return f"{p.implementation}{p.python.replace('.', '')}{'t' if p.free_threaded else ''}"


def _platform_tag(p: HostProfile) -> str:
    """The profile's most general platform tag: ``linux_x86_64``, ``win_amd64``."""
    plats = [t.split("-")[-1] for t in p.tags if not t.endswith("-any")]
    return plats[-1] if plats else ""
