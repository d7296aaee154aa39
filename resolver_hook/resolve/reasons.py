"""Why one flavour fails a rule, in words: rules 1-6 and the ranking, each said from
the outcome the rule found (nothing here decides a choice)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest, WheelFlavour
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    JETSON_AI_LAB_JP6,
    KernelTarget,
    min_driver_for_cuda,
)
from resolver_hook.portable.overrides import OVERRIDE_SM
from resolver_hook.portable.platforms import OS_WORDS, platform_name
from resolver_hook.resolve.model import (
    Coupling,
    CouplingCause,
    Failure,
    JetsonMiss,
    RankCriterion,
    Unmet,
    glibc_of,
    os_arch_of,
    spec_floor,
)

__all__ = [
    "NO_TAG_MATCHES",
    "accelerator_reason",
    "arch_max_reason",
    "coupling_failure",
    "coupling_words",
    "cuda_reason",
    "gfx_fit_words",
    "gfx_reason",
    "gpu_reason",
    "gpu_words",
    "jetson_reason",
    "per_gpu_cuda_reason",
    "pinned_words",
    "platform_reason",
    "properties_reason",
    "python_reason",
    "rocm_reason",
    "specifier_reason",
    "unmet_words",
]


def gpu_words(cc: tuple[int, int]) -> str:
    name = GPU_NAMES.get(cc)
    label = f"sm_{cc[0]}{cc[1]}"
    if not name:
        return label
    return f"{name.split(' (')[0]} ({label})"


def python_labels(f: Flavour) -> tuple[str, ...]:
    """The Pythons a build names, an abi3 tag as what it is: ``3.8`` from ``cp38-abi3``
    is every CPython from 3.8 on that is not free-threaded (``3.8+ (abi3)``)."""
    if not isinstance(f, WheelFlavour):
        return f.python_versions
    abi3 = {t.interpreter for t in f.tags if t.abi == "abi3"}
    return tuple(
        f"{v}+ (abi3)" if "cp" + v.replace(".", "") in abi3 else v for v in f.python_versions
    )


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
        return f"a Jetson build (L4T {f.needs.l4t}); this machine is not a Jetson"
    if miss == "l4t-unknown":
        return (
            f"a Jetson build for L4T {f.needs.l4t}; this Jetson's L4T release is unknown "
            "(add l4tX.Y to --target, e.g. l4t36.4)"
        )
    if miss == "other-l4t":
        return f"a Jetson build for L4T {f.needs.l4t}; this Jetson has L4T {p.l4t}"
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


def gpu_reason(
    gpu: Sequence[KernelTarget], missing: Sequence[tuple[int, int]], p: HostProfile
) -> str:
    """Rule 3: no NVIDIA GPU, a GPU of unknown compute capability, or the GPUs
    (``missing``) the kernels do not run on."""
    kernels = ", ".join(map(str, gpu))
    if p.nvidia is None:
        return f"needs an NVIDIA GPU that runs {kernels}; this machine has none"
    if not p.gpus:
        why = p.nvidia_reason
        if why == "no NVIDIA GPU":  # no probe said why: a target or profile without smXY
            why = "no GPU is listed"
        return (
            f"needs a GPU for kernels {kernels}; this machine's GPU compute "
            f"capability is unknown ({why}); set {OVERRIDE_SM}=X.Y "
            "(or --sm X.Y) to name it"
        )
    verb = "does" if len(gpu) == 1 else "do"
    return f"kernels {kernels} {verb} not run on {', '.join(gpu_words(cc) for cc in missing)}"


def arch_max_reason(arch_max: tuple[int, int], beyond: Sequence[tuple[int, int]]) -> str:
    """Rule 3 for a build that compiles its kernels on the machine: the GPUs newer
    than any its compiler knows."""
    gpus = ", ".join(gpu_words(cc) for cc in beyond)
    return (
        f"its compiler knows GPUs up to compute capability {arch_max[0]}.{arch_max[1]}, not {gpus}"
    )


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
