"""``resolver-hook sync LOCKDIR``: install the lock of this machine's class from a lock set.

The lock set is what ``resolver-hook lock -o 'LOCKDIR/{target}.txt' --target ...``
writes: one lock file per target and ``LOCKDIR/index.toml`` (resolver_hook/lock/sets.py).
``sync`` detects the machine (as seen by the environment's Python), picks the lock whose
builds all run here, checks its sha256 against the index and installs it with uv
(``uv pip install -r``) or pip (``pip install -r``), into the active virtual environment
or ``--python``'s. Exit codes: the installer's own; 1 when no lock fits (nothing is
installed; the nearest lock is named with each rule it fails) or a lock file changed;
2 for bad input, a lock whose URLs the URL policy refuses among it (plain http; loopback
http and ``file:`` need ``--allow-insecure-urls``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from resolver_hook.cli._inputs import add_insecure_option, settings_from_args
from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.userinfo import redact_text
from resolver_hook.install.args import parse_install_args
from resolver_hook.install.backends import find_installer, python_version_of
from resolver_hook.lock.sets import choose, nearest, read_index, verified_file
from resolver_hook.manifest.urls import INSECURE_FLAG, url_problems
from resolver_hook.process.foreground import foreground
from resolver_hook.process.which import find_uv
from resolver_hook.reqfile import includes_a_file, installer_lines

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sync",
        help="install this machine's lock from a lock set",
        description="Read LOCKDIR/index.toml (written by 'resolver-hook lock -o "
        '"LOCKDIR/{target}.txt"\'), pick the lock whose builds run on this machine, '
        "verify its sha256 and install it with uv or pip. Nothing is installed when no "
        "lock fits.",
    )
    p.add_argument("lockdir", metavar="LOCKDIR")
    p.add_argument(
        "--installer",
        choices=("uv", "pip"),
        help="install with uv or pip (default: uv when it is installed, else pip)",
    )
    p.add_argument(
        "--python",
        metavar="PATH",
        help="the environment to install into (default: the active venv)",
    )
    add_machine_options(p)
    add_insecure_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    folder = Path(args.lockdir)
    locks = read_index(folder)
    settings = settings_from_args(args, reads_pages=False)
    env = dict(settings.env)
    tool = args.installer or ("uv" if find_uv(env) else "pip")
    python = ["--python", args.python] if args.python else []
    if tool == "pip" and args.python:
        env["VIRTUAL_ENV"] = str(Path(args.python).parent.parent)
    installer = find_installer(tool, parse_install_args(tool, python if tool == "uv" else []), env)
    profile = machine_from_args(args)
    if not (args.profile or args.target):
        profile = profile.for_python(python_version_of(installer.python))
    chosen, why = choose(locks, profile)
    if chosen is None:
        if not locks:
            raise OperationalError(f"{folder / 'index.toml'} lists no lock")
        near = nearest(locks, profile, why)
        reasons = "; ".join(why[near.file])
        raise OperationalError(
            f"no lock in {folder} fits {profile.describe()}: the nearest, {near.file} "
            f"(for {near.machine}), fails: {reasons}",
            hint=f"add a lock for this machine class: resolver-hook lock ... -o "
            f"'{folder}/{{target}}.txt' --target {near.target} --target <this machine>",
        )
    fitting = [lock for lock in locks if not why[lock.file]]
    more = ""
    if len(fitting) > 1:
        more = (
            f" ({len(fitting)} locks fit; this one is the most specific: planned for this "
            "machine's GPUs, then the most GPU builds, then the highest CUDA floor)"
        )
    sys.stderr.write(
        f"resolver-hook: {chosen.file} (for {chosen.machine}) fits {profile.describe()}{more}\n"
    )
    path = verified_file(folder, chosen)
    # The one URL policy on what the installer is handed, as on every link the tool
    # reads: a lock that pins plain http is refused however its hash was recorded. The
    # lock is read as the installer reads it (a line continued with a backslash, a
    # ${NAME} from the environment), and may name no other file: the index's sha256
    # vouches for this one alone.
    lines = installer_lines(path.read_text(encoding="utf-8", errors="replace"), env)
    included = next((line for line in lines if includes_a_file(line)), None)
    if included is not None:
        raise UsageError(
            f"{path}: {redact_text(included)}: the installer would read another file, which "
            "index.toml's sha256 does not cover: nothing installed",
            hint="write the lock again with resolver-hook lock (its locks name no other file)",
        )
    refused = url_problems("\n".join(lines), allow_insecure=settings.allow_insecure)
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise UsageError(
            f"{path}: {refused[0]}{more}: nothing installed",
            hint=f"write the lock again from https pages ({INSECURE_FLAG} for a local test index)",
        )
    # uv is pointed at an interpreter only when the user named one: with none, uv picks
    # the environment as `uv pip install -r` does (active, then .venv) and refuses where
    # there is none, as it does typed. The interpreter `uv python find` names may be a
    # system Python, which uv would install into when handed it as --python.
    extra = ["--python", installer.python] if tool == "uv" and args.python else []
    code, _ = foreground(installer.argv(["-r", str(path)], extra), env=env)
    return code
