"""One flavour against one machine: rules 1-5 and the ranking (rules 7-9).

Owns: :class:`Machine` (what the rules need from a profile, computed once per plan),
each rule's failures (:class:`~.model.Failure`: the rule id, its reason from :mod:`.reasons`),
:func:`evaluate_flavour` (the per-rule table ``explain`` and ``doctor`` show), whether a
chosen build meets a flavour's coupling (:func:`meets`, as data), and the one ranking
(:func:`ranking`, and :func:`decided_by`: which of its criteria ranked a build lower).

May import: :mod:`.model`, :mod:`.reasons`, the host profile, the manifest schema and
``portable/``; never the solver, the plan's assembly or the hints.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import (
    Flavour,
    IndexFlavour,
    Manifest,
    WheelFlavour,
    no_version_between,
)
from resolver_hook.portable.cuda import KernelTarget, uncovered
from resolver_hook.resolve.model import (
    RANK_CRITERIA,
    Failure,
    JetsonMiss,
    RankCriterion,
    Rule,
    RuleOutcome,
    Unmet,
    UnmetKind,
    exact_pins,
    flavour_platforms,
    has_accelerator,
    marker_environment,
    marker_true,
    os_arch_of,
    public_release,
    runtime_of,
    spec_floor,
)
from resolver_hook.resolve.reasons import (
    NO_TAG_MATCHES,
    accelerator_reason,
    arch_max_reason,
    cuda_reason,
    gfx_reason,
    gpu_reason,
    jetson_reason,
    per_gpu_cuda_reason,
    platform_reason,
    properties_reason,
    python_labels,
    python_reason,
    rocm_reason,
    specifier_reason,
)

__all__ = [
    "LaterFailures",
    "Machine",
    "decided_by",
    "distribution_of",
    "evaluate_flavour",
    "flavour_failures",
    "machine_failures",
    "meets",
    "preference_of",
    "ranking",
    "runs_on",
    "solver_failures",
    "version_ok",
]


class Machine:
    """What the rules need from a profile, computed once per plan; ``like``: a machine
    whose judgements of rule 1 this one shares where both are the same host (the
    hints' machines of another GPU, driver or ROCm)."""

    def __init__(self, profile: HostProfile, *, like: Machine | None = None) -> None:
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
        # Asked of every build with kernels (a property of the profile, made each time).
        self.gpu_ccs = profile.gpu_ccs
        # Asked of every build (_jetson_miss; properties of the profile, read each time).
        self.jetson_builds = profile.needs_jetson_builds
        # Per manifest, computed once: (any flavour needs NVIDIA, any needs ROCm). Asking
        # it per flavour made resolution quadratic in the number of flavours.
        self._accelerated: dict[int, tuple[Manifest, bool, bool]] = {}
        # Rule 1's platform failure by the platforms a build is for (a page's tag sets
        # name a few lists of platforms).
        self._platform_failures: dict[tuple[str, ...], Failure] = {}
        # A wheel's rule-1 outcome by its tags, then by its page's requires-python, and
        # the Python failure by the interpreter/ABI pairs of its tags (_tag_failures).
        self.wheel_tags: dict[frozenset[Tag], tuple[tuple[Failure, ...], int]] = {}
        self.index_tags: dict[tuple[tuple[str, ...], ...], tuple[tuple[Failure, ...], int]] = {}
        self._requires_python: dict[int, tuple[SpecifierSet, Failure | None]] = {}
        # Whether rule 1 holds, as the tag rank (None: it fails), without the words of
        # a failure: by a wheel's tags, by an index entry's platforms and Pythons.
        self.wheel_ranks: dict[frozenset[Tag], int | None] = {}
        self.index_ranks: dict[tuple[tuple[str, ...], tuple[str, ...]], int | None] = {}
        self._python_failures: dict[frozenset[tuple[str, str]], Failure] = {}
        # Rules 2 and 3 by the object a flavour's need is: the entries of a manifest
        # share one parsed ``cuda`` and one kernel list (manifest.needs), so a plan of
        # hundreds of flavours asks a few dozen of each. The entry holds the object, so
        # no id is reused while it is kept.
        self._cuda_failures: dict[int, tuple[SpecifierSet, Failure | None]] = {}
        self._gpu_failures: dict[int, tuple[tuple[KernelTarget, ...], Failure | None]] = {}
        # Rule 3 of a build that compiles its kernels here, by the newest GPU it knows.
        self._arch_max_failures: dict[tuple[int, int], Failure | None] = {}
        # Whether a coupling's marker holds here, by the marker: the builds of a release
        # share their requirement objects, and the solver asks in every pass.
        self._markers: dict[int, tuple[Marker, bool]] = {}
        if like is not None and _same_host(like.profile, profile):
            # Rule 1 reads the tags, the OS, CPU and libc, and the Python alone: a
            # GPU, driver or ROCm changed leaves its every judgement as it was.
            self.wheel_tags, self.index_tags = like.wheel_tags, like.index_tags
            self.wheel_ranks, self.index_ranks = like.wheel_ranks, like.index_ranks
            self._platform_failures = like._platform_failures
            self._requires_python = like._requires_python
            self._python_failures = like._python_failures

    def accelerated(self, manifest: Manifest) -> tuple[bool, bool]:
        """Whether some flavour of ``manifest`` needs NVIDIA (CUDA or kernels) / ROCm."""
        hit = self._accelerated.get(id(manifest))
        if hit is None or hit[0] is not manifest:
            nvidia = rocm = False
            for g in manifest.flavours:
                nvidia = nvidia or g.needs.cuda is not None or bool(g.needs.gpu)
                rocm = rocm or g.needs.rocm is not None
            hit = (manifest, nvidia, rocm)
            self._accelerated[id(manifest)] = hit
        return hit[1], hit[2]

    def platform_failure(self, plats: Sequence[str]) -> Failure:
        """Rule 1's failure of a build for ``plats`` on this machine, made once per list."""
        key = tuple(plats)
        hit = self._platform_failures.get(key)
        if hit is None:
            reason = platform_reason(key, self.profile)
            hit = self._platform_failures[key] = Failure(rule="tags", reason=reason)
        return hit

    def holds(self, marker: Marker | None) -> bool:
        """Whether ``marker`` is true on this machine (no marker: true)."""
        if marker is None:
            return True
        hit = self._markers.get(id(marker))
        if hit is None or hit[0] is not marker:
            hit = self._markers[id(marker)] = (marker, marker_true(marker, self.env))
        return hit[1]

    def requires_python_failure(self, spec: SpecifierSet) -> Failure | None:
        """Rule 1's failure of a wheel whose tags match, by its page's requires-python
        (PEP 503 data-requires-python: a py3 wheel's tags do not say which Pythons it
        runs on), or None."""
        hit = self._requires_python.get(id(spec))
        if hit is None or hit[0] is not spec:
            p = self.profile
            failure = None
            if not spec.contains(Version(p.python), prereleases=True):
                reason = f"its page says Requires-Python {spec}; this machine has "
                failure = Failure(rule="python", reason=reason + p.python_words)
            hit = self._requires_python[id(spec)] = (spec, failure)
        return hit[1]

    def python_failure(self, f: WheelFlavour) -> Failure:
        """Rule 1's failure of a wheel whose tags name no interpreter and ABI of this
        Python: the words read the pairs alone, and a page's tag sets share a few."""
        key = frozenset((t.interpreter, t.abi) for t in f.tags)
        hit = self._python_failures.get(key)
        if hit is None:
            pys = python_labels(f) or sorted({t.interpreter for t in f.tags})
            hit = self._python_failures[key] = Failure(
                rule="python", reason=python_reason(pys, self.profile)
            )
        return hit

    def cuda_failure(self, cuda: SpecifierSet) -> Failure | None:
        """Rule 2's failure of a build whose driver floor is ``cuda``, or None."""
        hit = self._cuda_failures.get(id(cuda))
        if hit is None or hit[0] is not cuda:
            fails = self.cuda is None or not cuda.contains(self.cuda, prereleases=True)
            reason = cuda_reason(cuda, self.cuda, self.profile) if fails else None
            failure = None if reason is None else Failure(rule="cuda", reason=reason)
            hit = self._cuda_failures[id(cuda)] = (cuda, failure)
        return hit[1]

    def gpu_failure(self, gpu: tuple[KernelTarget, ...]) -> Failure | None:
        """Rule 3's failure of a build with the kernels ``gpu`` (no CPU fallback here),
        or None: no NVIDIA GPU, none of known compute capability, or one they miss."""
        hit = self._gpu_failures.get(id(gpu))
        if hit is None or hit[0] is not gpu:
            p = self.profile
            # No compute capability known (a driver without NVML, a target without
            # smXY): the reason says so rather than guess (docs/facts.md section 1.3).
            missing = uncovered(gpu, self.gpu_ccs) if p.nvidia is not None and p.gpus else ()
            failure = None
            if p.nvidia is None or not p.gpus or missing:
                failure = Failure(rule="gpu", reason=gpu_reason(gpu, missing, p))
            hit = self._gpu_failures[id(gpu)] = (gpu, failure)
        return hit[1]

    def arch_max_failure(self, arch_max: tuple[int, int]) -> Failure | None:
        """Rule 3's failure of a build whose compiler knows GPUs up to ``arch_max``:
        the GPUs here newer than that, or None."""
        if arch_max not in self._arch_max_failures:
            beyond = [cc for cc in self.gpu_ccs if cc > arch_max]
            failure = None
            if beyond:
                failure = Failure(rule="gpu", reason=arch_max_reason(arch_max, beyond))
            self._arch_max_failures[arch_max] = failure
        return self._arch_max_failures[arch_max]

    def runs_accelerated(self, manifest: Manifest) -> bool:
        """Whether this machine has an accelerator some build of ``manifest`` is for
        (an NVIDIA driver for a CUDA or kernel build, ROCm for a ROCm build)."""
        nvidia, rocm = self.accelerated(manifest)
        p = self.profile
        return (nvidia and p.nvidia is not None) or (rocm and p.rocm is not None)


def _same_host(a: HostProfile, b: HostProfile) -> bool:
    """Whether two profiles agree on every fact rule 1 reads (the tags, and what its
    words name: the OS, CPU, libc and Python)."""
    return _host_facts(a) == _host_facts(b) and (a.tags is b.tags or a.tags == b.tags)


def _host_facts(p: HostProfile) -> tuple[object, ...]:
    return (p.os, p.arch, p.libc, p.libc_version, p.python, p.free_threaded)


@functools.lru_cache(maxsize=8)
def _tag_facts(
    tags: tuple[str, ...],
) -> tuple[dict[str, int], set[str], set[tuple[str, str]], dict[str, int]]:
    """Rank of each tag, the platforms, the interpreter/ABI pairs, each platform's best rank."""
    tag_rank = dict(zip(tags, range(len(tags)), strict=True))
    # One pass over the ~1,000 tags, from the last: the rank kept is each platform's
    # first; the interpreter/ABI heads are cut into pairs once each.
    first_platform_rank: dict[str, int] = {}
    heads: set[str] = set()
    for i in range(len(tags) - 1, -1, -1):
        head, _, platform = tags[i].rpartition("-")
        if head.count("-") == 1:  # interpreter-abi-platform
            first_platform_rank[platform] = i
            heads.add(head)
    interp_abi = {(a, b) for a, _, b in (h.partition("-") for h in heads)}
    return tag_rank, set(first_platform_rank), interp_abi, first_platform_rank


def _tag_failures(f: Flavour, m: Machine) -> tuple[list[Failure], int]:
    """Rule 1: platform and Python failures, and the tag rank (lower is better)."""
    if isinstance(f, WheelFlavour):
        # Its tags decide, then its page's requires-python: a page's files share a few
        # dozen tag sets and a few requires-python values (the same objects:
        # candidates._specifier), each judged once.
        hit = m.wheel_tags.get(f.tags)
        if hit is None:
            hit = m.wheel_tags[f.tags] = _wheel_tag_failures(f, m)
        fails, rank = hit
        if fails or f.requires_python is None:
            return list(fails), rank
        py = m.requires_python_failure(f.requires_python)
        return ([], rank) if py is None else ([py], 0)
    # Index flavour: platforms and Pythons as listed (a manifest's entries name a few
    # lists of each), judged once per pair of lists.
    key = (f.platforms, f.python)
    hit = m.index_tags.get(key)
    if hit is None:
        hit = m.index_tags[key] = _index_tag_failures(f.platforms, f.python, m)
    return list(hit[0]), hit[1]


def _rule_1_rank(f: Flavour, m: Machine) -> int | None:
    """The tag rank of a build that passes rule 1, or None where :func:`_tag_failures`
    finds a failure: the same decision, without the failure's words (a plan that fits
    reads no word of the builds it refused)."""
    if isinstance(f, WheelFlavour):
        rank = m.wheel_ranks.get(f.tags, -1)
        if rank == -1:
            # As _wheel_tag_failures decides: some tag of the wheel is one of this Python's.
            ranks = [m.tag_rank[t] for t in map(str, f.tags) if t in m.tag_rank]
            rank = m.wheel_ranks[f.tags] = min(ranks) if ranks else None
        if rank is None or f.requires_python is None:
            return rank
        return rank if m.requires_python_failure(f.requires_python) is None else None
    key = (f.platforms, f.python)
    rank = m.index_ranks.get(key, -1)
    if rank == -1:
        rank = m.index_ranks[key] = _index_rank(f.platforms, f.python, m)
    return rank


def _index_rank(platforms: tuple[str, ...], python: tuple[str, ...], m: Machine) -> int | None:
    """:func:`_rule_1_rank` of an index flavour: as :func:`_index_tag_failures` decides."""
    if platforms and not any(pl in m.platforms for pl in platforms):
        return None
    if python and m.profile.python_label not in python:
        return None
    if not platforms:
        return 0
    return min(m.first_platform_rank[pl] for pl in platforms if pl in m.platforms)


def _index_tag_failures(
    platforms: tuple[str, ...], python: tuple[str, ...], m: Machine
) -> tuple[tuple[Failure, ...], int]:
    """:func:`_tag_failures` of an index flavour by the platforms and Pythons it lists."""
    p = m.profile
    out: list[Failure] = []
    if platforms and not any(pl in m.platforms for pl in platforms):
        out.append(m.platform_failure(sorted(platforms)))
    if python and p.python_label not in python:
        out.append(Failure(rule="python", reason=python_reason(python, p)))
    if out or not platforms:
        return tuple(out), 0
    return (), min(m.first_platform_rank[pl] for pl in platforms if pl in m.platforms)


def _wheel_tag_failures(f: WheelFlavour, m: Machine) -> tuple[tuple[Failure, ...], int]:
    """:func:`_tag_failures` of a wheel by its tags alone."""
    out: list[Failure] = []
    ranks = [m.tag_rank[str(t)] for t in f.tags if str(t) in m.tag_rank]
    if ranks:
        return (), min(ranks)
    plats = sorted({t.platform for t in f.tags})
    py_ok = any((t.interpreter, t.abi) in m.interp_abi for t in f.tags)
    plat_ok = any(pl in m.platforms for pl in plats)
    if not plat_ok:
        out.append(m.platform_failure(plats))
    if not py_ok:
        out.append(m.python_failure(f))
    if not out:
        out.append(Failure(rule="tags", reason=NO_TAG_MATCHES))
    return tuple(out), 0


def _jetson_miss(f: Flavour, m: Machine) -> JetsonMiss | None:
    """Jetson builds fit Jetsons only; SBSA builds never fit JetPack 6 and older."""
    p = m.profile
    if f.needs.l4t is not None:
        if not p.jetson:
            return "not-a-jetson"
        if p.l4t is None:
            return "l4t-unknown"
        if not f.needs.l4t.contains(Version(p.l4t), prereleases=True):
            return "other-l4t"
        return None
    if not (m.jetson_builds and (f.needs.cuda is not None or f.needs.gpu)):
        return None
    plats = flavour_platforms(f)  # none, or "any": a build for every platform
    if not plats or any(x == "any" or os_arch_of(x) == ("linux", "aarch64") for x in plats):
        # SASS for this Jetson's Tegra CC means it was compiled for this Jetson; which L4T
        # releases it supports is not known without an l4t range (docs/facts.md 1.12).
        return "tegra-no-l4t" if _tegra_sass(f, p) else "sbsa"
    return None


def _tegra_sass(f: Flavour, p: HostProfile) -> tuple[KernelTarget, ...]:
    """The flavour's SASS targets that run on this machine's GPUs (a Jetson's Tegra)."""
    return tuple(
        t for t in f.needs.gpu if t.kind == "sass" and any(t.runs_on(cc) for cc in p.gpu_ccs)
    )


def _per_gpu_cuda(f: WheelFlavour, m: Machine) -> list[Failure] | None:
    """The driver rule from a wheel's ``cuda_floors``: each GPU of the machine needs the
    lowest floor among the targets that run on it (SASS: its runtime's; PTX: its ISA's).
    None when it does not apply (no floors, driver CUDA or GPUs unknown, or no target
    runs on any GPU: the flat ``cuda`` then decides, the gpu rule says the rest)."""
    floors = dict(f.cuda_floors)
    ccs = m.gpu_ccs
    n = f.needs
    if not floors or m.cuda is None or not ccs or n.cuda is None:
        return None
    ceiling = SpecifierSet(",".join(str(s) for s in n.cuda if s.operator in ("<", "<=", "!=")))
    failures = []
    served = False
    for cc in ccs:
        targets = [t for t in n.gpu if t.runs_on(cc)]
        if not targets:
            continue  # the gpu rule says so
        served = True
        # A target's floor replaces cuda's lower bound only: an upper bound still holds.
        specs = [(t, floors[t] & ceiling if t in floors else n.cuda) for t in targets]
        if any(spec.contains(m.cuda, prereleases=True) for _, spec in specs):
            continue
        failures.append(Failure(rule="cuda", reason=per_gpu_cuda_reason(cc, specs, m.cuda)))
    return failures if served else None


def _exact_pin(spec: SpecifierSet, version: Version) -> bool:
    return any(
        s.operator in ("==", "===") and "+" in s.version and s.contains(version) for s in spec
    )


def flavour_failures(
    f: Flavour,
    m: Machine,
    spec: SpecifierSet,
    manifest: Manifest,
) -> tuple[list[Failure], int]:
    """Every rule (1-5) the flavour fails, and its tag rank."""
    out, rank = machine_failures(f, m)
    return _user_failures(f, m, spec, manifest, out), rank


def solver_failures(
    f: Flavour,
    m: Machine,
    spec: SpecifierSet,
    manifest: Manifest,
) -> tuple[Sequence[Failure], int]:
    """:func:`flavour_failures` as the solver asks: a build that fails rule 1 (most
    of a manifest's builds are for other machines) is refused whatever the others
    say, so its failures, rule 1's words too, are judged when first read
    (:class:`LaterFailures`: ``-v``, ``--json``, a package with no fit), never in a
    plan that reads only its choices. Its rank, as :func:`flavour_failures` gives a
    refused build's: 0."""
    rank = _rule_1_rank(f, m)
    if rank is None:
        return LaterFailures(lambda: flavour_failures(f, m, spec, manifest)[0]), 0
    return _user_failures(f, m, spec, manifest, _machine_failures(f, m, [])), rank


class LaterFailures(Sequence[Failure]):
    """The failures of a refused build, judged by ``judge`` when they are first read
    (the same list, kept). A plan that reads only its choices never reads why a build
    was refused: only that it was. Never empty."""

    __slots__ = ("_failures", "_judge")

    def __init__(self, judge: Callable[[], list[Failure]]) -> None:
        self._judge: Callable[[], list[Failure]] | None = judge
        self._failures: list[Failure] = []

    def _judged(self) -> list[Failure]:
        if self._judge is not None:
            self._failures = self._judge()
            self._judge = None
        return self._failures

    def __bool__(self) -> bool:
        return True  # refused: some rule fails, known before it is said which

    def __len__(self) -> int:
        return len(self._judged())

    @overload
    def __getitem__(self, i: int) -> Failure: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Failure]: ...

    def __getitem__(self, i: int | slice) -> Failure | Sequence[Failure]:
        return self._judged()[i]

    def __iter__(self) -> Iterator[Failure]:
        return iter(self._judged())

    def __eq__(self, other: object) -> bool:
        """Equal to a list of the same failures, as that list is."""
        if isinstance(other, LaterFailures):
            other = other._judged()
        return isinstance(other, list) and self._judged() == other

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return repr(self._judged())


