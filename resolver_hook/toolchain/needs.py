"""A manifest's ``[build] needs``: build tools and libraries, found and version-checked.

:func:`check_build_needs` judges needs such as ``"nvcc>=12.8"``, ``"cmake>=3.26"``,
``"cxx"`` or ``"z3"`` against a :func:`~resolver_hook.toolchain.report.toolchain_report`;
libraries are looked up with pkg-config, else as header and library files in the
include and library paths.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from resolver_hook.toolchain._base import (
    DEFAULT_TIMEOUT,
    Check,
    Runner,
    run_subprocess,
    tool_output,
    which,
)

if TYPE_CHECKING:
    from resolver_hook.toolchain.report import ToolchainReport

__all__ = ["check_build_needs"]


def check_build_needs(
    needs: Sequence[str],
    report: ToolchainReport,
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
    prefixes: Sequence[str] | None = None,
) -> list[Check]:
    """Check a manifest's ``[build] needs`` (``"nvcc>=12.8"``, ``"cmake>=3.26"``,
    ``"ninja"``, ``"cxx"``, ``"z3"``) against a :func:`toolchain_report`.

    Returns the needs that are not met: ``fail`` (missing, wrong version, unreadable)
    or ``warn`` (found, but its version is unknown and a version was asked for).
    ``nvcc``, ``cmake``, ``ninja`` and ``cxx`` come from the report; any other name is a
    library: ``pkg-config --modversion NAME``, else ``NAME.h`` in the include paths
    (``CPATH``, ``CPLUS_INCLUDE_PATH``, ``C_INCLUDE_PATH``, ``<prefix>/include``) and
    ``libNAME.so``/``.a`` in the library paths (``LIBRARY_PATH``, ``LD_LIBRARY_PATH``,
    ``<prefix>/lib``, ``lib64``, ``lib/<multiarch>``). ``prefixes`` defaults to
    ``/usr``, ``/usr/local`` and ``$CONDA_PREFIX``.
    """
    env = os.environ if env is None else env
    problems: list[Check] = []
    for need in needs:
        try:
            req = Requirement(need)
        except InvalidRequirement as exc:
            problems.append(
                Check(
                    name=need,
                    status="fail",
                    summary=f"cannot read build need {need!r}: {str(exc).splitlines()[0]}",
                )
            )
            continue
        key = req.name.lower()
        spec = req.specifier
        version: str | None
        if key == "nvcc":
            version, where = report.toolkit.version, report.toolkit.nvcc
            missing = None if version else "no CUDA toolkit with a known version"
        elif key in ("cmake", "ninja"):
            tool = report.cmake if key == "cmake" else report.ninja
            version, where, missing = tool.version, tool.path, tool.reason
        elif key in ("cxx", "c++"):
            cxx = report.cxx
            version = cxx.version if cxx else None
            where = cxx.command if cxx else None
            missing = (cxx.reason if cxx else "not probed") if not version else None
        else:
            version, where, missing = _find_library(
                req.name, env=env, run=run, timeout=timeout, prefixes=prefixes
            )
        if missing:
            problems.append(Check(name=need, status="fail", summary=f"{req.name}: {missing}"))
            continue
        if not spec:
            continue
        if version is None:
            problems.append(
                Check(
                    name=need,
                    status="warn",
                    summary=f"{req.name} found ({where}) but its version is "
                    f"unknown; cannot check {spec}",
                )
            )
            continue
        try:
            meets = spec.contains(Version(version), prereleases=True)
        except InvalidVersion:
            problems.append(
                Check(
                    name=need,
                    status="warn",
                    summary=f"{req.name} {version!r} is not a version; cannot check {spec}",
                )
            )
            continue
        if not meets:
            problems.append(
                Check(
                    name=need,
                    status="fail",
                    summary=f"{req.name} {version} at {where} does not satisfy {spec}",
                )
            )
    return problems


def _find_library(
    name: str,
    *,
    env: Mapping[str, str],
    run: Runner,
    timeout: float,
    prefixes: Sequence[str] | None,
) -> tuple[str | None, str | None, str | None]:
    """(version or None, where found, reason it is missing or None)."""
    if which("pkg-config", env):
        out = tool_output(["pkg-config", "--modversion", name], env=env, run=run, timeout=timeout)
        if out.reason is None and out.text.strip():
            return out.text.strip().splitlines()[0], f"pkg-config {name}", None
    if prefixes is None:
        prefixes = ["/usr", "/usr/local"] + (
            [env["CONDA_PREFIX"]] if env.get("CONDA_PREFIX") else []
        )

    def split(var: str) -> list[str]:
        return [p for p in env.get(var, "").split(os.pathsep) if p]

    includes = [
        *split("CPATH"),
        *split("CPLUS_INCLUDE_PATH"),
        *split("C_INCLUDE_PATH"),
        *(os.path.join(p, "include") for p in prefixes),
    ]
    libdirs = [*split("LIBRARY_PATH"), *split("LD_LIBRARY_PATH")]
    for p in prefixes:
        libdirs += [
            os.path.join(p, "lib"),
            os.path.join(p, "lib64"),
            *sorted(glob.glob(os.path.join(p, "lib", "*-linux-gnu"))),
        ]
    # "libfoo" names the same library as "foo": its file is libfoo.so, not liblibfoo.so.
    stem = name[3:] if name.lower().startswith("lib") and len(name) > 3 else name
    header = next(
        (
            os.path.join(d, h)
            for d in includes
            for h in dict.fromkeys((f"{name}.h", f"{stem}.h", os.path.join(stem, f"{stem}.h")))
            if os.path.isfile(os.path.join(d, h))
        ),
        None,
    )
    library = next(
        (
            hit
            for d in libdirs
            for pattern in (
                f"lib{stem}.so",
                f"lib{stem}.so.*",
                f"lib{stem}.a",
                f"lib{stem}.dylib",
                f"{stem}.lib",
            )
            for hit in sorted(glob.glob(os.path.join(glob.escape(d), pattern)))
        ),
        None,
    )
    if header and library:
        return None, f"{header}, {library}", None
    looked = (
        f"no pkg-config {name}; {stem}.h in {os.pathsep.join(includes) or 'nowhere'}: "
        f"{'found' if header else 'missing'}; lib{stem} in "
        f"{os.pathsep.join(libdirs) or 'nowhere'}: {'found' if library else 'missing'}"
    )
    return None, None, looked
