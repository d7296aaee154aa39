"""``resolver-hook lock``: write pinned flavour lines for one or more targets."""

from __future__ import annotations

import argparse
import os
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
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import Plan

__all__ = ["lock_lines", "register", "target_marker"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lock", help="write pinned flavour lines for one or more targets",
                       description="Resolve and write a pip requirements file with every "
                       "flavoured package pinned (name @ url#sha256=... ; marker, URL lines "
                       "first). Several --target: one file whose lines carry markers telling "
                       "the targets apart, or one file per target when -o holds '{target}'. "
                       "Written atomically; input files are never modified.")
    add_requirement_options(p)
    add_manifest_options(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write ('-' = standard output; '{target}' = one per target)")
    add_machine_options(p)
    # add_machine_options made --target single; lock takes it repeatedly.
    for action in p._actions:
        if action.dest == "target":
            action.default = None
            action.__class__ = argparse._AppendAction
            action.nargs = None
    p.set_defaults(func=run)


def target_marker(profile: HostProfile) -> str:
    """A PEP 508 marker that holds on the profile's OS, CPU and Python."""
    from resolver_hook.resolve import marker_environment

    env = marker_environment(profile)
    return (f'sys_platform == "{env["sys_platform"]}" and platform_machine == '
            f'"{env["platform_machine"]}" and python_version == "{env["python_version"]}"')


def lock_lines(plan: Plan) -> list[str]:
    """Pinned requirement lines for one plan: find-links, URL lines, then plain lines."""
    from packaging.requirements import Requirement

    from resolver_hook.reqfile import format_requirement, is_url_line

    links = [f"--find-links {u}" for u in plan.find_links]
    urls: list[str] = []
    plain: list[str] = []
    for p in plan.packages:
        line: str | None
        if p.action == "pass" and p.flavour is not None:
            # The plain build from the user's index fits: pin its version, keeping the
            # extras and marker the user wrote.
            req = Requirement(p.requested) if p.requested else None
            line = format_requirement(p.name, version=p.version,
                                      extras=req.extras if req else (),
                                      marker=req.marker if req else None)
        else:
            line = p.line or p.constraint  # constraint only: a coupled package, pin it too
        if not line:
            continue
        (urls if is_url_line(line) else plain).append(line)
    return links + urls + plain


def _merge(per_target: list[tuple[str, HostProfile, list[str]]]) -> list[str]:
    from resolver_hook.errors import UsageError
    from resolver_hook.reqfile import is_url_line, with_marker

    markers: dict[str, str] = {}
    for spec, profile, _ in per_target:
        mk = target_marker(profile)
        if mk in markers:
            raise UsageError(f"targets {markers[mk]} and {spec} differ only in what markers "
                             "cannot tell apart (GPU, driver): write one file per target",
                             hint="use -o with '{target}' in the file name")
        markers[mk] = spec
    order: list[str] = []
    where: dict[str, list[str]] = {}
    for _, profile, lines in per_target:
        for line in lines:
            if line not in where:
                order.append(line)
                where[line] = []
            where[line].append(target_marker(profile))
    out = []
    for line in order:
        if line.startswith("-"):
            out.append(line)  # options hold for the whole file
            continue
        if len(where[line]) == len(per_target):
            out.append(line)
            continue
        out.append(with_marker(line, " or ".join(f"({m})" for m in where[line])))
    urls = [x for x in out if not x.startswith("-") and is_url_line(x)]
    return ([x for x in out if x.startswith("-")] + urls +
            [x for x in out if not x.startswith("-") and x not in urls])


def run(args: argparse.Namespace) -> int:
    from resolver_hook.cli.plan import render_errors
    from resolver_hook.errors import UsageError
    from resolver_hook.resolve import resolve
    from resolver_hook.tomlwrite import write_atomic

    reqs = requirements_from_args(args)
    manifests = manifests_from_args(args)
    specs = list(dict.fromkeys(args.target)) or [None]  # a target given twice is one target
    plans: list[tuple[str, HostProfile, Plan]] = []
    for spec in specs:
        ns = argparse.Namespace(**{**vars(args), "target": spec})
        profile = machine_from_args(ns)
        plans.append((spec or "detected", profile, resolve(reqs, manifests, profile)))
    failed = [plan for _, _, plan in plans if not plan.ok]
    for plan in failed:
        sys.stderr.write(f"for {plan.profile.describe()}:\n{render_errors(plan)}")
    if failed:
        sys.stderr.write("nothing written\n")
        return 1
    inputs = ", ".join(reqs.files) or "the command line"
    if len(plans) > 1 and "{target}" not in args.output:
        all_notes = tuple(dict.fromkeys(n for _, _, plan in plans for n in plan.notes))
        outputs = [(args.output, ", ".join(s for s, _, _ in plans),
                    _merge([(s, p, lock_lines(plan)) for s, p, plan in plans]), all_notes)]
    else:
        outputs = [(args.output.replace("{target}", s), s, lock_lines(plan), plan.notes)
                   for s, _, plan in plans]
    for path, *_ in outputs:  # before writing any: a refusal leaves nothing half done
        if path != "-" and any(os.path.abspath(path) == os.path.abspath(f) for f in reqs.files):
            raise UsageError(f"-o {path} is one of the input files: inputs are never modified")
    for path, which, lines, notes in outputs:
        header = [f"# Generated by resolver-hook lock for {which}", f"# from {inputs}",
                  "# Flavoured packages are pinned; others are as you wrote them."]
        header += [f"# note: {n}" for n in notes]
        text = "\n".join(header + lines) + "\n"
        if path == "-":
            sys.stdout.write(text)
            continue
        write_atomic(path, text)  # an unwritable path is one error line (exit 1)
        sys.stdout.write(f"wrote {path} ({len(lines)} lines)\n")
    return 0

