"""``resolver-hook plan``: which flavour each requirement gets on a machine, and why."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    add_requirement_options,
    manifests_from_args,
    planner_from_args,
    requirements_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit, paint, paint_lines, verbosity
from resolver_hook.ground.userinfo import redact_text
from resolver_hook.limits import SHOWN_REJECTED_BUILDS
from resolver_hook.resolve import plan_target
from resolver_hook.resolve.words import alternative_words

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import PackagePlan, Plan

__all__ = [
    "note_lines",
    "probe_lines",
    "register",
    "rejection_lines",
    "render_errors",
    "render_plan",
    "render_unjudged",
]


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
    add_inventory_options(p)
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument(
        "--strict",
        action="store_true",
        help="a package whose build cannot be judged on this machine (UNJUDGED) is an "
        "error (exit 1), not a warning",
    )
    add_machine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    reqs = requirements_from_args(args)
    profile = machine_from_args(args)
    manifests = manifests_from_args(args)
    planner = planner_from_args(args)
    manifests = planner.pages_for(manifests, reqs, profile)
    plan = planner.plan(reqs, manifests, profile)
    if args.json:
        # A requirement file's own option lines (--index-url https://user:token@...)
        # are handed to the installer as written, and shown without the credentials.
        sys.stdout.write(redact_text(json.dumps(plan.to_dict(), indent=2)) + "\n")
    elif verbosity() >= 0:
        sys.stdout.write(
            render_plan(plan, verbose=verbosity() > 0, colour=sys.stdout, width=columns(sys.stdout))
        )
    errors = render_errors(plan, verbose=verbosity() > 0, width=columns(sys.stderr))
    sys.stderr.write(paint_lines(errors, sys.stderr))
    sys.stderr.write(paint_lines(render_unjudged(plan, strict=args.strict), sys.stderr))
    return 0 if plan.ok and not (args.strict and plan.unjudged) else 1


def _short(p: PackagePlan) -> str:
    if p.action == "rewrite":
        if p.find_links or p.installs or p.versions:
            return plan_target(p)
        return f"{p.url}" + (f"#sha256={p.sha256}" if p.sha256 else "")
    if p.action == "pass":
        return p.requested or p.name
    if p.action == "build":
        return f"{p.requested or p.name} from source (sdist)"
    if p.cause == "twins":
        return f"twin of {p.twin_of}"
    return "no fit"


_ACTION_STYLE = {"rewrite": "ok", "error": "error", "build": "warning", "pass": "dim"}


def render_plan(plan: Plan, *, verbose: bool, colour: TextIO, width: int) -> str:
    """The plan in text; ``colour``: the stream whose terminal decides colour; ``width``:
    the columns to fit each line to. The requirement, constraint and find-links lines are
    never wrapped or cut (they are for copying)."""

    def fitted(text: str) -> str:
        # A requirement as written (``name @ https://user:token@...``) shows no
        # credentials: hidden before the line is cut, so no part of them is left.
        return fit(redact_text(text), width, cut=not verbose)

    lines = [fitted(f"machine: {plan.profile.describe()}")]
    if verbose:
        lines.extend(fitted(x) for x in probe_lines(plan.profile))
    name_width = max((len(p.name) for p in plan.packages), default=0)
    pad = f"  {'':<{name_width}}  {'':<7}  "
    for p in plan.packages:
        implied = f" (for {', '.join(p.implied_by)})" if p.implied_by else ""
        name = f"  {p.name:<{name_width}}  "
        row = fitted(f"{name}{p.action:<7}  {_short(p)}{implied}")
        # Colour after fitting: the escapes take no column.
        action = paint(f"{p.action:<7}", _ACTION_STYLE[p.action], colour)
        lines.append(name + action + row[len(name) + 7 :])
        more: list[str] = []
        if p.action != "error":
            more.append(f"{pad}why: {p.reason}")
        if p.action == "build":
            more.extend(rejection_lines(p, f"{pad}no wheel: ", verbose=verbose, width=width))
            needs = ", ".join(p.build_needs) or "nothing declared"
            more.append(
                f"{pad}build needs: {needs} (checked before the installer runs; "
                "'resolver-hook doctor --build --need SPEC' checks one now)"
            )
        elif verbose and p.action != "error":
            more.extend(rejection_lines(p, f"{pad}not: ", verbose=True, width=width))
        lines.extend(fitted(x) for x in more)
    computed = {p.find_links for p in plan.packages if p.computed}
    pages = tuple(
        f"{x}  (computed from a template, not seen)" if x in computed else x
        for x in plan.find_links
    )
    for title, items in (
        ("requirements", plan.requirements),
        ("constraints", plan.constraints),
        ("find-links", pages),
    ):
        if items:
            lines.append(f"{title}:")
            lines.extend(f"  {redact_text(x)}" for x in items)  # to copy: never wrapped or cut
    if plan.notes:
        lines.append("notes:")
        notes = note_lines(plan.notes, verbose=verbose)
        lines.extend(fitted(f"  {x}") for x in notes)
    return "\n".join(lines) + "\n"


def note_lines(
    notes: Sequence[str], *, verbose: bool = False, more: str = "-v or --json lists each"
) -> list[str]:
    """Each note's first line (its summary), and with ``verbose`` its detail too
    (:class:`~resolver_hook.resolve.Plan`), the detail indented under it; ``more`` says
    where the detail is when it is left out."""
    out = []
    for note in notes:
        head, *detail = note.split("\n")
        out.append(head)
        if verbose:
            out.extend(f"  {x.strip()}" for x in detail)
        elif detail:
            out[-1] = f"{head} ({more})"
    return out


def probe_lines(profile: HostProfile) -> list[str]:
    """Every detection probe and what it found (for -v)."""
    return [
        f"  probe {x.name}: {'found' if x.found else 'nothing'}: {x.detail}" for x in profile.probes
    ]


def render_errors(plan: Plan, *, verbose: bool, width: int) -> str:
    """Per package with no fit: ``error:``, every flavour's failed rules, the hint
    (the first single change of the machine that gives a fit, or that none does) and
    the builds the user may pin instead; each line fitted to ``width``. A pinned release
    another release of which runs here is said in short unless ``verbose``: its refusal
    (the rule that failed, the nearest pin that runs) and one hint."""

    out = []
    for p in plan.errors:
        if p.refusal and not verbose:
            out.append(f"error: {p.name}: {p.refusal}")
            out.append(f"  ({len(p.rejected):,} builds rejected: -v or --json lists every one)")
            alt = alternative_words(p.alternatives[0], p.requested).removeprefix("or ")
            out.append(f"hint: {p.hint or alt}")
            continue
        out.append(f"error: {p.name}: {p.reason}")
        out.extend(rejection_lines(p, "  ", verbose=verbose, width=width))
        if p.hint:
            out.append(f"hint: {p.hint}")
        out.extend(f"hint: {alternative_words(alt, p.requested)}" for alt in p.alternatives)
    out = [fit(redact_text(x), width, cut=not verbose) for x in out]
    return "\n".join(out) + ("\n" if out else "")


def render_unjudged(plan: Plan, *, strict: bool) -> str:
    """One ``warning:`` line per package the plan could not judge (``error:`` with
    ``--strict``), said even without ``-v``: the installer's own choice may not run."""
    word = "error" if strict else "warning"
    names: dict[str, list[str]] = {}  # the same reason (no manifest): one line for all
    for p in plan.unjudged:
        names.setdefault(p.reason, []).append(p.name)
    return "".join(f"{word}: {', '.join(n)}: {reason}\n" for reason, n in names.items())