def _user_failures(
    f: Flavour, m: Machine, spec: SpecifierSet, manifest: Manifest, out: list[Failure]
) -> list[Failure]:
    """``out`` (rules 1-3) with rules 4 and 5: what reads the user's specifier and the
    whole manifest."""
    p = m.profile
    if not has_accelerator(f) and f.unjudged is None and not (spec and _exact_pin(spec, f.version)):
        any_nvidia, any_rocm = m.accelerated(manifest)
        if p.nvidia is not None and any_nvidia:
            reason = accelerator_reason("CUDA", f, manifest)
            out.append(Failure(rule="accelerator", reason=reason))
        elif p.rocm is not None and any_rocm:
            reason = accelerator_reason("ROCm", f, manifest)
            out.append(Failure(rule="accelerator", reason=reason))
    if spec and not version_ok(spec, f):  # a specifier set is false when it holds none
        out.append(_specifier_failure(f, spec))
    return out


def runs_on(f: Flavour, m: Machine) -> bool:
    """Whether the flavour passes rules 1-3 on ``m`` (:func:`machine_failures` finds
    none), asked of its tags first: the check most builds for another machine fail, so
    that the other rules are judged only for the builds that pass it."""
    return not _tag_failures(f, m)[0] and not machine_failures(f, m)[0]


