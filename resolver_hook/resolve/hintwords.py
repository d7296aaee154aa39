"""The hints' words: each change of the machine, what it gets, and what no single
change can give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest
from resolver_hook.portable.cuda import GPU_NAMES, JETSON_ONLY_CCS
from resolver_hook.portable.platforms import OS_WORDS
from resolver_hook.resolve.model import (
    Change,
    PackagePlan,
    coupling_by,
    flavour_platforms,
    os_arch_of,
)
from resolver_hook.resolve.reasons import gpu_words, pinned_words

__all__ = [
    "X64_INTERPRETER",
    "change_words",
    "driver_change_words",
    "fix_words",
    "gets_words",
    "gpu_families",
    "none_helps",
    "place_words",
    "skipped_hint_words",
    "x64_venv_words",
]


def place_words(os_name: str, arch: str) -> str:
    """``Linux aarch64``, ``macOS arm64``, ``Windows arm64`` (each OS's own word)."""
    if os_name in ("macos", "windows") and arch == "aarch64":
        arch = "arm64"
    return f"{OS_WORDS.get(os_name, os_name)} {arch}"


def gets_words(f: Flavour) -> str:
    """What a package gets with a build chosen, in words: ``torch 2.13.0+cu130``; a plain
    build left to the installer names no version, since none is pinned."""
    if isinstance(f, IndexFlavour) and f.passthrough:
        return f"{f.name}'s plain build (left to the installer)"
    return f"{f.name} {f.version}"


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
        pinned = coupling_by(r.failures, "pinned")
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
        targets = sorted({t for f in manifest.flavours for t in f.needs.gpu})
        runs = [n for cc, n in sorted(GPU_NAMES.items()) if any(t.runs_on(cc) for t in targets)]
        names = f" ({', '.join(runs)})" if runs else ""
        phrases.append(f"for GPUs outside {', '.join(map(str, targets))}{names}")
    if not phrases and p.requested and any(set(r.rules) == {"specifier"} for r in p.rejected):
        # What runs here is outside the requirement (the "or replace" hints name it).
        return (
            f"no build of {name} that your requirement {p.requested} allows runs here, and "
            "no single change to this machine gives one"
        )
    if not phrases:
        return (
            f"no single change to this machine gives {name} a build: each build misses "
            "on more than one count (-v or --json lists every one)"
        )
    either = phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} or {phrases[-1]}"
    return f"no build of {name} exists {either}: no single change to this machine gives one"


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
