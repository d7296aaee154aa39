"""``resolver-hook explain PKG``: every flavour of a package against a machine."""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    manifests_from_args,
    planner_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit, verbosity
from resolver_hook.cli.plan import note_lines
from resolver_hook.errors import UsageError
from resolver_hook.resolve import evaluate_flavour, marker_environment

if TYPE_CHECKING:
    from collections.abc import Sequence

    from resolver_hook.manifest import Flavour, Manifest
    from resolver_hook.resolve import Plan

__all__ = ["explain_rows", "register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain",
        help="every flavour of a package against this machine",
        description="A table of every flavour of PKG: per rule (tags, Python, CUDA or "
        "ROCm, GPU kernels, the accelerator rule, couplings, your specifier) yes, no, or "
        "n/a where the rule does not apply; every failed rule's reason; the chosen one "
        "marked '*'. Shows the flavours for this platform and Python, grouped by "
        "label (cu130, cpu, ...), and counts the rest. Exit 1 when none fits.",
    )
    p.add_argument(
        "package", metavar="PKG", help="a package name, or a requirement such as 'torch==2.13.*'"
    )
    p.add_argument(
        "--all",
        action="store_true",
        dest="all_rows",
        help="every flavour, also those for other platforms and Pythons",
    )
    add_manifest_options(p)
    add_inventory_options(p)
    add_machine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        req = Requirement(args.package)
    except InvalidRequirement as exc:
        raise UsageError(
            f"{args.package!r} is not a package name or requirement: {str(exc).splitlines()[0]}"
        ) from None
    manifests = manifests_from_args(args)
    name = canonicalize_name(req.name)
    manifest = manifests.get(name)
    if manifest is None:
        close = difflib.get_close_matches(name, list(manifests), n=1)
        raise UsageError(
            f"no manifest describes {req.name!r}: pip installs it as usual",
            hint=f"did you mean {close[0]!r}?" if close else "add one with --manifest FILE",
        )
    profile = machine_from_args(args)
    planner = planner_from_args(args)
    manifests = planner.pages(manifests, [name], profile)
    manifest = manifests[name]
    plan = planner.plan([str(req)], manifests, profile)
    chosen = plan.package(name)
    rows = explain_rows(plan, manifest, req)
    width = columns(sys.stdout)
    cut = verbosity() <= 0  # -v keeps every word whole; --all only adds rows
    everything = bool(getattr(args, "all_rows", False)) or not cut
    shown = [
        (f, r)
        for f, r in zip(manifest.flavours, rows, strict=True)
        if everything or r[0] == "*" or "no" not in (r[2], r[3])
    ] or list(zip(manifest.flavours, rows, strict=True))  # none for this platform: all
    n = len(rows)
    head = f"{manifest.display_name}: {n} flavour{'' if n == 1 else 's'} from {manifest.source}"
    if len(shown) < n:
        head += (
            f"; {len(shown)} for this platform and Python shown, {n - len(shown)} for "
            "others (--all shows every one)"
        )
    out = [fit(head, width), fit(f"machine: {profile.describe()}", width)]
    out.extend(_table(shown, width, cut=cut))
    # Where the entries' facts come from (every built-in entry names its source).
    for evidence, checked in dict.fromkeys(
        (f.needs.evidence, f.needs.checked) for f, _ in shown if f.needs.evidence
    ):
        when = f" (checked {checked.isoformat()})" if checked else ""
        out.append(fit(f"evidence: {evidence}{when}", width, cut=cut))
    # What reading its pages showed (a flavour whose only file is yanked, a release a
    # kernels_until rule leaves out): a flavour the table cannot show is named here.
    notes = note_lines(manifest.notes, verbose=verbosity() > 0, more="-v lists each")
    out.extend(fit(f"note: {n}" if not n.startswith(" ") else n, width, cut=cut) for n in notes)
    if chosen is not None and chosen.action == "error":
        out.append(fit(f"no flavour fits: {chosen.reason}", width))
        if chosen.hint:
            out.append(fit(f"hint: {chosen.hint}", width))
    elif chosen is not None and chosen.action == "build":
        needs = f" (needs {', '.join(chosen.build_needs)})" if chosen.build_needs else ""
        out.append(fit(f"no flavour fits: the installer builds it from source{needs}", width))
    sys.stdout.write("\n".join(out) + "\n")
    return 0 if chosen is not None and chosen.action != "error" else 1


