"""Lock formats: pinned requirement lines for one plan, merged across targets.

Pure functions over plans and profiles; ``resolver-hook lock`` (``cli/lock.py``) reads
the inputs, writes the output and prints.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.requirements import Requirement

from resolver_hook.errors import UsageError
from resolver_hook.ground.userinfo import redact_text
from resolver_hook.reqfile import format_requirement, url_lines_first, with_marker
from resolver_hook.resolve import marker_environment

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import Plan

__all__ = [
    "credentials_note",
    "dropped_notes",
    "header_notes",
    "lock_lines",
    "merge_targets",
    "split_marker",
    "target_marker",
    "target_markers",
    "unmarkable_difference",
    "with_hash",
]

# A lock file's header lines stay within this width (a file: no terminal to ask).
HEADER_COLUMNS = 80

# The marker variables a lock file tells targets apart by (PEP 508).
_SPLIT_KEYS = ("sys_platform", "platform_machine", "python_version")


def target_marker(profile: HostProfile) -> str:
    """A PEP 508 marker that holds on the profile's OS, CPU and Python."""

    env = marker_environment(profile)
    return (
        f'sys_platform == "{env["sys_platform"]}" and platform_machine == '
        f'"{env["platform_machine"]}" and python_version == "{env["python_version"]}"'
    )


def target_markers(
    targets: Iterable[tuple[str, HostProfile]], *, clash: str, hint: str
) -> dict[str, str]:
    """``{spec: target_marker(profile)}`` for ``(spec, profile)`` pairs; a UsageError
    (``clash`` says why it matters, ``hint`` what to do) when two share a marker."""
    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    for spec, profile in targets:
        mk = target_marker(profile)
        if mk in seen:
            raise UsageError(
                f"targets {seen[mk]} and {spec} differ only in what markers cannot tell "
                f"apart (GPU, driver): {clash}",
                hint=hint,
            )
        seen[mk] = spec
        out[spec] = mk
    return out


