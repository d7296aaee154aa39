"""Hints: for a package with no fit, the first single change of the machine that gives
it one, found by solving again with that change (never guessed).

Owns: :func:`apply_change` (a profile with one fact changed), the changes worth trying
in the order of preference, the search over them (re-solving only the part of the plan
coupled with the refused packages), and :func:`with_hints`. Decides on outcomes (rule
ids, the data a coupling failure carries), never on their words.

May import: :mod:`.model`, :mod:`.rules`, :mod:`.solve`, :mod:`.reasons`, :mod:`.hintwords`,
the host profile and detection defaults; never the plan's assembly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from packaging.utils import canonicalize_name
from packaging.version import Version

from resolver_hook.ground.patterns import version_numbers
from resolver_hook.ground.valueclass import replace
from resolver_hook.host.detect import DEFAULT_GLIBC
from resolver_hook.host.profile import HostProfile, NvidiaGpu, NvidiaInfo, RocmInfo, compute_tags
from resolver_hook.limits import MAX_HINT_CHANGES, MAX_HINTED_PACKAGES, MAX_MACHINE_VERSION_DIGITS
from resolver_hook.manifest.model import Flavour, Manifest
from resolver_hook.portable.cuda import GPU_NAMES, JETSON_ONLY_CCS, min_driver_for_cuda
from resolver_hook.reqfile import ReqFile
from resolver_hook.resolve.hintwords import (
    X64_INTERPRETER,
    change_words,
    driver_change_words,
    fix_words,
    gets_words,
    gpu_families,
    none_helps,
    place_words,
    skipped_hint_words,
    x64_venv_words,
)
from resolver_hook.resolve.model import (
    Change,
    Plan,
    flavour_platforms,
    glibc_of,
    os_arch_of,
    spec_floor,
)
from resolver_hook.resolve.reasons import gpu_words
from resolver_hook.resolve.rules import Machine, runs_on
from resolver_hook.resolve.solve import Slot, by_canonical_name, coupled_names, solve

__all__ = [
    "apply_change",
    "with_hints",
]

# Refusals no change of machine fixes: a wheel the user named (its file is fixed; the
# nearest build that runs is named instead), a twin of another requirement (keep one).
_NO_HINT = frozenset({"as-written", "twins"})


def apply_change(profile: HostProfile, change: Change) -> HostProfile:
    """The profile with the facts of ``change`` changed (tags recomputed when the OS,
    arch, glibc or Python change). Pure."""
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
        # The same AMD GPUs with that ROCm (a GPU no build of it carries code for stays
        # without one); an AMD GPU of no stated ISA on a machine without ROCm.
        nvidia, rocm = None, RocmInfo(version=change.rocm, gfx=p.rocm.gfx if p.rocm else ())
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
    another Python, another OS/arch (or glibc), a GPU of another family, ROCm; on a
    machine with ROCm a newer ROCm comes first (its GPU stays; an NVIDIA one is not
    the nearest change)."""
    flavours = [f for man in manifests for f in man.flavours]
    kinds = [
        _driver_changes(profile, flavours),
        _python_changes(profile, flavours),
        _place_changes(profile, flavours),
        _gpu_changes(profile, flavours),
        _rocm_changes(profile, flavours),
    ]
    if profile.rocm is not None:
        kinds.insert(0, kinds.pop())
    return [kind[:MAX_HINT_CHANGES] for kind in kinds]  # nearest first: limits.py


def _driver_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Each CUDA floor above this driver's, lowest first (none without a driver)."""
    if p.nvidia is None:
        return []
    have = Version(p.nvidia.cuda_version) if p.nvidia.cuda_version else None
    out = []
    for fl in sorted({fl for f in flavours if (fl := spec_floor(f.needs.cuda)) is not None}):
        if have is not None and fl <= have:
            continue
        cuda = f"{fl.major}.{fl.minor}"
        driver = min_driver_for_cuda((fl.major, fl.minor), p.os)
        out.append(Change(kind="driver", text=driver_change_words(driver, cuda), cuda=cuda))
    return out


def _python_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Every other Python a build is for: the nearest first, the newer of two as near,
    and of 3.14 and 3.14t the one built like this machine's (free-threaded or not)."""
    here = p.python_tuple
    threaded = p.free_threaded

    def key(v: str) -> tuple[int, int, int, bool, str]:
        major, minor = version_numbers(v)[:2]
        near = abs(minor - here[1]) if major == here[0] else 99
        return (near, -major, -minor, v.endswith("t") != threaded, v)

    named = {v for f in flavours for v in f.python_versions}  # a few among hundreds
    pys = {v for v in named if _machine_sized(v)} - {p.python}
    return [
        Change(kind="python", text=change_words("python", v), python=v)
        for v in sorted(pys, key=key)
    ]


