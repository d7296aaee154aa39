"""The resolver: (requirements, manifests, profile) -> Plan. Pure.

No I/O, no printing, no reading of the host or the clock: the profile says what the
machine is, the manifests what exists, the requirements what the user asked for.
Markers are evaluated against the profile (a complete marker environment built from
it), never against the running interpreter, so plans for other targets are right.

The rules, each with its id; a rejected flavour keeps every rule it fails
(:class:`Failure`: id and reason), and nothing downstream reads the wording:

1. Tags (``tags``; ``python`` for the Python version): the wheel's tags (or the index
   flavour's platforms and Pythons) are compatible with the profile's Python, ABI,
   platform and glibc. Jetson: a flavour with ``l4t`` fits only a Jetson whose L4T
   release it allows; a CUDA flavour without ``l4t`` (a server-Arm build) never fits a
   Jetson on JetPack 6 or older (docs/facts.md section 1.2).
2. CUDA: the flavour's ``cuda`` specifier holds for the driver's CUDA version
   (absent: no driver needed). ROCm likewise for ``rocm``.
3. GPU: every visible NVIDIA GPU runs one of the flavour's kernel targets
   (:func:`resolver_hook.portable.cuda.uncovered`; docs/facts.md section 1).
4. Accelerator: on a machine with an NVIDIA driver (or ROCm), a build that uses
   neither is not chosen silently when the package has accelerated builds: the
   user asks for it by pinning its exact version (``torch==2.13.0+cpu``).
5. Specifier: the user's own specifier (and their ``-c`` constraints) holds.
6. Couplings: every ``requires`` of a chosen flavour holds for the flavour chosen
   for that package in the same plan. A coupled package with a manifest joins the
   plan even when not asked for (as a constraint only), so nothing installed later
   swaps it. Found by depth-first search over the flavours that pass 1-5, best first,
   per group of coupled packages.

7. Ranking, among the flavours that pass: the best tag for the profile first.
8. Which CUDA build wins: among fitting CUDA builds, the newest CUDA runtime
   (``cuda_runtime``, else the floor of ``cuda``) not newer than the driver's CUDA
   version; a build for a newer runtime (NVIDIA's minor-version compatibility,
   docs/facts.md section 1) only when nothing older fits, the nearest first. On a
   CUDA 13.0 driver cu130 beats cu132; on 13.2, cu132 wins. ROCm builds: the
   newest ``rocm`` floor.
9. Then the newest version.

The ids of the others: ``cuda``/``rocm`` (2), ``gpu`` (3), ``accelerator`` (4),
``specifier`` (5), ``coupling`` (6); ``ranked`` marks a flavour that fits but ranked
below the chosen one.

A package with no fit gets a hint computed, never guessed (:func:`_with_hints`): each
single change of the machine, in the order a newer driver, another Python, another
OS/arch (on Windows on Arm with an NVIDIA GPU: an x64 interpreter), a GPU of another
family, ROCm, is tried by solving the plan again with that one fact changed
(:func:`apply_change`); the first that gives the package a fit is its ``fix``. When none
does, the hint says what no build exists for. The CPU build stays a separate
``alternatives`` entry.

A chosen entry whose ``checked`` date is more than ``STALE_DAYS`` days before the
``today`` the caller passes in (the CLI reads the clock; this module never does)
adds one note naming every such entry.

A requested version the manifest does not list at all (``torch==2.0.0`` against a
manifest of 2.13.0 builds) passes to the installer unchanged, with that reason: the
manifest says nothing about its builds.

When no flavour of a package fits and its manifest has a ``[build]`` table (an sdist
build is a supported fallback), the package's action is ``build`` instead of
``error``: the requirement goes to the installer as written (it builds the sdist),
the reason says why no wheel fits, and ``build_needs`` lists what the build needs.
Checking those needs reads the machine, so it is not done here:
:func:`resolver_hook.build.preflight.preflight` does it before an installer runs.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from packaging.markers import Marker, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook._patterns import version_numbers
from resolver_hook._plain import plain
from resolver_hook.host.profile import HostProfile, NvidiaGpu, NvidiaInfo, RocmInfo, compute_tags
from resolver_hook.limits import (
    MAX_HINT_CHANGES,
    MAX_HINTED_PACKAGES,
    MAX_MACHINE_VERSION_DIGITS,
)
from resolver_hook.manifest.schema import (
    Flavour,
    IndexFlavour,
    Manifest,
    WheelFlavour,
    fill_template,
    python_sort_key,
)
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    JETSON_AI_LAB_JP6,
    JETSON_ONLY_CCS,
    KernelTarget,
    min_driver_for_cuda,
    uncovered,
)
from resolver_hook.portable.overrides import OVERRIDE_SM
from resolver_hook.portable.platforms import (
    OS_WORDS,
    PLATFORM_MACHINE,
    PLATFORM_SYSTEM,
    SYS_PLATFORM,
    parse_platform,
    platform_name,
)
from resolver_hook.reqfile import (
    ReqEntry,
    ReqFile,
    format_requirement,
    parse_requirements,
    url_lines_first,
)

__all__ = [
    "RULES",
    "STALE_DAYS",
    "Action",
    "Alternative",
    "Cause",
    "Change",
    "Failure",
    "PackagePlan",
    "Plan",
    "Rejection",
    "Rule",
    "RuleOutcome",
    "apply_change",
    "evaluate_flavour",
    "make_plan",
    "marker_environment",
    "plan_target",
    "resolve",
]

_SEARCH_BUDGET = 20_000  # DFS nodes per group of coupled packages
STALE_DAYS = 180  # a chosen entry checked longer ago than this gets a note


# --- the plan ---------------------------------------------------------------------

#: What the plan does with a package.
Action = Literal["pass", "rewrite", "build", "error"]
#: Why: ``fit`` (a flavour fits), ``marker`` (the requirement's marker is false here),
#: ``no-manifest``, ``as-written`` (a URL or path), ``unlisted`` (a version the
#: manifest does not list), ``no-fit`` (nothing fits: error or build), ``conflict``
#: (builds fit this machine, but none goes with the builds chosen for the others).
Cause = Literal["fit", "marker", "no-manifest", "as-written", "unlisted", "no-fit", "conflict"]
#: The rule a flavour failed. ``tags``: platform, glibc or ABI; ``python``: the
#: Python version; ``jetson``: a Jetson build off its Jetson, or a server-Arm build on
#: JetPack 6 or older (part of rule 1); ``properties``: a wheel variant of a namespace
#: we do not check; ``ranked``: it fits but another was chosen (not a failure).
Rule = Literal[
    "tags",
    "python",
    "cuda",
    "rocm",
    "gpu",
    "accelerator",
    "specifier",
    "coupling",
    "jetson",
    "properties",
    "ranked",
]
RULES: tuple[Rule, ...] = get_args(Rule)
Status = Literal["pass", "fail", "n/a"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One rule a flavour failed: its id and the reason in words."""

    rule: Rule
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleOutcome:
    """One rule for one flavour: ``pass``, ``fail`` or ``n/a`` (it does not apply)."""

    rule: Rule
    status: Status
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection:
    """A flavour that was not chosen and every rule it failed."""

    candidate: str
    failures: tuple[Failure, ...]
    where: str = ""  # the flavour's key path in its manifest

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(f.rule for f in self.failures)

    @property
    def reason(self) -> str:
        """Every failure in words, `` | ``-separated (one reason may hold a ``;``)."""
        return " | ".join(f.reason for f in self.failures)


@dataclass(frozen=True, slots=True, kw_only=True)
class Alternative:
    """A build the user may pin on purpose: ``torch==2.13.0+cpu`` (runs without the GPU)."""

    pin: str  # "torch==2.13.0+cpu"
    why: str  # "runs without the GPU"

    def __str__(self) -> str:
        return f"{self.pin} ({self.why})"


