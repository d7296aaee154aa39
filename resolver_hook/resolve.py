"""The resolver: (requirements, manifests, profile) -> Plan. Pure.

No I/O, no printing, no reading of the host or the clock: the profile says what the
machine is, the manifests what exists, the requirements what the user asked for.
Markers are evaluated against the profile (a complete marker environment built from
it), never against the running interpreter, so plans for other targets are right.

The rules, in the order a flavour is checked (the first failure is its reason):

1. Tags: the wheel's tags (or the index flavour's platforms and Pythons) are
   compatible with the profile's Python, ABI, platform and glibc.
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

Ranking of the flavours that pass: best tag for the profile, then the newest CUDA
(the lower bound of ``cuda``) the driver supports, then the newest version.

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
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.markers import Marker, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.schema import Flavour, IndexFlavour, Manifest, WheelFlavour
from resolver_hook.portable.cuda import GPU_NAMES, min_driver_for_runtime, uncovered
from resolver_hook.reqfile import (
    ReqEntry,
    ReqFile,
    format_requirement,
    is_url_line,
    parse_requirements,
)

__all__ = [
    "PackagePlan",
    "Plan",
    "Rejection",
    "evaluate_flavour",
    "make_plan",
    "marker_environment",
    "resolve",
]

_SEARCH_BUDGET = 20_000  # DFS nodes per group of coupled packages


# --- the plan ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection:
    """A flavour that was not chosen and the first rule it failed."""

    candidate: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"candidate": self.candidate, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class PackagePlan:
    """What the plan does with one package: ``pass``, ``rewrite``, ``build`` or ``error``.

    ``build``: no flavour fits and the manifest allows building from source; the
    requirement is passed to the installer, ``build_needs`` says what the build needs.
    """

    name: NormalizedName
    action: str
    reason: str
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
    alternatives: tuple[str, ...] = ()
    build_needs: tuple[str, ...] = ()  # for action "build": the manifest's [build] needs
    flavour: Flavour | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "action": self.action,
            "version": self.version,
            "url": self.url,
            "sha256": self.sha256,
            "source": self.source,
            "reason": self.reason,
            "rejected": [r.to_dict() for r in self.rejected],
            "requested": self.requested,
            "where": self.where,
            "line": self.line,
            "constraint": self.constraint,
            "find_links": self.find_links,
            "implied_by": list(self.implied_by),
            "alternatives": list(self.alternatives),
            "build_needs": list(self.build_needs),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The result of resolving: per package what and why, and what to hand pip or uv.

    ``requirements`` are the rewritten requirement lines (option lines, then URL
    lines, then plain lines: pip wants a URL line before a plain line of the same
    name); ``constraints`` pin every flavour (``name @ url#sha256=...`` for wheels,
    ``name==version+local`` for index flavours); ``find_links`` are per-package pages
    (never ``--extra-index-url``, docs/facts.md section 3).
    """

    profile: HostProfile
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
                    p.url
                    if p.flavour is not None and p.flavour.kind == "wheel"
                    else (f"{p.name}=={p.version} from {p.find_links}")
                )
                implied = f" (needed by {', '.join(p.implied_by)})" if p.implied_by else ""
                out.append(f"{p.name}: {what}{implied}: {p.reason}")
            elif p.action == "build":
                needs = f" (needs {', '.join(p.build_needs)})" if p.build_needs else ""
                out.append(f"{p.name}: build from source{needs}: {p.reason}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile.to_dict(),
            "machine": self.profile.describe(),
            "packages": [p.to_dict() for p in self.packages],
            "requirements": list(self.requirements),
            "constraints": list(self.constraints),
            "find_links": list(self.find_links),
            "notes": list(self.notes),
            "ok": self.ok,
        }


# --- the marker environment of a profile -------------------------------------------

_SYS_PLATFORM = {"linux": "linux", "macos": "darwin", "windows": "win32"}
_OS_WORDS = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}
_PLATFORM_SYSTEM = {"linux": "Linux", "macos": "Darwin", "windows": "Windows"}
_MACHINE = {
    "macos": {"aarch64": "arm64"},
    "windows": {"x86_64": "AMD64", "aarch64": "ARM64", "i686": "x86"},
}


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
        "platform_machine": _MACHINE.get(profile.os, {}).get(profile.arch, profile.arch),
        "platform_release": "",
        "platform_system": _PLATFORM_SYSTEM.get(profile.os, profile.os),
        "platform_version": "",
        "python_full_version": full,
        "platform_python_implementation": impl[1],
        "python_version": profile.python,
        "sys_platform": _SYS_PLATFORM.get(profile.os, profile.os),
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
        self.tag_rank = {t: i for i, t in enumerate(profile.tags)}
        parsed = [t.split("-") for t in profile.tags]
        self.platforms = {p[2] for p in parsed if len(p) == 3}
        self.interp_abi = {(p[0], p[1]) for p in parsed if len(p) == 3}
        self.first_platform_rank: dict[str, int] = {}
        for i, p in enumerate(parsed):
            if len(p) == 3:
                self.first_platform_rank.setdefault(p[2], i)
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
        self.words = profile.describe()
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


