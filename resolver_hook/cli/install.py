"""``resolver-hook pip install ...`` and ``resolver-hook uv pip install ...``.

Hook options (machine, manifests, ``--optional``) go between ``pip``/``uv`` and the
installer's own command; everything from ``install`` on is the installer's, passed
on untouched::

    resolver-hook pip --target linux-x86_64-py312-cuda13.0-sm100 install -r requirements.txt
    resolver-hook uv pip install --require-hashes -r requirements.txt

Exit codes: the installer's own; 1 when the plan has no fit for a package (the
installer never runs) or a dependency pins another flavour; 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._inputs import add_manifest_options, manifests_from_args
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.errors import OperationalError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from resolver_hook.host import HostProfile
    from resolver_hook.install import InstallArgs, Installer
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for tool, usage_tail in (("pip", "install ARGS..."), ("uv", "pip install ARGS...")):
        p = sub.add_parser(
            tool,
            help=f"plan, then run {'uv pip' if tool == 'uv' else 'pip'} install",
            usage=f"resolver-hook {tool} [HOOK-OPTIONS] {usage_tail}",
            description=f"Make the plan for the requirements in the {tool} arguments, print "
            "one line per rewritten package, then run the installer with your arguments "
            "untouched plus generated constraints. Stops before the installer runs when a "
            "package has no fit.",
        )
        add_manifest_options(p)
        p.add_argument(
            "--optional",
            action="append",
            default=[],
            metavar="PKG",
            help="install PKG after the main set, import-check it, and roll it "
            "back with a warning when it fails (repeatable)",
        )
        add_machine_options(p)
        p.add_argument("installer_args", nargs=argparse.REMAINDER, metavar=usage_tail)
        p.set_defaults(func=run, tool=tool)


def _say(text: str, *, always: bool = False) -> None:
    """A line on stderr; with -q only when ``always`` (why nothing was installed)."""
    from resolver_hook.cli._output import verbosity

    if verbosity() < 0 and not always:
        return
    sys.stderr.write(f"resolver-hook: {text}\n")
    sys.stderr.flush()


def _write_out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from resolver_hook.install import find_installer, parse_install_args, requirement_name
    from resolver_hook.reqfile import read_requirements
    from resolver_hook.resolve import resolve

    tool: str = args.tool
    rest: list[str] = list(args.installer_args)
    expected = ["install"] if tool == "pip" else ["pip", "install"]
    if rest[: len(expected)] != expected:
        raise UsageError(
            f"expected '{' '.join(expected)}' after 'resolver-hook {tool}' and its own options",
            hint=f"resolver-hook {tool} [--target SPEC] {' '.join(expected)} ...",
        )
    parsed = parse_install_args(tool, rest[len(expected) :])
    env = dict(os.environ)
    installer = find_installer(tool, parsed, env)
    profile = _profile_for(installer, args)
    manifests = manifests_from_args(args)
    optional = list(args.optional)
    reqs = read_requirements(
        parsed.requirement_files,
        [*parsed.requirements, *optional],
        constraints=parsed.constraint_files,
    )
    plan = resolve(reqs, manifests, profile)
    optional_names = frozenset(requirement_name(o) or o for o in optional)
    blocking = [p for p in plan.errors if p.name not in optional_names]
    if blocking:
        from resolver_hook.cli._output import paint_lines, verbosity
        from resolver_hook.cli.plan import render_errors

        sys.stderr.write(paint_lines(render_errors(plan, verbose=verbosity() > 0), sys.stderr))
        _say(
            f"nothing was installed: no build of {', '.join(p.name for p in blocking)} "
            f"fits {profile.describe()}",
            always=True,
        )
        return 1
    if plan.builds:
        from resolver_hook.build.preflight import preflight

        # A source build that would fail late on its toolchain fails now, with the fix.
        failures = preflight(plan)
        for line in failures:
            sys.stderr.write(f"error: {line}\n")
        if failures:
            _say(
                "nothing was installed: a source build's needs are not met "
                "('resolver-hook doctor --build' shows the toolchain)"
            )
            return 1
    return _install(
        installer, parsed, plan, reqs, env=env, optional=optional, optional_names=optional_names
    )


def _profile_for(installer: Installer, args: argparse.Namespace) -> HostProfile:
    """The machine, with the Python of the environment being installed into."""
    from resolver_hook.host.profile import compute_tags
    from resolver_hook.install import python_version_of

    profile = machine_from_args(args)
    if args.profile or args.target:
        return profile
    version = python_version_of(installer.python)
    if version == profile.python_tuple:
        return profile
    return profile.replace(
        python=f"{version[0]}.{version[1]}",
        tags=compute_tags(
            profile.os, profile.arch, version, libc=profile.libc, libc_version=profile.libc_version
        ),
    )


def _install(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    reqs: ReqFile,
    *,
    env: dict[str, str],
    optional: list[str],
    optional_names: frozenset[str],
) -> int:
    from resolver_hook.install import (
        build_invocation,
        missing_hashes,
        needs_rewrite,
        private_tempdir,
        run_installer,
        transitive_conflicts,
    )
    from resolver_hook.tomlwrite import write_atomic

    rewriting = needs_rewrite(parsed, reqs, env)
    if rewriting and missing_hashes(plan):
        raise OperationalError(
            f"--require-hashes: no sha256 is known for {', '.join(missing_hashes(plan))} "
            "(an index flavour, or a manifest without sha256)",
            hint="add the hash to the requirement line or the manifest, or drop --require-hashes",
        )
    for line in plan.explain_lines():
        _say(line)
    if rewriting:
        _say("--require-hashes: requirement lines rewritten (URL lines first)")
    if installer.tool == "uv" and plan.constraints:
        _say(
            "uv: flavour pins passed as --overrides too, so a dependency's exact pin on "
            "another flavour is replaced"
        )
    for note in plan.notes:
        _say(f"note: {note}")
    with private_tempdir() as folder:
        inv = build_invocation(
            installer, parsed, plan, reqs, folder=folder, env=env, exclude=optional_names
        )
        for name, text in inv.files.items():
            write_atomic(folder / name, text)
        code, output = run_installer(inv.argv, env, tee=installer.tool == "pip", out=_write_out)
        if code != 0:
            for conflict in transitive_conflicts(output, plan):
                sys.stderr.write(f"error: {conflict}\n")
                sys.stderr.write(
                    "hint: pip cannot replace a dependency's exact pin; "
                    "'resolver-hook uv pip install' does (uv --overrides), or ask "
                    "that package for a looser pin\n"
                )
            return code
        for name in optional:
            _install_optional(installer, parsed, plan, name, folder=folder, env=env)
    return 0


def _install_optional(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    requirement: str,
    *,
    folder: Path,
    env: dict[str, str],
) -> None:
    from resolver_hook.install import optional_install

    outcome = optional_install(
        installer, parsed, plan, requirement, folder=folder, env=env, out=_write_out
    )
    if outcome.ok:
        _say(f"optional {requirement}: installed and imports")
    else:
        sys.stderr.write(f"warning: optional {requirement} skipped: {outcome.reason}\n")
        if outcome.restored:
            sys.stderr.write(f"warning: rolled back: {outcome.restored}\n")