ChangeKind = Literal["driver", "python", "platform", "glibc", "gpu", "rocm"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One fact about the machine changed, that gives a package a fit (a hint).

    Found by re-planning the whole plan with that fact changed
    (:func:`apply_change`), never guessed. The fields not ``None`` are the new facts:
    ``cuda`` the driver's CUDA version, ``sm`` one GPU of that compute capability
    ("10.0"; with ``cuda`` when the machine had no driver), ``os``/``arch``,
    ``glibc``, ``python``, ``rocm`` (an AMD GPU with that ROCm instead of NVIDIA).
    """

    kind: ChangeKind
    text: str  # the change in words: "a driver of 580 or newer (CUDA 13.0)"
    how: str = ""  # how to make it, when that needs saying (an x64 interpreter's venv)
    gets: str = ""  # what the package then gets: "torch 2.13.0+cu130"
    # Packages coupled with it that the plan gets now and the change moves to another
    # build: "torch 2.12.1+cu130" (torch-scatter's fix on a CUDA 12 driver).
    also: tuple[str, ...] = ()
    cuda: str | None = None
    python: str | None = None
    os: str | None = None
    arch: str | None = None
    glibc: str | None = None
    sm: str | None = None
    rocm: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PackagePlan:
    """What the plan does with one package: ``pass``, ``rewrite``, ``build`` or ``error``.

    ``build``: no flavour fits and the manifest allows building from source; the
    requirement is passed to the installer, ``build_needs`` says what the build needs.
    ``fix``: for a package with no fit, the first single change of the machine that
    gives it one (None: no single change does; ``hint`` says so).
    """

    name: NormalizedName
    action: Action
    reason: str
    cause: Cause = "fit"
    version: str | None = None
    url: str | None = None  # the wheel URL or find-links page
    sha256: str | None = None
    source: str | None = None  # where the manifest came from
    rejected: tuple[Rejection, ...] = ()
    requested: str = ""  # the requirement as the user wrote it ("" when implied)
    where: str = ""  # file:line of the requirement
    line: str | None = None  # the rewritten requirement line (None: constraint only)
    # Further lines for the same name, kept when the package passes through as written,
    # so the installer still sees every specifier the user gave.
    more_lines: tuple[str, ...] = ()
    constraint: str | None = None
    find_links: str | None = None
    implied_by: tuple[str, ...] = ()  # packages whose couplings brought this one in
    alternatives: tuple[Alternative, ...] = ()  # builds the user may pin (the CPU build)
    build_needs: tuple[str, ...] = ()  # for action "build": the manifest's [build] needs
    fix: Change | None = None
    hint: str = ""  # the fix in words, or why no single change gives a fit
    # The distribution (and extras) installed instead of the package ("cupy-cuda12x",
    # "jax[cuda12]"): the requirement line is rewritten to it; a constraints file
    # cannot say that, so ``enable`` cannot apply it. None: the package itself.
    installs: str | None = None
    # The find-links page was computed from a template over the build chosen for
    # another package (PyG's page per torch build), not seen in the manifest as is.
    computed: bool = False
    versions: str | None = None  # a version pattern (">=0.3.35") instead of one version
    flavour: Flavour | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The result of resolving: per package what and why, and what to hand pip or uv.

    ``requirements`` are the rewritten requirement lines (option lines, then URL
    lines, then plain lines: pip wants a URL line before a plain line of the same
    name); ``constraints`` pin every flavour (``name @ url#sha256=...`` for wheels,
    ``name==version+local`` for index flavours); ``find_links`` are per-package pages
    (never ``--extra-index-url``, docs/facts.md section 3).
    """

    profile: HostProfile = field(metadata={"json": False})
    packages: tuple[PackagePlan, ...] = ()
    requirements: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[PackagePlan, ...]:
        return tuple(p for p in self.packages if p.action == "error")

    @property
    def builds(self) -> tuple[PackagePlan, ...]:
        """Packages the installer will build from source (no flavour fits)."""
        return tuple(p for p in self.packages if p.action == "build")

    @property
    def ok(self) -> bool:
        return not self.errors

    def package(self, name: str) -> PackagePlan | None:
        key = canonicalize_name(name)
        return next((p for p in self.packages if p.name == key), None)

    def rewritten_lines(self) -> list[str]:
        """The requirements file to hand the installer (with ``-c``/``-f`` given apart)."""
        return list(self.requirements)

    def constraint_lines(self) -> list[str]:
        return list(self.constraints)

    def explain_lines(self) -> list[str]:
        """One line per rewritten (or pinned) package: what and why."""
        out = []
        for p in self.packages:
            if p.action == "rewrite":
                what = (
                    p.url if p.flavour is not None and p.flavour.kind == "wheel" else plan_target(p)
                )
                implied = f" (needed by {', '.join(p.implied_by)})" if p.implied_by else ""
                out.append(f"{p.name}: {what}{implied}: {p.reason}")
            elif p.action == "build":
                needs = f" (needs {', '.join(p.build_needs)})" if p.build_needs else ""
                out.append(f"{p.name}: build from source{needs}: {p.reason}")
        return out

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "profile": self.profile.to_dict(),
            "machine": self.profile.describe(),
            **plain(self),
            "ok": self.ok,
        }
        return data


def plan_target(p: PackagePlan) -> str:
    """What an index flavour installs, in words: ``cupy-cuda12x==14.2.0 (for cupy)``,
    ``torch-scatter==2.1.2 from <page> (computed)``."""
    name = p.installs or p.name
    pin = f"{name}{p.versions}" if p.versions else f"{name}=={p.version}"
    if p.installs:
        pin += f" (for {p.name})"
    if p.find_links:
        pin += f" from {p.find_links}"
        if p.computed:
            pin += " (computed)"
    return pin


# --- the marker environment of a profile -------------------------------------------


def marker_environment(profile: HostProfile) -> dict[str, str]:
    """A complete PEP 508 marker environment for the profile (nothing from this host)."""
    impl = {"cp": ("cpython", "CPython"), "pp": ("pypy", "PyPy")}.get(
        profile.implementation, (profile.implementation, profile.implementation)
    )
    full = f"{profile.python}.0"
    return {
        "implementation_name": impl[0],
        "implementation_version": full,
        "os_name": "nt" if profile.os == "windows" else "posix",
        "platform_machine": PLATFORM_MACHINE.get(profile.os, {}).get(profile.arch, profile.arch),
        "platform_release": "",
        "platform_system": PLATFORM_SYSTEM.get(profile.os, profile.os),
        "platform_version": "",
        "python_full_version": full,
        "platform_python_implementation": impl[1],
        "python_version": profile.python,
        "sys_platform": SYS_PLATFORM.get(profile.os, profile.os),
        "extra": "",
    }


def _marker_true(marker: Marker | None, env: Mapping[str, str]) -> bool:
    if marker is None:
        return True
    try:
        return marker.evaluate(dict(env))
    except UndefinedEnvironmentName:
        return False


# --- evaluating one flavour ----------------------------------------------------------


class _Machine:
    """What the rules need from a profile, computed once per plan."""

    def __init__(self, profile: HostProfile) -> None:
        self.profile = profile
        # The hints re-plan with one fact changed; a driver or GPU change keeps the tags.
        self.tag_rank, self.platforms, self.interp_abi, self.first_platform_rank = _tag_facts(
            profile.tags
        )
        self.cuda = (
            Version(profile.nvidia.cuda_version)
            if profile.nvidia and profile.nvidia.cuda_version
            else None
        )
        self.rocm: Version | None = None
        if profile.rocm is not None:
            try:
                self.rocm = Version(profile.rocm.version or "0")
            except InvalidVersion:
                self.rocm = Version("0")
        self.env = marker_environment(profile)
        # Per manifest, computed once: (any flavour needs NVIDIA, any needs ROCm). Asking
        # it per flavour made resolution quadratic in the number of flavours.
        self._accelerated: dict[int, tuple[Manifest, bool, bool]] = {}

    def accelerated(self, manifest: Manifest) -> tuple[bool, bool]:
        """Whether some flavour of ``manifest`` needs NVIDIA (CUDA or kernels) / ROCm."""
        hit = self._accelerated.get(id(manifest))
        if hit is None or hit[0] is not manifest:
            nvidia = rocm = False
            for g in manifest.flavours:
                nvidia = nvidia or g.cuda is not None or bool(g.gpu)
                rocm = rocm or g.rocm is not None
            hit = (manifest, nvidia, rocm)
            self._accelerated[id(manifest)] = hit
        return hit[1], hit[2]


@functools.lru_cache(maxsize=8)
def _tag_facts(
    tags: tuple[str, ...],
) -> tuple[dict[str, int], set[str], set[tuple[str, str]], dict[str, int]]:
    """Rank of each tag, the platforms, the interpreter/ABI pairs, each platform's best rank."""
    tag_rank = {t: i for i, t in enumerate(tags)}
    parsed = [t.split("-") for t in tags]
    platforms = {p[2] for p in parsed if len(p) == 3}
    interp_abi = {(p[0], p[1]) for p in parsed if len(p) == 3}
    first_platform_rank: dict[str, int] = {}
    for i, p in enumerate(parsed):
        if len(p) == 3:
            first_platform_rank.setdefault(p[2], i)
    return tag_rank, platforms, interp_abi, first_platform_rank


def _gpu_words(cc: tuple[int, int]) -> str:
    name = GPU_NAMES.get(cc)
    label = f"sm_{cc[0]}{cc[1]}"
    if not name:
        return label
    return f"{name.split(' (')[0]} ({label})"


def _os_arch_of(tag: str) -> tuple[str, str]:
    p = parse_platform(tag)
    return p["os"], p["arch"]


def _glibc_of(tag: str) -> tuple[int, int] | None:
    """The glibc a manylinux tag needs: ``manylinux_2_28_x86_64`` -> (2, 28)."""
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", tag)
    if m:
        return int(m.group(1)), int(m.group(2))
    legacy = re.fullmatch(r"manylinux(1|2010|2014)_\w+", tag)
    if legacy:
        return {"1": (2, 5), "2010": (2, 12), "2014": (2, 17)}[legacy.group(1)]
    return None


def _flavour_platforms(f: Flavour) -> list[str]:
    """The single platform tags of a flavour (compressed tag sets split)."""
    return [x for pl in f.platforms for x in pl.split(".")]


def _tag_failures(f: Flavour, m: _Machine) -> tuple[list[Failure], int]:
    """Rule 1: platform and Python failures, and the tag rank (lower is better)."""
    p = m.profile
    here = f"{OS_WORDS.get(p.os, p.os)} {p.arch}"
    out: list[Failure] = []
    if isinstance(f, WheelFlavour):
        ranks = [m.tag_rank[str(t)] for t in f.tags if str(t) in m.tag_rank]
        if ranks:
            return [], min(ranks)
        plats = sorted({t.platform for t in f.tags})
        py_ok = any((t.interpreter, t.abi) in m.interp_abi for t in f.tags)
        plat_ok = any(pl in m.platforms for pl in plats)
        if not plat_ok:
            out.append(Failure(rule="tags", reason=_platform_reason(plats, p, here)))
        if not py_ok:
            pys = ", ".join(f.python_versions) or ", ".join(sorted({t.interpreter for t in f.tags}))
            out.append(
                Failure(
                    rule="python",
                    reason=f"built for Python {pys}; this machine has {p.python_words}",
                )
            )
        if not out:
            out.append(Failure(rule="tags", reason="its tags match no tag of this Python"))
        return out, 0
    # Index flavour: platforms and Pythons as listed.
    if f.platforms and not any(pl in m.platforms for pl in f.platforms):
        out.append(Failure(rule="tags", reason=_platform_reason(sorted(f.platforms), p, here)))
    if f.python and p.python_label not in f.python:
        out.append(
            Failure(
                rule="python",
                reason=f"built for Python {', '.join(f.python)}; this machine has {p.python_words}",
            )
        )
    if out or not f.platforms:
        return out, 0
    return [], min(m.first_platform_rank[pl] for pl in f.platforms if pl in m.platforms)


