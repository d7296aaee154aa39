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
from collections.abc import Iterable, Mapping, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.limits import SHOWN_VERSIONS
from resolver_hook.manifest.schema import (
    Flavour,
    Manifest,
    WheelFlavour,
    python_sort_key,
)
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    JETSON_ONLY_CCS,
    KernelTarget,
)
from resolver_hook.portable.platforms import (
    OS_WORDS,
    platform_name,
)
from resolver_hook.resolve.model import (
    STALE_DAYS,
    Change,
    Failure,
    PackagePlan,
    flavour_platforms,
    has_accelerator,
    os_arch_of,
)

__all__ = [
    "RULES_OUT",
    "WIN_X64_VENV",
    "chosen_words",
    "exists_summary",
    "fix_words",
    "gpu_families",
    "gpu_words",
    "none_helps",
    "other_name_notes",
    "place_words",
    "ruled_out",
    "stale_note",
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
        for v in f.python_versions:
            pys[v] = None
        if f.cuda is not None:
            cudas[str(f.cuda)] = None
            if len(f.cuda) == 1 and next(iter(f.cuda)).operator == ">=":
                floors.append(Version(next(iter(f.cuda)).version))
        gpus.update(f.gpu)
    parts = [", ".join(plats) or "any platform"]
    if pys:
        parts.append("Python " + ", ".join(sorted(pys, key=python_sort_key)))
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
    if f.gpu and p.gpu_ccs:
        parts.append(f"kernels cover {', '.join(gpu_words(cc) for cc in p.gpu_ccs)}")
    if not has_accelerator(f) and p.nvidia is None and p.rocm is None:
        parts.append("no GPU needed")
    if f.requires:
        parts.append("couples with " + ", ".join(str(r) for r in f.requires))
    others = fitting - 1
    if others > 0:
        parts.append(f"best of {others + 1} that fit")
    return "; ".join(parts) or "fits"


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


def stale_note(packages: Sequence[PackagePlan], today: datetime.date) -> list[str]:
    """One note for every chosen entry checked more than STALE_DAYS days before today."""
    stale = [
        f"{p.name} {p.version} (checked {p.flavour.checked.isoformat()})"
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


def gpu_families(sms: Sequence[str], profile: HostProfile) -> str:
    """The GPU families that fit, in words: every known one from some compute
    capability on ("compute capability 8.0 or newer", but for one or two), else each."""
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
            f"({GPU_NAMES[lowest]} and later{but})"
        )
    return f"{article}: " + " or ".join(gpu_words(cc) for cc in reversed(fit))


def fix_words(fix: Change) -> str:
    also = f" (with {', '.join(fix.also)})" if fix.also else ""
    return f"{fix.text} gets {fix.gets}{also}" + (f"; {fix.how}" if fix.how else "")


def none_helps(p: PackagePlan, manifest: Manifest, profile: HostProfile) -> str:
    """No single change helps: say what no build exists for (rules every build fails)."""
    name = manifest.display_name
    for r in p.rejected:
        clause = ruled_out(r.failures)
        if clause:
            return f"{clause}, and {name} needs it: loosen or drop that requirement"
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


# Windows on Arm runs x64 programs by emulation; uv's interpreter request names an x64
# CPython (docs/facts.md sections 3 and 5).
WIN_X64_VENV = (
    "Windows on Arm runs an x64 Python by emulation{gpu}: make the venv with "
    "'uv venv --python cpython-{py}-windows-x86_64-none' or with the x64 installer from "
    "python.org"
)


# How a coupling failure says that the user's own requirement on the other package
# excludes the build it needs (read back by the head line and the hint).
RULES_OUT = "rules out"


def ruled_out(failures: Iterable[Failure]) -> str | None:
    """The first coupling failure's "your requirement X rules out Y" clause, if any."""
    for x in failures:
        if x.rule == "coupling" and f" {RULES_OUT} " in x.reason:
            return x.reason.rpartition("; ")[2]  # "needs {r}; ..." and r's marker has "; "
    return None
