"""Twin distributions already installed side by side (doctor, an unchecked install).

The proof refuses a resolution that holds two distributions of one family
(:func:`resolver_hook.install.checked.twin_problems`) before anything is installed; where
nothing was checked first (``--no-proof``, a pip too old for ``--report``) and in an
environment ``doctor`` looks at, the installed distributions themselves are read and
each family of which more than one is installed is said, with the fix. A replayed
install (:mod:`resolver_hook._plancache`) reads the families its stored launch kept
(:func:`launch_twins`) and says the same after the installer ran
(:func:`replayed_twins`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from resolver_hook.errors import ResolverHookError
from resolver_hook.manifest.model import Manifest
from resolver_hook.manifest.twins import Family, families, twins_among

if TYPE_CHECKING:
    from resolver_hook.install.installed import Installed

__all__ = ["installed_twins", "launch_twins", "may_have_twins", "replayed_twins", "said_twins"]


def installed_twins(
    installed: Iterable[Installed],
    manifests: Mapping[str, Manifest] | None = None,
    *,
    known: Iterable[Family] | None = None,
) -> list[tuple[str, str]]:
    """``(what, fix)`` for each family of which more than one distribution is installed;
    the families: ``known``, else the built-in ones and the manifests'."""
    by_name = {i.name: i for i in installed}
    out = []
    fams = families(manifests, by_name) if known is None else known
    for fam, found in twins_among(by_name, fams):
        shown = " and ".join(f"{by_name[n].display_name} {by_name[n].version}" for n in found)
        what = f"the same import package, {fam.imports}" if fam.imports else "the same files"
        source = f" ({fam.evidence})" if fam.evidence else ""
        out.append(
            (
                f"{shown} are installed together: they install {what}, and the one "
                f"unpacked last overwrote the other's files{source}",
                f"uninstall all of them ({' '.join(found)}) and install only the one "
                "this machine needs ('resolver-hook plan' names it)",
            )
        )
    return out


def may_have_twins(names: Iterable[str], known: Iterable[Family]) -> bool:
    """Whether any of ``names`` belongs to a family (else nothing need be read)."""
    mine = set(names)
    return any(mine.intersection(f.names) for f in known)


def said_twins(python: str, known: Iterable[Family]) -> list[str]:
    """The warning for each family of which the environment of ``python`` holds more
    than one distribution (nothing when it cannot be read)."""
    # Only here: an install that names no package of a family (the usual one) reads no
    # environment, and its first run does without the module (~3 ms of start-up).
    from resolver_hook.install.installed import environment_of

    try:
        found = environment_of(python).distributions
    except ResolverHookError:
        return []  # what is installed cannot be read: nothing to say
    return [f"{what}; {fix}" for what, fix in installed_twins(found, known=known)]


def launch_twins(python: str, known: Iterable[Family]) -> dict[str, Any]:
    """What a stored launch keeps for its replay to say the same (:func:`replayed_twins`):
    the environment's interpreter and the families, as JSON values."""
    rows = [[list(f.names), f.imports, f.evidence or ""] for f in known]
    return {"python": python, "families": rows}


def replayed_twins(kept: Mapping[str, Any]) -> list[str]:
    """The warnings of :func:`said_twins` for what :func:`launch_twins` kept; nothing for
    a shape it did not write."""
    python, rows = kept.get("python"), kept.get("families")
    if not isinstance(python, str) or not isinstance(rows, list):
        return []
    known = [
        Family(
            names=tuple(canonicalize_name(n) for n in r[0]),
            imports=r[1],
            evidence=r[2] or None,
            source="stored plan",
        )
        for r in rows
        if isinstance(r, list)
        and len(r) == 3
        and isinstance(r[0], list)
        and all(isinstance(n, str) for n in r[0])
        and isinstance(r[1], str)
        and isinstance(r[2], str)
    ]
    return said_twins(python, known)
