"""The plan's words: each package's reason and head line, and the notes about the plan.

Owns: how a chosen build, a package with no fit, a package left to the installer and a
note about the plan are said. Each function takes outcomes and facts (flavours,
manifests, the profile, the plan's packages) and returns text; nothing here decides a
choice, and no text made here is read back by anyone to decide one. Why one flavour
fails a rule is said in :mod:`.reasons`; the hints' changes in :mod:`.hintwords`.

May import: :mod:`.model`, :mod:`.reasons`, the host profile, the manifest schema and
``portable/``; never the rules, the solver or the hints.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.limits import SHOWN_VERSIONS
from resolver_hook.manifest.model import Flavour, Manifest, WheelFlavour, python_sort_key
from resolver_hook.manifest.twins import Family
from resolver_hook.portable.cuda import KernelTarget
from resolver_hook.portable.platforms import OS_WORDS, platform_name
from resolver_hook.reqfile import ReqEntry
from resolver_hook.resolve.model import (
    STALE_DAYS,
    Alternative,
    NoFit,
    PackagePlan,
    Rejection,
    has_accelerator,
)
from resolver_hook.resolve.reasons import gfx_fit_words, gpu_words, python_labels

__all__ = [
    "AS_WRITTEN",
    "BUILT_IN_SHA256_NOTE",
    "HASH_NOTE",
    "NO_MANIFEST",
    "OUTSIDE_YOUR_SPECIFIER",
    "WITHOUT_THE_GPU",
    "alternative_words",
    "as_written_refusal",
    "as_written_runs_reason",
    "build_only_reason",
    "build_reason",
    "chosen_words",
    "computed_page_note",
    "constraint_conflict_note",
    "exists_summary",
    "extra_index_note",
    "index_line_held_note",
    "index_line_refusal",
    "installs_reason",
    "marker_reason",
    "nearest_words",
    "no_fit_words",
    "no_manifest_unjudged_reason",
    "other_name_notes",
    "passthrough_reason",
    "pin_refusal_words",
    "stale_note",
    "template_reason",
    "unjudged_reason",
    "unlisted_reason",
    "unverified_note",
]


def exists_summary(man: Manifest) -> str:
    """What builds exist, in words: platforms, Pythons, CUDA and kernel targets."""
    plats: dict[str, None] = {}
    pys: dict[str, None] = {}
    cudas: dict[str, None] = {}
    floors: list[Version] = []
    gpus: set[KernelTarget] = set()
    for f in man.flavours:
        for pl in f.platforms:
            for x in pl.split("."):
                plats[platform_name(x)] = None
        for v in python_labels(f):
            pys[v] = None
        if f.needs.cuda is not None:
            cudas[str(f.needs.cuda)] = None
            if len(f.needs.cuda) == 1 and next(iter(f.needs.cuda)).operator == ">=":
                floors.append(Version(next(iter(f.needs.cuda)).version))
        gpus.update(f.needs.gpu)
    parts = [", ".join(plats) or "any platform"]
    if pys:
        parts.append(
            "Python " + ", ".join(sorted(pys, key=lambda v: python_sort_key(v.split("+")[0])))
        )
    if cudas and len(floors) == sum(f.needs.cuda is not None for f in man.flavours):
        parts.append(f"driver CUDA >={min(floors)}")  # every build asks only for a floor
    elif cudas:
        parts.append("driver CUDA " + " or ".join(cudas))
    if gpus:
        parts.append("kernels " + ", ".join(map(str, sorted(gpus))))
    versions = sorted({f.version.public for f in man.flavours}, key=Version, reverse=True)
    verb = "exists" if len(versions) == 1 else "exist"
    return f"{man.display_name} {_newest(versions)} {verb} for: {'; '.join(_bounded(parts))}"


def _newest(versions: Sequence[str]) -> str:
    """Versions, newest first, in words: a manifest of thousands shows the newest, and
    a count of the others."""
    shown = ", ".join(versions[:SHOWN_VERSIONS])
    if len(versions) > SHOWN_VERSIONS:
        shown += f" and {len(versions) - SHOWN_VERSIONS:,} older versions"
    return shown


def _bounded(parts: list[str], limit: int = 600) -> list[str]:
    """Each part at most ``limit`` characters (thousands of CUDA ranges or kernels)."""
    return [p if len(p) <= limit else p[: limit - 5].rsplit(", ", 1)[0] + ", ..." for p in parts]


def _unmarked(r: Requirement) -> str:
    """``r`` as written, less its marker (which holds where it is printed)."""
    extras = f"[{','.join(sorted(r.extras))}]" if r.extras else ""
    return f"{r.name}{extras} @ {r.url}" if r.url else f"{r.name}{extras}{r.specifier}"


def chosen_words(
    f: Flavour,
    p: HostProfile,
    *,
    tag: str | None,
    rocm: Version | None,
    held: Sequence[Requirement],
    fitting: int,
) -> str:
    """Why the chosen build fits: its best ``tag`` here (a wheel), the driver, ROCm
    (``rocm``: the machine's, as the rules read it) and kernels it meets, its couplings
    (``held``: those whose marker is true here), and of how many ``fitting`` builds it
    is the best."""
    parts = []
    if isinstance(f, WheelFlavour):
        parts.append(f"tag {tag}")
    elif f.platforms:
        parts.append(f"{OS_WORDS.get(p.os, p.os)} {p.arch}, {p.python_words}")
    if f.needs.cuda is not None:
        parts.append(
            f"driver CUDA {p.nvidia.cuda_version if p.nvidia else '?'} meets {f.needs.cuda}"
        )
    if f.needs.rocm is not None:
        parts.append(f"ROCm {rocm} meets {f.needs.rocm}")
    if f.needs.gfx:
        parts.append(gfx_fit_words(f.needs.gfx, p.rocm.gfx if p.rocm else ()))
    if f.needs.gpu and p.gpu_ccs:
        parts.append(f"kernels cover {', '.join(gpu_words(cc) for cc in p.gpu_ccs)}")
    if not has_accelerator(f) and p.nvidia is None and p.rocm is None:
        parts.append("no GPU needed")
    # A coupling whose marker is false here (triton for x86_64 beside an aarch64 torch)
    # binds nothing on this machine: not named; one that holds is named without it.
    if held:
        parts.append("couples with " + ", ".join(_unmarked(r) for r in held))
    if isinstance(f, WheelFlavour) and f.assumed:
        parts.append(f.assumed)
    others = fitting - 1
    if others > 0:
        parts.append(f"best of {others + 1} that fit")
    return "; ".join(parts) or "fits"


def newer_python_words(name: str, version: str, f: Flavour, p: HostProfile) -> str:
    """``newer torch 2.15.0 has no build for Python 3.10 (built for Python 3.11, ...)``:
    the newest release, skipped only for want of a build for this Python."""
    built = ", ".join(f.python_versions) or "other Pythons"
    return f"newer {name} {version} has no build for {p.python_words} (built for Python {built})"


def twins_reason(name: str, keep: str, family: Family) -> str:
    """Why a requirement beside its twin is refused (cause ``twins``)."""
    what = f"the same import package, {family.imports}," if family.imports else "the same files"
    source = f" ({family.evidence})" if family.evidence else ""
    return (
        f"{name} and {keep} would both be installed: they install {what} and the one "
        f"unpacked last overwrites the other's files{source}"
    )


def twins_hint(name: str, keep: str, found: Sequence[str], *, planned: bool) -> str:
    """Which twin to keep: the one the plan chose for this machine, else the user's pick."""
    if planned:
        return (
            f"keep only {keep}, the build planned for this machine: take {name} out of "
            "the requirements"
        )
    names = f"{', '.join(found[:-1])} and {found[-1]}"
    return (
        f"keep only one of {names} in the requirements (no manifest here says which this "
        "machine needs)"
    )


def other_name_notes(
    packages: Sequence[PackagePlan], chosen: Mapping[str, Flavour | None]
) -> list[str]:
    """A flavour that is another distribution (cupy as cupy-cuda12x): pip does not know
    that it provides the package, so a dependency on the plain name from another
    package installs the plain distribution too. Each such dependency the manifests
    show is named (``chosen``: the build the plan chose per package); metadata of
    packages without a manifest is not read (pure)."""
    out = []
    for p in packages:
        if p.installs is None or p.action != "rewrite":
            continue
        if p.distribution == p.name:
            continue  # the package itself with extras (jax[cuda12])
        dependents = sorted(
            other
            for other, f in chosen.items()
            if f is not None
            and other != p.name
            and any(canonicalize_name(r.name) == p.name for r in f.needs.requires)
        )
        if dependents:
            out.append(
                f"{p.name}: {', '.join(dependents)} depend{'s' if len(dependents) == 1 else ''} "
                f"on the plain name {p.name}, and this plan installs {p.installs} instead: pip "
                f"would install the plain {p.name} next to it"
            )
        out.append(
            f"{p.name}: installs {p.installs}, another distribution; a package that depends "
            f"on {p.name} by name still pulls the plain {p.name} (check with "
            f"'pip install --dry-run'); 'resolver-hook enable' cannot apply this (a "
            "constraints file cannot rename a requirement)"
        )
    return out


def stale_note(packages: Sequence[PackagePlan], today: datetime.date) -> list[str]:
    """One note for every chosen entry checked more than STALE_DAYS days before today."""
    stale = [
        f"{p.name} {p.entry_version} (checked {p.flavour.needs.checked.isoformat()})"
        for p in packages
        if p.flavour is not None
        and p.flavour.needs.checked is not None
        and (today - p.flavour.needs.checked).days > STALE_DAYS
    ]
    if not stale:
        return []
    return [
        f"manifest data older than {STALE_DAYS} days: {', '.join(stale)}; the builds may "
        "have changed since: compare with each entry's evidence"
    ]


# --- the plan: each package's reason and head line, the notes ---------------------------

#: Why an :class:`~.model.Alternative` may be pinned on purpose.
WITHOUT_THE_GPU = "runs without the GPU"
OUTSIDE_YOUR_SPECIFIER = "outside your specifier"


def alternative_words(alt: Alternative, requested: str) -> str:
    """A build the user may pin instead. One outside their specifier replaces their
    requirement: pinned beside it (``torch>=2.14`` and ``torch==2.13.0+cpu``), it fits
    nothing."""
    if alt.why == OUTSIDE_YOUR_SPECIFIER and requested:
        return f"or replace your requirement {requested} with {alt.pin}, which fits here"
    return f"or pin {alt}"


NO_MANIFEST = "no manifest: left to the installer"
AS_WRITTEN = "you gave a URL or path: left as written"

HASH_NOTE = (
    "your requirements use --hash: pip will then require a hash for every "
    "package, and flavours without a sha256 cannot be installed that way"
)
BUILT_IN_SHA256_NOTE = (
    "built-in manifests carry no sha256 yet: their wheels are not verified by hash"
)


def marker_reason(marker: object) -> str:
    """A requirement whose marker is false on this machine."""
    return f"marker '{marker}' is false on this machine: pip skips it"


def build_only_reason(manifest: Manifest) -> str:
    """A manifest with only ``[build]``: the installer builds it."""
    return (
        f"{manifest.display_name} publishes no wheels (its manifest has only "
        "[build]): the installer builds it from source"
    )


def unjudged_reason(manifest: Manifest, missing: str) -> str:
    """A managed package the plan cannot judge on this accelerated machine: left to the
    installer, said loudly with the fact that is missing."""
    known = sorted({f.version.public for f in manifest.flavours}, key=Version)
    if len(known) > 1:
        span = f"{len(known)} releases, {known[0]} to {known[-1]}"
    else:
        span = f"1 release, {known[0]}" if known else "no releases"
    return (
        f"UNJUDGED: {missing}; the installer's own choice may not run on this machine "
        f"(its manifest describes {span}: pin one of those, or give --strict to refuse)"
    )


def no_manifest_unjudged_reason(what: str, evidence: str) -> str:
    """A CUDA distribution no manifest describes, on an NVIDIA machine: left to the
    installer, said loudly, with what to do (the same words for every such name, so
    the warning names them all once)."""
    return (
        f"UNJUDGED: no manifest describes its CUDA builds ({what}: {evidence}); the "
        "installer's own choice may not run on this machine: give --manifest FILE that "
        "describes them, or --strict to refuse"
    )


def unlisted_reason(manifest: Manifest, asked: str) -> str:
    """A version the manifest does not list: passed to the installer unchanged (the
    versions it knows, newest first as versions, then a count)."""
    known = sorted(
        {f.version.public for f in manifest.flavours},
        key=lambda v: (Version(v), v),
        reverse=True,
    )
    if not known and manifest.not_found:
        pages = ", ".join(manifest.not_found)
        return (
            f"no build in its manifest ({manifest.source}) matches {asked}: its "
            f"page{'s were' if len(manifest.not_found) > 1 else ' was'} not found "
            f"({pages}): left to the installer unchanged"
        )
    return (
        f"no build in its manifest ({manifest.source}) matches {asked}; the manifest "
        f"knows {_newest(known) or 'no versions'}: left to the installer unchanged"
    )


def nearest_words(name: str, asked: str, pin: str, reason: str) -> str:
    """A pinned release with no build that runs here, and the nearest one that does:
    ``torch==2.2.2+cu121 has no build that runs here; the nearest that does:
    torch==2.7.0+cu128``, then the reason's details."""
    return f"{asked or name} has no build that runs here; the nearest that does: {pin}; {reason}"


def pin_refusal_words(asked: str, rule: str, nearest: str) -> str:
    """A pinned release with no build that runs here, in short: the ``rule`` its nearest
    build failed and the nearest pin that runs (``-v`` and ``--json`` say it all)."""
    return f"{asked} has no build that runs here: {rule}\n  the nearest that does: {nearest}"


def no_fit_words(head: NoFit, manifest: Manifest, p: HostProfile) -> str:
    """The reason of a package with no fit: its head line, then what builds exist."""
    name = manifest.display_name
    if head == "conflict":
        line = f"no build of {name} is consistent with the rest of the plan"
    elif head == "pinned":
        line = f"no build of {name} goes with your requirements"
    elif head == "no-os":
        line = f"no {OS_WORDS.get(p.os, p.os)} builds of {name} exist"
    else:
        line = f"no build of {name} fits this machine"
    return f"{line}; {exists_summary(manifest)}"


def build_reason(no_fit: str) -> str:
    """No wheel fits, and the manifest allows a source build."""
    return f"{no_fit}; the installer builds it from source"


def passthrough_reason(why: str) -> str:
    """An index flavour that is the plain build from the user's own index."""
    return f"the plain build from your index fits: {why}; left to the installer"


def template_reason(why: str, template: str) -> str:
    return f"{why}; page computed from {template}"


def installs_reason(why: str, install: str, *, other: bool) -> str:
    """An index flavour that installs another distribution (``other``) or extras."""
    kind = "another distribution" if other else "the package with extras"
    return f"{why}; installs {install} ({kind})"


def computed_page_note(p: PackagePlan, coupled: str | None, build: Flavour | None) -> str:
    """A page computed from a template over the build chosen for ``coupled``."""
    if coupled is None:
        chosen = "coupled"
    else:
        chosen = f"{coupled} {build.version}" if build is not None else coupled
    return (
        f"{p.name}: the page {p.find_links} is computed from its manifest's template and "
        f"the {chosen} build chosen, not a page seen for that build"
    )


def index_line_held_note(what: str, fails: Sequence[Rejection], held: str) -> str:
    """An index line naming a flavour page none of whose builds runs here, for a
    package the plan pins elsewhere: harmless, and said."""
    why = fails[0].reason if fails else "its builds fail this machine's rules"
    return f"{what}, whose builds cannot run here ({why}); the plan holds it to {held}"


def index_line_refusal(what: str, nearest: str | None) -> str:
    """An index line naming a flavour page none of whose builds runs here, for a
    package the plan leaves to the installer: refused."""
    then = f"; the nearest build that runs here: {nearest}" if nearest else ""
    return f"{what}, none of whose builds runs on this machine (rules below){then}"


def extra_index_note(o: ReqEntry) -> str:
    return (
        f"{o.where}: --extra-index-url {o.value} lets pip take any package "
        "from that index; resolver-hook uses per-package find-links instead"
    )


def constraint_conflict_note(c: ReqEntry, name: str, version: str) -> str:
    return (
        f"{c.where}: your constraint {c.text} conflicts with "
        f"{name} {version} chosen for this machine"
    )


def as_written_runs_reason(filename: str, build: Flavour) -> str:
    """A wheel the user named whose build the manifest says runs here: kept."""
    what = build.describe()
    return f"you gave a URL or path: kept as written; {filename} is {what}, which runs here"


def as_written_refusal(filename: str, manifest: Manifest, nearest: str | None) -> str:
    """A wheel the user named whose every build the manifest says cannot run here."""
    then = (
        f"; the nearest build that runs here: {nearest}"
        if nearest
        else "; no build of it runs here"
    )
    return f"{filename} cannot run on this machine ({manifest.display_name}'s rules below){then}"


def unjudged_note(name: str, f: Flavour, version: str, profile: HostProfile) -> str:
    """A release no entry's rule covers, or a build of an entry that names a fact no
    source gave, chosen on a machine with an accelerator (``f.unjudged`` says which)."""
    what = "GPU" if profile.nvidia is not None else "ROCm GPU"
    return (
        f"UNJUDGED: whether {name} {version} runs on this machine's {what} is not judged: "
        f"{f.unjudged} (give --strict to refuse)"
    )


def unverified_note(names: Sequence[str]) -> str:
    """Wheels of manifests other than the built-in ones that give no sha256."""
    return (
        f"{', '.join(names)}: no sha256 in {'its' if len(names) == 1 else 'their'} "
        "manifest for the wheel URL: not verified by hash"
    )
