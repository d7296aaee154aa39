"""``resolver-hook enable`` / ``disable`` / ``status`` for a virtual environment."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from resolver_hook.cli._envpython import profile_for
from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    manifests_from_args,
    planner_from_args,
)
from resolver_hook.cli._machine import add_machine_options
from resolver_hook.cli._output import verbosity
from resolver_hook.errors import UsageError
from resolver_hook.host import detect
from resolver_hook.install.backends import Installer
from resolver_hook.install.venvhook import (
    active_venv,
    disable,
    enable_plan,
    machine_changes,
    read_state,
)
from resolver_hook.process.which import venv_python

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, func, helptext, description in (
        (
            "enable",
            run_enable,
            "make plain 'pip install' in this venv use the plan",
            "Plan every package that has a manifest for this machine "
            "and point the active venv's pip.conf at the resulting constraints and "
            "find-links pages. Your pip.conf is saved and 'disable' restores it "
            "byte for byte. Prints the variables that do the same for uv.",
        ),
        (
            "disable",
            run_disable,
            "restore the venv's pip configuration",
            "Restore the venv's pip.conf exactly as it was before "
            "'enable' (or remove it if there was none).",
        ),
        (
            "status",
            run_status,
            "is the hook on, and does the machine still match?",
            "Say whether the hook is enabled in the venv and whether "
            "this machine still matches the one it was enabled for. Exit 0 when "
            "it is on and matches, 1 when it is off or the machine changed.",
        ),
    ):
        p = sub.add_parser(name, help=helptext, description=description)
        p.add_argument(
            "--venv",
            metavar="PATH",
            help="the virtual environment (default: the active one, $VIRTUAL_ENV)",
        )
        if name == "enable":
            add_manifest_options(p)
            add_inventory_options(p)
            add_machine_options(p)
        p.set_defaults(func=func)


def _venv(args: argparse.Namespace) -> Path:
    if args.venv is None:
        return active_venv()
    if args.venv == "":
        raise UsageError(f"--venv {args.venv!r}: an empty path is not a folder")
    return Path(args.venv).resolve()


def _checked_venv(args: argparse.Namespace) -> Path:
    """:func:`_venv`, refused (usage error) when it is not a virtual environment."""
    venv = _venv(args)
    if not (venv / "pyvenv.cfg").is_file():
        raise UsageError(f"{venv} is not a virtual environment (no pyvenv.cfg)")
    return venv


def run_enable(args: argparse.Namespace) -> int:
    venv = _checked_venv(args)
    python = venv_python(str(venv))
    profile = profile_for(Installer(tool="pip", command=(), python=python), args, strict=True)
    unread: dict[str, str] = {}
    planned = planner_from_args(args).pages(manifests_from_args(args), None, profile, unread=unread)
    done = enable_plan(venv, profile, planned, unread=unread)
    plan, cons = done.plan, done.constraints
    out = sys.stdout.write

    out(f"enabled in {venv} for {profile.describe()}\n")
    verbose = verbosity() > 0
    unfit = [p.name for p in plan.packages if p.action == "error" and p.cause != "conflict"]
    # Builds fit here, but none goes with the others' (torch-scatter beside torch 2.13).
    clash = [p.name for p in plan.packages if p.action == "error" and p.cause == "conflict"]
    for p in plan.packages:
        if p.name in done.left_out:
            continue  # said once, below
        if p.action == "rewrite" and p.installs is not None:
            # Another distribution or extras: a constraints file cannot rename a
            # requirement, so pip.conf cannot make 'pip install cupy' install it.
            out(
                f"  {p.name}: cannot apply: this machine's flavour is {p.installs}, which a "
                f"constraints file cannot say; install it by name, or run "
                f"'resolver-hook pip install {p.name}'\n"
            )
        elif p.action == "rewrite":
            out(f"  {p.name}: {p.versions or p.version}: {p.reason}\n")
        elif p.action == "error" and verbose:
            out(f"  {p.name}: {p.reason}\n")
            if p.hint:
                out(f"  {' ' * len(p.name)}  hint: {p.hint}\n")
    if done.left_out:
        # Each page pip cannot read costs every later 'pip install' its retries.
        whys = ", ".join(dict.fromkeys(done.left_out.values()))
        out(
            f"  left out {', '.join(done.left_out)}: {whys}; pip would retry their pages on "
            "every install: run 'resolver-hook enable' again once they answer\n"
        )
    if unfit and not verbose:
        # Every package with a manifest is planned; most users need few of them, so the
        # ones with no build here are named once ('-v' gives each reason).
        out(
            f"  no build fits this machine for {len(unfit)} of them, left as they are: "
            f"{', '.join(unfit)} ('resolver-hook explain NAME' says why)\n"
        )
    if clash and not verbose:
        out(
            f"  no build goes with the others' builds for {len(clash)} of them, left as they "
            f"are: {', '.join(clash)} ('resolver-hook plan NAME' finds builds for it alone)\n"
        )
    out(f"pip: {venv / 'pip.conf'} now reads constraints from {cons}\n")
    out("uv ignores pip.conf; for uv, set:\n")
    if any(ch.isspace() for ch in str(cons)):
        # uv splits UV_CONSTRAINT on spaces (as pip splits pip.conf lists): no variable
        # can name this file; the option can.
        out(f"  uv pip install -c {shlex.quote(str(cons))} ...  (the path has a space)\n")
    else:
        out(f"  export UV_CONSTRAINT={shlex.quote(str(cons))}\n")
    if done.pages:
        # uv splits UV_FIND_LINKS on commas (docs/facts.md section 3), not on spaces.
        out(f"  export UV_FIND_LINKS={shlex.quote(','.join(done.pages))}\n")
    # pip's environment variables take the place of pip.conf's keys.
    if os.environ.get("PIP_CONSTRAINT"):
        out(
            "warning: PIP_CONSTRAINT is set in this shell and takes the place of pip.conf's "
            "constraint: unset it, or add the file above to it\n"
        )
    if done.pages and os.environ.get("PIP_FIND_LINKS"):
        out(
            "warning: PIP_FIND_LINKS is set in this shell and takes the place of pip.conf's "
            "find-links: unset it, or add the pages above to it\n"
        )
    return 0


def run_disable(args: argparse.Namespace) -> int:
    venv = _venv(args)
    done = disable(venv)
    if done.removed_ours:
        sys.stdout.write(
            f"disabled in {venv}: pip.conf was edited since 'enable': removed only what "
            "'enable' added (its mark, constraint and find-links entries); your lines are kept\n"
        )
    elif done:
        sys.stdout.write(f"disabled in {venv}: pip configuration restored\n")
    else:
        sys.stdout.write(f"resolver-hook was not enabled in {venv}: nothing to do\n")
    return 0


def run_status(args: argparse.Namespace) -> int:
    venv = _checked_venv(args)
    state = read_state(venv)
    if not state.enabled or state.profile is None:
        sys.stdout.write(f"off in {venv}\n")
        return 1
    sys.stdout.write(f"on in {venv}, for {state.profile.describe()}\n")
    for line in state.constraints:
        sys.stdout.write(f"  constraint: {line}\n")
    if state.profile.origin != "detected":
        sys.stdout.write(f"enabled for {state.profile.origin}, not this machine: not compared\n")
        return 0
    changes = machine_changes(state.profile, detect(use_cache=False))  # the machine now
    if changes:
        sys.stdout.write(
            f"the machine changed since enable: {'; '.join(changes)}\n"
            "run 'resolver-hook enable' again to plan for it\n"
        )
        return 1
    sys.stdout.write("this machine still matches\n")
    return 0