def machine_failures(f: Flavour, m: Machine) -> tuple[list[Failure], int]:
    """The rules (1-3) the flavour fails on ``m`` whatever is asked for and whichever
    package's builds are beside it, and its tag rank: what the hints ask of a changed
    machine (rules 4 and 5 read the user's specifier and the whole manifest)."""
    out, rank = _tag_failures(f, m)
    return _machine_failures(f, m, out), rank


def _machine_failures(f: Flavour, m: Machine, out: list[Failure]) -> list[Failure]:
    """``out`` (rule 1's tags and Python) with the rest of rules 1-3."""
    p = m.profile
    n = f.needs
    # Only a Jetson build, or a machine that needs Jetson builds, can miss (most ask).
    jetson = _jetson_miss(f, m) if n.l4t is not None or m.jetson_builds else None
    if jetson is not None:
        tegra = _tegra_sass(f, p) if jetson == "tegra-no-l4t" else ()
        out.append(Failure(rule="jetson", reason=jetson_reason(jetson, f, p, tegra=tegra)))
    per_gpu = None
    if isinstance(f, WheelFlavour):
        if f.other_properties:
            # A PEP 825 variant of another namespace (docs/facts.md section 2).
            out.append(Failure(rule="properties", reason=properties_reason(f)))
        if f.cuda_floors:
            per_gpu = _per_gpu_cuda(f, m)
    if per_gpu is not None:
        out.extend(per_gpu)
    elif n.cuda is not None and (cuda := m.cuda_failure(n.cuda)) is not None:
        out.append(cuda)
    if n.rocm is not None and (m.rocm is None or not n.rocm.contains(m.rocm, prereleases=True)):
        out.append(Failure(rule="rocm", reason=rocm_reason(n.rocm, m.rocm)))
    if n.gfx and p.rocm is not None and p.rocm.gfx:
        # Rule 3 for ROCm: every AMD GPU is one the build carries code for (a GPU the
        # ROCm release dropped has none: docs/facts.md section 1.9). Unknown: not held.
        dropped = [g for g in p.rocm.gfx if g.partition(":")[0] not in n.gfx]
        if dropped:
            out.append(Failure(rule="gpu", reason=gfx_reason(n.gfx, dropped)))
    if n.gpu and not (n.cpu and p.nvidia is None) and (gpu := m.gpu_failure(n.gpu)) is not None:
        out.append(gpu)
    if (
        n.arch_max is not None
        and p.nvidia is not None
        and (beyond := m.arch_max_failure(n.arch_max)) is not None
    ):
        out.append(beyond)
    return out


