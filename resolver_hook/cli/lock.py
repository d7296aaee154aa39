"""``resolver-hook lock``: write pinned flavour lines for one or more targets."""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    add_requirement_options,
    manifests_from_args,
    planning_manifests,
    refuse_writing_inputs,
    requirement_names,
    requirements_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit
from resolver_hook.cli.manifest import _seconds as seconds

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import Plan

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "lock",
        help="write pinned flavour lines for one or more targets",
        description="Resolve and write a pip requirements file with every "
        "flavoured package pinned (name @ url#sha256=... ; marker, URL lines "
        "first). Several --target: one file whose lines carry markers telling "
        "the targets apart, or one file per target when -o holds '{target}'. "
        "Written atomically; input files are never modified.",
    )
    add_requirement_options(p)
    add_manifest_options(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write ('-' = standard output; '{target}' = one per target); "
        "needed for requirements and pylock, standard output for uv",
    )
    p.add_argument(
        "--format",
        choices=("requirements", "pylock", "uv"),
        help="requirements (default), pylock (PEP 751 pylock.toml; implied by -o "
        "pylock.toml or pylock.NAME.toml) or uv ([tool.uv.sources] and [[tool.uv.index]] "
        "text to paste into pyproject.toml)",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="read nothing from the network: files and hashes from the shipped snapshot; "
        "pylock: refuse (naming them) entries known only as an index page or without a "
        "sha256, and uv resolves the packages without a manifest from its cache alone "
        "(uv --offline)",
    )
    add_inventory_options(p, offline=False)
    p.add_argument(
        "--index-url",
        default=None,
        metavar="URL",
        help="pylock: the simple index whose pages give the plain builds "
        "(default https://pypi.org/simple/)",
    )
    p.add_argument(
        "--timeout", type=seconds, default=30.0, metavar="SECONDS",
        help="pylock: network timeout per request (default 30)",
    )  # fmt: skip
    add_machine_options(p)
    # add_machine_options made --target single; lock takes it repeatedly.
    for action in p._actions:
        if action.dest == "target":
            action.default = None
            action.__class__ = argparse._AppendAction
            action.nargs = None
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    from resolver_hook.errors import UsageError

    out = args.output
    fmt: str = args.format or (
        "pylock"
        if out and re.fullmatch(r"pylock(\.[^.]+)?\.toml", os.path.basename(out))
        else "requirements"
    )
    if out is None:
        if fmt != "uv":
            raise UsageError(f"lock --format {fmt} needs -o FILE ('-' for standard output)")
        args.output = "-"
    return fmt