def lock_lines(plan: Plan, hashes: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Pinned requirement lines for one plan: find-links, URL lines, then plain lines;
    a package in ``hashes`` gets pip's ``--hash`` options on its line."""

    links = [f"--find-links {u}" for u in plan.find_links]
    lines: list[str] = []
    for p in plan.packages:
        line: str | None
        if p.cause == "marker":
            continue  # its marker is false on this target: the line could never hold
        if p.action == "pass" and p.flavour is not None:
            # The plain build from the user's index fits: pin its version, keeping the
            # extras and marker the user wrote.
            req = Requirement(p.requested) if p.requested else None
            line = format_requirement(
                p.name,
                version=p.entry_version,
                extras=req.extras if req else (),
                marker=req.marker if req else None,
            )
        else:
            line = p.line or p.constraint  # constraint only: a coupled package, pin it too
        if line and hashes and p.name in hashes:
            line = with_hash(line, hashes[p.name])
        if line:
            lines.append(line)
    return links + url_lines_first(lines)


def header_notes(notes: Iterable[str], width: int = HEADER_COLUMNS) -> list[str]:
    """``# note: ...`` header lines, one short note per cause: each note's first line
    (its summary; the detail is the plan's, under ``-v`` and ``--json``), wrapped at
    spaces within ``width``, a word never cut (a URL stays whole), a URL's credentials
    shown as ``****``."""
    out = []
    for note in dict.fromkeys(redact_text(n.split("\n", 1)[0]) for n in notes):
        out.extend(
            textwrap.wrap(
                note,
                width,
                initial_indent="# note: ",
                subsequent_indent="#   ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return out


def credentials_note(host: str) -> str:
    """The note that the credentials of a URL for ``host`` (``host:port``) were left out
    of a lock: a file to share; the installer takes its own from its netrc or keyring,
    as it does for every other URL of the host."""
    return (
        f"{host}: the credentials in a URL of your requirements are not written into the "
        f"lock: the installer needs its own (a netrc entry for {host.rsplit(':', 1)[0]}, "
        "or a keyring)"
    )


def with_hash(line: str, sha256s: Sequence[str]) -> str:
    """A requirements line with pip's ``--hash`` options (after any marker), but for a
    hash its URL's own ``#sha256=`` already says (pip and uv check that one,
    ``--require-hashes`` too)."""
    said = [h for h in dict.fromkeys(sha256s) if f"#sha256={h}" not in line]
    return " ".join([line, *(f"--hash=sha256:{h}" for h in said)])


def dropped_notes(plan: Plan, target: str) -> list[str]:
    """A note for each requirement left out because its marker is false on the target."""
    return [
        f"{p.requested} ({p.where}): left out for {target}, where its marker is false"
        if p.where
        else f"{p.requested}: left out for {target}, where its marker is false"
        for p in plan.packages
        if p.cause == "marker"
    ]


def split_marker(keep: list[HostProfile], drop: list[HostProfile]) -> str | None:
    """A PEP 508 marker true on every ``keep`` profile and false on every ``drop`` one,
    as short as the marker variables allow; None when markers cannot tell them apart."""

    keep_env = [marker_environment(p) for p in keep]
    drop_env = [marker_environment(p) for p in drop]
    for key in _SPLIT_KEYS:
        ok = sorted({e[key] for e in keep_env})
        bad = sorted({e[key] for e in drop_env})
        if set(ok) & set(bad):
            continue
        if len(ok) == 1:
            return f'{key} == "{ok[0]}"'
        return " and ".join(f'{key} != "{v}"' for v in bad)
    if {target_marker(p) for p in keep} & {target_marker(p) for p in drop}:
        return None
    return " or ".join(f"({target_marker(p)})" for p in keep)


def unmarkable_difference(a: HostProfile, b: HostProfile) -> str:
    """What tells two profiles apart that no marker can: GPU, driver, glibc, ROCm."""
    diffs = []
    if a.gpu_ccs != b.gpu_ccs:
        words = [", ".join(f"sm_{x}{y}" for x, y in p.gpu_ccs) or "no GPU" for p in (a, b)]
        diffs.append(f"GPU ({words[0]} vs {words[1]})")
    if a.cuda != b.cuda:
        words = [
            p.nvidia.cuda_version if p.nvidia and p.nvidia.cuda_version else "none" for p in (a, b)
        ]
        diffs.append(f"driver CUDA ({words[0]} vs {words[1]})")
    if a.libc_version != b.libc_version:
        diffs.append(f"glibc ({a.libc_version} vs {b.libc_version})")
    ra = a.rocm.version if a.rocm else None
    rb = b.rocm.version if b.rocm else None
    if ra != rb:
        diffs.append(f"ROCm ({ra or 'none'} vs {rb or 'none'})")
    return ", ".join(diffs) or "nothing a marker can see"


def merge_targets(per_target: list[tuple[str, HostProfile, list[str]]]) -> list[str]:
    """One file for several targets: lines not common to all carry the targets' markers."""

    markers: dict[str, tuple[str, HostProfile]] = {}
    for spec, profile, _ in per_target:
        mk = target_marker(profile)
        if mk in markers:
            other, first = markers[mk]
            raise UsageError(
                f"targets {other} and {spec} differ only in what markers cannot tell "
                f"apart: {unmarkable_difference(first, profile)}; they share the marker "
                f"{mk}: write one file per target",
                hint="use -o with '{target}' in the file name (one file per target)",
            )
        markers[mk] = (spec, profile)
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
        if line.startswith("-") or len(where[line]) == len(per_target):
            out.append(line)  # options hold for the whole file, and so does a common line
            continue
        out.append(with_marker(line, " or ".join(f"({m})" for m in where[line])))
    options = [x for x in out if x.startswith("-")]
    return options + url_lines_first(x for x in out if not x.startswith("-"))
