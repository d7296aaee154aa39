"""``resolver-hook plan``: which flavour each requirement gets on a machine, and why."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._inputs import (
    add_manifest_options,
    add_requirement_options,
    manifests_from_args,
    requirements_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args

if TYPE_CHECKING:
    from resolver_hook.resolve import PackagePlan, Plan

__all__ = ["register", "render_errors", "render_plan"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "plan",
        help="which flavour each requirement gets, and why",
        description="Resolve requirements against flavour manifests for this "
        "machine (or --profile/--target) and print the plan: one line per "
        "package (pass, rewrite, build, error), the rewritten requirements, "
        "constraints and find-links. Exit 1 when a package has no fit; "
        "a package built from source (its manifest allows it) is not an error.",
    )
    add_requirement_options(p)
    add_manifest_options(p)
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_machine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from resolver_hook.resolve import resolve

    reqs = requirements_from_args(args)
    manifests = manifests_from_args(args)
    profile = machine_from_args(args)
    plan = resolve(reqs, manifests, profile, today=datetime.date.today())
    if args.json:
        json.dump(plan.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_plan(plan))
    sys.stderr.write(render_errors(plan))
    return 0 if plan.ok else 1


def _short(p: PackagePlan) -> str:
    if p.action == "rewrite":
        if p.find_links:
            return f"{p.name}=={p.version} from {p.find_links}"
        return f"{p.url}" + (f"#sha256={p.sha256}" if p.sha256 else "")
    if p.action == "pass":
        return p.requested or p.name
    if p.action == "build":
        return f"{p.requested or p.name} from source (sdist)"
    return "no fit"


def render_plan(plan: Plan) -> str:
    lines = [f"machine: {plan.profile.describe()}"]
    width = max((len(p.name) for p in plan.packages), default=0)
    for p in plan.packages:
        implied = f" (for {', '.join(p.implied_by)})" if p.implied_by else ""
        lines.append(f"  {p.name:<{width}}  {p.action:<7}  {_short(p)}{implied}")
        if p.action != "error":
            lines.append(f"  {'':<{width}}  {'':<7}  why: {p.reason}")
        if p.action == "build":
            lines.extend(_rejection_lines(p, f"  {'':<{width}}  {'':<7}  no wheel: "))
            needs = ", ".join(p.build_needs) or "nothing declared"
            lines.append(
                f"  {'':<{width}}  {'':<7}  build needs: {needs} "
                "(checked before the installer runs; 'resolver-hook doctor --build "
                "--need SPEC' checks one now)"
            )
    for title, items in (
        ("requirements", plan.requirements),
        ("constraints", plan.constraints),
        ("find-links", plan.find_links),
        ("notes", plan.notes),
    ):
        if items:
            lines.append(f"{title}:")
            lines.extend(f"  {x}" for x in items)
    return "\n".join(lines) + "\n"


def render_errors(plan: Plan) -> str:
    """One ``error:`` line per package with no fit, its flavours' reasons, and a hint."""
    out = []
    for p in plan.errors:
        out.append(f"error: {p.name}: {p.reason}")
        out.extend(_rejection_lines(p, "  "))
        if p.alternatives:
            out.append(f"hint: nearest alternative: {'; '.join(p.alternatives)}")
    return "\n".join(out) + ("\n" if out else "")


def _rejection_lines(p: PackagePlan, indent: str) -> list[str]:
    """Why each flavour was rejected; builds for other platforms or Pythons summed up."""
    detail = [r for r in p.rejected if not r.reason.startswith(("built for", "needs glibc"))]
    other = len(p.rejected) - len(detail)
    if not detail:  # every build is for another platform or Python: show a few
        detail = list({r.reason: r for r in p.rejected}.values())[:4]
        other = len(p.rejected) - len(detail)
    out = [f"{indent}{r.candidate}: {r.reason}" for r in detail]
    if other > 0:
        out.append(
            f"{indent}... and {other} build{'s' if other > 1 else ''} for other platforms "
            "or Pythons (--json lists every one)"
        )
    return out
