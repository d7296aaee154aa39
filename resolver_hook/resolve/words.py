"""The resolver's words: every reason, head line, note and hint text made from outcomes.

Owns: how a chosen build, a package with no fit, a note about the plan and a fix are
said. Each function takes outcomes and facts (flavours, manifests, the profile, the
plan's packages) and returns text; nothing here decides a choice, and no text made here
is read back by anyone to decide one.

May import: :mod:`.model`, the host profile, the manifest schema and ``portable/``;
never the rules, the solver or the hints.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Literal

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.limits import SHOWN_VERSIONS
from resolver_hook.manifest.model import (
    Flavour,
    IndexFlavour,
    Manifest,
    WheelFlavour,
    python_sort_key,
)
from resolver_hook.manifest.twins import Family
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    JETSON_AI_LAB_JP6,
    JETSON_ONLY_CCS,
    KernelTarget,
    min_driver_for_cuda,
)
from resolver_hook.portable.overrides import OVERRIDE_SM
from resolver_hook.portable.platforms import (
    OS_WORDS,
    platform_name,
)
from resolver_hook.reqfile import ReqEntry
from resolver_hook.resolve.model import (
    STALE_DAYS,
    Alternative,
    Change,
    Coupling,
    CouplingCause,
    Failure,
    JetsonMiss,
    NoFit,
    PackagePlan,
    RankCriterion,
    Rejection,
    Unmet,
    flavour_platforms,
    glibc_of,
    has_accelerator,
    os_arch_of,
    pinned_coupling,
    spec_floor,
)

__all__ = [
    "AS_WRITTEN",
    "BUILT_IN_SHA256_NOTE",
    "HASH_NOTE",
    "NO_MANIFEST",
    "NO_TAG_MATCHES",
    "OUTSIDE_YOUR_SPECIFIER",
    "WITHOUT_THE_GPU",
    "X64_INTERPRETER",
    "accelerator_reason",
    "alternative_words",
    "as_written_refusal",
    "as_written_runs_reason",
    "build_only_reason",
    "build_reason",
    "change_words",
    "chosen_words",
    "computed_page_note",
    "constraint_conflict_note",
    "coupling_failure",
    "coupling_words",
    "cuda_reason",
    "driver_change_words",
    "exists_summary",
    "extra_index_note",
    "fix_words",
    "gets_words",
    "gfx_fit_words",
    "gfx_reason",
    "gpu_families",
    "gpu_reason",
    "gpu_words",
    "index_line_held_note",
    "index_line_refusal",
    "installs_reason",
    "jetson_reason",
    "marker_reason",
    "nearest_words",
    "no_fit_words",
    "no_manifest_unjudged_reason",
    "none_helps",
    "other_name_notes",
    "passthrough_reason",
    "per_gpu_cuda_reason",
    "pin_refusal_words",
    "pinned_words",
    "place_words",
    "platform_reason",
    "properties_reason",
    "python_reason",
    "rocm_reason",
    "skipped_hint_words",
    "specifier_reason",
    "stale_note",
    "template_reason",
    "unjudged_reason",
    "unlisted_reason",
    "unmet_words",
    "unverified_note",
    "x64_venv_words",
]


def gpu_words(cc: tuple[int, int]) -> str:
    name = GPU_NAMES.get(cc)
    label = f"sm_{cc[0]}{cc[1]}"
    if not name:
        return label
    return f"{name.split(' (')[0]} ({label})"


def place_words(os_name: str, arch: str) -> str:
    """``Linux aarch64``, ``macOS arm64``, ``Windows arm64`` (each OS's own word)."""
    if os_name in ("macos", "windows") and arch == "aarch64":
        arch = "arm64"
    return f"{OS_WORDS.get(os_name, os_name)} {arch}"


def python_labels(f: Flavour) -> tuple[str, ...]:
    """The Pythons a build names, an abi3 tag as what it is: ``3.8`` from ``cp38-abi3``
    is every CPython from 3.8 on that is not free-threaded (``3.8+ (abi3)``)."""
    if not isinstance(f, WheelFlavour):
        return f.python_versions
    abi3 = {t.interpreter for t in f.tags if t.abi == "abi3"}
    return tuple(
        f"{v}+ (abi3)" if "cp" + v.replace(".", "") in abi3 else v for v in f.python_versions
    )


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
        if f.cuda is not None:
            cudas[str(f.cuda)] = None
            if len(f.cuda) == 1 and next(iter(f.cuda)).operator == ">=":
                floors.append(Version(next(iter(f.cuda)).version))
        gpus.update(f.gpu)
    parts = [", ".join(plats) or "any platform"]
    if pys:
        parts.append(
            "Python " + ", ".join(sorted(pys, key=lambda v: python_sort_key(v.split("+")[0])))
        )
    if cudas and len(floors) == sum(f.cuda is not None for f in man.flavours):
        parts.append(f"driver CUDA >={min(floors)}")  # every build asks only for a floor
    elif cudas:
        parts.append("driver CUDA " + " or ".join(cudas))
    if gpus:
        parts.append("kernels " + ", ".join(map(str, sorted(gpus))))
    versions = sorted({f.version.public for f in man.flavours}, key=Version, reverse=True)
    verb = "exists" if len(versions) == 1 else "exist"
    shown = ", ".join(versions[:SHOWN_VERSIONS])
    if len(versions) > SHOWN_VERSIONS:  # a manifest of thousands: the newest, and a count
        shown += f" and {len(versions) - SHOWN_VERSIONS:,} older versions"
    return f"{man.display_name} {shown} {verb} for: {'; '.join(_bounded(parts))}"


def _bounded(parts: list[str], limit: int = 600) -> list[str]:
    """Each part at most ``limit`` characters (thousands of CUDA ranges or kernels)."""
    return [p if len(p) <= limit else p[: limit - 5].rsplit(", ", 1)[0] + ", ..." for p in parts]


def chosen_words(
    f: Flavour, p: HostProfile, *, tag: str | None, rocm: Version | None, fitting: int
) -> str:
    """Why the chosen build fits: its best ``tag`` here (a wheel), the driver, ROCm
    (``rocm``: the machine's, as the rules read it) and kernels it meets, its couplings,
    and of how many ``fitting`` builds it is the best."""
    parts = []
    if isinstance(f, WheelFlavour):
        parts.append(f"tag {tag}")
    elif f.platforms:
        parts.append(f"{OS_WORDS.get(p.os, p.os)} {p.arch}, {p.python_words}")
    if f.cuda is not None:
        parts.append(f"driver CUDA {p.nvidia.cuda_version if p.nvidia else '?'} meets {f.cuda}")
    if f.rocm is not None:
        parts.append(f"ROCm {rocm} meets {f.rocm}")
    if f.gfx:
        parts.append(gfx_fit_words(f.gfx, p.rocm.gfx if p.rocm else ()))
    if f.gpu and p.gpu_ccs:
        parts.append(f"kernels cover {', '.join(gpu_words(cc) for cc in p.gpu_ccs)}")
    if not has_accelerator(f) and p.nvidia is None and p.rocm is None:
        parts.append("no GPU needed")
    if f.requires:
        parts.append("couples with " + ", ".join(str(r) for r in f.requires))
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
        dist = canonicalize_name(Requirement(p.installs).name)
        if dist == p.name:
            continue  # the package itself with extras (jax[cuda12])
        dependents = sorted(
            other
            for other, f in chosen.items()
            if f is not None
            and other != p.name
            and any(canonicalize_name(r.name) == p.name for r in f.requires)
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


def gets_words(f: Flavour) -> str:
    """What a package gets with a build chosen, in words: ``torch 2.13.0+cu130``; a plain
    build left to the installer names no version, since none is pinned."""
    if isinstance(f, IndexFlavour) and f.passthrough:
        return f"{f.name}'s plain build (left to the installer)"
    return f"{f.name} {f.version}"


def stale_note(packages: Sequence[PackagePlan], today: datetime.date) -> list[str]:
    """One note for every chosen entry checked more than STALE_DAYS days before today."""
    stale = [
        f"{p.name} {p.entry_version} (checked {p.flavour.checked.isoformat()})"
        for p in packages
        if p.flavour is not None
        and p.flavour.checked is not None
        and (today - p.flavour.checked).days > STALE_DAYS
    ]
    if not stale:
        return []
    return [
        f"manifest data older than {STALE_DAYS} days: {', '.join(stale)}; the builds may "
        "have changed since: compare with each entry's evidence"
    ]


def gpu_families(sms: Sequence[str], profile: HostProfile, *, driver: str | None = None) -> str:
    """The GPU families that fit, in words: every known one from some compute
    capability on ("compute capability 8.0 or newer", but for one or two), else each;
    with the ``driver`` they need when the machine has none."""
    with_driver = f", with a driver of {driver} or newer," if driver else ""
    fit = sorted((int(a), int(b)) for a, _, b in (sm.partition(".") for sm in sms))
    lowest = fit[0]
    known = [
        cc
        for cc in sorted(GPU_NAMES)
        if cc >= lowest and cc not in profile.gpu_ccs and cc not in JETSON_ONLY_CCS
    ]
    missing = [cc for cc in known if cc not in fit]
    article = "an NVIDIA GPU" if profile.nvidia is None else "a GPU of another family"
    if len(fit) > 2 and len(missing) <= 2:
        but = f"; not {' or '.join(gpu_words(cc) for cc in missing)}" if missing else ""
        return (
            f"{article} of compute capability {lowest[0]}.{lowest[1]} or newer "
            f"({GPU_NAMES[lowest]} and later{but}){with_driver}"
        )
    return f"{article}: " + " or ".join(gpu_words(cc) for cc in reversed(fit)) + with_driver


def fix_words(fix: Change) -> str:
    also = f" (with {', '.join(fix.also)})" if fix.also else ""
    return f"{fix.text} gets {fix.gets}{also}" + (f"; {fix.how}" if fix.how else "")


def none_helps(p: PackagePlan, manifest: Manifest, profile: HostProfile) -> str:
    """No single change helps: say what no build exists for (rules every build fails)."""
    name = manifest.display_name
    for r in sorted(p.rejected, key=lambda r: "specifier" in r.rules):  # the release asked first
        pinned = pinned_coupling(r.failures)
        if pinned is not None:
            return f"{pinned_words(pinned)}, and {name} needs it: loosen or drop that requirement"
    common: set[str] = set(p.rejected[0].rules) if p.rejected else set()
    for r in p.rejected[1:]:
        common &= set(r.rules)
    phrases = []
    if "tags" in common:
        same = any(
            os_arch_of(x) == (profile.os, profile.arch)
            for f in manifest.flavours
            for x in flavour_platforms(f)
        )
        where = place_words(profile.os, profile.arch)
        if same and profile.libc_version:
            where += f" with {profile.libc or 'glibc'} {profile.libc_version}"
        phrases.append(f"for {where}")
    if "python" in common:
        phrases.append(f"for Python {profile.python}")
    if profile.nvidia is None and common & {"cuda", "gpu"}:
        phrases.append("without an NVIDIA GPU")
    elif "cuda" in common and profile.nvidia is not None:
        phrases.append(f"for a driver with CUDA {profile.nvidia.cuda_version or 'unknown'}")
    if "gpu" in common and profile.nvidia is not None:
        targets = sorted({t for f in manifest.flavours for t in f.gpu})
        runs = [n for cc, n in sorted(GPU_NAMES.items()) if any(t.runs_on(cc) for t in targets)]
        names = f" ({', '.join(runs)})" if runs else ""
        phrases.append(f"for GPUs outside {', '.join(map(str, targets))}{names}")
    if not phrases:
        return (
            f"no single change to this machine gives {name} a build: each build misses "
            "on more than one count (-v or --json lists every one)"
        )
    either = phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} or {phrases[-1]}"
    return f"no build of {name} exists {either}: no single change to this machine gives one"


# --- rules 1-5: why one flavour does not fit this machine ----------------------------

#: A wheel whose platform and Python each match, but no tag as a whole.
NO_TAG_MATCHES = "its tags match no tag of this Python"


def platform_reason(plats: Sequence[str], p: HostProfile) -> str:
    """Rule 1: the platforms a build is for, against this machine (a glibc too old
    for a build of this OS and CPU is said as such)."""
    for pl in plats:
        first = pl.split(".")[0]
        os_name, arch = os_arch_of(first)
        floor = glibc_of(first)
        if os_name == p.os and arch == p.arch and floor and p.libc_version:
            return (
                f"needs glibc >= {floor[0]}.{floor[1]} ({pl}); this machine has "
                f"{p.libc or 'libc'} {p.libc_version}"
            )
    names = ", ".join(
        dict.fromkeys(platform_name(pl) for pl in (x for pl in plats for x in pl.split(".")))
    )
    here = f"{OS_WORDS.get(p.os, p.os)} {p.arch}"
    return f"built for {names} ({', '.join(plats)}); this machine is {here}"


def python_reason(pythons: Sequence[str], p: HostProfile) -> str:
    """Rule 1: the Pythons (or interpreter tags) a build is for."""
    return f"built for Python {', '.join(pythons)}; this machine has {p.python_words}"


def jetson_reason(
    miss: JetsonMiss, f: Flavour, p: HostProfile, *, tegra: Sequence[KernelTarget] = ()
) -> str:
    """Rule 1 on Jetsons: a Jetson build elsewhere, or a server-Arm build on a Jetson
    (``tegra``: its SASS for this Jetson's GPU, when it has some but no l4t range)."""
    if miss == "not-a-jetson":
        return f"a Jetson build (L4T {f.l4t}); this machine is not a Jetson"
    if miss == "l4t-unknown":
        return (
            f"a Jetson build for L4T {f.l4t}; this Jetson's L4T release is unknown "
            "(add l4tX.Y to --target, e.g. l4t36.4)"
        )
    if miss == "other-l4t":
        return f"a Jetson build for L4T {f.l4t}; this Jetson has L4T {p.l4t}"
    if miss == "tegra-no-l4t":
        return (
            f"carries SASS for this Jetson's GPU ({', '.join(map(str, tegra))}), but its "
            "manifest gives no l4t range, so which L4T (JetPack) releases it supports is "
            'unknown; its publisher can add l4t = ">=36,<37" (JetPack 6) to the entry'
        )
    return (
        "a server-Arm (SBSA) CUDA build; JetPack 6 and older (L4T r36 and before) need "
        f"a Jetson build, e.g. from NVIDIA's Jetson AI Lab index {JETSON_AI_LAB_JP6}"
    )


def properties_reason(f: WheelFlavour) -> str:
    """A PEP 825 variant of a namespace resolver-hook does not check."""
    return (
        f"variant {f.variant} needs {', '.join(f.other_properties)}; "
        "resolver-hook checks only nvidia properties"
    )


def cuda_reason(cuda: SpecifierSet, have: Version | None, p: HostProfile) -> str:
    """Rule 2: the driver's CUDA version (``have``; None: no driver, or unknown)."""
    if have is None:
        has = "none" if p.nvidia is None else "one whose CUDA version is unknown"
        return f"needs an NVIDIA driver with CUDA {cuda}; this machine has {has}"
    hint = ""
    floor = spec_floor(cuda)
    if floor is not None and floor > have:
        driver = min_driver_for_cuda((floor.major, floor.minor), p.os)
        hint = f" (driver {driver} or newer)" if driver else ""
    return (
        f"needs a driver with CUDA {cuda}{hint}; this driver has "
        f"CUDA {p.nvidia.cuda_version if p.nvidia else '?'}"
    )


def per_gpu_cuda_reason(
    cc: tuple[int, int], specs: Sequence[tuple[KernelTarget, SpecifierSet]], have: Version
) -> str:
    """Rule 2 from a wheel's per-target CUDA floors: what each target that runs on this
    GPU needs, against the driver's CUDA (``have``)."""
    need = ", ".join(f"{t} needs CUDA {spec}" for t, spec in specs)
    return f"on {gpu_words(cc)} only {need}; this driver has CUDA {have}"


def rocm_reason(rocm: SpecifierSet, have: Version | None) -> str:
    """Rule 2 for ROCm (``have``: the machine's ROCm, None without)."""
    if have is None:
        return f"needs AMD ROCm {rocm}; this machine has no ROCm"
    return f"needs ROCm {rocm}; this machine has ROCm {have}"


def gfx_reason(gfx: Sequence[str], missing: Sequence[str]) -> str:
    """Rule 3 for ROCm: the AMD GPUs (``missing``) a build carries no code for."""
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"built for AMD GPUs {', '.join(gfx)}; this machine's {', '.join(missing)} {verb} "
        "not one of them"
    )