def _machine_sized(version: str) -> bool:
    """Whether every number of ``version`` fits a real machine (limits.py): a manifest's
    ``manylinux_2_99999999`` or ``3.999999`` is never tried as a machine (its wheel tags
    would be counted out one by one)."""
    return all(len(n) <= MAX_MACHINE_VERSION_DIGITS for n in re.findall(r"\d+", version))


def _place_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """Another OS or CPU arch (the same OS first, then the same CPU: a Windows x86_64
    machine is pointed at Linux x86_64, not Linux aarch64), then a newer glibc."""
    places: set[tuple[str, str]] = set()
    glibcs: set[tuple[int, int]] = set()
    # Each platform once: the builds of a package name a few dozen among them.
    for tag in {tag for f in flavours for tag in flavour_platforms(f)}:
        os_name, arch = os_arch_of(tag)
        if os_name == "any":
            continue  # a wheel for every platform: no other machine helps
        if not arch or (os_name, arch) == (p.os, p.arch):
            floor = glibc_of(tag)
            sized = floor is not None and _machine_sized(f"{floor[0]}.{floor[1]}")
            if floor and sized and p.libc == "glibc" and p.libc_version:
                glibcs.add(floor)
        elif not (os_name == "macos" and p.nvidia is not None):  # no CUDA on macOS
            places.add((os_name, arch))
    out = []
    if p.jetson:
        places = set()  # a Jetson is its own machine: no other OS or CPU for it
    for os_name, arch in sorted(places, key=lambda oa: (oa[0] != p.os, oa[1] != p.arch, oa)):
        if (p.os, p.arch, os_name, arch) == ("windows", "aarch64", "windows", "x86_64"):
            out.append(
                Change(
                    kind="platform",
                    text=X64_INTERPRETER,
                    how=x64_venv_words(p),
                    os=os_name,
                    arch=arch,
                )
            )
            continue
        out.append(Change(kind="platform", text=place_words(os_name, arch), os=os_name, arch=arch))
    have = version_numbers(p.libc_version or "0.0")[:2]
    for floor in sorted(glibcs):
        if floor > have:
            v = f"{floor[0]}.{floor[1]}"
            out.append(Change(kind="glibc", text=change_words("glibc", v), glibc=v))
    return out


def _gpu_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """One GPU of each other known family, newest first; with a driver for the newest
    CUDA the builds need when the machine has none."""
    if (
        p.os == "macos"
        or p.jetson
        or not any(f.needs.gpu or f.needs.cuda is not None for f in flavours)
    ):
        return []  # a Jetson's GPU is built in: no other family for it
    newest = max(
        (fl for f in flavours if (fl := spec_floor(f.needs.cuda)) is not None), default=None
    )
    cuda = None
    if (p.nvidia is None or not p.nvidia.cuda_version) and newest is not None:
        cuda = f"{newest.major}.{newest.minor}"
    return [
        Change(kind="gpu", text=gpu_words(cc), sm=f"{cc[0]}.{cc[1]}", cuda=cuda)
        for cc in sorted(GPU_NAMES, reverse=True)
        # A Jetson is a whole machine, not a GPU one could fit: never a hint.
        if cc not in p.gpu_ccs and cc not in JETSON_ONLY_CCS
    ]


def _rocm_changes(p: HostProfile, flavours: Sequence[Flavour]) -> list[Change]:
    """An AMD GPU with ROCm instead (Linux only)."""
    have = Version(p.rocm.version) if p.rocm and p.rocm.version else None
    floors = sorted({fl for f in flavours if (fl := spec_floor(f.needs.rocm)) is not None})
    return [
        Change(kind="rocm", text=change_words("rocm", v), rocm=str(v))
        for v in floors
        if p.os == "linux" and (have is None or v > have)
    ]


