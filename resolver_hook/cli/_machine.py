"""The options every command shares to say which machine it works for."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.host import resolve_machine

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile

__all__ = ["add_machine_options", "machine_from_args", "recorder"]


def add_machine_options(parser: argparse.ArgumentParser, *, targets: bool = False) -> None:
    """``--profile``, ``--target`` and the flags that describe the machine; ``targets``:
    ``--target`` may be given several times (lock), read as a list."""
    group = parser.add_argument_group(
        "machine",
        "describe another machine instead of detecting this one; flags override "
        "RESOLVER_HOOK_OVERRIDE_* variables, which override detection",
    )
    which = group.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="FILE", help="a profile saved by 'detect --json'")
    which.add_argument(
        "--target",
        action="append" if targets else "store",
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


def recorder(args: argparse.Namespace) -> Recorder:
    """Where the command's readers declare what they read (``main``'s ``record``)."""
    record = getattr(args, "record", NOWHERE)
    return record if isinstance(record, Recorder) else NOWHERE


def machine_from_args(args: argparse.Namespace, *, fresh: bool = False) -> HostProfile:
    """The machine the command works for. ``fresh``: never the cached profile (doctor
    reports what the probes find now; status compares the machine as it is now)."""

    flags = {k: getattr(args, k) for k in ("cuda", "sm", "arch", "glibc")}
    return resolve_machine(
        profile=args.profile,
        target=args.target,
        flags=flags,
        use_cache=not (fresh or getattr(args, "no_cache", False)),
        record=recorder(args),
    )