def _specifier_failure(f: Flavour, spec: SpecifierSet) -> Failure:
    """Rule 5's failure, kept by the identity of the specifier and of what it is held
    against (the build's version or version pattern): a release's files share their
    version, and the plans the hints make again share the user's specifier. The entry
    holds both, so no id is reused while it is kept."""
    shown: object = f.versions if isinstance(f, IndexFlavour) and f.versions else f.version
    key = (id(spec), id(shown))
    hit = _SPECIFIER_FAILURES.get(key)
    if hit is None or hit[0] is not spec or hit[1] is not shown:
        if len(_SPECIFIER_FAILURES) > 65536:
            _SPECIFIER_FAILURES.clear()
        failure = Failure(rule="specifier", reason=specifier_reason(f, spec))
        hit = _SPECIFIER_FAILURES[key] = (spec, shown, failure)
    return hit[2]


_SPECIFIER_FAILURES: dict[tuple[int, int], tuple[SpecifierSet, object, Failure]] = {}


def version_ok(spec: SpecifierSet, f: Flavour) -> bool:
    """Rule 5. A version pattern (``versions``) holds unless the user pins a version
    (``==``/``===``, no wildcard) the pattern does not allow, or the user's bounds and
    the pattern's leave nothing between them."""
    version = f.version
    versions = f.versions if isinstance(f, IndexFlavour) else None
    if versions is None:
        return _contains(spec, version)
    if _disjoint(spec, versions) or _disjoint(versions, spec):
        return False  # triton<=3.2.0 against ">=3.6.0": no release is in both
    if no_version_between(spec & versions) is not None:
        return False  # torch>=2.13 against a range that ends at 2.12.1
    for pinned in exact_pins(spec):
        if pinned is None or not versions.contains(pinned, prereleases=True):
            return False
        if pinned.local is not None and pinned.local != version.local:
            return False  # ==2.2.2+cu121 is not a build of the cu118 range
    return True


