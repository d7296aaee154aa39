"""The plan's value objects and the marker environment: what the rest of the package
and every other module import (:class:`Plan`, :class:`PackagePlan`,
:func:`marker_environment`).

Owns: the outcome types (:class:`Failure`, :class:`RuleOutcome`, :class:`Rejection`,
:class:`Alternative`, :class:`Change`, :class:`PackagePlan`, :class:`Plan`), the rule ids,
what a coupling failure is about (:class:`Coupling`, :class:`Unmet`) and the other kinds
the words are chosen by (:data:`NoFit`, :data:`JetsonMiss`), the marker environment of a
profile, and the few facts of a flavour that the rules, the
words and the hints all read (its platforms, the glibc a tag needs, its CUDA runtime;
the release a pin names).

May import: the host profile, the manifest schema, ``portable/`` and ``ground.plain``; nothing
else of ``resolve/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, get_args

from packaging.markers import Marker, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, WheelFlavour
from resolver_hook.portable.platforms import (
    PLATFORM_MACHINE,
    PLATFORM_SYSTEM,
    SYS_PLATFORM,
    parse_platform,
)

__all__ = [
    "RANK_CRITERIA",
    "RULES",
    "STALE_DAYS",
    "Action",
    "Alternative",
    "Cause",
    "Change",
    "ChangeKind",
    "Coupling",
    "CouplingCause",
    "Failure",
    "JetsonMiss",
    "NoFit",
    "PackagePlan",
    "Plan",
    "RankCriterion",
    "Rejection",
    "Rejections",
    "Rule",
    "RuleOutcome",
    "Status",
    "Unmet",
    "UnmetKind",
    "coupled_to",
    "coupling_by",
    "coupling_text",
    "exact_pins",
    "flavour_platforms",
    "glibc_of",
    "has_accelerator",
    "marker_environment",
    "marker_true",
    "os_arch_of",
    "pinned_release",
    "plan_target",
    "public_release",
    "runtime_of",
    "spec_floor",
]

STALE_DAYS = 180  # a chosen entry checked longer ago than this gets a note


# --- the plan ---------------------------------------------------------------------

#: What the plan does with a package.
Action = Literal["pass", "rewrite", "build", "error"]
#: Why: ``fit`` (a flavour fits), ``marker`` (the requirement's marker is false here),
#: ``no-manifest``, ``as-written`` (a URL or path), ``unlisted`` (a version the
#: manifest does not list), ``no-fit`` (nothing fits: error or build), ``conflict``
#: (builds fit this machine, but none goes with the builds chosen for the others),
#: ``twins`` (another requirement installs the same import package: onnxruntime-gpu
#: beside onnxruntime, docs/facts.md section 6.16).
Cause = Literal[
    "fit",
    "marker",
    "no-manifest",
    "as-written",
    "unlisted",
    "unjudged",
    "no-fit",
    "conflict",
    "twins",
]
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
#: What decided between two builds that fit, in the order the ranking reads them (the
#: installers' order: pip and uv take the newest version that fits, then the most
#: specific tag): a build an entry's rule judged before a release no rule covers, the
#: manifest's preference among distributions (faiss-gpu before the community
#: faiss-gpu-cu12), the public version, the CUDA runtime the driver runs best, the
#: manifest's preference among builds of one version, the tag, the PEP 825 variant,
#: then the rest of the version and the build's name (a stable order).
RankCriterion = Literal[
    "judged", "distribution", "version", "cuda", "preference", "tags", "variant", "build"
]
RANK_CRITERIA: tuple[RankCriterion, ...] = get_args(RankCriterion)
Status = Literal["pass", "fail", "n/a"]


#: The head line of a package with no fit: no build fits this machine (``unfit``);
#: builds fit but none is ``conflict``-free with the rest of the plan; the user's own
#: requirement on a coupled package rules out what it needs (``pinned``); no build for
#: this OS exists at all (``no-os``).
NoFit = Literal["unfit", "conflict", "pinned", "no-os"]

#: Why a flavour does not fit as a Jetson build (part of rule 1): a Jetson build on a
#: machine that is ``not-a-jetson``, on a Jetson whose L4T release is unknown
#: (``l4t-unknown``) or another (``other-l4t``); an ``sbsa`` build on JetPack 6 or older,
#: or one with SASS for this Jetson's GPU but no l4t range (``tegra-no-l4t``).
JetsonMiss = Literal["not-a-jetson", "l4t-unknown", "other-l4t", "tegra-no-l4t", "sbsa"]

#: Why one build of a coupled package does not meet a flavour's coupling: ``version``
#: (the coupling's specifier does not hold); a page template over that build needs one
#: of the ``local-label`` builds its page exists for, the build's ``cxx11abi``, or its
#: ``cuda`` version (a build without CUDA).
UnmetKind = Literal["version", "local-label", "cxx11abi", "cuda", "release"]


@valueclass
class Unmet:
    """Why one build of a coupled package does not meet a flavour's coupling, as data."""

    kind: UnmetKind
    requirement: str  # the coupling as written: "torch==2.12.*"
    package: str  # the coupled package's name, as its build names it
    version: str  # that build's version: "2.12.0+cu126"
    build: str  # that build in words (Flavour.describe())
    labels: tuple[str, ...] = ()  # local-label: the builds the page exists for


