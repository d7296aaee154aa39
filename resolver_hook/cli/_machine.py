"""The options every command shares to say which machine it works for."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

from resolver_hook._installers import venv_declared_python
from resolver_hook.errors import UsageError
from resolver_hook.host import resolve_machine
from resolver_hook.install.backends import python_version_of

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.install.backends import Installer

__all__ = ["add_machine_options", "machine_from_args", "profile_for"]


def add_machine_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "machine",
        "describe another machine instead of detecting this one; flags override "
        "RESOLVER_HOOK_OVERRIDE_* variables, which override detection",
    )
    which = group.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="FILE", help="a profile saved by 'detect --json'")
    which.add_argument(
        "--target",
        metavar="SPEC",
        help="e.g. linux-aarch64-py312-glibc2.39-cuda13.0-sm121 or "
        "linux-x86_64-py312-rocm7.2-gfx942 (fields: docs/commands.md, Targets)",
    )
    group.add_argument("--cuda", metavar="X.Y", help="driver CUDA version ('' = no NVIDIA GPU)")
    group.add_argument("--sm", metavar="CC[,CC]", help="GPU compute capabilities, e.g. 9.0,12.1")
    group.add_argument("--arch", metavar="ARCH", help="CPU architecture, e.g. aarch64")
    group.add_argument("--glibc", metavar="X.Y", help="glibc version, e.g. 2.39")
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="detect afresh instead of reading this boot's cached host profile",
    )


def machine_from_args(args: argparse.Namespace, *, fresh: bool = False) -> HostProfile:
    """The machine the command works for. ``fresh``: never the cached profile (doctor
    reports what the probes find now; status compares the machine as it is now)."""

    flags = {k: getattr(args, k) for k in ("cuda", "sm", "arch", "glibc")}
    return resolve_machine(
        profile=args.profile,
        target=args.target,
        flags=flags,
        use_cache=not (fresh or getattr(args, "no_cache", False)),
    )


_PYTHON_IN_SPEC = re.compile(r"(?:^|-)(?:py|cp)(\d)(\d+)t?(?:-|$)")


def profile_for(
    installer: Installer, args: argparse.Namespace, *, strict: bool = False
) -> HostProfile:
    """The machine, with the Python of the environment being installed into.

    A ``--target`` naming another Python than that environment's is planned as asked,
    with a warning; ``strict`` (``enable``, whose pins stay in the venv) refuses it.
    """

    profile = machine_from_args(args)
    if args.profile:
        return profile
    if args.target:
        m = _PYTHON_IN_SPEC.search(args.target)
        declared = venv_declared_python(installer.python)
        have = None if declared is None else f"{declared[0]}.{declared[1]}"
        if m is not None and have is not None:
            asked = f"{m.group(1)}.{m.group(2)}"
            if have != asked:
                words = (
                    f"--target {args.target} names Python {asked}, but {installer.python} "
                    f"is Python {have}"
                )
                if strict:
                    raise UsageError(
                        f"{words}: pip.conf would pin builds this environment cannot install",
                        hint=f"give py{have.replace('.', '')} in --target, or leave --target out",
                    )
                sys.stderr.write(
                    f"warning: {words}: the plan is for Python {asked}, as asked; the "
                    "installer may refuse its wheels\n"
                )
        return profile
    return profile.for_python(python_version_of(installer.python))
