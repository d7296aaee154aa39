"""The source-build toolchain judged: one :class:`Check` per line of ``doctor --build``.

:func:`toolchain_report` probes the toolkit (:mod:`resolver_hook.toolchain.toolkit`), nvcc's
host compiler and the C++ compiler (:mod:`resolver_hook.toolchain.compilers`), cmake and
ninja (:func:`~resolver_hook.toolchain._base.probe_tool`), and says per check ok / warn /
fail / skip with the reason and the fix: whether ``crt/host_config.h`` accepts the host
compiler (and which compiler on PATH it would accept), the driver stub, toolkit against
driver.

Source builds of CUDA packages fail late and far from the cause: CUDA 13.2's
``crt/host_config.h`` refuses gcc 16 with ``#error``, a build links ``-lcuda`` on a
machine without the driver stub, a wheel built with a toolkit newer than the driver
carries PTX the driver cannot load (docs/facts.md sections 1 and 5). Every probe takes
the environment (``env``) and a subprocess runner (``run``), never raises for a broken
tool and never hangs: a command that fails, prints garbage or does not answer within
``timeout`` becomes a reason in the report.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Any

from resolver_hook.ground.patterns import version_numbers
from resolver_hook.ground.plain import plain
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.toolchain._base import (
    DEFAULT_TIMEOUT,
    Check,
    Runner,
    Status,
    Tool,
    probe_tool,
    run_subprocess,
)
from resolver_hook.toolchain.compilers import (
    ALLOW_UNSUPPORTED,
    Compiler,
    candidate_compilers,
    find_cxx,
    find_host_compiler,
    identify_compiler,
    nvcc_macros,
)
from resolver_hook.toolchain.hostconfig import HostConfig, Rejection, accepted_range, evaluate
from resolver_hook.toolchain.toolkit import (
    Toolkit,
    find_driver_stub,
    find_toolkit,
    load_host_config,
)

__all__ = ["Check", "Status", "ToolchainReport", "toolchain_report"]


@valueclass
class ToolchainReport:
    """Everything ``doctor --build`` found, and the checks derived from it. As JSON:
    ``ok``, then every field in this order (:func:`resolver_hook.ground.plain.plain`)."""

    checks: tuple[Check, ...]
    toolkit: Toolkit
    host_compiler: Compiler | None
    host_rejections: tuple[Rejection, ...]
    alternatives: tuple[Compiler, ...]
    cxx: Compiler | None
    cmake: Tool
    ninja: Tool
    driver_stub: str | None
    driver_cuda: str | None
    driver_cuda_reason: str | None

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings and skips are fine)."""
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **plain(self)}


def _range_text(config: HostConfig, compiler: Compiler) -> str:
    """ "GNU up to 15" / "clang 4 to 20", derived by evaluating the header."""
    macro, name, span = {
        "gnu": ("__GNUC__", "GNU", range(1, 100)),
        "clang": ("__clang_major__", "clang", range(1, 100)),
        "msvc": ("_MSC_VER", "MSVC _MSC_VER", range(1800, 2100)),
    }.get(compiler.family or "", ("", "", range(0)))
    if not macro:
        return ""
    found = accepted_range(config, nvcc_macros(compiler, allow_unsupported=False), macro, span=span)
    if found is None:
        return f"no {name} version"
    low, high = found
    return f"{name} up to {high}" if low == span.start else f"{name} {low} to {high}"


def _fix_lines(path: str) -> tuple[str, ...]:
    quoted = shlex.quote(path)
    return (
        f"CUDAHOSTCXX={quoted}",
        f"-DCMAKE_CUDA_HOST_COMPILER={quoted}",
        f"nvcc -ccbin {quoted}",
    )


_ALLOW_NOTE = (
    "nvcc's -allow-unsupported-compiler skips this check; not recommended: "
    "NVIDIA warns it may cause compilation failure or incorrect run time execution"
)


def _toolkit_check(toolkit: Toolkit) -> Check:
    if toolkit.root is None:
        return Check(
            name="cuda toolkit",
            status="fail",
            summary="no CUDA toolkit: " + "; ".join(toolkit.notes),
            fix=("install the CUDA toolkit and set CUDA_HOME=<its root>",),
        )
    where = f"{toolkit.root} (from {toolkit.source})"
    status: Status = "fail"
    if toolkit.version is None:
        summary = f"CUDA toolkit at {where}, version unknown"
    elif toolkit.nvcc is None:
        summary = f"CUDA {toolkit.version} at {where} has no nvcc"
    else:
        status = "warn" if toolkit.notes else "ok"
        summary = f"CUDA {toolkit.version} at {where}; version from {toolkit.version_source}"
    return Check(name="cuda toolkit", status=status, summary=summary, notes=toolkit.notes)