def _contains(spec: SpecifierSet, version: Version) -> bool:
    """``spec.contains(version, prereleases=True)``, kept by identity: a plan asks it
    of the same requirement and build many times (every coupling against every build
    of a history), and packaging's check is the largest part of rule 5's cost. The
    entry holds both objects, so neither id is reused while it is kept."""
    hit = _CONTAINS.get((id(spec), id(version)))
    if hit is None or hit[0] is not spec or hit[1] is not version:
        if len(_CONTAINS) > 65536:
            _CONTAINS.clear()
        hit = (spec, version, spec.contains(version, prereleases=True))
        _CONTAINS[id(spec), id(version)] = hit
    return hit[2]


_CONTAINS: dict[tuple[int, int], tuple[SpecifierSet, Version, bool]] = {}


def _disjoint(low: SpecifierSet, high: SpecifierSet) -> bool:
    """Whether every release ``low`` allows is below every release ``high`` allows, by
    their bounds: an upper bound of ``low`` at or under a lower bound of ``high``."""
    for a in low:
        if a.operator not in ("<", "<=") or "*" in a.version:
            continue
        for b in high:
            if b.operator not in (">=", ">", "==", "~=") or "*" in b.version:
                continue
            try:
                top, floor = Version(a.version), Version(b.version)
            except InvalidVersion:
                continue
            if top < floor or (top == floor and (a.operator == "<" or b.operator == ">")):
                return True
    return False