def _gpu_words(cc: tuple[int, int]) -> str:
    name = GPU_NAMES.get(cc)
    label = f"sm_{cc[0]}{cc[1]}"
    if not name:
        return label
    return f"{name.split(' (')[0]} ({label})"


def _platform_words(tag: str) -> str:
    m = re.fullmatch(r"(?:many|musl)linux_(\d+)_(\d+)_(\w+)", tag)
    if m:
        libc = "glibc" if tag.startswith("many") else "musl"
        return f"Linux {m.group(3)} ({libc} >= {m.group(1)}.{m.group(2)})"
    m = re.fullmatch(r"manylinux(1|2010|2014)_(\w+)", tag)
    if m:
        return f"Linux {m.group(2)}"
    if tag.startswith("linux_"):
        return f"Linux {tag[6:]}"
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
    if m:
        return f"macOS {m.group(3)}"
    if tag.startswith("win"):
        return {
            "win_amd64": "Windows x86_64",
            "win_arm64": "Windows arm64",
            "win32": "Windows x86",
        }.get(tag, tag)
    return tag


def _os_arch_of(tag: str) -> tuple[str, str]:
    words = _platform_words(tag).split(" (")[0].split(" ")
    os_word = {w: key for key, w in _OS_WORDS.items()}.get(words[0], words[0])
    arch = words[1] if len(words) > 1 else ""
    arch = {"arm64": "aarch64", "amd64": "x86_64", "x86": "i686"}.get(arch, arch)
    return os_word, arch


def _tag_failure(f: Flavour, m: _Machine) -> tuple[str | None, int]:
    """Rule 1: None and the rank (lower is better), or the reason."""
    p = m.profile
    here = f"{_OS_WORDS.get(p.os, p.os)} {p.arch}"
    if isinstance(f, WheelFlavour):
        ranks = [m.tag_rank[str(t)] for t in f.tags if str(t) in m.tag_rank]
        if ranks:
            return None, min(ranks)
        plats = sorted({t.platform for t in f.tags})
        py_ok = any((t.interpreter, t.abi) in m.interp_abi for t in f.tags)
        plat_ok = any(pl in m.platforms for pl in plats)
        if not plat_ok:
            return _platform_reason(plats, p, here), 0
        if not py_ok:
            pys = ", ".join(f.python_versions) or ", ".join(sorted({t.interpreter for t in f.tags}))
            return f"built for Python {pys}; this machine has Python {p.python}", 0
        return "its tags match no tag of this Python", 0
    # Index flavour: platforms and Pythons as listed.
    if f.platforms and not any(pl in m.platforms for pl in f.platforms):
        return _platform_reason(sorted(f.platforms), p, here), 0
    if f.python and p.python not in f.python:
        return f"built for Python {', '.join(f.python)}; this machine has Python {p.python}", 0
    if not f.platforms:
        return None, 0
    return None, min(m.first_platform_rank[pl] for pl in f.platforms if pl in m.platforms)


