"""The coupling solver: requirements as slots, then one flavour per slot so that every
coupling holds (rule 6).

Owns: :class:`Slot` (one package to resolve), :func:`solve` (pass-through entries, a
wheel the user named judged by :mod:`.aswritten`, rules 1-5 per slot, couplings bringing
in implied slots, the search), the pruning of candidates coupled with a package that has
no fit, and the depth-first search per group of coupled packages. A coupling failure
carries what caused it as data.

May import: :mod:`.model`, :mod:`.rules`, :mod:`.aswritten`, :mod:`.reasons`,
:mod:`.words`, ``reqfile`` and the manifest schema; never the plan's assembly or the hints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest
from resolver_hook.reqfile import ReqEntry, ReqFile, parse_requirements
from resolver_hook.resolve.aswritten import judge_wheel
from resolver_hook.resolve.model import (
    Cause,
    Coupling,
    Failure,
    PackagePlan,
    coupled_to,
    coupling_text,
    marker_true,
    pinned_release,
)
from resolver_hook.resolve.reasons import coupling_failure
from resolver_hook.resolve.rules import (
    LaterFailures,
    Machine,
    meets,
    ranking,
    solver_failures,
    version_ok,
)
from resolver_hook.resolve.words import AS_WRITTEN, NO_MANIFEST, marker_reason

__all__ = [
    "RULED_OUT",
    "UNSAID",
    "Slot",
    "Solved",
    "as_reqfile",
    "by_canonical_name",
    "coupled_names",
    "may_meet",
    "solve",
    "why_dead",
]

_SEARCH_BUDGET = 20_000  # DFS nodes per group of coupled packages

#: The failure of a build dropped for a coupling no build of its partner meets, in a
#: solve without reasons: saying why (:func:`why_dead`) looks through the partner's
#: rejected builds, the largest part of a hint's plan.
UNSAID = Failure(rule="coupling", reason="")
#: The one failure of a build the user's specifier rules out, in a solve without
#: reasons: its other rules are not judged (rule 5 holds on every machine, and what
#: the solve decides reads only that it failed).
RULED_OUT = Failure(rule="specifier", reason="")


@valueclass(kw_only=False, frozen=False)
class Slot:
    name: NormalizedName
    manifest: Manifest
    spec: SpecifierSet
    entry: ReqEntry | None  # None when implied by a coupling
    implied_by: list[str]
    candidates: list[tuple[Flavour, int]] = field(default_factory=list)  # pass 1-5, ranked
    rejected: list[tuple[Flavour, Sequence[Failure]]] = field(default_factory=list)
    chosen: Flavour | None = None
    coupling_rejects: dict[int, Coupling] = field(default_factory=dict)  # by candidate
    others: list[ReqEntry] = field(default_factory=list)  # the same name asked again


class Solved:
    """The choices, before they are put in words.

    A plain class: the solver's result is read once by the plan's assembly, never
    compared, copied or replaced: no generated method is needed.
    """

    __slots__ = ("m", "notes", "order", "packages", "slots", "user_constraints")

    def __init__(
        self,
        *,
        m: Machine,
        slots: dict[str, Slot],
        packages: dict[str, PackagePlan],  # those passed through (no slot)
        order: list[str],
        user_constraints: dict[str, list[ReqEntry]],
        notes: list[str],
    ) -> None:
        self.m = m
        self.slots = slots
        self.packages = packages
        self.order = order
        self.user_constraints = user_constraints
        self.notes = notes


def as_reqfile(requirements: ReqFile | Iterable[str | Requirement | ReqEntry]) -> ReqFile:
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


def by_canonical_name(manifests: Mapping[str, Manifest]) -> Mapping[str, Manifest]:
    """The manifests by canonical name, reading none that is read on first use
    (:class:`resolver_hook.manifest.load.ManifestSet`): a plan looks up only its own."""
    if all(canonicalize_name(k) == k for k in manifests):
        return manifests
    return {canonicalize_name(k): v for k, v in manifests.items()}


def _one_release(e: ReqEntry) -> bool:
    """Whether the line pins one release (``==2.27.7``, not a wildcard or a range)."""
    spec = list(e.requirement.specifier) if e.requirement is not None else []
    return len(spec) == 1 and spec[0].operator in ("==", "===") and "*" not in spec[0].version


def solve(  # noqa: PLR0915 - the numbered steps read best in one place
    reqs: ReqFile,
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    m: Machine | None = None,  # the profile's, when the caller has it already
    *,
    reasons: bool = True,
) -> Solved:
    """The choices for ``reqs`` on ``profile``; without ``reasons`` (the hints, which
    read only the choices) a build dropped for a coupling with no partner is not said
    why (:data:`UNSAID`), nor one the user's specifier rules out (:data:`RULED_OUT`)."""
    m = Machine(profile) if m is None else m
    by_name = by_canonical_name(manifests)
    notes: list[str] = list(reqs.warnings)
    packages: dict[str, PackagePlan] = {}
    order: list[str] = []
    slots: dict[str, Slot] = {}
    user_constraints: dict[str, list[ReqEntry]] = {}
    for c in reqs.constraints:
        if c.name and marker_true(c.marker, m.env):
            user_constraints.setdefault(c.name, []).append(c)

    # Requested packages: pass-through, or a slot to resolve.
    for e in reqs.requirements:
        key = e.name or e.text
        if not marker_true(e.marker, m.env):
            if key not in packages and key not in slots:
                packages[key] = PackagePlan(
                    name=NormalizedName(key),
                    action="pass",
                    requested=e.text,
                    where=e.where,
                    line=e.as_line(),
                    cause="marker",
                    reason=marker_reason(e.marker),
                )
                order.append(key)
            continue
        manifest = by_name.get(e.name) if e.name else None
        if manifest is not None and manifest.pins_only and not _one_release(e):
            manifest = None  # a line it cannot judge: said UNJUDGED (assemble.unlisted)
        twin = packages.get(key)
        if twin is not None and twin.cause == "marker":
            del packages[key]  # a marker-false twin seen first: this line counts
            order.remove(key)
            twin = None
        if manifest is None or e.kind != "requirement" or e.url or e.editable:
            why = NO_MANIFEST if manifest is None else AS_WRITTEN
            cause: Cause = "no-manifest" if manifest is None else "as-written"
            judged = judge_wheel(e, manifest, m) if manifest is not None else None
            if judged is not None and judged.action == "error":
                packages.setdefault(key, judged)  # refused: the installer never runs
                if key not in order:
                    order.append(key)
                slots.pop(key, None)
                continue
            if judged is not None:
                why, cause = judged.reason, judged.cause
            slot = slots.pop(key, None)
            if slot is None and twin is not None:  # the same name again: pip sees every line
                packages[key] = replace(twin, more_lines=(*twin.more_lines, e.as_line()))
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
                line=e.as_line(),
                more_lines=tuple(x.as_line() for x in earlier if x is not None),
                unjudged=judged.unjudged if judged is not None else None,
            )
            if slot is None:
                order.append(key)
            continue
        assert e.requirement is not None
        assert e.name is not None
        if twin is not None:  # asked for by URL or path already: left as written
            packages[key] = replace(twin, more_lines=(*twin.more_lines, e.as_line()))
            continue
        if e.name in slots:  # the same name twice: both specifiers hold (as in pip)
            slots[e.name].spec &= e.requirement.specifier
            slots[e.name].others.append(e)
            continue
        spec = _constraint_spec(user_constraints, e.name, e.requirement.specifier)
        slots[e.name] = Slot(name=e.name, manifest=manifest, spec=spec, entry=e, implied_by=[])
        order.append(e.name)

    # Rules 1-5 for every slot; couplings bring in implied slots.
    pending = list(slots)
    while pending:
        name = pending.pop(0)
        slot = slots[name]
        for f in slot.manifest.flavours:
            if not reasons and slot.spec and not version_ok(slot.spec, f):
                slot.rejected.append((f, [RULED_OUT]))
                continue
            fails, rank = solver_failures(f, m, slot.spec, slot.manifest)
            if fails:
                slot.rejected.append((f, fails))
            else:
                slot.candidates.append((f, rank))
        slot.candidates.sort(key=ranking(slot.candidates, m.cuda))
        for f, _ in slot.candidates:
            for r in f.needs.requires:
                target = coupled_to(r)
                if not m.holds(r.marker) or target not in by_name:
                    continue
                if target not in slots:
                    if target in packages:  # asked for by URL or marker-skipped: leave it
                        continue
                    slots[target] = Slot(
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

    _search(slots, m, reasons=reasons)
    return Solved(
        m=m,
        slots=slots,
        packages=packages,
        order=order,
        user_constraints=user_constraints,
        notes=notes,
    )


def coupled_names(edges: Mapping[str, set[str]], names: Iterable[str]) -> set[str]:
    """``names`` and every package coupled with them, directly or through others."""
    seen = set(names)
    stack = list(seen)
    while stack:
        for y in edges.get(stack.pop(), ()):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return seen


def _constraint_spec(
    user_constraints: Mapping[str, list[ReqEntry]],
    name: str,
    spec: SpecifierSet | None = None,
) -> SpecifierSet:
    """``spec`` (none: any version) and the user's constraints on ``name``. Without
    constraints, ``spec`` itself: the same object in every plan the hints make again,
    so what is kept by its identity (rule 5's check and words) is reused."""
    spec = _ANY_VERSION if spec is None else spec
    for c in user_constraints.get(name, []):
        if c.requirement is not None:
            spec &= c.requirement.specifier
    return spec


_ANY_VERSION = SpecifierSet()  # never changed: ``&=`` makes a new set


def _couplings_hold(
    f: Flavour,
    assigned: Mapping[NormalizedName, Flavour],
    m: Machine,
) -> Coupling | None:
    """The first coupling of ``f`` that the build ``assigned`` to its package does not meet."""
    for r in f.needs.requires:
        target = coupled_to(r)
        other = assigned.get(target)
        if other is None or not m.holds(r.marker):
            continue
        unmet = meets(f, r, other)
        if unmet is not None:
            return Coupling(
                cause="clash",
                requirement=str(r),
                package=target,
                version=str(other.version),
                unmet=unmet,
            )
    return None


def _consistent(
    slot: Slot, f: Flavour, assigned: Mapping[NormalizedName, Flavour], m: Machine
) -> Coupling | None:
    """Whether ``f`` for ``slot`` goes with the builds ``assigned`` so far, both ways:
    None, or the first coupling that fails (``f``'s own, or one of theirs on ``f``)."""
    why = _couplings_hold(f, assigned, m)
    if why is not None:
        return why
    probe = {slot.name: f}
    for other in assigned.values():
        why = _couplings_hold(other, probe, m)
        if why is not None:
            return replace(why, cause="reverse", holder=f"{other.name} {other.version}")
    return None


def _groups(slots: Mapping[str, Slot]) -> list[list[str]]:
    """Connected groups of coupled packages, each ordered providers first."""
    edges: dict[str, set[str]] = {n: set() for n in slots}
    deps: dict[str, set[str]] = {n: set() for n in slots}
    for n, s in slots.items():
        for f, _ in s.candidates:
            for r in f.needs.requires:
                t = coupled_to(r)
                if t in slots and t != n:
                    edges[n].add(t)
                    edges[t].add(n)
                    deps[n].add(t)
    seen: set[str] = set()
    groups = []
    for n in slots:
        if n in seen:
            continue
        group = coupled_names(edges, [n])
        seen |= group
        # Providers first: a package before those whose flavours require it; but the
        # packages you asked for before those only their couplings bring in, so that a
        # newer build of those (triton 3.9.0) never holds yours back (torch<=2.9.0 would
        # take 2.3.1, the newest without a triton pin for Python 3.12).
        ordered: list[str] = []
        remaining = [x for x in slots if x in group and slots[x].entry is not None]
        remaining += [x for x in slots if x in group and slots[x].entry is None]
        asked = [x for x in remaining if slots[x].entry is not None]
        while remaining:
            pool = [x for x in remaining if x in asked] or remaining
            rest = set(pool)
            ready = [x for x in pool if not (deps[x] & rest) - {x}]
            pick = ready[0] if ready else pool[0]
            ordered.append(pick)
            remaining.remove(pick)
        groups.append(ordered)
    return groups


def _prune(slots: Mapping[str, Slot], m: Machine, *, reasons: bool = True) -> None:
    """Drop candidates coupled with a package that has no fitting build (to a fixed
    point); then, in a slot left with none, mark the builds ruled out by the user's
    specifier alone whose couplings cannot hold either, so that none is offered as
    the nearest that runs. Without ``reasons``, the dropped builds are not said why
    and nothing is marked (neither changes a choice)."""
    changed = True
    held_out: dict[str, list[tuple[Flavour, int]]] = {}
    # A kept build is judged again only when what its judgement read has changed: the
    # candidates of a package it couples with (_dead_coupling), or a package left with
    # none (_held reads only those). Each loss is counted; a slot remembers the count
    # when its builds were last judged, so the pass that finds the fixed point judges
    # almost none again.
    losses = 0
    lost_at: dict[str, int] = {}  # the count at a slot's last loss
    emptied_at = 0  # the count when a slot was last left with none
    judged_at: dict[str, int] = {}
    # A coupling of a build whose meeting reads only the partner's version is dead, and
    # said why, once per requirement and list of the partner's candidates (_Couplings).
    judged = _Couplings()
    while changed:
        changed = False
        for slot in slots.values():
            since = judged_at.get(slot.name)
            judged_at[slot.name] = losses
            keep = []
            for f, rank in slot.candidates:
                if since is not None and emptied_at <= since and _unchanged(f, lost_at, since):
                    keep.append((f, rank))
                    continue
                dead = _dead_coupling(f, slots, m, judged)
                if dead is not None and not reasons:
                    # Still rejected: _held reads which builds were, not why.
                    slot.rejected.append((f, [UNSAID]))
                elif dead is not None:
                    slot.rejected.append((f, judged.failures(f, dead, slots[coupled_to(dead)])))
                elif (held := _held(f, slot, slots, m)) is not None:
                    # The reason nothing fits: said before the builds that do not run.
                    held_out.setdefault(slot.name, []).append((f, rank))
                    slot.rejected.insert(
                        len(held_out[slot.name]) - 1, (f, [coupling_failure(held)])
                    )
                else:
                    keep.append((f, rank))
            if len(keep) < len(slot.candidates):
                changed = True
                slot.candidates = keep  # else the same list: its index (may_meet) holds
                losses += 1
                lost_at[slot.name] = losses
                if not keep:
                    emptied_at = losses
    if not reasons:
        return
    # A build held out only by another line's pin still runs here: the builds of that
    # other line outside its specifier that go with it are offered as the nearest.
    live = {
        n: replace(s, candidates=[*s.candidates, *held_out[n]]) if n in held_out else s
        for n, s in slots.items()
    }
    for slot in slots.values():
        if slot.candidates:
            continue  # alternatives are offered only where nothing fits
        for i, (f, fails) in enumerate(slot.rejected):
            if not f.needs.requires or not fails or any(x.rule != "specifier" for x in fails):
                continue
            dead = _dead_coupling(f, live, m)
            if dead is not None:
                why = why_dead(f, dead, slots[coupled_to(dead)])
                slot.rejected[i] = (f, [*fails, coupling_failure(why)])


def _unchanged(f: Flavour, lost_at: Mapping[str, int], since: int) -> bool:
    """Whether no package ``f`` couples with (its marker true here or not) has lost a
    candidate since the count ``since``."""
    return all(lost_at.get(coupled_to(r), 0) <= since for r in f.needs.requires)


def _held(f: Flavour, slot: Slot, slots: Mapping[str, Slot], m: Machine) -> Coupling | None:
    """Why ``f`` cannot go with a package the user pinned that has no fit here: none of
    the builds their requirement allows (``xformers==0.0.25.post1``, no build of it for
    this Python) goes with ``f`` (torch 2.13.0, where each needs torch 2.2.2). A refused
    line still says what the file allows, so its partners are chosen within it, or
    refused; None when one of them goes with ``f``, or none is pinned. A package only
    such lines bring in (torch for ``torchvision==0.15.2`` alone) is left as it was:
    it has no line of its own to refuse."""
    if slot.entry is None and not any(slots[n].candidates for n in slot.implied_by):
        return None
    for other in slots.values():
        if other is slot or other.candidates or other.entry is None or not other.spec:
            continue
        allowed = [
            g for g, fails in other.rejected if not any(x.rule == "specifier" for x in fails)
        ]
        first: Coupling | None = None
        for g in allowed:
            unmet = next(
                (
                    (r, u)
                    for r in g.needs.requires
                    if coupled_to(r) == slot.name
                    and m.holds(r.marker)
                    and (u := meets(g, r, f)) is not None
                ),
                None,
            )
            if unmet is None:
                first = None
                break
            if first is None:
                r, u = unmet
                first = Coupling(
                    cause="held",
                    requirement=str(r),
                    package=slot.name,
                    version=str(f.version),
                    unmet=u,
                    holder=" and ".join(x.text for x in (other.entry, *other.others)),
                )
        if first is not None:
            return first
    return None


def _dead_coupling(
    f: Flavour, slots: Mapping[str, Slot], m: Machine, judged: _Couplings | None = None
) -> Requirement | None:
    """The first coupling of ``f`` (its marker true here) that no candidate of the
    coupled package meets, or None; ``judged``: what is known of couplings already."""
    kept = judged if judged is not None and _by_version(f) else None
    for r in f.needs.requires:
        other = slots.get(coupled_to(r))
        if other is None or not m.holds(r.marker):
            continue
        if kept is not None:
            if kept.dead(f, r, other.candidates):
                return r
        elif not any(meets(f, r, g) is None for g in may_meet(r, other.candidates)):
            return r
    return None


def _by_version(f: Flavour) -> bool:
    """Whether :func:`meets` reads only the version of the build a coupling of ``f``
    names: not for a labelled range (the partner's label too) nor for a page computed
    from the partner's build (the facts its template reads)."""
    if not isinstance(f, IndexFlavour):
        return True
    return f.coupled is None and (f.versions is None or not f.version.local)


class _Couplings:
    """Whether a coupling is dead, and why, for the builds whose meeting reads only
    the partner's version (:func:`_by_version`): the builds of a release share their
    requirement objects, so a pruning asks the same few of each list of a partner's
    candidates many times. Kept by the identity of the requirement and of the list (a
    pruning replaces a slot's list rather than change it); each entry holds both, so
    no id is reused while it is kept."""

    __slots__ = ("_dead", "_why")

    def __init__(self) -> None:
        self._dead: dict[tuple[int, int], tuple[Requirement, Sequence[Any], int, bool]] = {}
        self._why: dict[tuple[int, int], tuple[Requirement, Sequence[Any], int, LaterFailures]] = {}

    def dead(self, f: Flavour, r: Requirement, builds: Sequence[Any]) -> bool:
        """Whether no build of ``builds`` meets ``f``'s coupling ``r``."""
        key = (id(r), id(builds))
        hit = self._dead.get(key)
        if hit is None or hit[0] is not r or hit[1] is not builds or hit[2] != len(builds):
            dead = not any(meets(f, r, g) is None for g in may_meet(r, builds))
            hit = self._dead[key] = (r, builds, len(builds), dead)
        return hit[3]

    def failures(self, f: Flavour, r: Requirement, other: Slot) -> Sequence[Failure]:
        """Rule 6's failure of ``f``, whose coupling ``r`` no candidate of ``other``
        meets (:func:`why_dead`), said when first read (:class:`LaterFailures`: a
        plan that fits never reads it) of the candidates ``other`` has now. Said now
        where the user's specifier on ``other`` makes why_dead read ``other``'s
        rejected builds, which change as the pruning goes on; kept as :meth:`dead` is
        where it reads the version alone."""
        if other.spec:
            return [coupling_failure(why_dead(f, r, other))]
        builds = other.candidates
        if not _by_version(f):
            return LaterFailures(lambda: [coupling_failure(why_dead(f, r, other, builds))])
        key = (id(r), id(builds))
        hit = self._why.get(key)
        if hit is None or hit[0] is not r or hit[1] is not builds or hit[2] != len(builds):
            said = LaterFailures(lambda: [coupling_failure(why_dead(f, r, other, builds))])
            hit = self._why[key] = (r, builds, len(builds), said)
        return hit[3]


def _public(v: Version) -> tuple[Any, ...]:
    """A version without its local label, as a cheap key, found by identity (a plan
    compares the same builds with the same few pins many times)."""
    hit = _PUBLIC.get(id(v))
    if hit is None or hit[0] is not v:
        if len(_PUBLIC) > 65536:
            _PUBLIC.clear()
        release = v.release
        while len(release) > 1 and release[-1] == 0:
            release = release[:-1]  # 2.7.0 is 2.7
        hit = (v, (v.epoch, release, v.pre, v.post, v.dev))
        _PUBLIC[id(v)] = hit
    return hit[1]


_PUBLIC: dict[int, tuple[Version, tuple[Any, ...]]] = {}


def _exact_release(r: Requirement) -> tuple[Any, ...] | None:
    """The public release a coupling pins exactly (``torch==2.7.1``; ``2.13.0`` of
    ``torch==2.13.0+cu126``: a build of another release cannot meet a labelled pin
    either, and a prebuilt wheel's coupling is labelled) as its :func:`_public` key,
    or None. Kept by the requirement's identity (the entry holds it, so no id is
    reused meanwhile): a release's builds share their requirement objects."""
    hit = _EXACT.get(id(r))
    if hit is None or hit[0] is not r:
        if len(_EXACT) > 65536:
            _EXACT.clear()
        spec = r.specifier
        pinned = None
        if len(spec) == 1 and next(iter(spec)).operator == "==":
            pinned = pinned_release(spec)
        hit = _EXACT[id(r)] = (r, None if pinned is None else _public(pinned))
    return hit[1]


_EXACT: dict[int, tuple[Requirement, tuple[Any, ...] | None]] = {}


def may_meet(r: Requirement, builds: Sequence[Any]) -> Sequence[Flavour]:
    """The builds of ``builds`` (flavours, or ``(flavour, ...)`` pairs) that may meet
    ``r``: for an exact pin (``torch==2.7.1``, ``torch==2.13.0+cu126``: most couplings)
    those of that release and the ranges; else all. A cheap filter before
    :func:`meets`, from an index of ``builds`` by release kept while the sequence is
    unchanged (a plan asks it of every pair of coupled builds)."""
    pinned = _exact_release(r)
    index = _index(builds)
    if pinned is None:
        return index[None]
    return [*index.get(pinned, ()), *index[()]]


def _index(builds: Sequence[Any]) -> dict[Any, list[Flavour]]:
    """``builds`` by release key; ``()``: the ranges; None: every build."""
    hit = _INDEX.get(id(builds))
    if hit is not None and hit[0] is builds and hit[1] == len(builds):
        return hit[2]
    out: dict[Any, list[Flavour]] = {None: [], (): []}
    for item in builds:
        g = item[0] if isinstance(item, tuple) else item
        out[None].append(g)
        if isinstance(g, IndexFlavour) and g.versions is not None:
            out[()].append(g)
        else:
            out.setdefault(_public(g.version), []).append(g)
    if len(_INDEX) > 4096:
        _INDEX.clear()
    _INDEX[id(builds)] = (builds, len(builds), out)
    return out


_INDEX: dict[int, tuple[Sequence[Any], int, dict[Any, list[Flavour]]]] = {}


def _pinned_out(r: Requirement, rejected: Sequence[tuple[Flavour, Sequence[Failure]]]) -> list[int]:
    """The places in ``rejected``, in order, of the builds that may be ruled out by
    the user's specifier (rule 5) alone and meet ``r``: for an exact pin the builds
    :func:`may_meet` keeps (its release's few, and the ranges); for a range those that
    failed rule 5 alone when the list was last looked at (a pinned line's package
    rejects hundreds of builds, most for other reasons). The caller checks each
    place's failures: an entry is replaced only by the same build with a failure
    more, so a place may no longer qualify, but none is missed. Kept while the list
    keeps its length, as :func:`_index` is."""
    found = _PLACES.get(id(rejected))
    if found is None or found[0] is not rejected or found[1] != len(rejected):
        places: dict[int, list[int]] = {}
        ruled_out = []
        for i, (g, fails) in enumerate(rejected):
            places.setdefault(id(g), []).append(i)
            if fails and all(x.rule == "specifier" for x in fails):
                ruled_out.append(i)
        if len(_PLACES) > 4096:
            _PLACES.clear()
        found = _PLACES[id(rejected)] = (rejected, len(rejected), places, ruled_out)
    if _exact_release(r) is None:
        return found[3]  # a range: every build may meet it
    # An exact pin: the few builds of its release (and the ranges), wherever they are.
    return sorted({i for g in may_meet(r, rejected) for i in found[2][id(g)]})


_PLACES: dict[int, tuple[Sequence[Any], int, dict[int, list[int]], list[int]]] = {}
_FLAVOURS: dict[int, tuple[Manifest, tuple[Flavour, ...]]] = {}


def why_dead(
    f: Flavour, r: Requirement, other: Slot, candidates: Sequence[Any] | None = None
) -> Coupling:
    """Why no candidate of ``other`` meets ``f``'s coupling ``r``: the user's own
    requirement on ``other`` rules out a build that would (``pinned``), a page
    template's fact the builds lack (``page``: their local label, C++ ABI), else none
    fits this machine (``unfit``) or none exists (``missing``). ``candidates``:
    ``other``'s when the coupling was found dead (None: those it has now)."""
    requirement = coupling_text(r)
    candidates = other.candidates if candidates is None else candidates
    # A build fails rule 5 only against the user's own specifier: without one, none is
    # ruled out by it alone, and the rejected builds (hundreds) need no look.
    if other.spec:
        for i in _pinned_out(r, other.rejected):
            g, fails = other.rejected[i]
            if not fails or any(x.rule != "specifier" for x in fails):
                continue
            if meets(f, r, g) is None:
                return Coupling(
                    cause="pinned",
                    requirement=requirement,
                    package=other.name,
                    version=str(g.version),
                    pinned_by=f"{other.name}{other.spec}",
                )
    for g in may_meet(r, candidates):
        if version_ok(r.specifier, g):  # the version holds: a fact the page needs is missing
            unmet = meets(f, r, g)
            if unmet is not None:
                return Coupling(
                    cause="page", requirement=requirement, package=other.name, unmet=unmet
                )
    everything = _FLAVOURS.get(id(other.manifest))
    if everything is None or everything[0] is not other.manifest:
        # ``Manifest.flavours`` is a new tuple each time: kept once per manifest.
        everything = (other.manifest, other.manifest.flavours)
        _FLAVOURS[id(other.manifest)] = everything
    exists = any(version_ok(r.specifier, g) for g in may_meet(r, everything[1]))
    return Coupling(
        cause="unfit" if exists else "missing", requirement=requirement, package=other.name
    )


def _search(slots: Mapping[str, Slot], m: Machine, *, reasons: bool = True) -> None:
    """Rule 6: choose one candidate per slot so that every coupling holds."""
    _prune(slots, m, reasons=reasons)
    for group in _groups(slots):
        live = [n for n in group if slots[n].candidates]
        budget = [_SEARCH_BUDGET]
        solution = _dfs(live, 0, {}, slots, m, budget)
        if solution is not None:
            for key, f in solution.items():
                slots[key].chosen = f
            continue
        # No full solution: choose greedily, best first, and say what clashed.
        assigned: dict[NormalizedName, Flavour] = {}
        for n in live:
            slot = slots[n]
            for i, (f, _) in enumerate(slot.candidates):
                why = _consistent(slot, f, assigned, m)
                if why is None:
                    slot.chosen = f
                    assigned[slot.name] = f
                    break
                slot.coupling_rejects[i] = why


def _dfs(  # noqa: PLR0917 - a recursive helper
    names: list[str],
    i: int,
    assigned: dict[NormalizedName, Flavour],
    slots: Mapping[str, Slot],
    m: Machine,
    budget: list[int],
) -> dict[NormalizedName, Flavour] | None:
    if i == len(names):
        return dict(assigned)
    slot = slots[names[i]]
    for f, _ in slot.candidates:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if _consistent(slot, f, assigned, m) is None:
            assigned[slot.name] = f
            found = _dfs(names, i + 1, assigned, slots, m, budget)
            del assigned[slot.name]
            if found is not None:
                return found
    return None