def _table(shown: Sequence[tuple[Flavour, tuple[str, ...]]], width: int, *, cut: bool) -> list[str]:
    """The rule columns and each flavour, grouped by label; each reason on its own
    indented line; fitted to ``width`` (a word longer than a line cut when ``cut``)."""
    out: list[str] = []
    out.append(fit(_LEGEND, width))
    names = ("", "tags", "py", "cuda", "gpu", "accel", "coupl", "spec")
    cells = [max(len(h), 3) for h in names]
    cells[0] = 1
    at = sum(cells) + len(cells) + 1  # the column the flavour starts in
    heads = " ".join(h.ljust(w) for h, w in zip(names, cells, strict=True))
    out.append(fit(f"{heads}  flavour", width, hang=at))
    groups: dict[str, list[tuple[str, ...]]] = {}
    for f, r in shown:
        groups.setdefault(f.version.local or "plain", []).append(r)
    for label, group in groups.items():
        if len(groups) > 1:
            out.append(f"{label}:")
        for r in group:
            row = " ".join(c.ljust(w) for c, w in zip((r[0], *r[2:9]), cells, strict=True))
            out.append(fit(f"{row}  {r[1]}", width, cut=cut, hang=at))
            if r[-1]:
                out.append(fit(f"      {r[-1]}", width, cut=cut))
    return out


_WORD = {"pass": "yes", "fail": "no", "n/a": "n/a"}
_LEGEND = (
    "rules: tags, py (Python), cuda (or ROCm), gpu (kernels), accel (the accelerator "
    "rule), coupl (couplings), spec (your specifier): yes, no, or n/a; '*' the chosen one"
)


def explain_rows(plan: Plan, manifest: Manifest, req: Requirement) -> list[tuple[str, ...]]:
    """One row per flavour: chosen mark, flavour, then per rule yes / no / n/a (from
    :func:`resolver_hook.resolve.evaluate_flavour` and the plan's couplings), then why."""

    p = plan.package(manifest.name)
    chosen = p.flavour if p is not None else None
    rejected = {(r.candidate, r.where): r for r in p.rejected} if p is not None else {}
    in_plan = {q.name for q in plan.packages}
    env = marker_environment(plan.profile)
    rows: list[tuple[str, ...]] = []
    for f in manifest.flavours:
        rules = evaluate_flavour(f, manifest, plan.profile, req.specifier)
        r = rejected.get((f.describe(), f.where))
        coupled = [
            x
            for x in f.needs.requires
            if canonicalize_name(x.name) in in_plan
            and (x.marker is None or x.marker.evaluate(dict(env)))
        ]
        couplings = "n/a"
        if coupled:
            couplings = "no" if r is not None and "coupling" in r.rules else "yes"
        cuda = rules["rocm"] if f.needs.rocm is not None and f.needs.cuda is None else rules["cuda"]
        why = "chosen" if f is chosen else (r.reason if r is not None else "")
        assumed = getattr(f, "assumed", None)  # a release newer than the verified one
        if assumed:
            why = f"{why}; {assumed}" if why else assumed
        rows.append(
            (
                "*" if f is chosen else " ",
                f.describe(),
                _WORD[rules["tags"].status],
                _WORD[rules["python"].status],
                _WORD[cuda.status],
                _WORD[rules["gpu"].status],
                _WORD[rules["accelerator"].status],
                couplings,
                _WORD[rules["specifier"].status],
                why,
            )
        )
    return rows