def run(args: argparse.Namespace) -> int:
    from resolver_hook._fs import shown_path, write_all, write_atomic
    from resolver_hook.cli.plan import render_errors
    from resolver_hook.lock.lines import dropped_notes, header_notes, lock_lines, merge_targets
    from resolver_hook.resolve import resolve

    fmt = _format(args)
    reqs = requirements_from_args(args)
    manifests = manifests_from_args(args)
    specs = list(dict.fromkeys(args.target or [])) or [None]  # a target given twice is one target
    plans: list[tuple[str, HostProfile, Plan]] = []
    for spec in specs:
        ns = argparse.Namespace(**{**vars(args), "target": spec})
        profile = machine_from_args(ns)
        planned = planning_manifests(args, manifests, requirement_names(reqs), profile)
        plans.append(
            (
                spec or "detected",
                profile,
                resolve(reqs, planned, profile, today=datetime.date.today()),
            )
        )
    failed = [plan for _, _, plan in plans if not plan.ok]
    for plan in failed:
        width = columns(sys.stderr)
        errors = render_errors(plan, width=width)
        sys.stderr.write(f"{fit(f'for {plan.profile.describe()}:', width)}\n{errors}")
    if failed:
        sys.stderr.write("".join(_split_hints(plans)))
        sys.stderr.write("nothing written\n")
        return 1
    inputs = ", ".join(shown_path(f) for f in reqs.files) or "the command line"
    if fmt != "requirements":
        from resolver_hook.cli.lockformats import write_format

        return write_format(fmt, args, plans, inputs, reqs.files)
    if len(plans) > 1 and "{target}" not in args.output:
        all_notes = tuple(
            dict.fromkeys(n for s, _, plan in plans for n in (*plan.notes, *dropped_notes(plan, s)))
        )
        outputs = [
            (
                args.output,
                ", ".join(s for s, _, _ in plans),
                merge_targets([(s, p, lock_lines(plan)) for s, p, plan in plans]),
                all_notes,
            )
        ]
    else:
        outputs = [
            (
                args.output.replace("{target}", s),
                s,
                lock_lines(plan),
                (*plan.notes, *dropped_notes(plan, s)),
            )
            for s, _, plan in plans
        ]
    for path, *_ in outputs:  # before writing any: a refusal leaves nothing half done
        refuse_writing_inputs(path, reqs.files)
    texts = []
    for path, which, lines, notes in outputs:
        header = [
            f"# Generated by resolver-hook lock for {which}",
            f"# from {inputs}",
            "# Flavoured packages are pinned; others are as you wrote them.",
        ]
        header += header_notes(notes)
        texts.append((path, "\n".join(header + lines) + "\n", len(lines)))
    if texts[0][0] == "-":
        sys.stdout.write(texts[0][1])
        return 0
    from pathlib import Path

    from resolver_hook.lock.sets import write_lock_set

    # Several files (one per target) are written all or nothing; with one folder, the
    # index that tells a machine which is its own is swapped in with them.
    index = None
    if "{target}" in args.output and len({os.path.dirname(p) for p, *_ in outputs}) == 1:
        locks = [
            (Path(path), text, s, prof, plan)
            for (path, text, _), (s, prof, plan) in zip(texts, plans, strict=True)
        ]
        index = write_lock_set(Path(texts[0][0]).parent, locks)
    elif len(texts) > 1:
        write_all([(path, text) for path, text, _ in texts])
    else:
        write_atomic(texts[0][0], texts[0][1])  # an unwritable path is one error line (exit 1)
    for path, _, count in texts:
        sys.stdout.write(f"wrote {path} ({count} lines)\n")
    if index is not None:
        sys.stdout.write(f"wrote {index} (which lock serves which machine class)\n")
    return 0


def _split_hints(plans: list[tuple[str, HostProfile, Plan]]) -> list[str]:
    """For a package with no fit on some targets only: the marker that leaves it out
    there, or that no marker can tell those targets apart."""
    from resolver_hook.lock.lines import split_marker, unmarkable_difference

    out = []
    names = dict.fromkeys(p.name for _, _, plan in plans for p in plan.errors)
    for name in names:
        bad = [(s, prof) for s, prof, plan in plans if any(p.name == name for p in plan.errors)]
        ok = [(s, prof) for s, prof, plan in plans if (s, prof) not in bad]
        if not ok:
            continue
        marker = split_marker([p for _, p in ok], [p for _, p in bad])
        asked = next(
            (p.requested for _, _, plan in plans for p in plan.packages if p.name == name), name
        )
        where = ", ".join(s for s, _ in bad)
        if marker is None:
            same = next(
                ((o, b) for o in ok for b in bad if o[1].os == b[1].os and o[1].arch == b[1].arch),
                (ok[0], bad[0]),
            )
            out.append(
                f"hint: {name} fits {same[0][0]} but not {same[1][0]}, and no marker tells "
                f"them apart ({unmarkable_difference(same[0][1], same[1][1])}): lock them "
                "in one file per target (-o with '{target}')\n"
            )
        else:
            out.append(
                f"hint: {name} has no build for {where}; to lock the other targets, "
                f"give it a marker that is false there: '{_with_marker(asked, marker)}'\n"
            )
    return out


def _with_marker(requirement: str, marker: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return f"{requirement} ; {marker}"
    own, req.marker = req.marker, None
    return f"{req} ; ({own}) and ({marker})" if own is not None else f"{req} ; {marker}"
