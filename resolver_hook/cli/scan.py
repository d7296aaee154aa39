"""``resolver-hook scan``: read built wheels and print (or write) their support matrix.

Usage::

    resolver-hook scan WHEEL... [--json] [-o MANIFEST --url-prefix URL]
                                [--homepage URL] [--downloads URL]

Without ``-o`` it describes each wheel in words (``--json``: as data). With ``-o FILE``
(``-`` for standard output) it writes one manifest for the project; every wheel's URL is
``--url-prefix`` + its file name (URL-quoted), so ``--url-prefix`` is then required: a
manifest of bare file names would be useless to the resolver, and guessing a ``file:``
URL would publish a path of this machine.

A wheel that cannot be read gets one ``error:`` line; the others are still scanned and
the exit code is 1, or 2 when a path is no file to read (a folder, a FIFO or
pipe, a device: a usage error, as for ``lint``). No manifest is written then (it would
silently lack that wheel).
Wheels of different projects cannot go in one manifest (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from resolver_hook.binaries.scan import ScanError, cuda_runtime_major, scan_wheel
from resolver_hook.cli._inputs import add_insecure_option, allow_insecure
from resolver_hook.cli._output import Progress
from resolver_hook.errors import UsageError
from resolver_hook.ground.fs import write_atomic
from resolver_hook.ground.input import InputError, check_archive_input
from resolver_hook.manifest.urls import INSECURE_FLAG, url_problem
from resolver_hook.manifest.write import WheelEntry, render_manifest
from resolver_hook.portable.cuda import describe_target, parse_target
from resolver_hook.publish.variants import scan_properties

if TYPE_CHECKING:
    from resolver_hook.binaries.scan import WheelReport

__all__ = ["register"]

_OBJECTS_SHOWN = 20  # objects listed in words; a wheel may hold 16,000 cubins


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scan",
        help="derive the support matrix from real wheels",
        description="Read wheels (no unpacking): CPU, CUDA runtime, GPU kernel targets, "
        "torch coupling. Optionally write a flavour manifest.",
    )
    parser.add_argument("wheels", nargs="+", metavar="WHEEL", help="wheel files to read")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write a manifest TOML ('-' = standard output)"
    )
    parser.add_argument(
        "--url-prefix",
        metavar="URL",
        help="where the wheels will be downloaded from; each url = prefix + file name "
        "(required with -o; https, or with --allow-insecure-urls file: or http on "
        "127.0.0.1/localhost/::1)",
    )
    parser.add_argument("--homepage", metavar="URL", help="[package] homepage in the manifest")
    parser.add_argument(
        "--downloads",
        metavar="URL",
        help="[package] downloads: where people get the real wheels (default: --url-prefix)",
    )
    add_insecure_option(parser)
    parser.set_defaults(func=run)


def _check_prefix(prefix: str, insecure: bool) -> str:
    # The one URL policy, the same opt-in as every other command's.

    problem = url_problem(prefix, allow_insecure=insecure)
    if problem is not None:
        raise UsageError(
            f"--url-prefix: {problem}",
            hint=f"use https://...; for a local test index, http:// on 127.0.0.1 or a file: "
            f"URL with {INSECURE_FLAG}",
        )
    return prefix if prefix.endswith("/") else prefix + "/"


def _describe(report: WheelReport) -> str:
    lines = [report.filename]
    lines.append(f"  {report.name} {report.version}, {report.size} bytes, sha256 {report.sha256}")
    lines.append(f"  wheel tags: {', '.join(report.tags)}")
    machines = sorted({o.machine for o in report.objects})
    if machines:
        lines.append(f"  CPU (from ELF headers): {', '.join(machines)}")
    else:
        lines.append("  no ELF objects: pure Python or non-Linux binaries")
    if report.cuda:
        libs = sorted({lib for o in report.objects for lib in o.needed if cuda_runtime_major(lib)})
        isas = [o.ptx_isa for o in report.objects if o.ptx_isa]
        why = (
            f"links {', '.join(libs)}"
            if libs
            else "from the PTX ISA {}.{} of its PTX".format(*max(isas))
            if isas
            else "from the version label"
        )
        lines.append(f"  needs an NVIDIA driver supporting CUDA {report.cuda} ({why})")
    else:
        lines.append("  needs no CUDA runtime")
    if len({floor for _, floor in report.floors}) > 1:
        lines.append(
            "  driver floor per kernel target (a GPU needs the lowest among those that run "
            "on it): " + ", ".join(f"{t} {floor}" for t, floor in report.floors)
        )
    if report.gpu:
        lines.append("  GPU kernels:")
        lines.extend(f"    {describe_target(parse_target(t))}" for t in report.gpu)
    if report.rocm or report.rocm_libraries:
        parts = [*report.rocm_libraries, *report.rocm]
        lines.append(f"  ROCm (AMD GPUs): {', '.join(parts)}")
    for req in report.requires:
        lines.append(f"  must be installed with {req} (links libtorch/libc10)")
    props = scan_properties(report.cuda, report.gpu)
    if props:
        lines.append("  variant properties (PEP 825):")
        lines.extend(f"    {p}" for p in props)
    if report.objects:
        lines.append("  objects:")
        for obj in report.objects[:_OBJECTS_SHOWN]:
            kernels = f"; kernels {', '.join(obj.targets)}" if obj.targets else ""
            if obj.device_code:
                lines.append(f"    {obj.path}: CUDA {obj.kind}{kernels}")
                continue
            needed = ", ".join(obj.needed) or "nothing"
            lines.append(f"    {obj.path}: {obj.machine}; needs {needed}{kernels}")
        if len(report.objects) > _OBJECTS_SHOWN:
            more = len(report.objects) - _OBJECTS_SHOWN
            lines.append(f"    ... and {more} more (--json lists every object)")
    lines.extend(f"  note: {note}" for note in report.notes)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    insecure = allow_insecure(args)
    if args.output is not None and not args.url_prefix:
        raise UsageError(
            "-o needs --url-prefix: the manifest must say where each wheel is downloaded",
            hint="e.g. --url-prefix https://github.com/OWNER/REPO/releases/download/v1.0/",
        )
    prefix = _check_prefix(args.url_prefix, insecure) if args.url_prefix else None
    for flag, value in (("--homepage", args.homepage), ("--downloads", args.downloads)):
        problem = url_problem(value, allow_insecure=insecure) if value else None
        if problem is not None:
            raise UsageError(f"{flag}: {problem}")

    reports: list[WheelReport] = []
    # (path, message, whether the path is no file to read: a usage error, exit 2)
    failed: list[tuple[str, str, bool]] = []
    with Progress("scan", len(args.wheels)) as bar:
        for n, path in enumerate(args.wheels):
            name = os.path.basename(path)

            def step(done: int, members: int, size: int, n: int = n, name: str = name) -> None:
                bar.update(n, f"{name}: {done}/{members} members, {size / 1e6:.1f} MB")

            try:
                check_archive_input(path)
                reports.append(scan_wheel(path, progress=step))
            except (ScanError, InputError) as exc:
                failed.append((path, exc.message, isinstance(exc, InputError)))
                bar.close()
                sys.stderr.write(f"error: {exc.message}\n")
            bar.update(n + 1, name, force=True)

    names = sorted({r.name for r in reports})
    if args.json:
        doc = {
            "wheels": [
                {**r.to_dict(), "variant_properties": scan_properties(r.cuda, r.gpu)}
                for r in reports
            ],
            "errors": [{"file": f, "error": e} for f, e, _ in failed],
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.output != "-":
        sys.stdout.write("\n\n".join(_describe(r) for r in reports) + ("\n" if reports else ""))

    if args.output is None:
        return (2 if any(u for *_, u in failed) else 1) if failed else 0
    if failed:
        n = len(failed)
        sys.stderr.write(
            f"error: manifest not written: {n} wheel{'' if n == 1 else 's'} could not be read\n"
        )
        return 2 if any(u for *_, u in failed) else 1
    if len(names) != 1:
        raise UsageError(
            f"one manifest describes one project, these wheels are {', '.join(names)}",
            hint="run scan once per project",
        )
    assert prefix is not None
    entries = [
        WheelEntry(
            url=prefix + quote(r.filename),
            sha256=r.sha256,
            cuda=r.cuda,
            gpu=r.gpu,
            requires=r.requires,
            # Only where targets differ: otherwise cuda alone says it.
            cuda_floors=r.floors if len({f for _, f in r.floors}) > 1 else (),
        )
        for r in reports
    ]
    text = render_manifest(
        names[0],
        entries,
        homepage=args.homepage,
        downloads=args.downloads or prefix,
        comment="Generated by `resolver-hook scan` from the wheels themselves.",
    )
    if args.output == "-":
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text)
        n = len(entries)
        sys.stderr.write(f"wrote {args.output} ({n} wheel{'' if n == 1 else 's'} of {names[0]})\n")
    return 0
