"""``resolver-hook detect``: what this (or the described) machine is."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._machine import add_machine_options, machine_from_args
from resolver_hook.ground.hostkey import profile_json

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile

__all__ = ["register", "render_profile"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "detect",
        help="what this machine is",
        description="Report the host profile: OS, CPU, Python and its wheel "
        "tags, libc, and accelerators, with the reason when none is found.",
    )
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    p.add_argument("--all-tags", action="store_true", help="list every wheel tag, not the first 5")
    add_machine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    profile = machine_from_args(args)
    if args.json:
        sys.stdout.write(profile_json(profile.to_dict()))
    else:
        sys.stdout.write(render_profile(profile, all_tags=args.all_tags))
    return 0


def render_profile(profile: HostProfile, *, all_tags: bool = False) -> str:
    """The readable report (also used by doctor)."""

    def mark(field: str) -> str:
        return "  (overridden)" if field in profile.overridden else ""

    lines = [f"machine:   {profile.origin}"]
    lines.append(f"os:        {profile.os}")
    lines.append(f"arch:      {profile.arch}{mark('arch')}")
    free = ", free-threaded" if profile.free_threaded else ""
    lines.append(f"python:    {profile.python} ({profile.implementation}{free})")
    if profile.libc:
        version = profile.libc_version or "unknown"
        lines.append(f"libc:      {profile.libc} {version}{mark('glibc')}")
    hints = [h for h in ("WSL" if profile.wsl else "", profile.container or "") if h]
    if hints:
        lines.append(f"hints:     {', '.join(hints)}")
    nv = profile.nvidia
    if nv is None:
        lines.append(f"nvidia:    none: {profile.nvidia_reason}{mark('cuda')}")
    else:
        lines.append(
            f"nvidia:    driver {nv.driver_version or 'unknown'}, "
            f"driver CUDA {profile.cuda_words()}{mark('cuda')}"
        )
        if not nv.gpus:
            lines.append(f"           no visible GPU: {profile.nvidia_reason}")
        for g in nv.gpus:
            extra = [f"{g.memory_mib} MiB"] if g.memory_mib else []
            extra += [g.uuid] if g.uuid else []
            tail = f", {', '.join(extra)}" if extra else ""
            lines.append(
                f"  gpu {g.index}:   {g.name}, compute capability "
                f"{g.cc[0]}.{g.cc[1]} (sm_{g.cc[0]}{g.cc[1]}){tail}{mark('sm')}"
            )
    if profile.rocm:
        lines.append(
            f"rocm:      {', '.join(profile.rocm.gfx) or 'no GPU'}"
            f" (ROCm {profile.rocm.version or 'version unknown'})"
        )
    if profile.jetson:
        lines.append(f"jetson:    L4T {profile.l4t or 'release unknown'}")
    if profile.os == "macos":
        lines.append(f"mps:       {'yes' if profile.mps else 'no'}")
    shown = profile.tags if all_tags else profile.tags[:5]
    more = "" if all_tags or len(profile.tags) <= 5 else f" ... ({len(profile.tags)} in all)"
    lines.append(f"tags:      {', '.join(shown)}{more}")
    for p in profile.probes:
        lines.append(f"probe:     {p.name}: {'found' if p.found else 'nothing'}: {p.detail}")
    lines.extend(f"note:      {n}" for n in profile.notes)
    return "\n".join(lines) + "\n"
