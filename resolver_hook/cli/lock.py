"""``resolver-hook lock``: write pinned flavour lines for one or more targets."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    add_requirement_options,
    manifests_from_args,
    planner_from_args,
    refuse_writing_inputs,
    requirements_from_args,
)
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.cli._output import columns, fit, verbosity
from resolver_hook.cli.lockformats import finish, index_settings, upgrade_of, write_format
from resolver_hook.cli.plan import render_errors
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.fs import shown_path
from resolver_hook.ground.userinfo import redact_text, without_credentials
from resolver_hook.index.fetch import redact
from resolver_hook.lock.environment import target_lines
from resolver_hook.lock.hashes import OfflineFetcher, Unhashed, is_flavoured_line, refusal
from resolver_hook.lock.indexes import LockIndexes
from resolver_hook.lock.lines import (
    credentials_note,
    dropped_notes,
    header_notes,
    merge_targets,
    split_marker,
    unmarkable_difference,
)
from resolver_hook.lock.resolved import UvResolutionFailed, named_dependency
from resolver_hook.lock.stable import existing_pins
from resolver_hook.lock.wheels import Fetcher, NetFetcher
from resolver_hook.process.which import find_uv

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan
    from resolver_hook.settings import Settings

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "lock",
        help="write pinned flavour lines for one or more targets",
        description="Resolve and write a pip requirements file with every "
        "package pinned with its sha256: the flavoured ones as planned (name @ "
        "url#sha256=... ; marker, URL lines first), the others resolved by uv for "
        "each target. Several --target: one file whose lines carry markers telling "
        "the targets apart, or one file per target when -o holds '{target}'. "
        "Written atomically; input files are never modified.",
    )
    add_requirement_options(p)
    add_manifest_options(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write ('-' = standard output; '{target}' = one per target; "
        "missing folders are made); needed for requirements and pylock, standard "
        "output for uv",
    )
    p.add_argument(
        "--format",
        choices=("requirements", "pylock", "uv"),
        help="requirements (implied by -o NAME.txt or NAME.in), pylock (PEP 751; implied "
        "by -o pylock.toml or pylock.NAME.toml) or uv ([tool.uv.sources] and [[tool.uv.index]] "
        "text to paste into pyproject.toml)",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="read nothing from the network: files and hashes from the shipped snapshot; "
        "pylock: refuse (naming them) entries known only as an index page or without a "
        "sha256",
    )
    add_inventory_options(p, offline=False)
    p.add_argument(
        "--index-url",
        default=None,
        metavar="URL",
        help="the simple index the packages without a flavour are resolved from (default: "
        "UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL, pip's configuration, else uv's own)",
    )
    p.add_argument(
        "--extra-index-url",
        action="append",
        default=[],
        metavar="URL",
        help="another index for them, after --index-url (as uv reads it: the first index "
        "that has a package gives all its files)",
    )
    p.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="URL",
        help="a page or folder of files for them",
    )
    p.add_argument(
        "--flavoured-only",
        action="store_true",
        help="requirements: pin the flavoured packages alone and leave the others as "
        "written (the default pins every package of each target's environment, by uv)",
    )
    p.add_argument(
        "--upgrade",
        action="store_true",
        help="resolve every unflavoured package afresh (without it, the pins of the lock "
        "already at -o are kept where they still fit)",
    )
    p.add_argument(
        "--upgrade-package",
        action="append",
        default=[],
        metavar="NAME",
        help="resolve NAME afresh, keeping the other pins (repeatable)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing: exit 0 when the files at -o are what lock would write now, "
        "1 with a short diff otherwise (the CI step)",
    )
    p.add_argument(
        "--allow-unhashed",
        action="store_true",
        help="requirements: write a line whose sha256 cannot be had (its page unreadable) "
        "without a hash, named in the header; without it such a lock is refused (exit 1)",
    )
    add_machine_options(p, targets=True)
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    out = args.output
    name = os.path.basename(out.replace("{target}", "T")) if out else ""
    fmt: str | None = args.format
    if fmt is None and out not in (None, "-", ""):
        # The name decides the format only where it says one: a .txt file is
        # requirements (.in too); PEP 751 names a lock pylock.toml or pylock.NAME.toml.
        if re.fullmatch(r"pylock(\.[^.]+)?\.toml", name):
            fmt = "pylock"
        elif name.endswith((".txt", ".in")):
            fmt = "requirements"
        else:
            # The name as given: its folder, and '{target}' where the user put it.
            given = os.path.basename(out)
            folder = out[: len(out) - len(given)]
            stem = given.removesuffix(".toml").removesuffix(".pylock").replace(".", "_")
            raise UsageError(
                f"-o {out}: the name is neither a requirements file (NAME.txt) nor a "
                "PEP 751 lock (pylock.toml or pylock.NAME.toml), so it says no format",
                hint=f"name it {folder}{stem or 'requirements'}.txt or "
                f"{folder}pylock.{stem or 'NAME'}.toml, or give --format",
            )
    fmt = fmt or "requirements"
    if args.check and out in (None, "-"):
        raise UsageError(
            "lock --check compares the files at -o with what lock would write now",
            hint="give -o with the lock file(s) to check",
        )
    if out is None:
        if fmt != "uv":
            raise UsageError(f"lock --format {fmt} needs -o FILE ('-' for standard output)")
        args.output = "-"
    return fmt


def run(args: argparse.Namespace) -> int:
    fmt = _format(args)
    reqs = requirements_from_args(args)
    manifests = manifests_from_args(args)
    planner = planner_from_args(args)
    specs = list(dict.fromkeys(args.target or [])) or [None]  # a target given twice is one target
    plans: list[tuple[str, HostProfile, Plan]] = []
    for spec in specs:
        ns = argparse.Namespace(**{**vars(args), "target": spec})
        profile = machine_from_args(ns)
        planned = planner.pages_for(manifests, reqs, profile)
        plans.append((spec or "detected", profile, planner.plan(reqs, planned, profile)))
    failed = [plan for _, _, plan in plans if not plan.ok]
    for plan in failed:
        width = columns(sys.stderr)
        errors = render_errors(plan, verbose=verbosity() > 0, width=width)
        sys.stderr.write(f"{fit(f'for {plan.profile.describe()}:', width)}\n{errors}")
    if failed:
        apart = len(plans) > 1 and "{target}" in (args.output or "")
        sys.stderr.write("".join(_split_hints(plans, per_target_files=apart)))
        sys.stderr.write("nothing written\n")
        return 1
    try:
        return _write(args, fmt, reqs, plans, planner.settings)
    except UvResolutionFailed as exc:
        # What the plans noted (a page whose links were left out, a page not read) may be
        # why uv found nothing: said before uv's own words.
        for note in dict.fromkeys(n for _, _, plan in plans for n in plan.notes):
            sys.stderr.write(f"note: {redact_text(note)}\n")
        # uv names the application; the dependency with a manifest that failed it is
        # judged alone for that target, with the same pages and rules.
        profile = exc.plan.profile

        def judge(text: str) -> Plan:
            name = canonicalize_name(Requirement(text).name)
            return planner.plan([text], planner.pages(manifests, [name], profile), profile)

        raise named_dependency(exc, set(manifests), judge) from None


def _write(
    args: argparse.Namespace,
    fmt: str,
    reqs: ReqFile,
    plans: list[tuple[str, HostProfile, Plan]],
    settings: Settings,
) -> int:
    """Write the lock files of ``plans`` (the planned targets) in ``fmt``, reading
    pages under ``settings``."""
    inputs = ", ".join(shown_path(f) for f in reqs.files) or "the command line"
    if fmt != "requirements":
        return write_format(fmt, args, settings, plans, inputs, reqs.files)
    multi = len(plans) > 1 and "{target}" not in args.output
    paths = [args.output] if multi else [args.output.replace("{target}", s) for s, _, _ in plans]
    for path in paths:  # before reading or writing anything: inputs are never modified
        refuse_writing_inputs(path, reqs.files)
    hashed, missing, against = _hashed_lines(args, settings, plans)
    hashed, kept_out = _without_credentials(hashed)
    if multi:
        all_notes = tuple(
            dict.fromkeys(n for s, _, plan in plans for n in (*plan.notes, *dropped_notes(plan, s)))
        )
        outputs = [
            (
                args.output,
                ", ".join(s for s, _, _ in plans),
                merge_targets([(s, p, hashed[s]) for s, p, _ in plans]),
                (*kept_out, *_unhashed_note(missing), *all_notes),
            )
        ]
    else:
        outputs = [
            (
                args.output.replace("{target}", s),
                s,
                hashed[s],
                (
                    *kept_out,
                    *_unhashed_note([u for u in missing if u.target == s]),
                    *plan.notes,
                    *dropped_notes(plan, s),
                ),
            )
            for s, _, plan in plans
        ]
    texts = []
    for path, which, lines, notes in outputs:
        header = [
            f"# Generated by resolver-hook lock for {which}",
            f"# from {inputs}",
            "# Flavoured packages are pinned; others are as you wrote them (--flavoured-only)."
            if args.flavoured_only
            else "# Every package is pinned with its sha256; the unflavoured ones resolved "
            f"by uv for each target against {against or 'its default index'}.",
        ]
        header += header_notes(notes)
        texts.append((path, "\n".join(header + lines) + "\n", len(lines)))
    if texts[0][0] == "-":
        sys.stdout.write(texts[0][1])
        return 0
    # Several files (one per target) are written all or nothing; with one folder, the
    # index that tells a machine which is its own is swapped in with them.
    one_folder = len({os.path.dirname(p) for p, *_ in outputs}) == 1
    return finish(
        [(path, text) for path, text, _ in texts],
        [f"{path} ({count} lines)" for path, _, count in texts],
        lock_set=plans if "{target}" in args.output and one_folder else None,
        check=args.check,
        stream=sys.stdout,
    )


def _hashed_lines(
    args: argparse.Namespace, settings: Settings, plans: list[tuple[str, HostProfile, Plan]]
) -> tuple[dict[str, list[str]], list[Unhashed], str]:
    """Each target's lock lines, every one with its sha256; the lines whose sha256
    cannot be had (refused here unless --allow-unhashed); what the rest was resolved
    against, in words."""
    whole = not args.flavoured_only
    if whole and find_uv(settings.env) is None:
        raise OperationalError(
            "uv not found on PATH: a lock of the whole environment is resolved by uv for "
            "each target (pip's --platform evaluates markers for this machine only)",
            hint="install it: python3 -m pip install uv; or --flavoured-only to pin the "
            "flavoured packages alone",
        )
    fetcher: Fetcher = OfflineFetcher() if settings.offline else NetFetcher(settings)
    # The partial form reads an index only for a flavour that is the index's plain build.
    passes = any(
        is_flavoured_line(p) and p.action == "pass" for _, _, plan in plans for p in plan.packages
    )
    indexes = index_settings(settings) if whole or passes else LockIndexes()
    hashed: dict[str, list[str]] = {}
    missing: list[Unhashed] = []
    used: list[str] = []
    for s, profile, plan in plans:
        path = args.output if "{target}" not in args.output else args.output.replace("{target}", s)
        got = target_lines(s, profile, plan, fetcher, indexes=indexes, env=settings.env,
                           whole=whole, offline=settings.offline,
                           keep=existing_pins(path, "requirements", profile),
                           upgrade=upgrade_of(args), timeout=settings.timeout)  # fmt: skip
        missing += got.unhashed
        used += got.indexes
        hashed[s] = list(got.lines)
    if missing and not args.allow_unhashed:
        raise refusal(missing)
    against = indexes.described() or ", ".join(redact(u) for u in dict.fromkeys(used))
    return hashed, missing, against if whole else ""


def _without_credentials(
    hashed: dict[str, list[str]],
) -> tuple[dict[str, list[str]], list[str]]:
    """Each target's lines with no URL's credentials (a requirement copied as written:
    ``name @ https://user:token@host/...``), and a note for each host they were left
    out for: a lock is a file to share, and the installer takes them from its own
    netrc or keyring as it does for every other URL of the host."""
    out: dict[str, list[str]] = {}
    hosts: dict[str, None] = {}
    for target, lines in hashed.items():
        out[target] = []
        for line in lines:
            clean, where = without_credentials(line)
            out[target].append(clean)
            hosts.update(dict.fromkeys(where))
    return out, [credentials_note(host) for host in hosts]


def _unhashed_note(missing: list[Unhashed]) -> list[str]:
    if not missing:
        return []
    return [
        "without a sha256 (--allow-unhashed): " + "; ".join(dict.fromkeys(u.line for u in missing))
    ]


def _split_hints(
    plans: list[tuple[str, HostProfile, Plan]], *, per_target_files: bool = False
) -> list[str]:
    """For a package with no fit on some targets only: the marker that leaves it out
    there, or that no marker can tell those targets apart. ``per_target_files``: -o
    already writes one file per target (``{target}``), so the hint is not to do so
    but to lock the targets it fails apart."""

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
            how = (
                f"lock {where} apart, without {name} (each --target names one file already)"
                if per_target_files
                else "lock them in one file per target (-o with '{target}')"
            )
            out.append(
                f"hint: {name} fits {same[0][0]} but not {same[1][0]}, and no marker tells "
                f"them apart ({unmarkable_difference(same[0][1], same[1][1])}): {how}\n"
            )
        else:
            out.append(
                f"hint: {name} has no build for {where}; to lock the other targets, "
                f"give it a marker that is false there: '{_with_marker(asked, marker)}'\n"
            )
    return out


def _with_marker(requirement: str, marker: str) -> str:
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return f"{requirement} ; {marker}"
    own, req.marker = req.marker, None
    return f"{req} ; ({own}) and ({marker})" if own is not None else f"{req} ; {marker}"