def _platform_reason(plats: Sequence[str], p: HostProfile, here: str) -> str:
    for pl in plats:
        os_name, arch = _os_arch_of(pl)
        mm = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", pl.split(".")[0])
        if os_name == p.os and arch == p.arch and mm and p.libc_version:
            return (
                f"needs glibc >= {mm.group(1)}.{mm.group(2)} ({pl}); this machine has "
                f"{p.libc or 'libc'} {p.libc_version}"
            )
    words = ", ".join(
        dict.fromkeys(
            _platform_words(pl).split(" (")[0] for pl in (x for pl in plats for x in pl.split("."))
        )
    )
    return f"built for {words} ({', '.join(plats)}); this machine is {here}"


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
) -> tuple[list[tuple[str, str]], int]:
    """Every rule (1-5) the flavour fails, as (rule, reason), and its tag rank."""
    out: list[tuple[str, str]] = []
    p = m.profile
    tag_reason, rank = _tag_failure(f, m)
    if tag_reason:
        out.append(("tags", tag_reason))
    if f.cuda is not None:
        if m.cuda is None:
            why = p.nvidia_reason if p.nvidia is None else "driver CUDA version unknown"
            out.append(
                (
                    "cuda",
                    f"needs an NVIDIA driver with CUDA {f.cuda}; this machine has none ({why})",
                )
            )
        elif not f.cuda.contains(m.cuda, prereleases=True):
            hint = ""
            floor = _floor(f.cuda)
            if floor is not None and floor > m.cuda:
                driver = min_driver_for_runtime(floor.major, p.os)
                hint = f" (driver {driver} or newer)" if driver else ""
            out.append(
                (
                    "cuda",
                    f"needs a driver with CUDA {f.cuda}{hint}; this driver has "
                    f"CUDA {p.nvidia.cuda_version if p.nvidia else '?'}",
                )
            )
    if f.rocm is not None:
        if m.rocm is None:
            out.append(("rocm", f"needs AMD ROCm {f.rocm}; this machine has no ROCm"))
        elif not f.rocm.contains(m.rocm, prereleases=True):
            out.append(("rocm", f"needs ROCm {f.rocm}; this machine has ROCm {m.rocm}"))
    if f.gpu:
        if p.nvidia is None:
            if f.cuda is None:
                out.append(
                    (
                        "gpu",
                        f"needs an NVIDIA GPU (kernels "
                        f"{', '.join(map(str, f.gpu))}); this machine has none",
                    )
                )
        else:
            missing = uncovered(f.gpu, p.gpu_ccs)
            if missing:
                verb = "does" if len(f.gpu) == 1 else "do"
                out.append(
                    (
                        "gpu",
                        f"kernels {', '.join(map(str, f.gpu))} {verb} not run on "
                        f"{', '.join(_gpu_words(cc) for cc in missing)}",
                    )
                )
    if not _has_accelerator(f) and not _exact_pin(spec, f.version):
        any_nvidia, any_rocm = m.accelerated(manifest)
        if p.nvidia is not None and any_nvidia:
            out.append(
                (
                    "accelerator",
                    f"builds without CUDA are not chosen on a machine with "
                    f"an NVIDIA GPU; pin {manifest.display_name}=="
                    f"{f.version} to use it",
                )
            )
        elif p.rocm is not None and any_rocm:
            out.append(
                (
                    "accelerator",
                    f"builds without ROCm are not chosen on a machine with "
                    f"ROCm; pin {manifest.display_name}=={f.version} to use "
                    "it",
                )
            )
    if str(spec) and not spec.contains(f.version, prereleases=True):
        out.append(("specifier", f"{f.version} does not match your requirement {spec}"))
    return out, rank


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


def evaluate_flavour(
    f: Flavour, manifest: Manifest, profile: HostProfile, spec: SpecifierSet | None = None
) -> dict[str, str | None]:
    """Per rule, None when the flavour passes it or the reason it fails (for ``explain``)."""
    fails, _ = _failures(f, _Machine(profile), spec or SpecifierSet(), manifest)
    out: dict[str, str | None] = dict.fromkeys(
        ("tags", "cuda", "rocm", "gpu", "accelerator", "specifier")
    )
    for rule, reason in fails:
        out.setdefault(rule, None)
        if out[rule] is None:
            out[rule] = reason
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
    rejected: list[tuple[Flavour, list[tuple[str, str]]]] = field(default_factory=list)
    chosen: Flavour | None = None
    coupling_rejects: dict[int, str] = field(default_factory=dict)
    others: list[ReqEntry] = field(default_factory=list)  # the same name asked again


def _rank_key(item: tuple[Flavour, int]) -> tuple[Any, ...]:
    f, rank = item
    floor = _floor(f.cuda) or _floor(f.rocm) or Version("0")
    return (rank, _Desc(floor), _Desc(f.version), f.describe())


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