def _platform_reason(plats: Sequence[str], p: HostProfile, here: str) -> str:
    for pl in plats:
        first = pl.split(".")[0]
        os_name, arch = _os_arch_of(first)
        floor = _glibc_of(first)
        if os_name == p.os and arch == p.arch and floor and p.libc_version:
            return (
                f"needs glibc >= {floor[0]}.{floor[1]} ({pl}); this machine has "
                f"{p.libc or 'libc'} {p.libc_version}"
            )
    words = ", ".join(
        dict.fromkeys(platform_name(pl) for pl in (x for pl in plats for x in pl.split(".")))
    )
    return f"built for {words} ({', '.join(plats)}); this machine is {here}"


def _no_cc_reason(p: HostProfile) -> str:
    reason = p.nvidia_reason
    if reason == "no NVIDIA GPU":  # no probe said why: a target or profile without smXY
        return "no GPU is listed"
    return reason


def _jetson_failure(f: Flavour, p: HostProfile) -> str | None:
    """Jetson builds fit Jetsons only; SBSA builds never fit JetPack 6 and older."""
    if f.l4t is not None:
        if not p.jetson:
            return f"a Jetson build (L4T {f.l4t}); this machine is not a Jetson"
        if p.l4t is None:
            return (
                f"a Jetson build for L4T {f.l4t}; this Jetson's L4T release is unknown "
                "(add l4tX.Y to --target, e.g. l4t36.4)"
            )
        if not f.l4t.contains(Version(p.l4t), prereleases=True):
            return f"a Jetson build for L4T {f.l4t}; this Jetson has L4T {p.l4t}"
        return None
    if not (p.needs_jetson_builds and (f.cuda is not None or f.gpu)):
        return None
    plats = _flavour_platforms(f)  # none, or "any": a build for every platform
    if not plats or any(x == "any" or _os_arch_of(x) == ("linux", "aarch64") for x in plats):
        return (
            "a server-Arm (SBSA) CUDA build; JetPack 6 and older (L4T r36 and before) need "
            f"a Jetson build, e.g. from NVIDIA's Jetson AI Lab index {JETSON_AI_LAB_JP6}"
        )
    return None


def _has_accelerator(f: Flavour) -> bool:
    return f.cuda is not None or f.rocm is not None or bool(f.gpu)


def _exact_pin(spec: SpecifierSet, version: Version) -> bool:
    return any(
        s.operator in ("==", "===") and "+" in s.version and s.contains(version) for s in spec
    )


def _failures(
    f: Flavour,
    m: _Machine,
    spec: SpecifierSet,
    manifest: Manifest,
) -> tuple[list[Failure], int]:
    """Every rule (1-5) the flavour fails, and its tag rank."""
    out, rank = _tag_failures(f, m)
    p = m.profile
    jetson_reason = _jetson_failure(f, p)
    if jetson_reason:
        out.append(Failure(rule="jetson", reason=jetson_reason))
    if isinstance(f, WheelFlavour) and f.other_properties:
        # A PEP 825 variant of another namespace (docs/facts.md section 2).
        out.append(
            Failure(
                rule="properties",
                reason=f"variant {f.variant} needs {', '.join(f.other_properties)}; "
                "resolver-hook checks only nvidia properties",
            )
        )
    if f.cuda is not None:
        if m.cuda is None:
            has = "none" if p.nvidia is None else "one whose CUDA version is unknown"
            out.append(
                Failure(
                    rule="cuda",
                    reason=f"needs an NVIDIA driver with CUDA {f.cuda}; this machine has {has}",
                )
            )
        elif not f.cuda.contains(m.cuda, prereleases=True):
            hint = ""
            floor = _floor(f.cuda)
            if floor is not None and floor > m.cuda:
                driver = min_driver_for_cuda((floor.major, floor.minor), p.os)
                hint = f" (driver {driver} or newer)" if driver else ""
            out.append(
                Failure(
                    rule="cuda",
                    reason=f"needs a driver with CUDA {f.cuda}{hint}; this driver has "
                    f"CUDA {p.nvidia.cuda_version if p.nvidia else '?'}",
                )
            )
    if f.rocm is not None:
        if m.rocm is None:
            out.append(
                Failure(rule="rocm", reason=f"needs AMD ROCm {f.rocm}; this machine has no ROCm")
            )
        elif not f.rocm.contains(m.rocm, prereleases=True):
            out.append(
                Failure(rule="rocm", reason=f"needs ROCm {f.rocm}; this machine has ROCm {m.rocm}")
            )
    if f.gpu:
        kernels = ", ".join(map(str, f.gpu))
        if p.nvidia is None:
            out.append(
                Failure(
                    rule="gpu",
                    reason=f"needs an NVIDIA GPU that runs {kernels}; this machine has none",
                )
            )
        elif not p.gpus:
            # No compute capability known (a driver without NVML, a target without smXY):
            # say so rather than guess (docs/facts.md section 1.3).
            out.append(
                Failure(
                    rule="gpu",
                    reason=f"needs a GPU for kernels {kernels}; this machine's GPU compute "
                    f"capability is unknown ({_no_cc_reason(p)}); set {OVERRIDE_SM}=X.Y "
                    "(or --sm X.Y) to name it",
                )
            )
        else:
            missing = uncovered(f.gpu, p.gpu_ccs)
            if missing:
                verb = "does" if len(f.gpu) == 1 else "do"
                out.append(
                    Failure(
                        rule="gpu",
                        reason=f"kernels {kernels} {verb} not run on "
                        f"{', '.join(_gpu_words(cc) for cc in missing)}",
                    )
                )
    if not _has_accelerator(f) and not _exact_pin(spec, f.version):
        any_nvidia, any_rocm = m.accelerated(manifest)
        # A version pattern shares its versions with the CUDA builds: no pin tells it
        # apart, so none is suggested.
        pin = (
            "; no pin selects it (the CUDA builds have the same versions)"
            if isinstance(f, IndexFlavour) and f.versions is not None
            else f"; pin {manifest.display_name}=={f.version} to use it"
        )
        if p.nvidia is not None and any_nvidia:
            out.append(
                Failure(
                    rule="accelerator",
                    reason="builds without CUDA are not chosen on a machine with "
                    f"an NVIDIA GPU{pin}",
                )
            )
        elif p.rocm is not None and any_rocm:
            out.append(
                Failure(
                    rule="accelerator",
                    reason=f"builds without ROCm are not chosen on a machine with ROCm{pin}",
                )
            )
    if str(spec) and not _version_ok(spec, f):
        shown = f.versions if isinstance(f, IndexFlavour) and f.versions else f.version
        out.append(
            Failure(rule="specifier", reason=f"{shown} does not match your requirement {spec}")
        )
    return out, rank


def _version_ok(spec: SpecifierSet, f: Flavour) -> bool:
    """Rule 5. A version pattern (``versions``) holds unless the user pins a version
    (``==``/``===``, no wildcard) the pattern does not allow."""
    if not isinstance(f, IndexFlavour) or f.versions is None:
        return spec.contains(f.version, prereleases=True)
    for s in spec:
        if s.operator in ("==", "===") and "*" not in s.version:
            try:
                pinned = Version(s.version)
            except InvalidVersion:
                return False
            if not f.versions.contains(pinned, prereleases=True):
                return False
    return True


def _meets(f: Flavour, r: Requirement, other: Flavour) -> str | None:
    """Whether ``other`` (chosen for ``r``'s package) meets ``f``'s coupling ``r``:
    None, or why not. A page template over ``other``'s build needs more than the
    version: one of ``local_labels``, and the facts the template reads."""
    if not _version_ok(r.specifier, other):
        return f"needs {r}"
    if not isinstance(f, IndexFlavour) or f.coupled != canonicalize_name(r.name):
        return None
    local = other.version.local or ""
    if f.local_labels and local not in f.local_labels:
        return (
            f"its page exists for {other.name} builds {', '.join(f.local_labels)}, "
            f"not {other.version}"
        )
    assert f.template is not None
    if "{cxx11abi}" in f.template and other.cxx11abi is None:
        return f"its page needs the C++ ABI of {other.describe()}, which its manifest does not give"
    if ("{cuda}" in f.template or "{cuda_major}" in f.template) and _runtime(other) is None:
        return f"its page needs the CUDA version of {other.describe()}, a build without CUDA"
    return None


def _runtime(f: Flavour) -> Version | None:
    return f.cuda_runtime or _floor(f.cuda)


def _floor(spec: SpecifierSet | None) -> Version | None:
    if spec is None:
        return None
    floors = []
    for s in spec:
        if s.operator in (">=", ">", "==", "~=", "==="):
            try:
                floors.append(Version(s.version.replace(".*", "")))
            except InvalidVersion:
                continue
    return max(floors) if floors else None


def _applies(rule: Rule, f: Flavour, p: HostProfile, spec: SpecifierSet) -> bool:
    """Whether a rule says anything about this flavour on this machine."""
    if rule == "python":
        return bool(f.python_versions)
    if rule == "cuda":
        return f.cuda is not None
    if rule == "rocm":
        return f.rocm is not None
    if rule == "gpu":
        # With a driver but no visible GPU, the kernels cannot be checked.
        return bool(f.gpu) and (p.nvidia is None or bool(p.gpu_ccs))
    if rule == "accelerator":
        return not _has_accelerator(f) and (p.nvidia is not None or p.rocm is not None)
    if rule == "specifier":
        return bool(str(spec))
    return rule == "tags"