#: What a coupling failure (rule 6) is about:
#:
#: - ``pinned``: your own requirement on the coupled package (``pinned_by``) rules out
#:   its build ``version``, which fits this machine and meets the coupling;
#: - ``page``: the coupled package's builds that hold the version lack a fact the
#:   flavour's page template reads (``unmet``);
#: - ``unfit``: such builds exist but none fits this machine; ``missing``: none exists;
#: - ``plan``: the build the plan has (``version``) does not meet it (``unmet``);
#: - ``inconsistent``: no build of the coupled package goes with the rest of the plan;
#: - ``clash``: in the search, the build already chosen for the coupled package
#:   (``version``) does not meet this flavour's coupling (``unmet``); ``reverse``: this
#:   flavour does not meet the coupling of ``holder``, a build already chosen;
#: - ``no-choice``: the search found no consistent choice at all.
CouplingCause = Literal[
    "pinned",
    "page",
    "unfit",
    "missing",
    "plan",
    "inconsistent",
    "clash",
    "reverse",
    "held",
    "no-choice",
]


@valueclass
class Coupling:
    """What a coupling failure is about, as data (its words: :mod:`.words`)."""

    cause: CouplingCause
    requirement: str = ""  # the flavour's coupling as written: "torch==2.12.*"
    package: str = ""  # the coupled package (``reverse``: this flavour's own package)
    version: str = ""  # the build at issue: the plan's, the one pinned out, this one
    unmet: Unmet | None = None  # why that build does not meet the coupling
    pinned_by: str = ""  # ``pinned``: your requirement that rules it out: "torch==2.0.0"
    holder: str = ""  # ``reverse``: the chosen build whose coupling fails: "pkg 1.0";
    # ``held``: your requirement on a package with no fit whose builds need another build


@valueclass
class Failure:
    """One rule a flavour failed: its id and the reason in words. A coupling failure
    also carries what caused it (``coupling``), which is what anything that decides on
    it reads; the reason is only its words (and ``--json`` keeps to id and reason)."""

    rule: Rule
    reason: str
    coupling: Coupling | None = field(default=None, metadata={"json": False})


def coupling_by(failures: Iterable[Failure], *causes: CouplingCause) -> Coupling | None:
    """The first coupling failure of one of ``causes``: ``pinned``, the user's own
    requirement on the coupled package (the one thing to change, for the head line and
    the hint); ``held``, the user's requirement on another package whose builds (none
    of which runs here) need another build of this one."""
    return next(
        (x.coupling for x in failures if x.coupling is not None and x.coupling.cause in causes),
        None,
    )


@valueclass
class RuleOutcome:
    """One rule for one flavour: ``pass``, ``fail`` or ``n/a`` (it does not apply)."""

    rule: Rule
    status: Status
    reason: str = ""


@valueclass
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