def toolchain_report(
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
    driver_cuda: str | None = None,
    driver_cuda_reason: str | None = None,
    default_root: str | None = "/usr/local/cuda",
) -> ToolchainReport:
    """Probe the source-build toolchain and judge it, one :class:`Check` per line.

    ``driver_cuda`` is the CUDA version the installed driver supports (``'13.0'``),
    supplied by host detection; ``driver_cuda_reason`` says why it is None.
    Never raises for anything found on the machine.
    """
    env = os.environ if env is None else env
    toolkit = find_toolkit(env=env, run=run, timeout=timeout, default_root=default_root)
    host = find_host_compiler(env=env, run=run, timeout=timeout)
    config, config_reason = load_host_config(toolkit)
    accept, rejections, alternatives = _acceptance_check(
        toolkit, host, config, config_reason, env=env, run=run, timeout=timeout
    )
    cxx = find_cxx(env, run, timeout)
    cmake = probe_tool("cmake", env=env, run=run, timeout=timeout)
    ninja = probe_tool("ninja", env=env, run=run, timeout=timeout)
    stub = find_driver_stub(toolkit.root) if toolkit.root else None
    checks = (
        _toolkit_check(toolkit),
        _compiler_check("host compiler", "nvcc's host compiler", host, fix=()),
        accept,
        _compiler_check(
            "c++ compiler", "C++ compiler", cxx, fix=("install g++ or clang++, or set CXX",)
        ),
        _tool_check(cmake),
        _tool_check(ninja),
        _stub_check(toolkit.root, stub),
        _driver_check(toolkit.release, driver_cuda, driver_cuda_reason),
    )
    return ToolchainReport(
        toolkit=toolkit,
        host_compiler=host,
        host_rejections=rejections,
        alternatives=alternatives,
        cxx=cxx,
        cmake=cmake,
        ninja=ninja,
        driver_stub=stub,
        driver_cuda=driver_cuda,
        driver_cuda_reason=driver_cuda_reason,
        checks=checks,
    )


def _compiler_check(name: str, what: str, compiler: Compiler, *, fix: tuple[str, ...]) -> Check:
    if compiler.reason:
        return Check(
            name=name,
            status="fail",
            summary=f"{what} ({compiler.source}): {compiler.reason}",
            fix=fix,
        )
    shown = compiler.command
    if compiler.path != compiler.command:
        shown += f" -> {compiler.path}"
    return Check(name=name, status="ok", summary=f"{compiler.label} at {shown} ({compiler.source})")


def _acceptance_check(
    toolkit: Toolkit,
    host: Compiler,
    config: HostConfig | None,
    config_reason: str | None,
    *,
    env: Mapping[str, str],
    run: Runner,
    timeout: float,
) -> tuple[Check, tuple[Rejection, ...], tuple[Compiler, ...]]:
    """Would nvcc accept ``host``? If not, which compiler on PATH would it accept?"""
    name = "nvcc accepts host compiler"
    if config is None or host.reason:
        why = config_reason if config is None else "no host compiler to check"
        return Check(name=name, status="skip", summary=f"not checked: {why}"), (), ()
    release = toolkit.release or "(version unknown)"
    verdict = evaluate(config, nvcc_macros(host, allow_unsupported=False))
    limit = _range_text(config, host)
    limit_text = f"; host_config.h accepts {limit}" if limit else ""
    unknown = tuple(f"host_config.h {u}: taken as false" for u in verdict.unknown)
    if verdict.accepted:
        return (
            Check(
                name=name,
                status="warn" if unknown else "ok",
                notes=unknown,
                summary=f"nvcc {release} accepts {host.label}{limit_text}",
            ),
            (),
            (),
        )
    first = verdict.rejections[0]
    allowed_by = [
        var
        for var in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS")
        if any(w in ALLOW_UNSUPPORTED for w in env.get(var, "").split())
    ]
    if allowed_by:
        return (
            Check(
                name=name,
                status="warn",
                notes=(*unknown, _ALLOW_NOTE),
                summary=f"nvcc {release}'s host_config.h rejects {host.label} (line {first.line}: "
                f"{first.short}), but -allow-unsupported-compiler in {allowed_by[0]} "
                "skips the check",
            ),
            verdict.rejections,
            (),
        )
    alternatives = _accepted_alternatives(config, host, env=env, run=run, timeout=timeout)
    summary = (
        f"nvcc {release} rejects {host.label}: {toolkit.host_config}:{first.line}: "
        f"{first.short}{limit_text}"
    )
    if not alternatives:
        return (
            Check(
                name=name,
                status="fail",
                summary=summary,
                fix=(
                    f"install a compiler nvcc {release} accepts ({limit or 'see the #error'}) "
                    "and set CUDAHOSTCXX=<its path>",
                ),
                notes=(*unknown, "no other C++ compiler on PATH is accepted", _ALLOW_NOTE),
            ),
            verdict.rejections,
            (),
        )
    best = alternatives[0]
    others = ", ".join(f"{c.label} at {c.command}" for c in alternatives[1:])
    notes = (
        *unknown,
        f"{best.label} at {best.command} is accepted",
        *((f"also accepted: {others}",) if others else ()),
        _ALLOW_NOTE,
    )
    return (
        Check(name=name, status="fail", summary=summary, fix=_fix_lines(best.command), notes=notes),
        verdict.rejections,
        alternatives,
    )