def evaluate_flavour(
    f: Flavour, manifest: Manifest, profile: HostProfile, spec: SpecifierSet | None = None
) -> dict[Rule, RuleOutcome]:
    """Rules 1-5 for one flavour: per rule ``pass``, ``fail`` (with the reason) or
    ``n/a``. The same evaluation the resolver makes (couplings need a plan)."""
    spec = spec or SpecifierSet()
    fails, _ = _failures(f, _Machine(profile), spec, manifest)
    # A Jetson build on another machine, or a server-Arm build on a Jetson: the
    # platform column (rule "jetson" is part of rule 1).
    failed = {("tags" if x.rule == "jetson" else x.rule): x.reason for x in reversed(fails)}
    out: dict[Rule, RuleOutcome] = {}
    for rule in ("tags", "python", "cuda", "rocm", "gpu", "accelerator", "specifier"):
        if rule in failed:
            out[rule] = RuleOutcome(rule=rule, status="fail", reason=failed[rule])
        elif _applies(rule, f, profile, spec):
            out[rule] = RuleOutcome(rule=rule, status="pass")
        else:
            out[rule] = RuleOutcome(rule=rule, status="n/a")
    return out


# --- resolving ---------------------------------------------------------------------


@dataclass(slots=True)
class _Slot:
    name: NormalizedName
    manifest: Manifest
    spec: SpecifierSet
    entry: ReqEntry | None  # None when implied by a coupling
    implied_by: list[str]
    candidates: list[tuple[Flavour, int]] = field(default_factory=list)  # pass 1-5, ranked
    rejected: list[tuple[Flavour, list[Failure]]] = field(default_factory=list)
    chosen: Flavour | None = None
    coupling_rejects: dict[int, str] = field(default_factory=dict)
    others: list[ReqEntry] = field(default_factory=list)  # the same name asked again


def _rank_key(item: tuple[Flavour, int], driver: Version | None) -> tuple[Any, ...]:
    """Rules 7-9: tag, then which CUDA build wins, then version (best first)."""
    f, rank = item
    runtime = _runtime(f)
    if runtime is not None and driver is not None and runtime > driver:
        # Newer than the driver: only after every older one, the nearest first.
        cuda_key: tuple[int, Any] = (1, runtime)
    else:
        cuda_key = (0, _Desc(runtime or _floor(f.rocm) or Version("0")))
    # PEP 825: variants before the null variant, before non-variant wheels (docs/facts.md
    # section 2), among builds that are otherwise equal.
    label = f.variant if isinstance(f, WheelFlavour) else None
    variant_rank = 2 if label is None else 1 if label == "null" else 0
    return (rank, cuda_key, _Desc(f.version), variant_rank, f.describe())


class _Desc:
    """Wraps a value to sort it in descending order."""

    __slots__ = ("v",)

    def __init__(self, v: Version) -> None:
        self.v = v

    def __lt__(self, other: _Desc) -> bool:
        return self.v > other.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.v == other.v

    def __hash__(self) -> int:
        return hash(self.v)


def _as_reqfile(requirements: ReqFile | Iterable[str | Requirement | ReqEntry]) -> ReqFile:
    if isinstance(requirements, ReqFile):
        return requirements
    entries: list[ReqEntry] = []
    lines: list[str] = []
    for r in requirements:
        if isinstance(r, ReqEntry):
            entries.append(r)
        elif isinstance(r, Requirement):
            lines.append(str(r))
        else:
            lines.append(r)
    parsed = parse_requirements("\n".join(lines), source="<requirements>") if lines else ReqFile()
    return ReqFile(entries=(*entries, *parsed.entries), warnings=parsed.warnings)


def resolve(
    requirements: ReqFile | Iterable[str | Requirement | ReqEntry],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    today: datetime.date | None = None,
) -> Plan:
    """Resolve requirements against manifests for the profile. Pure; never raises for
    a package that does not fit (that is an ``error`` entry in the plan, with the
    first single change of the machine that gives it a fit: :func:`_with_hints`). ``today``
    (given by the caller, never read here) turns on the note about stale data."""
    reqs = _as_reqfile(requirements)
    plan = _plan(reqs, manifests, profile, today=today)
    return _with_hints(plan, reqs, manifests) if plan.errors else plan


def _plan(
    reqs: ReqFile,
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    today: datetime.date | None = None,
) -> Plan:
    """Solve, then say what and why for every package."""
    s = _solve(reqs, manifests, profile)
    for name, slot in s.slots.items():
        s.packages[name] = _slot_plan(slot, s.slots, s.m)
    ordered = [s.packages[k] for k in s.order if k in s.packages]
    notes = list(s.notes)
    notes.extend(_other_name_notes(ordered, s.slots))
    notes.extend(
        f"{p.name}: the page {p.find_links} is computed from its manifest's template and "
        f"the {_coupled_words(p, s.slots)} build chosen, not a page seen for that build"
        for p in ordered
        if p.computed and p.action == "rewrite"
    )
    if today is not None:
        notes.extend(_stale_note(ordered, today))
    return _assemble(profile, ordered, reqs, s.user_constraints, notes)


@dataclass(slots=True)
class _Solved:
    """The choices, before they are put in words."""

    m: _Machine
    slots: dict[str, _Slot]
    packages: dict[str, PackagePlan]  # those passed through (no slot)
    order: list[str]
    user_constraints: dict[str, list[ReqEntry]]
    notes: list[str]


def _by_canonical_name(manifests: Mapping[str, Manifest]) -> Mapping[str, Manifest]:
    """The manifests by canonical name, reading none that is read on first use
    (:class:`resolver_hook.manifest.load.ManifestSet`): a plan looks up only its own."""
    if all(canonicalize_name(k) == k for k in manifests):
        return manifests
    return {canonicalize_name(k): v for k, v in manifests.items()}


def _solve(  # noqa: PLR0915 - the numbered steps read best in one place
    reqs: ReqFile,
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    m: _Machine | None = None,  # the profile's, when the caller has it already
) -> _Solved:
    m = _Machine(profile) if m is None else m
    by_name = _by_canonical_name(manifests)
    notes: list[str] = list(reqs.warnings)
    packages: dict[str, PackagePlan] = {}
    order: list[str] = []
    slots: dict[str, _Slot] = {}
    user_constraints: dict[str, list[ReqEntry]] = {}
    for c in reqs.constraints:
        if c.name and _marker_true(c.marker, m.env):
            user_constraints.setdefault(c.name, []).append(c)

    # Requested packages: pass-through, or a slot to resolve.
    for e in reqs.requirements:
        key = e.name or e.text
        if not _marker_true(e.marker, m.env):
            if key not in packages and key not in slots:
                packages[key] = PackagePlan(
                    name=NormalizedName(key),
                    action="pass",
                    requested=e.text,
                    where=e.where,
                    line=_original_line(e),
                    cause="marker",
                    reason=f"marker '{e.marker}' is false on this machine: pip skips it",
                )
                order.append(key)
            continue
        manifest = by_name.get(e.name) if e.name else None
        twin = packages.get(key)
        if twin is not None and twin.cause == "marker":
            del packages[key]  # a marker-false twin seen first: this line counts
            order.remove(key)
            twin = None
        if manifest is None or e.kind != "requirement" or e.url or e.editable:
            why = (
                "no manifest: left to the installer"
                if manifest is None
                else "you gave a URL or path: left as written"
            )
            cause: Cause = "no-manifest" if manifest is None else "as-written"
            slot = slots.pop(key, None)
            if slot is None and twin is not None:  # the same name again: pip sees every line
                packages[key] = dataclasses.replace(
                    twin, more_lines=(*twin.more_lines, _original_line(e))
                )
                continue
            # A URL or path for a name asked for before (a slot): as written, with the
            # earlier lines; else a new name.
            earlier = [] if slot is None else [slot.entry, *slot.others]
            packages[key] = PackagePlan(
                name=NormalizedName(key),
                action="pass",
                reason=why,
                cause=cause,
                requested=e.text,
                where=e.where,
                line=_original_line(e),
                more_lines=tuple(_original_line(x) for x in earlier if x is not None),
            )
            if slot is None:
                order.append(key)
            continue
        assert e.requirement is not None
        assert e.name is not None
        if twin is not None:  # asked for by URL or path already: left as written
            packages[key] = dataclasses.replace(
                twin, more_lines=(*twin.more_lines, _original_line(e))
            )
            continue
        if e.name in slots:  # the same name twice: both specifiers hold (as in pip)
            slots[e.name].spec &= e.requirement.specifier
            slots[e.name].others.append(e)
            continue
        spec = e.requirement.specifier & _constraint_spec(user_constraints, e.name)
        slots[e.name] = _Slot(name=e.name, manifest=manifest, spec=spec, entry=e, implied_by=[])
        order.append(e.name)

    # Rules 1-5 for every slot; couplings bring in implied slots.
    pending = list(slots)
    while pending:
        name = pending.pop(0)
        slot = slots[name]
        for f in slot.manifest.flavours:
            fails, rank = _failures(f, m, slot.spec, slot.manifest)
            if fails:
                slot.rejected.append((f, fails))
            else:
                slot.candidates.append((f, rank))
        slot.candidates.sort(key=lambda item: _rank_key(item, m.cuda))
        for f, _ in slot.candidates:
            for r in f.requires:
                target = canonicalize_name(r.name)
                if not _marker_true(r.marker, m.env) or target not in by_name:
                    continue
                if target not in slots:
                    if target in packages:  # asked for by URL or marker-skipped: leave it
                        continue
                    slots[target] = _Slot(
                        name=target,
                        manifest=by_name[target],
                        spec=_constraint_spec(user_constraints, target),
                        entry=None,
                        implied_by=[],
                    )
                    order.append(target)
                    pending.append(target)
                if slots[target].entry is None and slot.name not in slots[target].implied_by:
                    slots[target].implied_by.append(slot.name)

    _search(slots, m)
    return _Solved(
        m=m,
        slots=slots,
        packages=packages,
        order=order,
        user_constraints=user_constraints,
        notes=notes,
    )


