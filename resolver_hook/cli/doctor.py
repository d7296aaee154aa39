"""``resolver-hook doctor``: what this machine is, and whether source builds will work.

``doctor --build`` checks the source-build toolchain (CUDA toolkit, the host compiler
nvcc would use and whether nvcc accepts it, cmake, ninja, the driver stub, toolkit vs
driver): one line per check, ``ok`` / ``warn`` / ``fail`` / ``skip``, with the reason
and the fix. Exit 0 when nothing failed (warnings are fine), 1 when a check failed.

``doctor`` without ``--build`` (the detection report) is not written yet; the
toolchain part is :func:`toolchain_lines`, so the detection report can add its own
section next to it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from resolver_hook.errors import UsageError

if TYPE_CHECKING:
    from resolver_hook.toolchain import Check, ToolchainReport

__all__ = ["driver_cuda_version", "register", "toolchain_lines"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="detection report; source-build toolchain checks (--build)",
        description="Check this machine. --build checks what a source build of a CUDA "
                    "package needs: toolkit, nvcc's host compiler, cmake, ninja, driver stub.",
    )
    parser.add_argument("--build", action="store_true",
                        help="check the source-build toolchain")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--need", action="append", default=[], metavar="SPEC",
                        help="also check a build need such as 'nvcc>=12.8', 'cmake>=3.26', "
                             "'ninja', 'cxx' or a library ('z3'); repeatable")
    parser.add_argument("--driver-cuda", metavar="X.Y",
                        help="CUDA version the driver supports (default: detect it)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="give up on a tool that has not answered after this long "
                             "(default: 10)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if not args.build:
        raise UsageError(
            "'doctor' without --build (the detection report) is not available yet",
            hint="run 'resolver-hook doctor --build' for the source-build toolchain checks, "
                 "'resolver-hook detect' for what this machine is")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, not {args.timeout:g}")
    # Imported here, not at the top: keeps `resolver-hook --help` and other commands lean.
    from resolver_hook.toolchain import check_build_needs, toolchain_report

    if args.driver_cuda is not None:
        driver, reason = args.driver_cuda, None
    else:
        driver, reason = driver_cuda_version()
    report = toolchain_report(driver_cuda=driver, driver_cuda_reason=reason,
                              timeout=args.timeout)
    needs = check_build_needs(args.need, report, timeout=args.timeout) if args.need else []
    failed = not report.ok or any(c.status == "fail" for c in needs)
    if args.json:
        data = report.to_dict()
        data["needs"] = {"checked": list(args.need), "problems": [c.to_dict() for c in needs]}
        data["ok"] = not failed
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        lines = toolchain_lines(report)
        if args.need:
            lines += ["", f"build needs: {', '.join(args.need)}"]
            lines += _check_lines(needs) if needs else ["ok    all met"]
        lines.append("")
        lines.append(_verdict([*report.checks, *needs]))
        sys.stdout.write("\n".join(lines) + "\n")
    return 1 if failed else 0


def driver_cuda_version() -> tuple[str | None, str | None]:
    """The driver's CUDA version from host detection, or None and the reason.

    ``RESOLVER_HOOK_OVERRIDE_CUDA`` applies, as everywhere detection is used.
    """
    try:
        from resolver_hook.host import detect
    except ImportError:  # the host package is optional for this report
        return None, "host detection unavailable"
    try:
        profile = detect()
    except Exception as exc:  # detection must not take the toolchain report down
        return None, f"host detection failed: {exc}"
    if profile.nvidia is not None and profile.nvidia.cuda_version:
        return profile.nvidia.cuda_version, None
    why = [p.detail for p in profile.probes if p.name.startswith("nvidia") and not p.found]
    if profile.nvidia is not None:
        return None, "the NVIDIA driver did not report its CUDA version"
    return None, "; ".join(why) or "no NVIDIA driver detected"


def toolchain_lines(report: ToolchainReport) -> list[str]:
    """The readable report: a title, then one line per check with its notes and fixes."""
    return ["source-build toolchain:", *_check_lines(report.checks)]


def _check_lines(checks: Any) -> list[str]:
    lines: list[str] = []
    for check in checks:
        lines.append(f"{check.status:<5} {check.name}: {check.summary}")
        lines += [f"      note: {note}" for note in check.notes]
        lines += [f"      fix: {fix}" for fix in check.fix]
    return lines


def _verdict(checks: list[Check]) -> str:
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("fail", "warn", "skip")}
    if not any(counts.values()):
        return "result: all checks passed"
    parts = [f"{n} {word}" for word, n in (("failed", counts["fail"]),
                                           ("warning(s)", counts["warn"]),
                                           ("skipped", counts["skip"])) if n]
    head = "result: build toolchain has problems" if counts["fail"] else "result: ok"
    return f"{head} ({', '.join(parts)})"