def gfx_fit_words(gfx: Sequence[str], have: Sequence[str]) -> str:
    """Rule 3 for ROCm, met: the machine's AMD GPUs are among the build's, or are not
    known (a target without gfxNNN): then not checked, and said."""
    if not have:
        return f"AMD GPU not known: not checked against its GPUs ({', '.join(gfx)})"
    if len(have) == 1:
        return f"{have[0]} is one of its GPUs"
    return f"{', '.join(have)} are among its GPUs"


def _no_cc_reason(p: HostProfile) -> str:
    reason = p.nvidia_reason
    if reason == "no NVIDIA GPU":  # no probe said why: a target or profile without smXY
        return "no GPU is listed"
    return reason


def gpu_reason(
    gpu: Sequence[KernelTarget], missing: Sequence[tuple[int, int]], p: HostProfile
) -> str:
    """Rule 3: no NVIDIA GPU, a GPU of unknown compute capability, or the GPUs
    (``missing``) the kernels do not run on."""
    kernels = ", ".join(map(str, gpu))
    if p.nvidia is None:
        return f"needs an NVIDIA GPU that runs {kernels}; this machine has none"
    if not p.gpus:
        return (
            f"needs a GPU for kernels {kernels}; this machine's GPU compute "
            f"capability is unknown ({_no_cc_reason(p)}); set {OVERRIDE_SM}=X.Y "
            "(or --sm X.Y) to name it"
        )
    verb = "does" if len(gpu) == 1 else "do"
    return f"kernels {kernels} {verb} not run on {', '.join(gpu_words(cc) for cc in missing)}"


