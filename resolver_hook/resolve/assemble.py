"""The solver's choices as a :class:`~.model.Plan`: per package what and why.

Owns: :func:`build_plan` (solve, then one :class:`~.model.PackagePlan` per package
with its rejections and reason; the notes; the user's index lines judged by
:mod:`.aswritten`; twins refused; the requirement, constraint and find-links lines for
the installer). A package with no fit is said by :mod:`.nofit`, a computed page filled
by :mod:`.computedpage`.

May import: every part of ``resolve/`` but the hints and the package itself, ``reqfile``
and the manifest schema.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from resolver_hook.ground.valueclass import replace
from resolver_hook.host.profile import HostProfile
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest, WheelFlavour
from resolver_hook.manifest.twins import Family, families, twins_among
from resolver_hook.reqfile import ReqEntry, ReqFile, format_requirement, url_lines_first
from resolver_hook.resolve.aswritten import judge_index_lines
from resolver_hook.resolve.model import (
    Cause,
    Coupling,
    Failure,
    PackagePlan,
    Plan,
    Rejection,
    Rejections,
    exact_pins,
    public_release,
)
from resolver_hook.resolve.reasons import coupling_failure, ranked_reason
from resolver_hook.resolve.rules import (
    Machine,
    decided_by,
    distribution_of,
    meets,
    ranking,
    version_ok,
)
from resolver_hook.resolve.solve import Slot, may_meet, solve, why_dead
from resolver_hook.resolve.words import (
    BUILT_IN_SHA256_NOTE,
    HASH_NOTE,
    build_only_reason,
    build_reason,
    chosen_words,
    computed_page_note,
    constraint_conflict_note,
    extra_index_note,
    installs_reason,
    newer_python_words,
    no_manifest_unjudged_reason,
    other_name_notes,
    passthrough_reason,
    stale_note,
    template_reason,
    twins_hint,
    twins_reason,
    unjudged_note,
    unjudged_reason,
    unlisted_reason,
    unverified_note,
)

__all__ = [
    "build_plan",
]


def build_plan(
    reqs: ReqFile,
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    *,
    today: datetime.date | None = None,
) -> Plan:
    """Solve, then say what and why for every package."""
    s = solve(reqs, manifests, profile)
    for name, slot in s.slots.items():
        s.packages[name] = _slot_plan(slot, s.slots, s.m)
    ordered = [s.packages[k] for k in s.order if k in s.packages]
    notes = list(s.notes)
    notes.extend(other_name_notes(ordered, {n: x.chosen for n, x in s.slots.items()}))
    computed = [p for p in ordered if p.computed and p.action == "rewrite"]
    if computed:
        from resolver_hook.resolve.computedpage import coupled_build

        notes.extend(computed_page_note(p, *coupled_build(p, s.slots)) for p in computed)
    if today is not None:
        notes.extend(stale_note(ordered, today))
    # What reading the packages' pages showed (resolver_hook.inventory).
    notes.extend(n for slot in s.slots.values() for n in slot.manifest.notes)
    ordered = judge_index_lines(reqs, ordered, manifests, s.m, notes)
    if profile.nvidia is not None:
        ordered = [_cuda_without_manifest(p) for p in ordered]
    ordered = _refuse_twins(ordered, manifests)
    return _assemble(profile, ordered, reqs, s.user_constraints, notes)


def _cuda_without_manifest(p: PackagePlan) -> PackagePlan:
    """A CUDA distribution no manifest describes (gpu_names.toml), on an NVIDIA
    machine: unjudged, said with what to do, never passed in silence (issue 50)."""
    if p.cause != "no-manifest" or p.action != "pass":
        return p
    from resolver_hook.manifest.gpunames import cuda_distribution  # no manifest: rare

    known = cuda_distribution(p.name)
    if known is None:
        return p
    return replace(
        p,
        cause="unjudged",
        reason=no_manifest_unjudged_reason(*known),
        unjudged="which builds it has and the CUDA runtime and kernel list of each (no manifest)",
    )


def _refuse_twins(
    packages: list[PackagePlan], manifests: Mapping[str, Manifest]
) -> list[PackagePlan]:
    """Requirements whose distributions install the same import package (onnxruntime
    and onnxruntime-gpu, docs/facts.md section 6.16) are twins: the install's proof
    refuses them in the installer's resolution, and the plan refuses those the
    requirements name already, so plan, lock and install say the same. The one kept is
    the distribution the plan chose for a managed package (onnxruntime's build for this
    machine), else the first asked for; each other one is an error naming it."""
    installs: dict[NormalizedName, PackagePlan] = {}  # distribution -> who installs it
    for p in packages:
        if p.action == "error" or p.line is None or p.cause == "marker":
            continue
        installs.setdefault(p.distribution, p)
    if len(installs) < 2:
        return packages
    known = list(families(manifests, [p.name for p in packages]))
    # A plan entry that installs another distribution makes that pair a family too.
    known += [Family(names=(p.name, d), source="plan") for d, p in installs.items() if d != p.name]
    order = list(installs)
    refused: dict[NormalizedName, PackagePlan] = {}
    for fam, names in twins_among(installs, known):
        found = sorted(names, key=order.index)  # as asked
        # A build the rules chose here (rewritten, or the plain build left to the installer).
        planned = [d for d in found if installs[d].cause == "fit" and installs[d].flavour]
        keep = planned[0] if planned else found[0]
        for d in found:
            p = installs[d]
            if d == keep or p.name in refused:
                continue
            refused[p.name] = replace(
                p,
                action="error",
                cause="twins",
                reason=twins_reason(d, keep, fam),
                hint=twins_hint(d, keep, found, planned=bool(planned)),
                twin_of=keep,
                line=None,
                more_lines=(),
                constraint=None,
                find_links=None,
            )
    return [refused.get(p.name, p) for p in packages]


def _coupling_failures(f: Flavour, slots: Mapping[str, Slot], m: Machine) -> list[Failure]:
    """Rule 6 for one flavour against the plan as chosen: each ``requires`` that fails."""
    out = []
    for r in f.needs.requires:
        other = slots.get(canonicalize_name(r.name))
        if other is None or not m.holds(r.marker):
            continue
        if other.chosen is not None and meets(f, r, other.chosen) is None:
            continue
        if not any(meets(f, r, g) is None for g in may_meet(r, other.candidates)):
            why = why_dead(f, r, other)
        elif other.chosen is not None:
            why = Coupling(
                cause="plan",
                requirement=str(r),
                package=other.name,
                version=str(other.chosen.version),
                unmet=meets(f, r, other.chosen),
            )
        else:
            why = Coupling(cause="inconsistent", requirement=str(r), package=other.name)
        out.append(coupling_failure(why))
    return out


def _rejections(slot: Slot, slots: Mapping[str, Slot], m: Machine) -> list[Rejection]:
    """Every flavour not chosen, with every rule it fails (couplings against the plan)."""
    # A wheel's couplings are judged by the coupled builds alone (rules.meets reads
    # nothing else of it), so the files of one release, which share their requirement
    # objects, share the verdict: each set of requirements is judged once.
    judged: dict[tuple[int, ...], tuple[tuple[Requirement, ...], list[Failure]]] = {}

    def couplings(f: Flavour) -> list[Failure]:
        if isinstance(f, IndexFlavour):
            return _coupling_failures(f, slots, m)
        key = tuple(map(id, f.needs.requires))
        hit = judged.get(key)
        if hit is None:  # the entry holds the requirements: no id is reused meanwhile
            hit = judged[key] = (f.needs.requires, _coupling_failures(f, slots, m))
        return list(hit[1])

    out = []
    for f, fails in slot.rejected:
        more = [] if any(x.rule == "coupling" for x in fails) else couplings(f)
        out.append(Rejection(candidate=f.describe(), failures=(*fails, *more), where=f.where))
    chosen = slot.chosen
    key = ranking(slot.candidates, m.cuda)
    chosen_key = next((key(item) for item in slot.candidates if item[0] is chosen), None)
    for i, (f, rank) in enumerate(slot.candidates):
        if f is chosen:
            continue
        if i in slot.coupling_rejects:
            fails = [coupling_failure(slot.coupling_rejects[i])]
        else:
            fails = couplings(f)
        if not fails and chosen is not None and chosen_key is not None:
            why = decided_by(chosen_key, key((f, rank)))
            fails = [Failure(rule="ranked", reason=ranked_reason(why, distribution_of(chosen)))]
        elif not fails:
            fails = [coupling_failure(Coupling(cause="no-choice"))]
        out.append(Rejection(candidate=f.describe(), failures=tuple(fails), where=f.where))
    return out


def _newer_for_another_python(slot: Slot, chosen: Flavour, p: HostProfile) -> str | None:
    """Why the newest release the user's specifier allows was not chosen, when it is
    newer than ``chosen`` and a build of it for this platform fails only on Python
    (torch 2.15.0 has no cp310 files): said without ``-v``, since the plan would
    otherwise look stale. None when the newest release fails for other reasons too."""
    if isinstance(chosen, IndexFlavour) and chosen.versions is not None:
        return None
    mine = public_release(chosen.version)
    newer = [
        (public_release(f.version), f, fails)
        for f, fails in slot.rejected
        if not (isinstance(f, IndexFlavour) and f.versions is not None)
        # A version sorts at or after its public release: one not after ``mine``
        # has no newer public release either (most rejected builds are older).
        and f.version > mine
        and public_release(f.version) > mine
        and version_ok(slot.spec, f)
        and not f.version.is_prerelease
    ]
    if not newer:
        return None
    newest = max(v for v, _, _ in newer)
    if any(public_release(f.version) == newest for f, _ in slot.candidates):
        return None
    for v, f, fails in newer:
        if v == newest and [x.rule for x in fails] == ["python"]:
            return newer_python_words(slot.manifest.display_name, str(newest), f, p)
    return None


def _no_fit_plan(
    slot: Slot, m: Machine, more: tuple[str, ...], base: dict[str, Any]
) -> PackagePlan:
    """A package the manifest describes with no build that fits (:mod:`.nofit` says
    why, imported only then): built from source where the manifest allows it, else an
    error naming the nearest pin that would fit."""
    from resolver_hook.resolve.nofit import (
        alternatives_for,
        nearest_pin,
        no_fit_reason,
        short_refusal,
    )

    e = slot.entry
    cause: Cause = "conflict" if slot.candidates else "no-fit"
    alternatives = tuple(alternatives_for(slot))
    if slot.manifest.buildable:  # no nearest pin is named: the installer builds it
        return PackagePlan(
            action="build",
            cause=cause,
            reason=build_reason(no_fit_reason(slot, m, ())),
            build_needs=slot.manifest.build_needs,
            line=e.as_line() if e else None,
            more_lines=more,
            alternatives=alternatives,
            **base,
        )
    return PackagePlan(
        action="error",
        cause=cause,
        reason=no_fit_reason(slot, m, alternatives),
        alternatives=alternatives,
        refusal=short_refusal(slot, base["rejected"], nearest_pin(slot, alternatives)),
        **base,
    )


def _slot_plan(slot: Slot, slots: Mapping[str, Slot], m: Machine) -> PackagePlan:
    e = slot.entry
    more = tuple(o.as_line() for o in slot.others)
    asked = " and ".join(x.text for x in (e, *slot.others)) if e else ""
    rejected = Rejections(lambda: _rejections(slot, slots, m))
    chosen = slot.chosen
    base: dict[str, Any] = {
        "name": slot.name,
        "source": slot.manifest.source,
        "rejected": rejected,
        "requested": e.text if e else "",
        "where": e.where if e else "",
        "implied_by": tuple(slot.implied_by),
    }
    if chosen is None and slot.manifest.buildable and not slot.manifest.flavours:
        return PackagePlan(
            action="build",
            cause="no-fit",
            reason=build_only_reason(slot.manifest),
            build_needs=slot.manifest.build_needs,
            line=e.as_line() if e else None,
            more_lines=more,
            **base,
        )
    if (
        chosen is None
        and e is not None
        and not any(version_ok(slot.spec, f) for f in slot.manifest.flavours)
    ):
        # The manifest does not describe the version asked for (torch==2.0.0 against a
        # 2.13 manifest): nothing is known about its builds, so it is not refused. On a
        # machine with the accelerator its builds are for, that is said loudly: the
        # installer's own choice may not run there (issue 40, item 3).
        missing = _unjudged_fact(slot, m, asked)
        return PackagePlan(
            action="pass",
            cause="unlisted" if missing is None else "unjudged",
            line=e.as_line(),
            more_lines=more,
            reason=unlisted_reason(slot.manifest, asked)
            if missing is None
            else unjudged_reason(slot.manifest, missing),
            unjudged=missing,
            **base,
        )
    if chosen is None:
        return _no_fit_plan(slot, m, more, base)
    why = chosen_words(
        chosen,
        m.profile,
        tag=_best_tag(chosen, m),
        rocm=m.rocm,
        held=[r for r in chosen.needs.requires if m.holds(r.marker)],
        fitting=len(slot.candidates),
    )
    newer = _newer_for_another_python(slot, chosen, m.profile)
    if newer is not None:
        why = f"{why}; {newer}"
    extras = e.requirement.extras if e and e.requirement else set()
    marker = e.marker if e else None
    why, unjudged_fields = _said_unjudged(slot, chosen, m, why)
    if isinstance(chosen, IndexFlavour) and chosen.passthrough:
        # Not pinned, so no version is reported: the installer picks the release.
        return PackagePlan(
            action="pass",
            flavour=chosen,
            reason=passthrough_reason(why),
            line=e.as_line() if e else None,
            more_lines=more,
            **unjudged_fields,
            **base,
        )
    if isinstance(chosen, WheelFlavour):
        name, other = slot.manifest.display_name, False
        if chosen.install is not None:
            # A file of another distribution (onnxruntime-gpu) or with extras (jax[cuda13]).
            inst = Requirement(chosen.install)
            other = canonicalize_name(inst.name) != slot.name
            name, extras = inst.name, {*extras, *inst.extras}
            why = installs_reason(why, chosen.install, other=other)
        line = format_requirement(
            name,
            url=chosen.url,
            sha256=chosen.sha256,
            extras=extras,
            marker=marker,
        )
        constraint = format_requirement(slot.name, url=chosen.url, sha256=chosen.sha256)
        return PackagePlan(
            action="rewrite",
            cause=unjudged_fields.get("cause", "fit"),
            unjudged=unjudged_fields.get("unjudged"),
            version=str(chosen.version),
            url=chosen.url,
            sha256=chosen.sha256,
            flavour=chosen,
            reason=why,
            line=line if e else None,
            # Another distribution cannot travel in a constraints file (see below).
            constraint=None if other else constraint,
            kernels_assumed=chosen.assumed,
            installs=chosen.install,
            **base,
        )
    page = chosen.url
    if chosen.template is not None:
        from resolver_hook.resolve.computedpage import fill_page

        page = fill_page(chosen, slots, m)
        why = template_reason(why, chosen.template)
    name = slot.manifest.display_name
    if chosen.install is not None:
        inst = Requirement(chosen.install)
        name, extras = inst.name, {*extras, *inst.extras}
        why = installs_reason(why, chosen.install, other=canonicalize_name(inst.name) != slot.name)
    pinned = _labelled_pin(slot.spec, chosen)
    if pinned is not None:
        # A range with a local label and an exact pin (torch==2.7.1 on the cu128 page):
        # that release's build of the label, ``torch==2.7.1+cu128``, from the page.
        line = format_requirement(name, version=str(pinned), extras=extras, marker=marker)
        constraint = f"{canonicalize_name(name)}=={pinned}"
    elif chosen.versions is not None:
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
        version=str(pinned or chosen.version),
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
        versions=str(chosen.versions) if chosen.versions is not None and not pinned else None,
        **unjudged_fields,
        **base,
    )


def _said_unjudged(slot: Slot, chosen: Flavour, m: Machine, why: str) -> tuple[str, dict[str, Any]]:
    """A release no rule covers, or a build of an entry that names a fact no source
    gave, on a machine with an accelerator: unjudged (one warning; --strict refuses it),
    never a silent fit. The reason with that said, and the plan's cause and fact."""
    profile = m.profile
    if chosen.unjudged is None or (profile.nvidia is None and profile.rocm is None):
        return why, {}
    shown = str(chosen.version)
    if isinstance(chosen, IndexFlavour) and chosen.versions is not None:
        pin = _labelled_pin(slot.spec, chosen)
        label = f" +{chosen.version.local}" if chosen.version.local else ""
        shown = str(pin) if pin is not None else f"{chosen.versions}{label}"
    note = unjudged_note(slot.name, chosen, shown, profile)
    return f"{why}; {note}", {"cause": "unjudged", "unjudged": chosen.unjudged}


