"""``resolver-hook pip install ...`` and ``resolver-hook uv pip install ...``.

Hook options (machine, manifests, ``--optional``) go between ``pip``/``uv`` and the
installer's own command; everything from ``install`` on is the installer's, passed
on untouched::

    resolver-hook pip --target linux-x86_64-py312-cuda13.0-sm100 install -r requirements.txt
    resolver-hook uv pip install --require-hashes -r requirements.txt

Exit codes: the installer's own; 1 when the plan has no fit for a package (the
installer never runs) or a dependency pins another flavour; 2 for bad input; 128+N
when resolver-hook got signal N (130 for Ctrl-C, 143 for SIGTERM), after forwarding
it to the installer and seeing it exit. The use-case is resolver_hook.install.session;
this module only parses and prints.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli import command_module
from resolver_hook.cli._envpython import profile_for
from resolver_hook.cli._inputs import (
    add_inventory_options,
    add_manifest_options,
    manifests_from_args,
    planner_from_args,
)
from resolver_hook.cli._machine import add_machine_options, recorder
from resolver_hook.cli._output import columns, paint_lines, verbosity
from resolver_hook.errors import ResolverHookError, UsageError
from resolver_hook.ground import timings as _timings
from resolver_hook.host.detect import parse_target
from resolver_hook.index.userindex import UvConfig
from resolver_hook.install.args import parse_install_args
from resolver_hook.install.session import InstallSession, pip_started
from resolver_hook.settings import InstallerSettings, installer_offline

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.install.backends import Installer
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
        add_inventory_options(p)
        p.add_argument(
            "--optional",
            action="append",
            default=[],
            metavar="PKG",
            help="install PKG after the main set, import-check it, and roll it "
            "back with a warning when it fails (repeatable)",
        )
        p.add_argument(
            "--lock",
            metavar="LOCKDIR",
            help="install this machine's lock from a lock set instead of planning "
            "(the same as 'resolver-hook sync LOCKDIR --installer "
            f"{tool}'; nothing may follow '{'pip install' if tool == 'uv' else 'install'}' "
            "but --python PATH)",
        )
        p.add_argument(
            "--no-proof",
            dest="proof",
            action="store_false",
            help="do not ask the installer what it would install before installing "
            "(by default its dry run is held to the plan, and exactly that set is installed)",
        )
        kernels = p.add_mutually_exclusive_group()
        kernels.add_argument(
            "--verify-kernels",
            action="store_const",
            const=True,
            default=None,
            help="download every flavoured wheel once (pip download), read its kernels, "
            "refuse one whose SASS/PTX runs on none of a visible GPU, and install that very "
            "file (by default only wheels whose kernel list the plan assumes, on a machine "
            "whose GPUs are detected)",
        )
        kernels.add_argument(
            "--no-verify-kernels",
            dest="verify_kernels",
            action="store_const",
            const=False,
            help="read no wheel's kernels, not even those the plan only assumes",
        )
        p.add_argument(
            "--strict",
            action="store_true",
            help="refuse (exit 1, nothing installed) a package whose build the plan "
            "cannot judge on this machine (UNJUDGED), instead of passing it on",
        )
        add_machine_options(p)
        p.add_argument("installer_args", nargs=argparse.REMAINDER, metavar=usage_tail)
        p.set_defaults(func=run, tool=tool)


class _Printer:
    """The session's words: ours on stderr, the installer's stdout passed through."""

    def say(self, text: str) -> None:
        if verbosity() >= 0:  # -q: errors only
            self.refused(text)

    def refused(self, text: str) -> None:
        sys.stderr.write(f"resolver-hook: {text}\n")
        sys.stderr.flush()

    def error(self, text: str, hint: str | None = None) -> None:
        sys.stderr.write(f"error: {text}\n" + (f"hint: {hint}\n" if hint else ""))

    def warning(self, text: str) -> None:
        sys.stderr.write(f"warning: {text}\n")

    def output(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def installer_stderr(self, text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()

    def no_fit(self, plan: Plan) -> None:
        # The plan command's module (its printer and its options) only for a plan that
        # has no fit: an install that goes on never loads it.
        from resolver_hook.cli.plan import render_errors

        errors = render_errors(plan, verbose=verbosity() > 0, width=columns(sys.stderr))
        sys.stderr.write(paint_lines(errors, sys.stderr))


class _Machine:
    """The machine of the hook options, with the Python of the environment installed into
    (:func:`profile_for`)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    def profile_for(self, installer: Installer) -> HostProfile:
        return profile_for(installer, self.args)


