"""Lock formats: pinned requirement lines for one plan, merged across targets.

Pure functions over plans and profiles; ``resolver-hook lock`` (``cli/lock.py``) reads
the inputs, writes the output and prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import Plan

__all__ = ["lock_lines", "merge_targets", "target_marker"]


def target_marker(profile: HostProfile) -> str:
    """A PEP 508 marker that holds on the profile's OS, CPU and Python."""
    from resolver_hook.resolve import marker_environment

    env = marker_environment(profile)
    return (
        f'sys_platform == "{env["sys_platform"]}" and platform_machine == '
        f'"{env["platform_machine"]}" and python_version == "{env["python_version"]}"'
    )


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
            line = format_requirement(
                p.name,
                version=p.version,
                extras=req.extras if req else (),
                marker=req.marker if req else None,
            )
        else:
            line = p.line or p.constraint  # constraint only: a coupled package, pin it too
        if not line:
            continue
        (urls if is_url_line(line) else plain).append(line)
    return links + urls + plain


def merge_targets(per_target: list[tuple[str, HostProfile, list[str]]]) -> list[str]:
    """One file for several targets: lines not common to all carry the targets' markers."""
    from resolver_hook.errors import UsageError
    from resolver_hook.reqfile import is_url_line, with_marker

    markers: dict[str, str] = {}
    for spec, profile, _ in per_target:
        mk = target_marker(profile)
        if mk in markers:
            raise UsageError(
                f"targets {markers[mk]} and {spec} differ only in what markers "
                "cannot tell apart (GPU, driver): write one file per target",
                hint="use -o with '{target}' in the file name",
            )
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
    return (
        [x for x in out if x.startswith("-")]
        + urls
        + [x for x in out if not x.startswith("-") and x not in urls]
    )