def meets(f: Flavour, r: Requirement, other: Flavour) -> Unmet | None:
    """Whether ``other`` (chosen for ``r``'s package) meets ``f``'s coupling ``r``:
    None, or why not. A page template over ``other``'s build needs more than the
    version: one of ``local_labels``, and the facts the template reads.

    Kept by identity: a plan asks it of the same pair of builds in the search, in its
    pruning (to a fixed point) and again when it says why each build was not chosen,
    so each pair of a long history is judged once. The entry holds the three objects,
    so no id is reused while it is kept."""
    key = (id(f), id(r), id(other))
    hit = _MEETS.get(key)
    if hit is None or hit[0] is not f or hit[1] is not r or hit[2] is not other:
        if len(_MEETS) > 65536:
            _MEETS.clear()
        hit = (f, r, other, _meets(f, r, other))
        _MEETS[key] = hit
    return hit[3]


_MEETS: dict[tuple[int, int, int], tuple[Flavour, Requirement, Flavour, Unmet | None]] = {}


def _meets(f: Flavour, r: Requirement, other: Flavour) -> Unmet | None:
    label = f.version.local if isinstance(f, IndexFlavour) and f.versions is not None else None
    if label and other.version.local != label:
        # A labelled range's builds go with the coupled package's build of the same
        # label (torchvision 0.22.1+cu128 with torch 2.7.1+cu128, never with +cu126).
        return _unmet("local-label", r, other, labels=(label,))
    if not version_ok(r.specifier, other):
        return _unmet("version", r, other)
    if not isinstance(f, IndexFlavour) or f.coupled != canonicalize_name(r.name):
        return None
    local = other.version.local or ""
    if f.local_labels and local not in f.local_labels:
        return _unmet("local-label", r, other, labels=f.local_labels)
    assert f.template is not None
    facts = (f"{{{f.coupled}.version}}", f"{{{f.coupled}.minor}}")
    ranged = isinstance(other, IndexFlavour) and other.versions is not None
    if ranged and any(x in f.template for x in facts):
        # A range planned from its page alone stands for many releases: which one
        # pip takes, and so which page, is not known here.
        return _unmet("release", r, other, build=other.describe())
    if "{cxx11abi}" in f.template and other.cxx11abi is None:
        return _unmet("cxx11abi", r, other, build=other.describe())
    if ("{cuda}" in f.template or "{cuda_major}" in f.template) and runtime_of(other) is None:
        return _unmet("cuda", r, other, build=other.describe())
    return None