def with_hints(plan: Plan, reqs: ReqFile, manifests: Mapping[str, Manifest]) -> Plan:
    """Each package with no fit gets the first single change of the machine that gives
    it one, found by re-planning the whole plan with that change; or a plain sentence
    saying that no single change does.

    The changes come in two passes, each in the order of preference of :func:`_changes`:
    first those the refused packages' own builds suggest; then, for a package still
    without a fix, those the builds of the packages it couples with suggest."""
    by_name = by_canonical_name(manifests)
    # A wheel the user named and that cannot run here is refused with the nearest build
    # that does: no change of machine is searched for it (its file is fixed).
    refused = [p for p in plan.errors if p.name in by_name and p.cause not in _NO_HINT]
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
        coupled = sorted(n for n in coupled_names(edges, todo) if n in by_name and n not in todo)
        more = _changes(plan.profile, [by_name[n] for n in coupled])
        hints.search([[c for c in kind if c not in tried] for kind in more])
    packages = []
    for p in plan.packages:
        if p.name in hints.found:
            fix = hints.found[p.name]
            packages.append(replace(p, fix=fix, hint=fix_words(fix)))
        elif p.name in todo:
            hint = none_helps(p, by_name[p.name], plan.profile)
            packages.append(replace(p, hint=hint))
        elif p.name in skipped:
            hint = skipped_hint_words(len(refused), MAX_HINTED_PACKAGES)
            packages.append(replace(p, hint=hint))
        else:
            packages.append(p)
    return replace(plan, packages=tuple(packages))


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
        # This machine's judgements of rule 1, shared by the changed machines that keep
        # its tags (another GPU, driver or ROCm: most of the changes tried).
        self.here = Machine(plan.profile)
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
        m = Machine(changed, like=self.here)
        # Re-plan only for packages one of whose builds then passes rules 1-5, and only
        # the part of the plan coupled with them: the search solves each group of
        # coupled packages apart, so that part answers as the whole plan would.
        hopeful = frozenset(n for n in left if _could_fit(self.by_name[n], m))
        if not hopeful:
            return
        if hopeful not in self.parts:
            self.parts[hopeful] = _coupled_part(self.reqs, self.edges, hopeful)
        slots = solve(self.parts[hopeful], self.by_name, changed, m, reasons=False).slots
        for name in hopeful:
            q = slots[name].chosen if name in slots else None
            if q is not None and q.unjudged is None:  # a fix gives a build known to run
                also = _moved(name, slots, self.edges, self.kept)
                fitting.setdefault(name, []).append((change, q, also))

    def _fix(self, options: Sequence[tuple[Change, Flavour, tuple[str, ...]]]) -> Change:
        change, q, also = options[0]
        text, how = change.text, change.how
        if change.kind == "gpu":  # every family that fits, named once per build it gets
            profile = self.plan.profile
            driver = None
            if change.cuda:
                major, _, minor = change.cuda.partition(".")
                driver = min_driver_for_cuda((int(major), int(minor or 0)), profile.os)
            by_build: dict[tuple[str, tuple[str, ...]], list[str]] = {}
            for c, got, moved in options:
                by_build.setdefault((gets_words(got), moved), []).append(c.sm or "")
            (gets, also), sms = next(iter(by_build.items()))
            text = gpu_families(sms, profile, driver=driver)
            # A V100 gets natten's cu126 build where a newer GPU gets cu130: said apart.
            how = "; ".join(
                fix_words(
                    Change(
                        kind="gpu", text=gpu_families(more, profile, driver=driver), gets=g, also=a
                    )
                )
                for (g, a), more in list(by_build.items())[1:]
            )
            return replace(change, text=text, gets=gets, also=also, how=how)
        return replace(change, text=text, gets=gets_words(q), also=also, how=how)


def _moved(
    name: str, slots: Mapping[str, Slot], edges: Mapping[str, set[str]], kept: Mapping[str, str]
) -> tuple[str, ...]:
    """The packages coupled with ``name`` that the plan gets now and that the change
    would move to another build, with that build: ("torch 2.12.1+cu130",)."""
    return tuple(
        f"{c.name} {c.version}"
        for n in sorted(coupled_names(edges, [name]) - {name})
        if n in kept
        and n in slots
        and (c := slots[n].chosen) is not None
        and str(c.version) != kept[n]
    )


def _could_fit(manifest: Manifest, m: Machine) -> bool:
    """Whether a build of the package passes the machine's rules (1-3) on ``m``. Rules
    4 and 5 are the solve's: asked of every build here, their words were made for
    nothing (a CPU build's on an NVIDIA machine names the pin that would choose it)."""
    return any(runs_on(f, m) for f in manifest.flavours)


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
            for r in f.needs.requires:
                t = canonicalize_name(r.name)
                edges.setdefault(n, set()).add(t)
                edges.setdefault(t, set()).add(n)
                stack.append(t)
    return edges


def _coupled_part(reqs: ReqFile, edges: Mapping[str, set[str]], names: frozenset[str]) -> ReqFile:
    """The requirements of ``names`` and of every package coupled with them (options
    and constraints kept)."""
    seen = coupled_names(edges, names)
    keep = tuple(
        e for e in reqs.entries if e.kind == "option" or e.constraint or (e.name or e.text) in seen
    )
    return ReqFile(entries=keep, files=reqs.files)