def accelerator_reason(accelerator: str, f: Flavour, manifest: Manifest) -> str:
    """Rule 4: a build without ``accelerator`` ("CUDA", "ROCm") on a machine with it,
    and the pin that asks for it (none for a version pattern: the accelerated builds
    have the same versions)."""
    pin = (
        "; no pin selects it (the CUDA builds have the same versions)"
        if isinstance(f, IndexFlavour) and f.versions is not None
        else f"; pin {manifest.display_name}=={f.version} to use it"
    )
    machine = "an NVIDIA GPU" if accelerator == "CUDA" else "ROCm"
    return f"builds without {accelerator} are not chosen on a machine with {machine}{pin}"


def specifier_reason(f: Flavour, spec: SpecifierSet) -> str:
    """Rule 5: the user's own specifier (with their constraints)."""
    shown = f.versions if isinstance(f, IndexFlavour) and f.versions else f.version
    return f"{shown} does not match your requirement {spec}"


_RANKED_BY: Mapping[RankCriterion, str] = {
    "judged": "a rule of the manifest judged the chosen build, none covers this release",
    "distribution": "the manifest prefers {name}, the chosen build's distribution",
    "version": "the chosen build is a newer version",
    "cuda": "the chosen build's CUDA runtime suits this driver better",
    "preference": "the manifest prefers the chosen build among those of this version",
    "tags": "the chosen build's wheel tag is more specific to this machine",
    "variant": "the chosen build is a better-matching wheel variant",
    "build": "the chosen build sorts first (same version, runtime and tags)",
}