def _coupled_words(p: PackagePlan, slots: Mapping[str, _Slot]) -> str:
    f = p.flavour
    if not isinstance(f, IndexFlavour) or f.coupled is None or f.coupled not in slots:
        return "coupled"
    chosen = slots[f.coupled].chosen
    return f"{f.coupled} {chosen.version}" if chosen is not None else f.coupled


def _other_name_notes(packages: Sequence[PackagePlan], slots: Mapping[str, _Slot]) -> list[str]:
    """A flavour that is another distribution (cupy as cupy-cuda12x): pip does not know
    that it provides the package, so a dependency on the plain name from another
    package installs the plain distribution too. Each such dependency the manifests
    show is named; metadata of packages without a manifest is not read (pure)."""
    out = []
    for p in packages:
        if p.installs is None or p.action != "rewrite":
            continue
        dist = canonicalize_name(Requirement(p.installs).name)
        if dist == p.name:
            continue  # the package itself with extras (jax[cuda12])
        dependents = sorted(
            other.name
            for other in slots.values()
            if other.chosen is not None
            and other.name != p.name
            and any(canonicalize_name(r.name) == p.name for r in other.chosen.requires)
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


def _stale_note(packages: Sequence[PackagePlan], today: datetime.date) -> list[str]:
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


def _constraint_spec(user_constraints: Mapping[str, list[ReqEntry]], name: str) -> SpecifierSet:
    spec = SpecifierSet()
    for c in user_constraints.get(name, []):
        if c.requirement is not None:
            spec &= c.requirement.specifier
    return spec


def _couplings_hold(
    f: Flavour,
    assigned: Mapping[NormalizedName, Flavour],
    env: Mapping[str, str],
) -> str | None:
    for r in f.requires:
        target = canonicalize_name(r.name)
        other = assigned.get(target)
        if other is None or not _marker_true(r.marker, env):
            continue
        why = _meets(f, r, other)
        if why is not None:
            return f"{why}; the plan has {target} {other.version}"
    return None


def _consistent(
    slot: _Slot, f: Flavour, assigned: Mapping[NormalizedName, Flavour], env: Mapping[str, str]
) -> str | None:
    why = _couplings_hold(f, assigned, env)
    if why:
        return why
    probe = {slot.name: f}
    for other in assigned.values():
        why = _couplings_hold(other, probe, env)
        if why:
            return f"{other.name} {other.version} {why.replace('; the plan has', '; this is')}"
    return None


def _groups(slots: Mapping[str, _Slot]) -> list[list[str]]:
    """Connected groups of coupled packages, each ordered providers first."""
    edges: dict[str, set[str]] = {n: set() for n in slots}
    deps: dict[str, set[str]] = {n: set() for n in slots}
    for n, s in slots.items():
        for f, _ in s.candidates:
            for r in f.requires:
                t = canonicalize_name(r.name)
                if t in slots and t != n:
                    edges[n].add(t)
                    edges[t].add(n)
                    deps[n].add(t)
    seen: set[str] = set()
    groups = []
    for n in slots:
        if n in seen:
            continue
        stack, group = [n], []
        seen.add(n)
        while stack:
            x = stack.pop()
            group.append(x)
            for y in sorted(edges[x]):
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        # Providers first: a package before those whose flavours require it.
        ordered: list[str] = []
        remaining = [x for x in slots if x in set(group)]
        while remaining:
            ready = [x for x in remaining if not (deps[x] & set(remaining)) - {x}]
            pick = ready[0] if ready else remaining[0]
            ordered.append(pick)
            remaining.remove(pick)
        groups.append(ordered)
    return groups


def _prune(slots: Mapping[str, _Slot], m: _Machine) -> None:
    """Drop candidates coupled with a package that has no fitting build (to a fixed point)."""
    changed = True
    while changed:
        changed = False
        for slot in slots.values():
            keep = []
            for f, rank in slot.candidates:
                dead = next(
                    (
                        r
                        for r in f.requires
                        if canonicalize_name(r.name) in slots
                        and _marker_true(r.marker, m.env)
                        and not any(
                            _meets(f, r, g) is None
                            for g, _ in slots[canonicalize_name(r.name)].candidates
                        )
                    ),
                    None,
                )
                if dead is None:
                    keep.append((f, rank))
                else:
                    changed = True
                    slot.rejected.append(
                        (
                            f,
                            [
                                Failure(
                                    rule="coupling",
                                    reason=f"needs {dead}; "
                                    + _why_dead(f, dead, slots[canonicalize_name(dead.name)]),
                                )
                            ],
                        )
                    )
            slot.candidates = keep


def _why_dead(f: Flavour, r: Requirement, other: _Slot) -> str:
    """Why no candidate of ``other`` meets ``r``: a page template's fact the builds lack
    (their local label, C++ ABI), else none exists or none fits."""
    pinned = _pinned_out(f, r, other)
    if pinned:
        return pinned
    for g, _ in other.candidates:
        if _version_ok(r.specifier, g):  # the version holds: a fact the page needs is missing
            why = _meets(f, r, g)
            if why is not None:
                return why
    return _no_such(r, other)


def _search(slots: Mapping[str, _Slot], m: _Machine) -> None:
    """Rule 6: choose one candidate per slot so that every coupling holds."""
    _prune(slots, m)
    for group in _groups(slots):
        live = [n for n in group if slots[n].candidates]
        budget = [_SEARCH_BUDGET]
        solution = _dfs(live, 0, {}, slots, m.env, budget)
        if solution is not None:
            for key, f in solution.items():
                slots[key].chosen = f
            continue
        # No full solution: choose greedily, best first, and say what clashed.
        assigned: dict[NormalizedName, Flavour] = {}
        for n in live:
            slot = slots[n]
            for i, (f, _) in enumerate(slot.candidates):
                why = _consistent(slot, f, assigned, m.env)
                if why is None:
                    slot.chosen = f
                    assigned[slot.name] = f
                    break
                slot.coupling_rejects[i] = why


def _dfs(  # noqa: PLR0917 - a recursive helper
    names: list[str],
    i: int,
    assigned: dict[NormalizedName, Flavour],
    slots: Mapping[str, _Slot],
    env: Mapping[str, str],
    budget: list[int],
) -> dict[NormalizedName, Flavour] | None:
    if i == len(names):
        return dict(assigned)
    slot = slots[names[i]]
    for f, _ in slot.candidates:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if _consistent(slot, f, assigned, env) is None:
            assigned[slot.name] = f
            found = _dfs(names, i + 1, assigned, slots, env, budget)
            del assigned[slot.name]
            if found is not None:
                return found
    return None


def _original_line(e: ReqEntry) -> str:
    head = f"-e {e.text}" if e.editable else e.text
    return " ".join([head, *(f"--hash={h}" for h in e.hashes)])


def _candidate(f: Flavour) -> str:
    return f.describe()


# How a coupling failure says that the user's own requirement on the other package
# excludes the build it needs (read back by the head line and the hint).
_RULES_OUT = "rules out"


def _ruled_out(failures: Iterable[Failure]) -> str | None:
    """The first coupling failure's "your requirement X rules out Y" clause, if any."""
    for x in failures:
        if x.rule == "coupling" and f" {_RULES_OUT} " in x.reason:
            return x.reason.rpartition("; ")[2]  # "needs {r}; ..." and r's marker has "; "
    return None


def _pinned_out(f: Flavour, r: Requirement, other: _Slot) -> str | None:
    """The user's own requirement on ``other`` rules out a build of it that fits this
    machine and meets ``r`` (``f``'s coupling): say so, as the one thing to change."""
    for g, fails in other.rejected:
        if fails and all(x.rule == "specifier" for x in fails) and _meets(f, r, g) is None:
            return (
                f"your requirement {other.name}{other.spec} {_RULES_OUT} {other.name} "
                f"{g.version}, which fits this machine"
            )
    return None


def _no_such(r: Requirement, other: _Slot) -> str:
    """Why no build of ``other`` meets ``r``: none exists, or none fits this machine."""
    if any(_version_ok(r.specifier, g) for g in other.manifest.flavours):
        return f"no such build of {other.name} fits this machine"
    return f"{other.name}'s manifest has no such build"


def _coupling_failures(f: Flavour, slots: Mapping[str, _Slot], m: _Machine) -> list[Failure]:
    """Rule 6 for one flavour against the plan as chosen: each ``requires`` that fails."""
    out = []
    for r in f.requires:
        other = slots.get(canonicalize_name(r.name))
        if other is None or not _marker_true(r.marker, m.env):
            continue
        if other.chosen is not None and _meets(f, r, other.chosen) is None:
            continue
        if not any(_meets(f, r, g) is None for g, _ in other.candidates):
            why = _why_dead(f, r, other)
        elif other.chosen is not None:
            why = f"the plan has {other.name} {other.chosen.version}"
            detail = _meets(f, r, other.chosen)
            if detail and not detail.startswith("needs "):
                why = f"{detail}; {why}"
        else:
            why = f"no build of {other.name} is consistent with the rest of the plan"
        out.append(Failure(rule="coupling", reason=f"needs {r}; {why}"))
    return out


def _rejections(slot: _Slot, slots: Mapping[str, _Slot], m: _Machine) -> list[Rejection]:
    """Every flavour not chosen, with every rule it fails (couplings against the plan)."""
    out = []
    for f, fails in slot.rejected:
        more = [] if any(x.rule == "coupling" for x in fails) else _coupling_failures(f, slots, m)
        out.append(Rejection(candidate=_candidate(f), failures=(*fails, *more), where=f.where))
    chosen = slot.chosen
    for i, (f, _) in enumerate(slot.candidates):
        if f is chosen:
            continue
        if i in slot.coupling_rejects:
            fails = [Failure(rule="coupling", reason=slot.coupling_rejects[i])]
        else:
            fails = _coupling_failures(f, slots, m)
        if not fails:
            fails = [
                Failure(rule="ranked", reason="fits, ranked below the chosen build")
                if chosen is not None
                else Failure(rule="coupling", reason="no consistent choice of coupled packages")
            ]
        out.append(Rejection(candidate=_candidate(f), failures=tuple(fails), where=f.where))
    return out


def _slot_plan(slot: _Slot, slots: Mapping[str, _Slot], m: _Machine) -> PackagePlan:
    e = slot.entry
    more = tuple(_original_line(o) for o in slot.others)
    asked = " and ".join(x.text for x in (e, *slot.others)) if e else ""
    rejected = _rejections(slot, slots, m)
    chosen = slot.chosen
    base: dict[str, Any] = {
        "name": slot.name,
        "source": slot.manifest.source,
        "rejected": tuple(rejected),
        "requested": e.text if e else "",
        "where": e.where if e else "",
        "implied_by": tuple(slot.implied_by),
    }
    if chosen is None and slot.manifest.buildable and not slot.manifest.flavours:
        return PackagePlan(
            action="build",
            cause="no-fit",
            reason=f"{slot.manifest.display_name} publishes no wheels (its manifest has only "
            "[build]): the installer builds it from source",
            build_needs=slot.manifest.build_needs,
            line=_original_line(e) if e else None,
            more_lines=more,
            **base,
        )
    if (
        chosen is None
        and e is not None
        and not any(_version_ok(slot.spec, f) for f in slot.manifest.flavours)
    ):
        # The manifest does not describe the version asked for (torch==2.0.0 against a
        # 2.13 manifest): nothing is known about its builds, so it is not refused.
        versions = ", ".join(sorted({str(f.version.public) for f in slot.manifest.flavours}))
        return PackagePlan(
            action="pass",
            cause="unlisted",
            line=_original_line(e),
            more_lines=more,
            reason=(
                f"no build in its manifest ({slot.manifest.source}) matches {asked}; the manifest "
                f"knows {versions or 'no versions'}: left to the installer unchanged"
            ),
            **base,
        )
    if chosen is None:
        cause: Cause = "conflict" if slot.candidates else "no-fit"
        if slot.manifest.buildable:
            return PackagePlan(
                action="build",
                cause=cause,
                reason=f"{_no_fit(slot, m)}; the installer builds it from source",
                build_needs=slot.manifest.build_needs,
                line=_original_line(e) if e else None,
                more_lines=more,
                alternatives=tuple(_alternatives(slot)),
                **base,
            )
        return PackagePlan(
            action="error",
            cause=cause,
            reason=_no_fit(slot, m),
            alternatives=tuple(_alternatives(slot)),
            **base,
        )
    why = _why(chosen, slot, m)
    extras = e.requirement.extras if e and e.requirement else set()
    marker = e.marker if e else None
    if isinstance(chosen, IndexFlavour) and chosen.passthrough:
        return PackagePlan(
            action="pass",
            version=str(chosen.version),
            flavour=chosen,
            reason=f"the plain build from your index fits: {why}",
            line=_original_line(e) if e else None,
            more_lines=more,
            **base,
        )
    if isinstance(chosen, WheelFlavour):
        line = format_requirement(
            slot.manifest.display_name,
            url=chosen.url,
            sha256=chosen.sha256,
            extras=extras,
            marker=marker,
        )
        constraint = format_requirement(slot.name, url=chosen.url, sha256=chosen.sha256)
        return PackagePlan(
            action="rewrite",
            version=str(chosen.version),
            url=chosen.url,
            sha256=chosen.sha256,
            flavour=chosen,
            reason=why,
            line=line if e else None,
            constraint=constraint,
            **base,
        )
    page = chosen.url
    if chosen.template is not None:
        page = _fill(chosen, slots, m)
        why = f"{why}; page computed from {chosen.template}"
    name = slot.manifest.display_name
    if chosen.install is not None:
        inst = Requirement(chosen.install)
        name, extras = inst.name, {*extras, *inst.extras}
        other = canonicalize_name(inst.name) != slot.name
        kind = "another distribution" if other else "the package with extras"
        why = f"{why}; installs {chosen.install} ({kind})"
    if chosen.versions is not None:
        # Every release the page serves from the floor on: the user's specifier and the
        # pattern both hold, pip takes the newest.
        line = format_requirement(
            name,
            specifier=str(slot.spec & chosen.versions),
            extras=extras,
            marker=marker,
        )
        constraint = format_requirement(name, specifier=str(chosen.versions))
    else:
        line = format_requirement(name, version=str(chosen.version), extras=extras, marker=marker)
        constraint = f"{canonicalize_name(name)}=={chosen.version}"
    return PackagePlan(
        action="rewrite",
        version=str(chosen.version),
        url=page,
        flavour=chosen,
        reason=why,
        line=line if e else None,
        # Another distribution cannot travel in a constraints file: only the rewritten
        # requirement line installs it (and ``enable`` says it cannot apply it).
        constraint=None if chosen.install is not None else constraint,
        find_links=page,
        installs=chosen.install,
        computed=chosen.template is not None,
        versions=str(chosen.versions) if chosen.versions is not None else None,
        **base,
    )


def _fill(f: IndexFlavour, slots: Mapping[str, _Slot], m: _Machine) -> str | None:
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
        runtime = _runtime(other)
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


def _why(f: Flavour, slot: _Slot, m: _Machine) -> str:
    p = m.profile
    parts = []
    if isinstance(f, WheelFlavour):
        best = min((t for t in f.tags if str(t) in m.tag_rank), key=lambda t: m.tag_rank[str(t)])
        parts.append(f"tag {best}")
    elif f.platforms:
        parts.append(f"{OS_WORDS.get(p.os, p.os)} {p.arch}, {p.python_words}")
    if f.cuda is not None:
        parts.append(f"driver CUDA {p.nvidia.cuda_version if p.nvidia else '?'} meets {f.cuda}")
    if f.rocm is not None:
        parts.append(f"ROCm {m.rocm} meets {f.rocm}")
    if f.gpu and p.gpu_ccs:
        parts.append(f"kernels cover {', '.join(_gpu_words(cc) for cc in p.gpu_ccs)}")
    if not _has_accelerator(f) and p.nvidia is None and p.rocm is None:
        parts.append("no GPU needed")
    if f.requires:
        parts.append("couples with " + ", ".join(str(r) for r in f.requires))
    others = len(slot.candidates) - 1
    if others > 0:
        parts.append(f"best of {others + 1} that fit")
    return "; ".join(parts) or "fits"


def _exists_summary(man: Manifest) -> str:
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
    return f"{man.display_name} {', '.join(versions)} {verb} for: {'; '.join(parts)}"


def _no_fit(slot: _Slot, m: _Machine) -> str:
    name = slot.manifest.display_name
    head = f"no build of {name} fits this machine"
    if slot.candidates:
        head = f"no build of {name} is consistent with the rest of the plan"
    elif any(_ruled_out(fails) for _, fails in slot.rejected):
        head = f"no build of {name} goes with your requirements"
    elif (
        slot.rejected
        and all(any(x.rule == "tags" for x in fails) for _, fails in slot.rejected)
        and all(isinstance(f, WheelFlavour) or f.platforms for f in slot.manifest.flavours)
        and not any(
            x == "any" or _os_arch_of(x)[0] == m.profile.os
            for f in slot.manifest.flavours
            for x in _flavour_platforms(f)
        )
    ):
        head = f"no {OS_WORDS.get(m.profile.os, m.profile.os)} builds of {name} exist"
    return f"{head}; {_exists_summary(slot.manifest)}"


def _alternatives(slot: _Slot) -> list[Alternative]:
    """Builds the user may pin on purpose: one that runs without the GPU, or one
    outside their specifier. (Changes to the machine are hints: :func:`_with_hints`.)"""
    out = []
    name = slot.manifest.display_name
    for f, fails in slot.rejected:
        rules = {x.rule for x in fails}
        if isinstance(f, IndexFlavour) and f.versions is not None:
            continue  # a pattern: no pin tells it apart
        if rules == {"accelerator"}:
            out.append(Alternative(pin=f"{name}=={f.version}", why="runs without the GPU"))
        elif rules == {"specifier"}:
            out.append(Alternative(pin=f"{name}=={f.version}", why="outside your specifier"))
    return list(dict.fromkeys(out))[:3]


def _assemble(
    profile: HostProfile,
    packages: list[PackagePlan],
    reqs: ReqFile,
    user_constraints: Mapping[str, list[ReqEntry]],
    notes: list[str],
) -> Plan:
    option_lines: list[str] = []
    for o in reqs.options:
        if o.constraint:
            continue
        option_lines.append(o.text)
        if o.option == "--extra-index-url":
            notes.append(
                f"{o.where}: --extra-index-url {o.value} lets pip take any package "
                "from that index; resolver-hook uses per-package find-links instead"
            )
    lines = list(dict.fromkeys(line for p in packages for line in (p.line, *p.more_lines) if line))
    constraints = [p.constraint for p in packages if p.constraint]
    pinned = {p.name: p for p in packages if p.constraint}
    for name, entries in user_constraints.items():
        for c in entries:
            ours = pinned.get(NormalizedName(name))
            if ours is None:
                constraints.append(_original_line(c))
            elif (
                c.requirement is not None
                and ours.version
                and not c.requirement.specifier.contains(Version(ours.version), prereleases=True)
            ):
                notes.append(
                    f"{c.where}: your constraint {c.text} conflicts with "
                    f"{name} {ours.version} chosen for this machine"
                )
    find_links = list(dict.fromkeys(p.find_links for p in packages if p.find_links))
    if any(e.hashes for e in reqs.requirements):
        notes.append(
            "your requirements use --hash: pip will then require a hash for every "
            "package, and flavours without a sha256 cannot be installed that way"
        )
    if any(
        p.action != "pass"
        and p.url is not None
        and p.source
        and p.source.startswith("built-in")
        and not (isinstance(p.flavour, WheelFlavour) and p.flavour.sha256)
        for p in packages
    ):
        notes.append(
            "built-in manifests carry no sha256 yet: their wheels are not verified by hash"
        )
    unverified = [
        p.name
        for p in packages
        if isinstance(p.flavour, WheelFlavour)
        and p.sha256 is None
        and not (p.source or "").startswith("built-in")
    ]
    if unverified:  # one note for all (built-in ones: the note above)
        notes.append(
            f"{', '.join(unverified)}: no sha256 in {'its' if len(unverified) == 1 else 'their'} "
            "manifest for the wheel URL: not verified by hash"
        )
    return Plan(
        profile=profile,
        packages=tuple(packages),
        requirements=tuple(option_lines + url_lines_first(lines)),
        constraints=tuple(dict.fromkeys(constraints)),
        find_links=tuple(find_links),
        notes=tuple(dict.fromkeys(notes)),
    )


# --- hints: the first single change of the machine that gives a fit ---------------------

# Windows on Arm runs x64 programs by emulation; uv's interpreter request names an x64
# CPython (docs/facts.md sections 3 and 5).
_WIN_X64_VENV = (
    "Windows on Arm runs an x64 Python by emulation{gpu}: make the venv with "
    "'uv venv --python cpython-{py}-windows-x86_64-none' or with the x64 installer from "
    "python.org"
)


def apply_change(profile: HostProfile, change: Change) -> HostProfile:
    """The profile with the facts of ``change`` changed (tags recomputed when the OS,
    arch, glibc or Python change). Pure."""
    from resolver_hook.host.detect import DEFAULT_GLIBC

    p = profile
    os_name, arch = change.os or p.os, change.arch or p.arch
    label = change.python or p.python_label  # "3.13t": free-threaded
    python, free_threaded = label.removesuffix("t"), label.endswith("t")
    libc, libc_version = p.libc, p.libc_version
    if os_name != p.os:
        libc, libc_version = ("glibc", DEFAULT_GLIBC) if os_name == "linux" else (None, None)
    if change.glibc:
        libc, libc_version = "glibc", change.glibc
    tags = p.tags
    if (os_name, arch, label, libc_version) != (p.os, p.arch, p.python_label, p.libc_version):
        major, _, minor = python.partition(".")
        tags = compute_tags(
            os_name,
            arch,
            (int(major), int(minor)),
            libc=libc,
            libc_version=libc_version,
            free_threaded=free_threaded,
        )
    nvidia, rocm = p.nvidia, p.rocm
    if change.rocm:
        nvidia, rocm = None, RocmInfo(version=change.rocm)
    if change.sm:
        major, _, minor = change.sm.partition(".")
        nvidia = NvidiaInfo(
            driver_version=None if change.cuda else (nvidia.driver_version if nvidia else None),
            cuda_version=change.cuda or (nvidia.cuda_version if nvidia else None),
            gpus=(NvidiaGpu.synthetic(0, (int(major), int(minor))),),
        )
    elif change.cuda:
        nvidia = NvidiaInfo(cuda_version=change.cuda, gpus=nvidia.gpus if nvidia else ())
    moved = (os_name, arch) != (p.os, p.arch)
    return p.replace(
        os=os_name,
        arch=arch,
        python=python,
        free_threaded=free_threaded,
        tags=tags,
        libc=libc,
        libc_version=libc_version,
        nvidia=nvidia,
        rocm=rocm,
        mps=(os_name == "macos" and arch == "aarch64") if moved else p.mps,
        l4t=None if moved else p.l4t,
        origin=f"{p.origin}, with {change.text}",
    )


def _changes(profile: HostProfile, manifests: Sequence[Manifest]) -> list[list[Change]]:
    """Single changes worth trying, by kind in the order of preference: a newer driver,
    another Python, another OS/arch (or glibc), a GPU of another family, ROCm."""
    flavours = [f for man in manifests for f in man.flavours]
    kinds = [
        _driver_changes(profile, flavours),
        _python_changes(profile, flavours),
        _place_changes(profile, flavours),
        _gpu_changes(profile, flavours),
        _rocm_changes(profile, flavours),
    ]
    return [kind[:MAX_HINT_CHANGES] for kind in kinds]  # nearest first: limits.py


def _driver_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Each CUDA floor above this driver's, lowest first (none without a driver)."""
    if p.nvidia is None:
        return []
    have = Version(p.nvidia.cuda_version) if p.nvidia.cuda_version else None
    out = []
    for fl in sorted({fl for f in flavours if (fl := _floor(f.cuda)) is not None}):
        if have is not None and fl <= have:
            continue
        cuda = f"{fl.major}.{fl.minor}"
        driver = min_driver_for_cuda((fl.major, fl.minor), p.os)
        text = (
            f"a driver of {driver} or newer (CUDA {cuda})"
            if driver
            else f"a driver with CUDA {cuda} or newer"
        )
        out.append(Change(kind="driver", text=text, cuda=cuda))
    return out


def _python_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Every other Python a build is for: the nearest first, the newer of two as near."""
    here = p.python_tuple

    def key(v: str) -> tuple[int, ...]:
        major, minor = version_numbers(v)[:2]
        return (abs(minor - here[1]) if major == here[0] else 99, -major, -minor)

    pys = {v for f in flavours for v in f.python_versions if _machine_sized(v)} - {p.python}
    return [Change(kind="python", text=f"Python {v}", python=v) for v in sorted(pys, key=key)]


def _machine_sized(version: str) -> bool:
    """Whether every number of ``version`` fits a real machine (limits.py): a manifest's
    ``manylinux_2_99999999`` or ``3.999999`` is never tried as a machine (its wheel tags
    would be counted out one by one)."""
    return all(len(n) <= MAX_MACHINE_VERSION_DIGITS for n in re.findall(r"\d+", version))


def _place_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Another OS or CPU arch (the same OS first), then a newer glibc."""
    places: dict[tuple[str, str], None] = {}
    glibcs: set[tuple[int, int]] = set()
    for f in flavours:
        for tag in _flavour_platforms(f):
            os_name, arch = _os_arch_of(tag)
            if not arch or (os_name, arch) == (p.os, p.arch):
                floor = _glibc_of(tag)
                sized = floor is not None and _machine_sized(f"{floor[0]}.{floor[1]}")
                if floor and sized and p.libc == "glibc" and p.libc_version:
                    glibcs.add(floor)
            elif not (os_name == "macos" and p.nvidia is not None):  # no CUDA on macOS
                places[(os_name, arch)] = None
    out = []
    if p.jetson:
        places = {}  # a Jetson is its own machine: no other OS or CPU for it
    for os_name, arch in sorted(places, key=lambda oa: (oa[0] != p.os, oa)):
        if (p.os, p.arch, os_name, arch) == ("windows", "aarch64", "windows", "x86_64"):
            gpu = ", with the GPU driven natively by the NVIDIA driver" if p.gpus else ""
            out.append(
                Change(
                    kind="platform",
                    text="an x86_64 (x64) Python interpreter",
                    how=_WIN_X64_VENV.format(py=p.python, gpu=gpu),
                    os=os_name,
                    arch=arch,
                )
            )
            continue
        out.append(Change(kind="platform", text=_place_words(os_name, arch), os=os_name, arch=arch))
    have = version_numbers(p.libc_version or "0.0")[:2]
    for floor in sorted(glibcs):
        if floor > have:
            v = f"{floor[0]}.{floor[1]}"
            out.append(Change(kind="glibc", text=f"glibc {v} or newer", glibc=v))
    return out


def _gpu_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """One GPU of each other known family, newest first; with a driver for the newest
    CUDA the builds need when the machine has none."""
    if p.os == "macos" or p.jetson or not any(f.gpu or f.cuda is not None for f in flavours):
        return []  # a Jetson's GPU is built in: no other family for it
    newest = max((fl for f in flavours if (fl := _floor(f.cuda)) is not None), default=None)
    cuda = None
    if (p.nvidia is None or not p.nvidia.cuda_version) and newest is not None:
        cuda = f"{newest.major}.{newest.minor}"
    return [
        Change(kind="gpu", text=_gpu_words(cc), sm=f"{cc[0]}.{cc[1]}", cuda=cuda)
        for cc in sorted(GPU_NAMES, reverse=True)
        # A Jetson is a whole machine, not a GPU one could fit: never a hint.
        if cc not in p.gpu_ccs and cc not in JETSON_ONLY_CCS
    ]


def _rocm_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """An AMD GPU with ROCm instead (Linux only)."""
    have = Version(p.rocm.version) if p.rocm and p.rocm.version else None
    floors = sorted({fl for f in flavours if (fl := _floor(f.rocm)) is not None})
    return [
        Change(kind="rocm", text=f"an AMD GPU with ROCm {v} or newer", rocm=str(v))
        for v in floors
        if p.os == "linux" and (have is None or v > have)
    ]


def _with_hints(plan: Plan, reqs: ReqFile, manifests: Mapping[str, Manifest]) -> Plan:
    """Each package with no fit gets the first single change of the machine that gives
    it one, found by re-planning the whole plan with that change; or a plain sentence
    saying that no single change does.

    The changes come in two passes, each in the order of preference of :func:`_changes`:
    first those the refused packages' own builds suggest; then, for a package still
    without a fix, those the builds of the packages it couples with suggest."""
    by_name = _by_canonical_name(manifests)
    refused = [p for p in plan.errors if p.name in by_name]
    todo = [p.name for p in refused[:MAX_HINTED_PACKAGES]]
    skipped = {p.name for p in refused[MAX_HINTED_PACKAGES:]}
    roots = {e.name for e in reqs.requirements if e.name} | set(todo)
    edges = _coupling_edges(by_name, roots)
    hints = _HintSearch(plan, reqs=reqs, by_name=by_name, todo=todo, edges=edges)
    own = _changes(plan.profile, [by_name[n] for n in todo])
    hints.search(own)
    if any(n not in hints.found for n in todo):
        # A package whose own builds suggest no change that helps: torch-scatter fits
        # any machine, and is refused when no torch build it couples with fits here.
        # Then the changes the coupled packages' builds suggest (a newer driver for
        # torch's CUDA builds), those not tried yet.
        tried = {c for kind in own for c in kind}
        coupled = sorted(n for n in _coupled_names(edges, todo) if n in by_name and n not in todo)
        more = _changes(plan.profile, [by_name[n] for n in coupled])
        hints.search([[c for c in kind if c not in tried] for kind in more])
    packages = []
    for p in plan.packages:
        if p.name in hints.found:
            fix = hints.found[p.name]
            packages.append(dataclasses.replace(p, fix=fix, hint=_fix_words(fix)))
        elif p.name in todo:
            hint = _none_helps(p, by_name[p.name], plan.profile)
            packages.append(dataclasses.replace(p, hint=hint))
        elif p.name in skipped:
            hint = (
                f"no hint computed: {len(refused)} packages have no fit in this plan and "
                f"the first {MAX_HINTED_PACKAGES} get one; plan fewer at a time"
            )
            packages.append(dataclasses.replace(p, hint=hint))
        else:
            packages.append(p)
    return dataclasses.replace(plan, packages=tuple(packages))


class _HintSearch:
    """The single changes tried for a plan's refused packages, and the fixes found."""

    def __init__(
        self,
        plan: Plan,
        *,
        reqs: ReqFile,
        by_name: Mapping[str, Manifest],
        todo: Sequence[str],
        edges: dict[str, set[str]],
    ) -> None:
        self.plan, self.reqs, self.by_name = plan, reqs, by_name
        self.todo, self.edges = todo, edges
        self.found: dict[str, Change] = {}
        self.parts: dict[frozenset[str], ReqFile] = {}
        # What the plan gets now, to name what a change would move.
        self.kept: dict[str, str] = {
            p.name: p.version for p in plan.packages if p.action != "error" and p.version
        }

    def search(self, kinds: Sequence[Sequence[Change]]) -> None:
        """Try each change, kind by kind in the order of preference; the first that
        gives a package a fit is its fix (for a GPU, every family that fits)."""
        for kind in kinds:
            fitting: dict[str, list[tuple[Change, Flavour, tuple[str, ...]]]] = {}
            for change in kind:
                done = self.found if change.kind == "gpu" else {**self.found, **fitting}
                left = [n for n in self.todo if n not in done]
                if not left:
                    break
                self._try(change, left, fitting)
            for key, options in fitting.items():
                self.found[key] = self._fix(options)

    def _try(
        self,
        change: Change,
        left: Sequence[str],
        fitting: dict[str, list[tuple[Change, Flavour, tuple[str, ...]]]],
    ) -> None:
        changed = apply_change(self.plan.profile, change)
        m = _Machine(changed)
        # Re-plan only for packages one of whose builds then passes rules 1-5, and only
        # the part of the plan coupled with them: the search solves each group of
        # coupled packages apart, so that part answers as the whole plan would.
        hopeful = frozenset(n for n in left if _could_fit(self.by_name[n], m))
        if not hopeful:
            return
        if hopeful not in self.parts:
            self.parts[hopeful] = _coupled_part(self.reqs, self.edges, hopeful)
        slots = _solve(self.parts[hopeful], self.by_name, changed, m).slots
        for name in hopeful:
            q = slots[name].chosen if name in slots else None
            if q is not None:
                also = _moved(name, slots, self.edges, self.kept)
                fitting.setdefault(name, []).append((change, q, also))

    def _fix(self, options: Sequence[tuple[Change, Flavour, tuple[str, ...]]]) -> Change:
        change, q, also = options[0]
        text = change.text
        if change.kind == "gpu":  # every family that fits, named once
            profile = self.plan.profile
            text = _gpu_families([c.sm or "" for c, _, _ in options], profile)
            if change.cuda:
                major, _, minor = change.cuda.partition(".")
                driver = min_driver_for_cuda((int(major), int(minor or 0)), profile.os)
                text += f", with a driver of {driver} or newer," if driver else ""
        return dataclasses.replace(change, text=text, gets=f"{q.name} {q.version}", also=also)


def _moved(
    name: str, slots: Mapping[str, _Slot], edges: Mapping[str, set[str]], kept: Mapping[str, str]
) -> tuple[str, ...]:
    """The packages coupled with ``name`` that the plan gets now and that the change
    would move to another build, with that build: ("torch 2.12.1+cu130",)."""
    return tuple(
        f"{c.name} {c.version}"
        for n in sorted(_coupled_names(edges, [name]) - {name})
        if n in kept
        and n in slots
        and (c := slots[n].chosen) is not None
        and str(c.version) != kept[n]
    )


def _gpu_families(sms: Sequence[str], profile: HostProfile) -> str:
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
        but = f"; not {' or '.join(_gpu_words(cc) for cc in missing)}" if missing else ""
        return (
            f"{article} of compute capability {lowest[0]}.{lowest[1]} or newer "
            f"({GPU_NAMES[lowest]} and later{but})"
        )
    return f"{article}: " + " or ".join(_gpu_words(cc) for cc in reversed(fit))


def _place_words(os_name: str, arch: str) -> str:
    """``Linux aarch64``, ``macOS arm64``, ``Windows arm64`` (each OS's own word)."""
    if os_name in ("macos", "windows") and arch == "aarch64":
        arch = "arm64"
    return f"{OS_WORDS.get(os_name, os_name)} {arch}"


def _could_fit(manifest: Manifest, m: _Machine) -> bool:
    """Whether a build of the package passes the machine's rules (1-4) on ``m``."""
    return any(
        all(x.rule in ("specifier", "accelerator") for x in _failures(f, m, _ANY, manifest)[0])
        for f in manifest.flavours
    )


_ANY = SpecifierSet()


def _coupling_edges(by_name: Mapping[str, Manifest], roots: Iterable[str]) -> dict[str, set[str]]:
    """Couplings, both ways, among the packages reachable from ``roots`` (the plan's
    requirements): only those can join a requirement's part of the plan, and only their
    manifests are read."""
    edges: dict[str, set[str]] = {}
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen or n not in by_name:
            continue
        seen.add(n)
        for f in by_name[n].flavours:
            for r in f.requires:
                t = canonicalize_name(r.name)
                edges.setdefault(n, set()).add(t)
                edges.setdefault(t, set()).add(n)
                stack.append(t)
    return edges


def _coupled_names(edges: Mapping[str, set[str]], names: Iterable[str]) -> set[str]:
    """``names`` and every package coupled with them, directly or through others."""
    seen = set(names)
    stack = list(seen)
    while stack:
        for y in edges.get(stack.pop(), ()):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return seen


def _coupled_part(reqs: ReqFile, edges: Mapping[str, set[str]], names: frozenset[str]) -> ReqFile:
    """The requirements of ``names`` and of every package coupled with them (options
    and constraints kept)."""
    seen = _coupled_names(edges, names)
    keep = tuple(
        e for e in reqs.entries if e.kind == "option" or e.constraint or (e.name or e.text) in seen
    )
    return ReqFile(entries=keep, files=reqs.files)


def _fix_words(fix: Change) -> str:
    also = f" (with {', '.join(fix.also)})" if fix.also else ""
    return f"{fix.text} gets {fix.gets}{also}" + (f"; {fix.how}" if fix.how else "")


def _none_helps(p: PackagePlan, manifest: Manifest, profile: HostProfile) -> str:
    """No single change helps: say what no build exists for (rules every build fails)."""
    name = manifest.display_name
    for r in p.rejected:
        clause = _ruled_out(r.failures)
        if clause:
            return f"{clause}, and {name} needs it: loosen or drop that requirement"
    common: set[str] = set(p.rejected[0].rules) if p.rejected else set()
    for r in p.rejected[1:]:
        common &= set(r.rules)
    phrases = []
    if "tags" in common:
        same = any(
            _os_arch_of(x) == (profile.os, profile.arch)
            for f in manifest.flavours
            for x in _flavour_platforms(f)
        )
        where = _place_words(profile.os, profile.arch)
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


def make_plan(
    requirements: ReqFile | Iterable[str | Requirement | ReqEntry],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    today: datetime.date | None = None,
) -> Plan:
    """The same as :func:`resolve`; accepts a parsed ReqFile, ReqEntry values,
    ``packaging`` Requirements or requirement-file lines (no ``-r``: read files with
    :func:`resolver_hook.reqfile.read_requirements` first)."""
    return resolve(requirements, manifests, profile, today=today)