_ELSEWHERE = frozenset({"tags", "python"})


def rejection_lines(p: PackagePlan, indent: str, *, verbose: bool, width: int) -> list[str]:
    """Each rejected flavour and every rule it failed; with ``verbose`` every one, else
    the builds for other platforms or Pythons summed up. A line longer than ``width``
    gives each failed rule a line of its own under its flavour."""
    rejected = [r for r in p.rejected if verbose or r.rules != ("ranked",)]
    detail = rejected if verbose else [r for r in rejected if not _ELSEWHERE & set(r.rules)]
    if not detail:  # every build is for another platform or Python: show a few
        detail = list({r.reason: r for r in rejected}.values())[:4]
    other = len(rejected) - len(detail)
    nearer = 0
    if not verbose and len(detail) > SHOWN_REJECTED_BUILDS:
        # Thousands of builds: the nearest few: those of the release the user asked for
        # first (they say why it cannot run), then fewest rules failed, in the plan's order.
        order = sorted(
            range(len(detail)),
            key=lambda i: ("specifier" in detail[i].rules, len(detail[i].rules), i),
        )
        keep = order[:SHOWN_REJECTED_BUILDS]
        nearer = len(detail) - len(keep)
        detail = [detail[i] for i in keep]
    out = []
    for r in detail:
        line = f"{indent}{r.candidate}: {r.reason}"
        if len(line) <= width:
            out.append(line)
            continue
        under = " " * len(indent) + "    "
        out.append(f"{indent}{r.candidate}:")
        out.extend(f"{under}{x.reason}" for x in r.failures)
    if nearer > 0:
        out.append(
            f"{indent}... and {nearer:,} more builds that do not fit here "
            "(-v or --json lists every one)"
        )
    if other > 0:
        builds = "build" if other == 1 else "builds"
        out.append(
            f"{indent}... and {other:,} {builds} for other platforms or Pythons "
            "(-v or --json lists every one)"
        )
    return out