def resolve(  # noqa: PLR0915 - the numbered steps read best in one place
    requirements: ReqFile | Iterable[str | Requirement | ReqEntry],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
) -> Plan:
    """Resolve requirements against manifests for the profile. Pure; never raises for
    a package that does not fit (that is an ``error`` entry in the plan)."""
    reqs = _as_reqfile(requirements)
    m = _Machine(profile)
    by_name = {canonicalize_name(k): v for k, v in manifests.items()}
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
                    reason=f"marker '{e.marker}' is false on this machine: pip skips it",
                )
                order.append(key)
            continue
        manifest = by_name.get(e.name) if e.name else None
        twin = packages.get(key)
        if twin is not None and "marker" in twin.reason and twin.action == "pass":
            del packages[key]  # a marker-false twin seen first: this line counts
            order.remove(key)
            twin = None
        if manifest is None or e.kind != "requirement" or e.url or e.editable:
            why = (
                "no manifest: left to the installer"
                if manifest is None
                else "you gave a URL or path: left as written"
            )
            slot = slots.pop(key, None)
            if slot is not None:  # a URL or path for a name asked for before: as written
                earlier = [x for x in (slot.entry, *slot.others) if x is not None]
                packages[key] = PackagePlan(
                    name=NormalizedName(key),
                    action="pass",
                    reason=why,
                    requested=e.text,
                    where=e.where,
                    line=_original_line(e),
                    more_lines=tuple(_original_line(x) for x in earlier),
                )
            elif twin is not None:  # the same name again: pip sees every line
                packages[key] = dataclasses.replace(
                    twin, more_lines=(*twin.more_lines, _original_line(e))
                )
            else:
                packages[key] = PackagePlan(
                    name=NormalizedName(key),
                    action="pass",
                    reason=why,
                    requested=e.text,
                    where=e.where,
                    line=_original_line(e),
                )
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
        slot.candidates.sort(key=_rank_key)
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
    for name, slot in slots.items():
        packages[name] = _slot_plan(slot, m, notes)

    ordered = [packages[k] for k in order if k in packages]
    return _assemble(profile, ordered, reqs, user_constraints, notes)


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
        if not r.specifier.contains(other.version, prereleases=True):
            return f"needs {r}; the plan has {target} {other.version}"
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
                            r.specifier.contains(g.version, prereleases=True)
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
                                (
                                    "couplings",
                                    f"needs {dead}; no such build of "
                                    f"{canonicalize_name(dead.name)} fits "
                                    "this machine",
                                )
                            ],
                        )
                    )
            slot.candidates = keep


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