def _tool_check(tool: Tool) -> Check:
    # A missing cmake or ninja is a finding, not an error: many builds need neither, and
    # `pip install cmake ninja` (or the build's own requirements) supplies them.
    if tool.reason:
        return Check(
            name=tool.name,
            status="warn",
            summary=f"{tool.name}: {tool.reason}",
            fix=(f"pip install {tool.name}, or your system package",),
        )
    return Check(name=tool.name, status="ok", summary=f"{tool.name} {tool.version} at {tool.path}")


def _stub_check(root: str | None, stub: str | None) -> Check:
    name = "cuda driver stub"
    if root is None:
        return Check(name=name, status="skip", summary="not checked: no CUDA toolkit")
    if stub:
        return Check(name=name, status="ok", summary=stub)
    # Seen in the field docs/facts.md section 5: builds link the driver API
    # against <toolkit>/stubs/libcuda.so; without it, linking fails where no driver is
    # installed (build containers, CI).
    return Check(
        name=name,
        status="warn",
        summary=f"no stubs/libcuda.so in {root} (lib64/stubs, targets/*/lib/stubs): builds "
        "that link the driver API (-lcuda) fail on a machine without the driver",
        fix=(
            "install the toolkit's driver development files "
            "(cuda-driver-dev-<version> on Debian/Ubuntu)",
        ),
    )


def _accepted_alternatives(
    config: HostConfig, host: Compiler, *, env: Mapping[str, str], run: Runner, timeout: float
) -> tuple[Compiler, ...]:
    """Other C++ compilers on PATH that the header accepts, GNU first, newest first."""
    accepted: list[Compiler] = []
    for path in candidate_compilers(env):
        if host.path and os.path.realpath(path) == host.path:
            continue
        compiler = identify_compiler(path, source="PATH", env=env, run=run, timeout=timeout)
        if (
            compiler.reason is None
            and evaluate(config, nvcc_macros(compiler, allow_unsupported=False)).accepted
        ):
            accepted.append(compiler)
    accepted.sort(key=lambda c: (c.family != "gnu", [-x for x in version_numbers(c.version)]))
    return tuple(accepted)


def _driver_check(toolkit: str | None, driver: str | None, reason: str | None) -> Check:
    name = "toolkit vs driver"
    if toolkit is None:
        return Check(name=name, status="skip", summary="not checked: toolkit version unknown")
    if driver is None:
        return Check(
            name=name,
            status="skip",
            summary=f"not checked: driver CUDA version unknown ({reason or 'no driver'})",
        )
    t, d = version_numbers(toolkit)[:2], version_numbers(driver)[:2]
    if len(d) < 2:
        return Check(
            name=name,
            status="skip",
            summary=f"not checked: cannot read driver CUDA version {driver!r}",
        )
    if d >= t:
        return Check(
            name=name, status="ok", summary=f"driver supports CUDA {driver}, toolkit is {toolkit}"
        )
    # docs/facts.md section 1: PTX from a newer toolkit cannot be JIT-compiled by an older
    # driver (cudaErrorUnsupportedPtxVersion); across majors nothing runs (CUDA 13.x
    # needs a driver >= 580 on Linux).
    if d[0] < t[0]:
        why = (
            f"binaries built with CUDA {toolkit} need a driver for CUDA {t[0]}.x; this "
            f"driver supports CUDA {driver}: they will not run on this machine"
        )
    else:
        why = (
            f"PTX built by CUDA {toolkit} cannot be JIT-compiled by this driver (CUDA "
            f"{driver}): cudaErrorUnsupportedPtxVersion; SASS for this GPU still runs"
        )
    return Check(
        name=name,
        status="warn",
        summary=why,
        fix=(
            f"update the driver to one supporting CUDA {toolkit}, or build with CUDA <= {driver}",
        ),
    )