def ranked_reason(criterion: RankCriterion, name: str) -> str:
    """A build that fits but ranked below the chosen one, and the criterion that decided
    (``name``: the chosen build's distribution)."""
    return f"fits, ranked below the chosen build: {_RANKED_BY[criterion].format(name=name)}"


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
    versions = ", ".join(known[:SHOWN_VERSIONS])
    if len(known) > SHOWN_VERSIONS:
        versions += f" and {len(known) - SHOWN_VERSIONS:,} older versions"
    if not known and manifest.not_found:
        pages = ", ".join(manifest.not_found)
        return (
            f"no build in its manifest ({manifest.source}) matches {asked}: its "
            f"page{'s were' if len(manifest.not_found) > 1 else ' was'} not found "
            f"({pages}): left to the installer unchanged"
        )
    return (
        f"no build in its manifest ({manifest.source}) matches {asked}; the manifest "
        f"knows {versions or 'no versions'}: left to the installer unchanged"
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


def unjudged_note(name: str, f: WheelFlavour, profile: HostProfile) -> str:
    """A release no entry's rule covers, chosen on a machine with an accelerator."""
    what = "GPU" if profile.nvidia is not None else "ROCm GPU"
    return (
        f"UNJUDGED: {name} {f.version} is planned from its tags and Requires-Python only; "
        f"whether it runs on this machine's {what} is not judged: {f.unjudged} (pin a "
        "release they cover, or give --strict to refuse)"
    )


def unverified_note(names: Sequence[str]) -> str:
    """Wheels of manifests other than the built-in ones that give no sha256."""
    return (
        f"{', '.join(names)}: no sha256 in {'its' if len(names) == 1 else 'their'} "
        "manifest for the wheel URL: not verified by hash"
    )


# --- hints: the changes of the machine, in words ----------------------------------------

X64_INTERPRETER = "an x86_64 (x64) Python interpreter"

# Windows on Arm runs x64 programs by emulation; uv's interpreter request names an x64
# CPython (docs/facts.md sections 3 and 5).
_WIN_X64_VENV = (
    "Windows on Arm runs an x64 Python by emulation{gpu}: make the venv with "
    "'uv venv --python cpython-{py}-windows-x86_64-none' or with the x64 installer from "
    "python.org"
)


def x64_venv_words(p: HostProfile) -> str:
    """How to get an x64 interpreter on Windows on Arm (the GPU kept, when there is one)."""
    gpu = ", with the GPU driven natively by the NVIDIA driver" if p.gpus else ""
    return _WIN_X64_VENV.format(py=p.python, gpu=gpu)


def driver_change_words(driver: str | None, cuda: str) -> str:
    """A newer driver: the first driver version for ``cuda`` where NVIDIA's table gives one."""
    if driver:
        return f"a driver of {driver} or newer (CUDA {cuda})"
    return f"a driver with CUDA {cuda} or newer"


_CHANGE_WORDS = {
    "python": "Python {}",
    "glibc": "glibc {} or newer",
    "rocm": "an AMD GPU with ROCm {} or newer",
}


def change_words(kind: Literal["python", "glibc", "rocm"], version: object) -> str:
    """Another Python, a newer glibc, or an AMD GPU with ROCm, in words."""
    return _CHANGE_WORDS[kind].format(version)


def skipped_hint_words(refused: int, hinted: int) -> str:
    """More packages without a fit than the hints are computed for (limits.py)."""
    return (
        f"no hint computed: {refused} packages have no fit in this plan and "
        f"the first {hinted} get one; plan fewer at a time"
    )


def unmet_words(u: Unmet) -> str:
    """Why a build of a coupled package does not meet a coupling, in words."""
    if u.kind == "version":
        return f"needs {u.requirement}"
    if u.kind == "local-label":
        return f"its page exists for {u.package} builds {', '.join(u.labels)}, not {u.version}"
    if u.kind == "cxx11abi":
        return f"its page needs the C++ ABI of {u.build}, which its manifest does not give"
    if u.kind == "release":
        return f"its page needs the release of {u.build}: a range, none of its releases known"
    return f"its page needs the CUDA version of {u.build}, a build without CUDA"


def pinned_words(c: Coupling) -> str:
    """``your requirement torch==2.0.0 rules out torch 2.13.0, which fits this machine``."""
    return (
        f"your requirement {c.pinned_by} rules out {c.package} {c.version}, which fits this machine"
    )


#: Each coupling cause in words; ``{unmet}``: why the build at issue does not meet it.
_COUPLING_WORDS: dict[CouplingCause, str] = {
    "pinned": "needs {requirement}; {pinned}",
    "page": "needs {requirement}; {unmet}",
    "unfit": "needs {requirement}; no such build of {package} fits this machine",
    "missing": "needs {requirement}; {package}'s manifest has no such build",
    # A page fact the plan's build lacks is said; a version that does not hold is the
    # "needs" already said.
    "plan": "needs {requirement}; {page_fact}the plan has {package} {version}",
    "inconsistent": (
        "needs {requirement}; no build of {package} is consistent with the rest of the plan"
    ),
    "clash": "{unmet}; the plan has {package} {version}",
    "reverse": "{holder} {unmet}; this is {package} {version}",
    "held": "your requirement {holder} {unmet}; this is {package} {version}",
    "no-choice": "no consistent choice of coupled packages",
}


def coupling_words(c: Coupling) -> str:
    """A coupling failure's reason, from what caused it (:class:`~.model.Coupling`)."""
    unmet = unmet_words(c.unmet) if c.unmet is not None else ""
    page_fact = f"{unmet}; " if c.unmet is not None and c.unmet.kind != "version" else ""
    return _COUPLING_WORDS[c.cause].format(
        requirement=c.requirement,
        package=c.package,
        version=c.version,
        holder=c.holder,
        unmet=unmet,
        page_fact=page_fact,
        pinned=pinned_words(c) if c.cause == "pinned" else "",
    )


def coupling_failure(c: Coupling) -> Failure:
    """A rule-6 failure: what caused it, and its words."""
    return Failure(rule="coupling", reason=coupling_words(c), coupling=c)