def run(args: argparse.Namespace) -> int:
    tool: str = args.tool
    rest: list[str] = list(args.installer_args)
    expected = ["install"] if tool == "pip" else ["pip", "install"]
    if rest[: len(expected)] != expected:
        raise UsageError(
            f"expected '{' '.join(expected)}' after 'resolver-hook {tool}' and its own options",
            hint=f"resolver-hook {tool} [--target SPEC] {' '.join(expected)} ...",
        )
    if args.lock is not None:
        return _install_lock(args, rest[len(expected) :])
    _warn_target_directory(rest[len(expected) :])
    # The installer told to open no connection: the plan opens none either.
    parsed = parse_install_args(tool, rest[len(expected) :])
    installer = InstallerSettings(
        tool=tool,
        index_url=parsed.index_url,
        no_index="--no-index" in parsed.options,
        cert=parsed.cert,
        proxy=parsed.proxy,
        # pip's own test: the argument list holds the word (cli/main.py).
        isolated=tool == "pip" and "--isolated" in parsed.options,
        config_file=parsed.config_file,
        no_config=parsed.no_config,
    )
    # uv's files, read once: for this decision and for the plan's default index.
    uv_files = UvConfig(installer.uv_env(os.environ), record=recorder(args))
    why = installer_offline(tool, parsed.options, os.environ, uv_files)
    if why is not None and not args.offline:
        args.offline = True
        _Printer().say(f"planned offline (page cache, then the shipped snapshot): {why}")
    _timings.start(os.environ)
    ahead = None
    try:
        # pip's interpreter (the program's, or for a dry run one started now) imports
        # pip while the manifests are read and the plan is made.
        ahead = pip_started(tool, parsed, os.environ, proof=args.proof)
        with _timings.phase("manifests"):
            manifests = manifests_from_args(args)
        session = InstallSession(
            tool=tool,
            planner=planner_from_args(args, installer=installer, uv=uv_files),
            machine=_Machine(args),
            report=_Printer(),
            proof=args.proof,
            verify_kernels=args.verify_kernels,
            strict=args.strict,
            record=recorder(args),
        )
        return session.install(
            rest[len(expected) :], manifests=manifests, optional=list(args.optional), ahead=ahead
        )
    finally:
        if ahead is not None:  # where the session never took it
            ahead.close()
        _timings.finish()


def _warn_target_directory(installer_args: list[str]) -> None:
    """pip's ``--target DIR`` after ``install`` whose value reads as a target spec: the
    user most likely meant the hook's ``--target`` (which goes before ``install``)."""

    for i, arg in enumerate(installer_args):
        if arg == "--":
            return
        value = None
        if arg in ("--target", "-t") and i + 1 < len(installer_args):
            value = installer_args[i + 1]
        elif arg.startswith("--target="):
            value = arg.partition("=")[2]
        if value is None or os.sep in value:
            continue
        try:
            parse_target(value)
        except (ResolverHookError, ValueError):
            continue
        sys.stderr.write(
            f"warning: --target {value} after 'install' is the installer's --target DIR: it "
            f"installs into a folder named {value}; to plan for that machine, put it before "
            "'install' (resolver-hook pip --target SPEC install ...)\n"
        )
        return


def _install_lock(args: argparse.Namespace, rest: list[str]) -> int:
    """``--lock LOCKDIR``: what ``resolver-hook sync`` does, with this installer."""

    python = None
    if rest[:1] == ["--python"] and len(rest) == 2:
        python, rest = rest[1], []
    if rest:
        raise UsageError(
            f"--lock installs the lock set's file, so nothing else can follow: {' '.join(rest)}",
            hint=f"resolver-hook {args.tool} --lock {args.lock} "
            f"{'pip ' if args.tool == 'uv' else ''}install [--python PATH]",
        )
    given = {**vars(args), "lockdir": args.lock, "installer": args.tool, "python": python}
    code: int = command_module("sync").run(argparse.Namespace(**given))
    return code
