"""Twin distributions already installed side by side (doctor, an unchecked install).

The proof refuses a resolution that holds two distributions of one family
(:func:`resolver_hook.install.proof.twin_problems`) before anything is installed; where
nothing was checked first (``--no-proof``, a pip too old for ``--report``) and in an
environment ``doctor`` looks at, the installed distributions themselves are read and
each family of which more than one is installed is said, with the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from resolver_hook.install.installed import Installed
from resolver_hook.manifest.model import Manifest
from resolver_hook.manifest.twins import Family, families, twins_among

__all__ = ["installed_twins", "may_have_twins"]


def installed_twins(
    installed: Iterable[Installed], manifests: Mapping[str, Manifest] | None = None
) -> list[tuple[str, str]]:
    """``(what, fix)`` for each family of which more than one distribution is installed."""
    by_name = {i.name: i for i in installed}
    out = []
    for fam, found in twins_among(by_name, families(manifests, by_name)):
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