def _unjudged_fact(slot: Slot, m: Machine, asked: str) -> str | None:
    """The fact no source gave for a release the manifest does not describe, when the
    machine has the accelerator the manifest's builds are for (None: no accelerator
    such builds need, so the installer's plain choice is the one that runs)."""
    from resolver_hook.manifest.gpunames import cuda_distribution

    profile = m.profile
    cuda_named = cuda_distribution(slot.name) is not None  # triton: no CUDA field
    if not (m.runs_accelerated(slot.manifest) or (cuda_named and profile.nvidia is not None)):
        return None
    which = "CUDA runtime and kernel list" if profile.nvidia is not None else "ROCm version"
    return f"which builds {asked} has and the {which} of each (no source in its manifest)"


def _labelled_pin(spec: SpecifierSet, f: IndexFlavour) -> Version | None:
    """The release a range entry with a local label stands for when the user pins one
    exactly (``==2.7.1`` on a ``cu128`` range: ``2.7.1+cu128``); None otherwise."""
    label = f.version.local
    if f.versions is None or not label:
        return None
    for v in exact_pins(spec):
        if v is None:
            return None
        if v.local is None or v.local == label:
            return Version(f"{v.public}+{label}")
    return None


def _best_tag(f: Flavour, m: Machine) -> str | None:
    """A wheel's best tag on this machine (rule 7); None for an index flavour."""
    if not isinstance(f, WheelFlavour):
        return None
    return str(min((t for t in f.tags if str(t) in m.tag_rank), key=lambda t: m.tag_rank[str(t)]))


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
        option_lines.append(o.as_line())
        if o.option == "--extra-index-url":
            notes.append(extra_index_note(o))
    lines = list(dict.fromkeys(line for p in packages for line in (p.line, *p.more_lines) if line))
    constraints = [p.constraint for p in packages if p.constraint]
    pinned = {p.name: p for p in packages if p.constraint}
    for name, entries in user_constraints.items():
        for c in entries:
            ours = pinned.get(NormalizedName(name))
            if ours is None:
                constraints.append(c.as_line())
            elif (
                c.requirement is not None
                and ours.version
                and not c.requirement.specifier.contains(Version(ours.version), prereleases=True)
            ):
                notes.append(constraint_conflict_note(c, name, ours.version))
    find_links = list(dict.fromkeys(p.find_links for p in packages if p.find_links))
    if any(e.hashes for e in reqs.requirements):
        notes.append(HASH_NOTE)
    if any(
        p.action != "pass"
        and p.url is not None
        and p.source
        and p.source.startswith("built-in")
        and not (isinstance(p.flavour, WheelFlavour) and p.flavour.sha256)
        for p in packages
    ):
        notes.append(BUILT_IN_SHA256_NOTE)
    unverified = [
        p.name
        for p in packages
        if isinstance(p.flavour, WheelFlavour)
        and p.sha256 is None
        and not (p.source or "").startswith("built-in")
    ]
    if unverified:  # one note for all (built-in ones: the note above)
        notes.append(unverified_note(unverified))
    return Plan(
        profile=profile,
        packages=tuple(packages),
        requirements=tuple(option_lines + url_lines_first(lines)),
        constraints=tuple(dict.fromkeys(constraints)),
        find_links=tuple(find_links),
        notes=tuple(dict.fromkeys(notes)),
    )