def _slot_plan(slot: _Slot, m: _Machine, notes: list[str]) -> PackagePlan:
    e = slot.entry
    more = tuple(_original_line(o) for o in slot.others)
    asked = " and ".join(x.text for x in (e, *slot.others)) if e else ""
    rejected = [
        Rejection(candidate=_candidate(f), reason=fails[0][1]) for f, fails in slot.rejected
    ]
    chosen = slot.chosen
    for i, (f, _) in enumerate(slot.candidates):
        if f is chosen:
            continue
        why = slot.coupling_rejects.get(i) or (
            "ranked lower" if chosen is not None else "no consistent choice of coupled packages"
        )
        rejected.append(Rejection(candidate=_candidate(f), reason=why))
    base: dict[str, Any] = {
        "name": slot.name,
        "source": slot.manifest.source,
        "rejected": tuple(rejected),
        "requested": e.text if e else "",
        "where": e.where if e else "",
        "implied_by": tuple(slot.implied_by),
    }
    if (
        chosen is None
        and e is not None
        and not any(slot.spec.contains(f.version, prereleases=True) for f in slot.manifest.flavours)
    ):
        # The manifest does not describe the version asked for (torch==2.0.0 against a
        # 2.13 manifest): nothing is known about its builds, so it is not refused.
        versions = ", ".join(sorted({str(f.version.public) for f in slot.manifest.flavours}))
        return PackagePlan(
            action="pass",
            line=_original_line(e),
            more_lines=more,
            reason=(
                f"no build in its manifest ({slot.manifest.source}) matches {asked}; the manifest "
                f"knows {versions or 'no versions'}: left to the installer unchanged"
            ),
            **base,
        )
    if chosen is None:
        if slot.manifest.buildable:
            return PackagePlan(
                action="build",
                reason=f"{_no_fit(slot, m)}; the installer builds it from source",
                build_needs=slot.manifest.build_needs,
                line=_original_line(e) if e else None,
                more_lines=more,
                alternatives=tuple(_alternatives(slot, m)),
                **base,
            )
        return PackagePlan(
            action="error",
            reason=_no_fit(slot, m),
            alternatives=tuple(_alternatives(slot, m)),
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
        if chosen.sha256 is None:
            notes.append(
                f"{slot.name}: the wheel URL has no sha256 in its manifest "
                f"({slot.manifest.source}): unverified"
            )
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
    line = format_requirement(
        slot.manifest.display_name, version=str(chosen.version), extras=extras, marker=marker
    )
    return PackagePlan(
        action="rewrite",
        version=str(chosen.version),
        url=chosen.url,
        flavour=chosen,
        reason=why,
        line=line if e else None,
        constraint=f"{slot.name}=={chosen.version}",
        find_links=chosen.url,
        **base,
    )


def _why(f: Flavour, slot: _Slot, m: _Machine) -> str:
    p = m.profile
    parts = []
    if isinstance(f, WheelFlavour):
        best = min((t for t in f.tags if str(t) in m.tag_rank), key=lambda t: m.tag_rank[str(t)])
        parts.append(f"tag {best}")
    elif f.platforms:
        parts.append(f"{_OS_WORDS.get(p.os, p.os)} {p.arch}, Python {p.python}")
    if f.cuda is not None:
        parts.append(f"driver CUDA {p.nvidia.cuda_version if p.nvidia else '?'} meets {f.cuda}")
    if f.rocm is not None:
        parts.append(f"ROCm meets {f.rocm}")
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
    gpus: dict[str, None] = {}
    for f in man.flavours:
        for pl in f.platforms:
            for x in pl.split("."):
                plats[_platform_words(x).split(" (")[0]] = None
        for v in f.python_versions:
            pys[v] = None
        if f.cuda is not None:
            cudas[str(f.cuda)] = None
        for t in f.gpu:
            gpus[str(t)] = None
    parts = [", ".join(plats) or "any platform"]
    if pys:
        parts.append(
            "Python " + ", ".join(sorted(pys, key=lambda v: tuple(map(int, v.split(".")))))
        )
    if cudas:
        parts.append("driver CUDA " + " or ".join(cudas))
    if gpus:
        parts.append("kernels " + ", ".join(gpus))
    versions = sorted({str(f.version.public) for f in man.flavours})
    return f"{man.display_name} {', '.join(versions)} exists for: {'; '.join(parts)}"


def _no_fit(slot: _Slot, m: _Machine) -> str:
    head = f"no build of {slot.manifest.display_name} fits this machine ({m.words})"
    if slot.candidates:
        head = (
            f"no build of {slot.manifest.display_name} is consistent with the rest of the "
            f"plan ({m.words})"
        )
    elif slot.rejected and all(fails[0][0] == "tags" for _, fails in slot.rejected):
        os_word = _OS_WORDS.get(m.profile.os, m.profile.os)
        if not any(
            _os_arch_of(x)[0] == m.profile.os
            for f in slot.manifest.flavours
            for pl in f.platforms
            for x in pl.split(".")
        ) and all(isinstance(f, WheelFlavour) or f.platforms for f in slot.manifest.flavours):
            head = f"no {os_word} builds of {slot.manifest.display_name} exist ({m.words})"
    return f"{head}; {_exists_summary(slot.manifest)}"


def _alternatives(slot: _Slot, m: _Machine) -> list[str]:
    out = []
    name = slot.manifest.display_name
    for f, fails in slot.rejected:
        rules = {r for r, _ in fails}
        if rules == {"accelerator"}:
            out.append(f"{name}=={f.version} (runs without the GPU)")
        elif rules == {"specifier"}:
            out.append(f"{name}=={f.version} (outside your specifier)")
    # Another Python only when no build at all is for this machine's Python.
    if not slot.candidates and all(fails[0][0] == "tags" for _, fails in slot.rejected):
        same_platform = [f for f, fails in slot.rejected if "Python" in fails[0][1]]
        pys = sorted(
            {v for f in same_platform for v in f.python_versions},
            key=lambda v: tuple(int(x) for x in v.split(".")),
        )
        if pys:
            out.append(f"{name} has builds for Python {', '.join(pys)} on this platform")
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
    url_lines = [x for x in lines if is_url_line(x)]
    plain = [x for x in lines if not is_url_line(x)]
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
    if any(p.action != "pass" and p.source and p.source.startswith("built-in") for p in packages):
        notes.append(
            "built-in manifests carry no sha256 yet: their wheels are not verified by hash"
        )
    return Plan(
        profile=profile,
        packages=tuple(packages),
        requirements=tuple(option_lines + url_lines + plain),
        constraints=tuple(dict.fromkeys(constraints)),
        find_links=tuple(find_links),
        notes=tuple(dict.fromkeys(notes)),
    )


def make_plan(
    requirements: ReqFile | Iterable[str | Requirement | ReqEntry],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
) -> Plan:
    """The same as :func:`resolve`; accepts a parsed ReqFile, ReqEntry values,
    ``packaging`` Requirements or requirement-file lines (no ``-r``: read files with
    :func:`resolver_hook.reqfile.read_requirements` first)."""
    return resolve(requirements, manifests, profile)