def _unmet(
    kind: UnmetKind, r: Requirement, other: Flavour, *, labels: Sequence[str] = (), build: str = ""
) -> Unmet:
    return Unmet(
        kind=kind,
        requirement=str(r),
        package=other.name,
        version=str(other.version),
        build=build,
        labels=tuple(labels),
    )


def _applies(rule: Rule, f: Flavour, p: HostProfile, spec: SpecifierSet) -> bool:
    """Whether a rule says anything about this flavour on this machine."""
    n = f.needs
    if rule == "python":
        return bool(f.python_versions)
    if rule == "cuda":
        return n.cuda is not None
    if rule == "rocm":
        return n.rocm is not None
    if rule == "gpu":
        # With a driver but no visible GPU, the kernels cannot be checked.
        if p.nvidia is None:
            return bool(n.gpu) and not n.cpu
        return (bool(n.gpu) or n.arch_max is not None) and bool(p.gpu_ccs)
    if rule == "accelerator":
        return (
            not has_accelerator(f)
            and f.unjudged is None
            and (p.nvidia is not None or p.rocm is not None)
        )
    if rule == "specifier":
        return bool(str(spec))
    return rule == "tags"


def evaluate_flavour(
    f: Flavour, manifest: Manifest, profile: HostProfile, spec: SpecifierSet | None = None
) -> dict[Rule, RuleOutcome]:
    """Rules 1-5 for one flavour: per rule ``pass``, ``fail`` (with the reason) or
    ``n/a``. The same evaluation the resolver makes (couplings need a plan)."""
    spec = spec or SpecifierSet()
    fails, _ = flavour_failures(f, Machine(profile), spec, manifest)
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