class Rejections(Sequence[Rejection]):
    """A plan's rejected builds, made when first read: only ``-v``, ``--json``,
    ``explain`` and an error show them, and a plain run never pays for them."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], Iterable[Rejection]]) -> None:
        self._make = make
        self._made: tuple[Rejection, ...] | None = None

    def _all(self) -> tuple[Rejection, ...]:
        if self._made is None:
            self._made = tuple(self._make())
        return self._made

    def __getitem__(self, i: Any) -> Any:  # callers read the field's Sequence[Rejection]
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._all() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())


@valueclass
class Alternative:
    """A build the user may pin on purpose: ``torch==2.13.0+cpu`` (runs without the GPU)."""

    pin: str  # "torch==2.13.0+cpu"
    why: str  # "runs without the GPU"

    def __str__(self) -> str:
        return f"{self.pin} ({self.why})"


ChangeKind = Literal["driver", "python", "platform", "glibc", "gpu", "rocm"]


@valueclass
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


@valueclass
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
    rejected: Sequence[Rejection] = ()
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
    # A pinned release with no build that runs here, another's does: the reason in short
    # (the rule that failed, the nearest pin that runs), what a terminal shows without -v.
    refusal: str = ""
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
    # A release newer than its manifest's verified one, its kernel list carried forward:
    # "kernels assumed from 2.13.0, checked 2026-11-30". None: verified (or no list).
    kernels_assumed: str | None = None
    # Cause "unjudged": a managed package on an accelerated machine whose build this plan
    # cannot judge, and the fact no source gave ("the builds of torch 2.6.0 ...").
    unjudged: str | None = None
    # Cause "twins": the distribution of another requirement that installs the same import
    # package, the one to keep (the build planned for this machine, else the first asked).
    twin_of: str = ""
    flavour: Flavour | None = field(default=None, compare=False, repr=False)

    @property
    def wheel(self) -> bool:
        """A wheel flavour: pinned to one file by its URL (an index flavour by version)."""
        return self.flavour is not None and self.flavour.kind == "wheel"

    @property
    def distribution(self) -> NormalizedName:
        """The distribution the entry installs: its own, or the one ``installs`` names
        instead (cupy as cupy-cuda12x)."""
        return canonicalize_name(Requirement(self.installs).name) if self.installs else self.name

    @property
    def entry_version(self) -> str | None:
        """The version of the manifest entry chosen, pinned or not: ``version`` is None for
        a plain build left to the installer, whose entry still names the version it
        describes (a lock file pins that one; the installer's choice is held to it)."""
        if self.version is not None:
            return self.version
        return str(self.flavour.version) if self.flavour is not None else None

    def to_dict(self) -> dict[str, Any]:
        from resolver_hook.ground.plain import plain  # here: --json only

        data: dict[str, Any] = plain(self)
        return data


@valueclass
class Plan:
    """The result of resolving: per package what and why, and what to hand pip or uv.

    ``requirements`` are the rewritten requirement lines (option lines, then URL
    lines, then plain lines: pip wants a URL line before a plain line of the same
    name); ``constraints`` pin every flavour (``name @ url#sha256=...`` for wheels,
    ``name==version+local`` for index flavours); ``find_links`` are per-package pages
    (never ``--extra-index-url``, docs/facts.md section 3). A note's first line sums it
    up; its further lines, indented, are the detail (every page that could not be
    read): a terminal shows the first line, ``-v`` and ``--json`` all of it.
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
    def unjudged(self) -> tuple[PackagePlan, ...]:
        """Packages passed to the installer whose build could not be judged here."""
        return tuple(p for p in self.packages if p.cause == "unjudged")

    @property
    def pins(self) -> tuple[PackagePlan, ...]:
        """The packages rewritten to a version: what the constraints pin, and what a
        failed install is explained by."""
        return tuple(p for p in self.packages if p.action == "rewrite" and p.version is not None)

    @property
    def builds(self) -> tuple[PackagePlan, ...]:
        """Packages the installer will build from source (no flavour fits)."""
        return tuple(p for p in self.packages if p.action == "build")

    @property
    def variants(self) -> tuple[PackagePlan, ...]:
        """Packages for which the plan chose a wheel variant (PEP 825)."""
        return tuple(
            p
            for p in self.packages
            if p.action == "rewrite" and isinstance(p.flavour, WheelFlavour) and p.flavour.variant
        )

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
                what = p.url if p.wheel else plan_target(p)
                implied = f" (needed by {', '.join(p.implied_by)})" if p.implied_by else ""
                out.append(f"{p.name}: {what}{implied}: {p.reason}")
            elif p.action == "build":
                needs = f" (needs {', '.join(p.build_needs)})" if p.build_needs else ""
                out.append(f"{p.name}: build from source{needs}: {p.reason}")
            elif p.cause == "unjudged":
                out.append(f"{p.name}: {p.reason}")  # the reason names its cause
        return out

    def to_dict(self) -> dict[str, Any]:
        from resolver_hook.ground.plain import plain  # here: --json only

        return {
            "profile": self.profile.to_dict(),
            "machine": self.profile.describe(),
            **plain(self),
            "ok": self.ok,
        }


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


def marker_true(marker: Marker | None, env: Mapping[str, str]) -> bool:
    if marker is None:
        return True
    try:
        return marker.evaluate(dict(env))
    except UndefinedEnvironmentName:
        return False


def os_arch_of(tag: str) -> tuple[str, str]:
    p = parse_platform(tag)
    return p["os"], p["arch"]


def glibc_of(tag: str) -> tuple[int, int] | None:
    """The glibc a manylinux tag needs: ``manylinux_2_28_x86_64`` -> (2, 28)."""
    p = parse_platform(tag)
    return (p["libc_min"][0], p["libc_min"][1]) if p["libc"] == "glibc" else None


def flavour_platforms(f: Flavour) -> list[str]:
    """The single platform tags of a flavour (compressed tag sets split)."""
    return [x for pl in f.platforms for x in pl.split(".")]


def has_accelerator(f: Flavour) -> bool:
    return f.needs.cuda is not None or f.needs.rocm is not None or bool(f.needs.gpu)


def runtime_of(f: Flavour) -> Version | None:
    return f.needs.cuda_runtime or spec_floor(f.needs.cuda)


def spec_floor(spec: SpecifierSet | None) -> Version | None:
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


def exact_pins(spec: SpecifierSet) -> Iterator[Version | None]:
    """The versions the exact pins of ``spec`` name (``==``/``===``, no wildcard), in
    order; None for one that is no valid version."""
    for s in spec:
        if s.operator in ("==", "===") and "*" not in s.version:
            try:
                pinned: Version | None = Version(s.version)
            except InvalidVersion:
                pinned = None
            yield pinned


def pinned_release(spec: SpecifierSet) -> Version | None:
    """The public release an exact pin names (``==2.2.2+cu121`` -> 2.2.2); None when
    the specifier pins none."""
    pinned = next(exact_pins(spec), None)
    return None if pinned is None else public_release(pinned)


def coupled_to(r: Requirement) -> NormalizedName:
    """The package a coupling names, canonical. Kept by the requirement's identity: a
    release's builds share their requirement objects, and a plan asks it of each in
    every pass of its solver. The entry holds the requirement, so no id is reused
    while it is kept."""
    return _coupling(r)[1]


def coupling_text(r: Requirement) -> str:
    """``str(r)``, kept as :func:`coupled_to` is: each build whose coupling fails says
    it, in every plan the hints make again."""
    return _coupling(r)[2]


def _coupling(r: Requirement) -> tuple[Requirement, NormalizedName, str]:
    hit = _COUPLINGS.get(id(r))
    if hit is None or hit[0] is not r:
        if len(_COUPLINGS) > 65536:
            _COUPLINGS.clear()
        hit = _COUPLINGS[id(r)] = (r, canonicalize_name(r.name), str(r))
    return hit


_COUPLINGS: dict[int, tuple[Requirement, NormalizedName, str]] = {}


def public_release(v: Version) -> Version:
    """``v`` without its local label (``2.13.0`` of ``2.13.0+cu130``; without a label a
    version is its own public release), made from its parts, not by parsing its text
    again (packaging's advice for ``Version.public``). Kept by identity: the ranking
    and the plan's words ask it of the same builds' versions (a page's files share
    theirs). The entry holds the version, so no id is reused while it is kept."""
    if v.local is None:
        return v
    hit = _PUBLIC_RELEASE.get(id(v))
    if hit is None or hit[0] is not v:
        if len(_PUBLIC_RELEASE) > 65536:
            _PUBLIC_RELEASE.clear()
        hit = _PUBLIC_RELEASE[id(v)] = (v, v.__replace__(local=None))
    return hit[1]


_PUBLIC_RELEASE: dict[int, tuple[Version, Version]] = {}
