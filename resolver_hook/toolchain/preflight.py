"""Before an installer builds a package from source: check what the build needs.

A plan marks a package ``build`` when no flavour fits and its manifest allows a
source build (a ``[build]`` table). The resolver stays pure, so the checks that read
this machine happen here, and the install front-end calls :func:`preflight` before
it runs pip or uv: an empty list means go ahead; otherwise print the lines and stop
(exit 1), as the issue asks: a build that would fail after twenty minutes on a
toolchain mismatch docs/facts.md section 5 fails now, with the fix.

What is checked, per ``build`` package:

- each of its ``[build] needs`` (:func:`resolver_hook.toolchain.needs.check_build_needs`:
  ``nvcc>=12.8``, ``cmake>=3.26``, ``ninja``, ``cxx``, libraries such as ``z3``);
- when it needs ``nvcc`` (a CUDA build), every failed check of the toolchain report
  too: nvcc refusing its host compiler (``crt/host_config.h``) breaks every CUDA
  build, whatever versions the manifest asked for.

The toolchain is probed once, and only when some ``build`` package declares needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement

from resolver_hook.toolchain._base import DEFAULT_TIMEOUT, Runner, run_subprocess
from resolver_hook.toolchain.needs import check_build_needs
from resolver_hook.toolchain.report import ToolchainReport, toolchain_report

if TYPE_CHECKING:
    from resolver_hook.resolve import Plan


__all__ = ["preflight"]


def _needs_nvcc(needs: Sequence[str]) -> bool:
    for need in needs:
        try:
            if Requirement(need).name.lower() == "nvcc":
                return True
        except InvalidRequirement:
            continue
    return False


def preflight(
    plan: Plan,
    *,
    report: ToolchainReport | None = None,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
    prefixes: Sequence[str] | None = None,
) -> list[str]:
    """Failure lines for the plan's source builds; ``[]`` when every build can start.

    One line per build need of the plan's ``build`` packages that is not met, ready to
    print: ``flash-attn: cannot build from source: nvcc>=12.8: nvcc 12.6 at ... does not
    satisfy >=12.8`` and, where the check has one, ``; fix: ...``. Warnings (a version
    that cannot be read) do not stop a build.

    ``report`` is a :func:`~resolver_hook.toolchain.report.toolchain_report` made earlier
    (probed here when needed and not given, with the driver CUDA version from the
    plan's profile). ``env``, ``run``, ``timeout`` and ``prefixes`` are passed to the
    probes (tests give a fake ``PATH``/``CUDA_HOME``). Never raises for what it finds.
    """
    builds = [p for p in plan.builds if p.build_needs]
    if not builds:
        return []
    if report is None:
        nvidia = plan.profile.nvidia
        driver = nvidia.cuda_version if nvidia else None
        reason = None if driver else (plan.profile.nvidia_reason or "no NVIDIA driver")
        report = toolchain_report(
            env=env, run=run, timeout=timeout, driver_cuda=driver, driver_cuda_reason=reason
        )
    lines: list[str] = []
    for p in builds:
        needs = check_build_needs(
            p.build_needs, report, env=env, run=run, timeout=timeout, prefixes=prefixes
        )
        failed = [c for c in needs if c.status == "fail"]
        if _needs_nvcc(p.build_needs):
            # A failed nvcc need already says there is no usable toolkit.
            nvcc_failed = any(c.name.lower().startswith("nvcc") for c in failed)
            failed += [
                c
                for c in report.checks
                if c.status == "fail" and not (c.name == "cuda toolkit" and nvcc_failed)
            ]
        for c in failed:
            fix = f"; fix: {' / '.join(c.fix)}" if c.fix else ""
            lines.append(f"{p.name}: cannot build from source: {c.name}: {c.summary}{fix}")
    return lines
