"""The whole environment for one machine, pass by pass, from a :class:`Declaration`.

Pure: (declaration, machine, manifests) -> :class:`EnvPlan`. Every pass is planned with
the stack's requirements beside its own, so the stack's flavoured pins are constraints
on every pass and nothing a later pass brings can swap the GPU build. A pass that has
no fit refuses the environment, with the plan's own errors and hints; an optional
package that has no fit is skipped with its reason.

The passes, in order: ``stack``; ``requirements`` (the first file whose ``when``
matches); ``extras`` (installed with ``--upgrade``, so they may override the
requirements' pins); ``optional`` (one by one, import-checked, rolled back on
failure); ``no-deps`` (``--no-deps``).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from resolver_hook.appenv.declaration import Declaration, Group, RequirementsChoice, accelerator_of
from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.host import HostProfile, apply_overrides
from resolver_hook.manifest import Manifest
from resolver_hook.reqfile import read_requirements
from resolver_hook.resolve import Plan, resolve

__all__ = ["EnvPass", "EnvPlan", "PassKind", "plan_environment"]

PassKind = Literal["stack", "requirements", "extras", "optional", "no-deps"]


@valueclass
class EnvPass:
    """One installer run: what it installs, with which options, and the plan behind it."""

    kind: PassKind
    packages: tuple[str, ...] = ()
    file: Path | None = None  # the requirements file (kind "requirements")
    why: str = ""  # which selector chose it
    plan: Plan | None = field(default=None, repr=False)
    # Optional packages the plan found no build for: name -> reason (skipped, not fatal).
    skipped: Mapping[str, str] = field(default_factory=dict)

    @property
    def options(self) -> tuple[str, ...]:
        return {"extras": ("--upgrade",), "no-deps": ("--no-deps",)}.get(self.kind, ())

    def choices(self, stack: frozenset[str] = frozenset()) -> list[str]:
        """One line per package this pass plans, what and why; the stack's packages
        (planned by the first pass, pinned on every one) are left out."""
        if self.plan is None:
            return []
        # explain_lines() has one line per package rewritten, built or unjudged, in order.
        names = [
            p.name
            for p in self.plan.packages
            if p.action in ("rewrite", "build") or p.cause == "unjudged"
        ]
        rewritten = dict(zip(names, self.plan.explain_lines(), strict=True))
        out = []
        for p in self.plan.packages:
            if p.name in stack or p.action == "error":
                continue
            if p.name in rewritten:
                out.append(rewritten[p.name])
            elif p.cause != "no-manifest":
                out.append(f"{p.name}: {p.line or p.name}, as written: {p.reason}")
        return out

    def to_dict(self, stack: frozenset[str] = frozenset()) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "packages": list(self.packages),
            "file": str(self.file) if self.file else None,
            "options": list(self.options),
            "why": self.why,
            "choices": self.choices(stack),
            "skipped": dict(self.skipped),
        }


@valueclass
class EnvPlan:
    """The environment for ``profile`` (the machine as the environment's interpreter
    sees it), or the refusal: ``refused`` says why, ``failed`` holds the plan whose
    errors and hints explain it (None for a policy refusal)."""

    source: str
    machine: HostProfile = field(repr=False)
    profile: HostProfile = field(repr=False)
    accelerator: str
    interpreter: str  # uv's interpreter request
    passes: tuple[EnvPass, ...] = ()
    notes: tuple[str, ...] = ()
    refused: str = ""
    hint: str = ""
    failed: Plan | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def stack_names(self) -> frozenset[str]:
        """The packages the stack pass plans (pinned on every pass)."""
        first = self.passes[0].plan if self.passes else None
        return frozenset(p.name for p in first.packages) if first else frozenset()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "machine": self.machine.describe(),
            "planned_for": self.profile.describe(),
            "accelerator": self.accelerator,
            "interpreter": self.interpreter,
            "passes": [
                p.to_dict(self.stack_names if p.kind != "stack" else frozenset())
                for p in self.passes
            ],
            "notes": list(self.notes),
            "ok": self.ok,
            "refused": self.refused or None,
            "hint": self.hint or None,
            "errors": [e.to_dict() for e in self.failed.errors] if self.failed else [],
        }


def _selected(groups: tuple[Group, ...], profile: HostProfile) -> tuple[str, ...]:
    return tuple(p for g in groups if g.when.matches(profile) for p in g.packages)


def plan_environment(
    decl: Declaration,
    machine: HostProfile,
    manifests: Mapping[str, Manifest],
    *,
    allow_cpu: bool = False,
    today: datetime.date | None = None,
) -> EnvPlan:
    """The environment ``decl`` declares, for ``machine``; refusals are values, not raised."""
    accelerator = accelerator_of(machine)
    chosen = next((i for i in decl.interpreter if i.when.matches(machine)), None)
    profile = machine
    notes = [n.text for n in decl.notes if n.when.matches(machine)]
    if chosen is not None and chosen.arch and chosen.arch != machine.arch:
        profile = apply_overrides(profile, {"arch": (chosen.arch, "the interpreter request")})
    if chosen is not None and chosen.note:
        notes.insert(0, chosen.note)
    if decl.python:
        major, minor = (int(x) for x in decl.python.split("."))
        profile = profile.for_python((major, minor), why=f"the environment's Python {decl.python}")
    python = decl.python or machine.python
    request = chosen.request.replace("{python}", python) if chosen else python
    base = EnvPlan(
        source=decl.source,
        machine=machine,
        profile=profile,
        accelerator=accelerator,
        interpreter=request,
        notes=tuple(notes),
    )
    if accelerator == "cpu" and decl.cpu == "refuse" and not allow_cpu:
        return _refuse(
            base,
            f"no supported accelerator on {machine.describe()}: this environment "
            "refuses CPU-only machines",
            "pass --cpu to make a CPU-only environment anyway",
        )

    def planned(lines: tuple[str, ...], files: tuple[Path, ...] = ()) -> Plan:
        reqs = read_requirements([str(f) for f in files], [*decl.stack, *lines])
        return resolve(reqs, manifests, profile, today=today)

    choice = next((r for r in decl.requirements if r.when.matches(machine)), None)
    Step = tuple[PassKind, tuple[str, ...], RequirementsChoice | None]
    steps: list[Step] = [("stack", decl.stack, None)]
    if choice is not None:
        steps.append(("requirements", (), choice))
    steps += [
        ("extras", _selected(decl.extras, machine), None),
        ("optional", _selected(decl.optional, machine), None),
        ("no-deps", _selected(decl.no_deps, machine), None),
    ]
    passes = []
    for kind, packages, file in steps:
        if not packages and file is None:
            continue
        plan = planned(() if kind == "stack" else packages, (file.file,) if file else ())
        if kind == "optional":
            skipped = {str(e.name): e.reason for e in plan.errors}
            passes.append(EnvPass(kind=kind, packages=packages, plan=plan, skipped=skipped))
            continue
        if not plan.ok:
            what = file.file.name if file else "the stack" if kind == "stack" else f"the {kind}"
            hint = _stack_gap(decl.stack, manifests, profile, today) if kind == "stack" else ""
            return _refuse(base, f"{what} has no build for this machine", hint, plan)
        why = file.when.describe() if file else ""
        passes.append(
            EnvPass(
                kind=kind, packages=packages, file=file.file if file else None, why=why, plan=plan
            )
        )
    return replace(base, passes=tuple(passes))


def _stack_gap(
    stack: tuple[str, ...],
    manifests: Mapping[str, Manifest],
    profile: HostProfile,
    today: datetime.date | None,
) -> str:
    """Why a refused stack does not agree on one build, when some of its lines plan on
    their own: the builds that run here, and the lines with no build beside them (a
    GH200 on a CUDA 12.6 driver has torch 2.13.0+cu126 but no torchvision for it).
    "" when no line plans alone: the plan's own errors say what is missing."""
    runs: list[str] = []
    missing: list[str] = []
    for line in stack:
        alone = resolve(read_requirements([], [line]), manifests, profile, today=today)
        if not alone.ok:
            missing.append(line)
            continue
        for p in alone.packages:
            if p.requested and p.action in ("rewrite", "build") and p.version:
                runs.append(f"{p.name} {p.version} ({p.url})" if p.url else f"{p.name} {p.version}")
    if not runs or not missing:
        return ""
    one = len(runs) == 1
    whose = "its manifest cites" if len(missing) == 1 else "their manifests cite"
    return (
        f"{' and '.join(runs)} {'runs' if one else 'run'} here, but the data has no build "
        f"of {' or '.join(missing)} beside {'it' if one else 'them'} for this machine: no "
        f"source {whose} lists one (`resolver-hook explain NAME` with this target lists "
        "every build it knows)"
    )


def _refuse(base: EnvPlan, why: str, hint: str, plan: Plan | None = None) -> EnvPlan:
    return replace(base, refused=why, hint=hint, failed=plan)