def distribution_of(f: Flavour) -> NormalizedName:
    """The distribution a build installs: the wheel file's name, the entry's
    ``install`` (``faiss-gpu-cu12``), or the package itself."""
    if isinstance(f, WheelFlavour):
        name = f.filename.split("-", 1)[0]
        return canonicalize_name(name) if name else f.name
    if f.install is not None:
        return canonicalize_name(Requirement(f.install).name)
    return f.name


def preference_of(f: Flavour) -> int:
    """The manifest's preference for a build (lower first): its entry's ``preference``,
    else the publisher's build (the package's own distribution) before another
    distribution's (a community one)."""
    return _preference(f, distribution_of(f))


def _preference(f: Flavour, distribution: NormalizedName) -> int:
    """:func:`preference_of`, the build's ``distribution`` known."""
    if f.preference is not None:
        return f.preference
    return 0 if distribution == f.name else 1


RankKey = Callable[[tuple[Flavour, int]], tuple[Any, ...]]

# The CUDA or ROCm release of a build that names none (one object: only compared).
_ZERO = Version("0")


def ranking(candidates: Sequence[tuple[Flavour, int]], driver: Version | None) -> RankKey:
    """The one ranking of ``candidates`` (builds that fit, each with its tag rank), as a
    sort key, best first, read in :data:`RankCriterion` order: one value per criterion
    (:func:`decided_by` names the first that differs). A distribution ranks by its most
    preferred build among them."""
    best: dict[NormalizedName, int] = {}
    for f, _ in candidates:
        d = distribution_of(f)
        own = _preference(f, d)
        best[d] = min(best.get(d, own), own)

    def key(item: tuple[Flavour, int]) -> tuple[Any, ...]:
        f, rank = item
        d = distribution_of(f)
        own = _preference(f, d)
        runtime = runtime_of(f)
        if runtime is not None and driver is not None and runtime > driver:
            # Newer than the driver: only after every older one, the nearest first.
            cuda_key: tuple[int, Any] = (1, runtime)
        else:
            cuda_key = (0, _Desc(runtime or spec_floor(f.needs.rocm) or _ZERO))
        # PEP 825: variants before the null variant, before non-variant wheels
        # (docs/facts.md section 2), among builds that are otherwise equal.
        label = f.variant if isinstance(f, WheelFlavour) else None
        variant_rank = 2 if label is None else 1 if label == "null" else 0
        return (
            f.unjudged is not None,
            best.get(d, own),
            _Desc(public_release(f.version)),
            cuda_key,
            own,
            rank,
            variant_rank,
            (_Desc(f.version), _Described(f)),
        )

    return key


def decided_by(chosen: tuple[Any, ...], other: tuple[Any, ...]) -> RankCriterion:
    """The criterion that ranked ``other`` below ``chosen`` (two keys of one
    :func:`ranking`): the first that differs."""
    for criterion, a, b in zip(RANK_CRITERIA, chosen, other, strict=True):
        if a != b:
            return criterion
    return "build"


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


class _Described:
    """A build's :meth:`describe` as the last word of a ranking: made only when two
    keys are equal up to it (a sort compares most pairs on their version)."""

    __slots__ = ("f", "text")

    def __init__(self, f: Flavour) -> None:
        self.f = f
        self.text: str | None = None

    def said(self) -> str:
        if self.text is None:
            self.text = self.f.describe()
        return self.text

    def __lt__(self, other: _Described) -> bool:
        return self.said() < other.said()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Described) and self.said() == other.said()

    def __hash__(self) -> int:
        return hash(self.said())
