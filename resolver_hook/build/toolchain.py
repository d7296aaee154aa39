"""Source-build toolchain checks: CUDA toolkit, nvcc's host compiler, cmake, ninja, stubs.

Source builds of CUDA packages fail late and far from the cause: CUDA 13.2's
``crt/host_config.h`` refuses gcc 16 with ``#error``, a build links ``-lcuda`` on a
machine without the driver stub, a wheel built with a toolkit newer than the driver
carries PTX the driver cannot load (see ``docs/facts.md section 5`` and
docs/facts.md section 1). This module finds what a build would use and says, per check,
ok / warn / fail with the reason and the fix.

Every probe takes the environment (``env``) and a subprocess runner (``run``) as
arguments, never raises for a broken tool and never hangs: a command that fails, prints
garbage or does not answer within ``timeout`` becomes a reason in the report.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import platform
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from resolver_hook._proc import Runner, capture
from resolver_hook.build.hostconfig import (
    HostConfig,
    HostConfigError,
    Rejection,
    accepted_range,
    evaluate,
    parse_host_config,
)

__all__ = [
    "Check",
    "Compiler",
    "Runner",
    "Status",
    "Tool",
    "ToolchainReport",
    "Toolkit",
    "check_build_needs",
    "find_host_compiler",
    "find_toolkit",
    "identify_compiler",
    "parse_nvcc_version",
    "probe_tool",
    "run_subprocess",
    "toolchain_report",
]

Status = Literal["ok", "warn", "fail", "skip"]
"""ok, warn (works, but look), fail (a build will fail), skip (could not be checked)."""

Family = Literal["gnu", "clang", "msvc", "unknown"]

DEFAULT_TIMEOUT = 10.0
_IS_WINDOWS = os.name == "nt"


# --- running commands ----------------------------------------------------------------


# The runner (resolver_hook._proc): the command runs in its own process group, killed
# whole on timeout (a wrapper script's grandchild would otherwise keep the pipes open
# and hang the caller), with capped output.
run_subprocess: Runner = capture


@dataclass(frozen=True, slots=True)
class _Output:
    """What a command said: ``text`` is stdout + stderr; ``reason`` is set when it failed."""

    code: int | None
    text: str
    reason: str | None


def _capture(
    args: Sequence[str], *, env: Mapping[str, str], run: Runner, timeout: float
) -> _Output:
    shown = " ".join(shlex.quote(a) for a in args)
    done = run(args, timeout=timeout, env=env)
    if done.missing:
        return _Output(None, "", f"{args[0]} does not exist")
    if done.error is not None:
        return _Output(None, "", str(done.reason()))
    if done.timed_out:
        return _Output(None, "", f"'{shown}' did not finish within {timeout:g} s")
    if done.truncated:
        return _Output(None, "", str(done.reason()))
    text = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        return _Output(
            done.returncode, text, f"'{shown}' exited with status {done.returncode}: {first[:200]}"
        )
    return _Output(0, text, None)


def _which(name: str, env: Mapping[str, str]) -> str | None:
    """``shutil.which`` against the given environment's PATH (never the process's own)."""
    return shutil.which(name, path=env.get("PATH", ""))


def _path_dirs(env: Mapping[str, str]) -> list[str]:
    seen: list[str] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry and entry not in seen and os.path.isdir(entry):
            seen.append(entry)
    return seen


def _version_key(version: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version or ""))


def _release(version: str | None) -> str | None:
    """'13.0.88' -> '13.0'."""
    parts = _version_key(version)
    return f"{parts[0]}.{parts[1]}" if len(parts) >= 2 else None


# --- value objects ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One line of the report: ``name``, ``status``, what was found and why, and the fix."""

    name: str
    status: Status
    summary: str
    fix: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "fix": list(self.fix),
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Toolkit:
    """The CUDA toolkit a build would use.

    ``source`` says how it was found (``CUDA_HOME``, ``nvcc on PATH`` ...); ``notes``
    say what could not be established and why.
    """

    root: str | None
    source: str
    nvcc: str | None = None
    version: str | None = None
    version_source: str | None = None
    host_config: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def release(self) -> str | None:
        """Major.minor of :attr:`version` (``'13.0'``)."""
        return _release(self.version)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "source": self.source,
            "nvcc": self.nvcc,
            "version": self.version,
            "version_source": self.version_source,
            "host_config": self.host_config,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Compiler:
    """A C++ compiler: as named (``command``), the file it resolves to, what it is.

    ``macros`` are its predefined macros (from ``-dM -E`` where the compiler answers,
    else synthesised from family and version: ``macro_source`` says which); they feed
    the ``host_config.h`` evaluation. ``reason`` is set when it could not be identified.
    """

    command: str
    source: str
    path: str | None = None
    family: Family | None = None
    version: str | None = None
    macro_source: str | None = None
    macros: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    reason: str | None = None

    @property
    def label(self) -> str:
        """``'g++ 12.2.0 (GNU)'``."""
        name = os.path.basename(self.command)
        if self.family is None or self.version is None:
            return name
        family = {"gnu": "GNU", "clang": "clang", "msvc": "MSVC", "unknown": "unknown"}
        return f"{name} {self.version} ({family[self.family]})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "source": self.source,
            "path": self.path,
            "family": self.family,
            "version": self.version,
            "macro_source": self.macro_source,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A build tool (cmake, ninja, pkg-config): where it is and its version, or why not."""

    name: str
    path: str | None = None
    version: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "version": self.version,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolchainReport:
    """Everything ``doctor --build`` found, and the checks derived from it."""

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
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings and skips are fine)."""
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checks": [c.to_dict() for c in self.checks],
            "toolkit": self.toolkit.to_dict(),
            "host_compiler": self.host_compiler.to_dict() if self.host_compiler else None,
            "host_rejections": [
                {"line": r.line, "message": r.message} for r in self.host_rejections
            ],
            "alternatives": [c.to_dict() for c in self.alternatives],
            "cxx": self.cxx.to_dict() if self.cxx else None,
            "cmake": self.cmake.to_dict(),
            "ninja": self.ninja.to_dict(),
            "driver_stub": self.driver_stub,
            "driver_cuda": self.driver_cuda,
            "driver_cuda_reason": self.driver_cuda_reason,
        }


# --- the CUDA toolkit ------------------------------------------------------------------

# `nvcc --version` ends with "Cuda compilation tools, release 13.0, V13.0.88" and
# "Build cuda_13.0.r13.0/compiler.36424714_0" (nvcc 13.0 on this project's machines).
_NVCC_V_RE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_NVCC_BUILD_RE = re.compile(r"Build cuda_(\d+\.\d+)\.r")


def parse_nvcc_version(text: str) -> str | None:
    """The full version in ``nvcc --version`` output (``'13.0.88'``), else None."""
    match = _NVCC_V_RE.search(text)
    if match:
        return match.group(2)
    match = _NVCC_BUILD_RE.search(text)
    return match.group(1) if match else None


def _looks_like_toolkit(root: str) -> bool:
    return _host_config_path(root) is not None or os.path.isfile(
        os.path.join(root, "include", "cuda_runtime_api.h")
    )


def _host_config_path(root: str) -> str | None:
    candidates = [os.path.join(root, "include", "crt", "host_config.h")]
    candidates += sorted(
        glob.glob(os.path.join(root, "targets", "*", "include", "crt", "host_config.h"))
    )
    return next((c for c in candidates if os.path.isfile(c)), None)


def _root_from_nvcc(
    nvcc: str, *, env: Mapping[str, str], run: Runner, timeout: float
) -> tuple[str | None, str | None]:
    """The toolkit root of an ``nvcc``: resolve symlinks, else ask ``nvcc -dryrun``.

    A wrapper script (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``) hides the root from
    symlink resolution; ``nvcc -dryrun`` prints ``#$ TOP=<root>/bin/..`` without
    running anything.
    """
    real = os.path.realpath(nvcc)
    root = os.path.dirname(os.path.dirname(real))
    if _looks_like_toolkit(root):
        return root, None
    out = _capture(
        [nvcc, "-dryrun", "-E", "-x", "cu", os.devnull], env=env, run=run, timeout=timeout
    )
    match = re.search(r"^#\$ TOP=(.+)$", out.text, re.MULTILINE)
    if match and os.path.isdir(match.group(1).strip()):
        return os.path.realpath(match.group(1).strip()), None
    why = out.reason or "it printed no TOP= line"
    return None, f"cannot tell the toolkit root of {nvcc}: no toolkit at {root}, and {why}"


def find_toolkit(
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
    default_root: str | None = "/usr/local/cuda",
) -> Toolkit:
    """Find the CUDA toolkit: ``CUDA_HOME``, ``CUDA_PATH``, ``CUDACXX``, nvcc on PATH,
    then ``default_root``. Its version comes from ``nvcc --version``, else
    ``version.json``, else ``CUDART_VERSION`` in ``cuda_runtime_api.h``.
    """
    env = os.environ if env is None else env
    exe = "nvcc.exe" if _IS_WINDOWS else "nvcc"
    notes: list[str] = []
    root: str | None = None
    nvcc: str | None = None
    source = "none"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = env.get(var)
        if value:
            source = var
            if not os.path.isdir(value):
                return Toolkit(root=None, source=var, notes=(f"{var}={value} is not a directory",))
            root = os.path.abspath(value)
            break
    if root is None:
        for origin, found in (("CUDACXX", env.get("CUDACXX")), ("nvcc on PATH", _which(exe, env))):
            if found:
                source, nvcc = origin, found
                root, why = _root_from_nvcc(found, env=env, run=run, timeout=timeout)
                if why:
                    notes.append(why)
                break
        else:
            if default_root and os.path.isdir(default_root):
                root, source = os.path.realpath(default_root), default_root
            else:
                where = f", no {default_root}" if default_root else ""
                return Toolkit(
                    root=None,
                    source="none",
                    notes=(f"no CUDA_HOME, CUDA_PATH or CUDACXX, no nvcc on PATH{where}",),
                )
    if nvcc is None and root is not None:
        candidate = os.path.join(root, "bin", exe)
        if os.path.isfile(candidate):
            nvcc = candidate
        else:
            notes.append(f"no {exe} in {os.path.join(root, 'bin')}")

    version: str | None = None
    version_source: str | None = None
    if nvcc:
        out = _capture([nvcc, "--version"], env=env, run=run, timeout=timeout)
        if out.reason:
            notes.append(out.reason)
        else:
            version = parse_nvcc_version(out.text)
            if version:
                version_source = "nvcc --version"
            else:
                first = " ".join(out.text.split())[:80] or "nothing"
                notes.append(f"'{nvcc} --version' printed no CUDA release: {first!r}")
    if version is None and root is not None:
        version, version_source = _version_from_files(root)
    host_config = _host_config_path(root) if root else None
    if root and host_config is None:
        notes.append(f"no include/crt/host_config.h under {root}")
    return Toolkit(
        root=root,
        source=source,
        nvcc=nvcc,
        version=version,
        version_source=version_source,
        host_config=host_config,
        notes=tuple(notes),
    )


def _version_from_files(root: str) -> tuple[str | None, str | None]:
    """``version.json`` (``{"cuda": {"version": "13.0.1"}}``), else ``CUDART_VERSION``."""
    try:
        with open(os.path.join(root, "version.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        version = data["cuda"]["version"]
        if isinstance(version, str) and _release(version):
            return version, "version.json"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    includes = [
        os.path.join(root, "include"),
        *sorted(glob.glob(os.path.join(root, "targets", "*", "include"))),
    ]
    for include in includes:
        try:
            with open(
                os.path.join(include, "cuda_runtime_api.h"), encoding="utf-8", errors="replace"
            ) as fh:
                match = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", fh.read())
        except OSError:
            continue
        if match:  # 13000 -> 13.0 (major * 1000 + minor * 10)
            number = int(match.group(1))
            return f"{number // 1000}.{number % 1000 // 10}", "CUDART_VERSION in cuda_runtime_api.h"
    return None, None


# --- compilers -----------------------------------------------------------------------------

_CLANG_RE = re.compile(r"clang version (\d+(?:\.\d+)*)")
_MSVC_RE = re.compile(r"Compiler Version (\d+)\.(\d+)\.(\d+)")
_PLAIN_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
_DEFINE_LINE_RE = re.compile(r"^#define ([A-Za-z_]\w*) ?(.*)$")


def _platform_macros() -> dict[str, str]:
    """The OS and CPU macros a compiler predefines on this machine (for synthesised sets)."""
    macros: dict[str, str] = {}
    machine = platform.machine().lower()
    if sys.platform.startswith("linux"):
        macros["__linux__"] = "1"
    elif sys.platform == "darwin":
        macros.update(__APPLE__="1", __MACH__="1")
    elif sys.platform == "win32":
        macros["_WIN32"] = "1"
    if sys.maxsize > 2**32 and sys.platform != "win32":
        macros["__LP64__"] = "1"
    arch = {
        "x86_64": "__x86_64__",
        "amd64": "__x86_64__",
        "aarch64": "__aarch64__",
        "arm64": "__aarch64__",
    }.get(machine)
    if arch:
        macros[arch] = "1"
    if machine.startswith("ppc64"):
        macros.update(__powerpc__="1", __powerpc64__="1")
        if machine.endswith("le"):
            macros["__LITTLE_ENDIAN__"] = "1"
    return macros


def _synthesised_macros(family: Family, version: str) -> dict[str, str]:
    parts = [*_version_key(version), 0, 0, 0]
    macros = _platform_macros()
    if family == "gnu":
        macros.update(
            __GNUC__=str(parts[0]), __GNUC_MINOR__=str(parts[1]), __GNUC_PATCHLEVEL__=str(parts[2])
        )
    elif family == "clang":
        # clang poses as GCC 4.2 (`clang -dM -E` prints __GNUC__ 4, __GNUC_MINOR__ 2).
        macros.update(
            __clang__="1",
            __clang_major__=str(parts[0]),
            __clang_minor__=str(parts[1]),
            __clang_patchlevel__=str(parts[2]),
            __GNUC__="4",
            __GNUC_MINOR__="2",
            __GNUC_PATCHLEVEL__="1",
        )
    elif family == "msvc":
        macros.update(_MSC_VER=str(parts[0] * 100 + parts[1]), _WIN32="1")
    return macros


def identify_compiler(
    command: str,
    *,
    source: str,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
) -> Compiler:
    """Find ``command`` and tell what it is: family, version, predefined macros.

    GNU: ``--version`` does not mention clang and ``-dumpfullversion`` prints a bare
    version; clang: ``clang version X.Y.Z`` in ``--version``; MSVC: ``cl`` prints
    ``Compiler Version 19.38.33133`` in its banner.
    """
    env = os.environ if env is None else env
    found = command if os.sep in command or "/" in command else _which(command, env)
    if found is None:
        return Compiler(command=command, source=source, reason=f"{command} not found on PATH")
    if os.path.isdir(found):
        return Compiler(command=command, source=source, reason=f"{found} is a directory")
    if not os.path.exists(found):
        return Compiler(command=command, source=source, reason=f"{found} does not exist")
    path = os.path.realpath(found)
    base = Compiler(command=found, source=source, path=path)

    if os.path.basename(found).lower() in ("cl", "cl.exe"):
        out = _capture([found], env=env, run=run, timeout=timeout)  # banner; exits non-zero
        match = _MSVC_RE.search(out.text)
        if not match:
            why = out.reason or "cl printed no 'Compiler Version'"
            return dataclasses.replace(base, reason=why)
        version = ".".join(match.groups())
        return dataclasses.replace(
            base,
            family="msvc",
            version=version,
            macro_source="synthesised",
            macros=tuple(sorted(_synthesised_macros("msvc", version).items())),
        )

    out = _capture([found, "--version"], env=env, run=run, timeout=timeout)
    if out.reason:
        return dataclasses.replace(base, reason=out.reason)
    family: Family
    clang = _CLANG_RE.search(out.text)
    if clang:
        family, version = "clang", clang.group(1)
    else:
        version = ""
        for flag in ("-dumpfullversion", "-dumpversion"):  # -dumpfullversion: GCC >= 7
            dumped = _capture([found, flag], env=env, run=run, timeout=timeout)
            text = dumped.text.strip()
            if dumped.reason is None and _PLAIN_VERSION_RE.match(text):
                version = text
                break
        if not version:
            first = " ".join(out.text.split())[:80] or "nothing"
            return dataclasses.replace(
                base,
                family="unknown",
                reason=(f"cannot tell which compiler {found} is: '--version' printed {first!r}"),
            )
        family = "gnu"

    dump = _capture(
        [found, "-dM", "-E", "-x", "c++", os.devnull], env=env, run=run, timeout=timeout
    )
    macros: dict[str, str] = {}
    for line in dump.text.splitlines():
        match = _DEFINE_LINE_RE.match(line)
        if match:
            macros[match.group(1)] = match.group(2)
    key = "__clang_major__" if family == "clang" else "__GNUC__"
    if dump.reason is None and key in macros:
        macro_source = "-dM -E"
    else:
        macros, macro_source = _synthesised_macros(family, version), "synthesised"
    return dataclasses.replace(
        base,
        family=family,
        version=version,
        macro_source=macro_source,
        macros=tuple(sorted(macros.items())),
    )


def _flag_value(flags: str, names: Sequence[str]) -> str | None:
    """The last value of ``-ccbin X`` / ``-ccbin=X`` (any of ``names``) in a flags string."""
    try:
        words = shlex.split(flags)
    except ValueError:
        words = flags.split()
    value: str | None = None
    for i, word in enumerate(words):
        for name in names:
            if word == name and i + 1 < len(words):
                value = words[i + 1]
            elif word.startswith(name + "="):
                value = word[len(name) + 1 :]
    return value


_CCBIN = ("-ccbin", "--compiler-bindir")
_ALLOW = ("-allow-unsupported-compiler", "--allow-unsupported-compiler")


def _default_host_compiler() -> str:
    # nvcc runs `gcc` from PATH on Linux (`nvcc -dryrun` shows `gcc -E -x c++ ...`), cl.exe
    # on Windows, clang on macOS.
    if _IS_WINDOWS:
        return "cl.exe"
    return "clang" if sys.platform == "darwin" else "gcc"


def find_host_compiler(
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
) -> Compiler:
    """The compiler nvcc would run for host code, in the order builds pick it.

    ``CUDAHOSTCXX`` (CMake turns it into ``-ccbin``), ``-ccbin`` in
    ``NVCC_APPEND_FLAGS`` / ``NVCC_PREPEND_FLAGS``, ``NVCC_CCBIN``, then nvcc's default.
    A ``-ccbin`` directory means the default compiler name inside it.
    """
    env = os.environ if env is None else env
    choice: tuple[str, str] | None = None
    if env.get("CUDAHOSTCXX"):
        choice = (env["CUDAHOSTCXX"], "CUDAHOSTCXX")
    for var in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"):
        value = _flag_value(env.get(var, ""), _CCBIN)
        if choice is None and value:
            choice = (value, f"-ccbin in {var}")
    if choice is None and env.get("NVCC_CCBIN"):
        choice = (env["NVCC_CCBIN"], "NVCC_CCBIN")
    default = _default_host_compiler()
    if choice is None:
        choice = (default, f"nvcc's default: {default} on PATH")
    command, source = choice
    if os.path.isdir(command):
        command = os.path.join(command, default)
    return identify_compiler(command, source=source, env=env, run=run, timeout=timeout)


def _find_cxx(env: Mapping[str, str], run: Runner, timeout: float) -> Compiler:
    """The plain C++ compiler a build uses: ``CXX``, else c++, g++, clang++ on PATH."""
    if env.get("CXX"):
        return identify_compiler(env["CXX"], source="CXX", env=env, run=run, timeout=timeout)
    names = ("cl.exe",) if _IS_WINDOWS else ("c++", "g++", "clang++")
    for name in names:
        if _which(name, env):
            return identify_compiler(name, source="PATH", env=env, run=run, timeout=timeout)
    return Compiler(
        command=names[0], source="PATH", reason=f"no CXX and none of {', '.join(names)} on PATH"
    )


# g++, g++-15, x86_64-pc-linux-gnu-g++-15, clang++, clang++-20 (not g++-ar and friends).
_CANDIDATE_RE = re.compile(r"^(?:[A-Za-z0-9_.]+-)*(?:g\+\+|clang\+\+)(?:-\d+(?:\.\d+)*)?$")
_MAX_CANDIDATES = 24


def _candidate_compilers(env: Mapping[str, str]) -> list[str]:
    """Executables on PATH that look like C++ compilers, one per real file.

    Of several names for one file the versioned (``g++-15``), then shortest, name wins:
    it stays right when the system default moves to another version.
    """
    groups: dict[str, list[str]] = {}
    for directory in _path_dirs(env):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            full = os.path.join(directory, name)
            if _CANDIDATE_RE.match(name) and os.path.isfile(full) and os.access(full, os.X_OK):
                groups.setdefault(os.path.realpath(full), []).append(full)
    picked = []
    for names in groups.values():
        names.sort(key=lambda p: (re.search(r"-\d+(?:\.\d+)*$", p) is None, len(p), p))
        picked.append(names[0])
    return picked[:_MAX_CANDIDATES]


# --- the report ---------------------------------------------------------------------

_NVCC_BASE_MACROS = {
    "__CUDACC__": "1",
    "__NVCC__": "1",
    "__CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__": "",
}


def _nvcc_macros(compiler: Compiler, *, allow_unsupported: bool) -> dict[str, str]:
    macros = {**dict(compiler.macros), **_NVCC_BASE_MACROS}
    if allow_unsupported:  # what nvcc passes for -allow-unsupported-compiler
        macros["__NV_NO_HOST_COMPILER_CHECK"] = "1"
    return macros


def _range_text(config: HostConfig, compiler: Compiler) -> str:
    """ "GNU up to 15" / "clang 4 to 20", derived by evaluating the header."""
    macro, name, span = {
        "gnu": ("__GNUC__", "GNU", range(1, 100)),
        "clang": ("__clang_major__", "clang", range(1, 100)),
        "msvc": ("_MSC_VER", "MSVC _MSC_VER", range(1800, 2100)),
    }.get(compiler.family or "", ("", "", range(0)))
    if not macro:
        return ""
    found = accepted_range(
        config, _nvcc_macros(compiler, allow_unsupported=False), macro, span=span
    )
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
    if toolkit.version is None:
        return Check(
            name="cuda toolkit",
            status="fail",
            summary=f"CUDA toolkit at {where}, version unknown",
            notes=toolkit.notes,
        )
    if toolkit.nvcc is None:
        return Check(
            name="cuda toolkit",
            status="fail",
            summary=f"CUDA {toolkit.version} at {where} has no nvcc",
            notes=toolkit.notes,
        )
    status: Status = "warn" if toolkit.notes else "ok"
    return Check(
        name="cuda toolkit",
        status=status,
        summary=f"CUDA {toolkit.version} at {where}; version from {toolkit.version_source}",
        notes=toolkit.notes,
    )


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
    config, config_reason = _load_host_config(toolkit)
    accept, rejections, alternatives = _acceptance_check(
        toolkit, host, config, config_reason, env=env, run=run, timeout=timeout
    )
    cxx = _find_cxx(env, run, timeout)
    cmake = probe_tool("cmake", env=env, run=run, timeout=timeout)
    ninja = probe_tool("ninja", env=env, run=run, timeout=timeout)
    stub = _driver_stub(toolkit.root) if toolkit.root else None
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


def _load_host_config(toolkit: Toolkit) -> tuple[HostConfig | None, str | None]:
    if toolkit.host_config is None:
        return None, "no crt/host_config.h in the toolkit" if toolkit.root else "no CUDA toolkit"
    try:
        with open(toolkit.host_config, encoding="utf-8", errors="replace") as fh:
            return parse_host_config(fh.read(), path=toolkit.host_config), None
    except OSError as exc:
        return None, f"cannot read {toolkit.host_config}: {exc.strerror or exc}"
    except HostConfigError as exc:
        return None, str(exc)


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
    verdict = evaluate(config, _nvcc_macros(host, allow_unsupported=False))
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
        if any(w in _ALLOW for w in env.get(var, "").split())
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
    for path in _candidate_compilers(env):
        if host.path and os.path.realpath(path) == host.path:
            continue
        compiler = identify_compiler(path, source="PATH", env=env, run=run, timeout=timeout)
        if (
            compiler.reason is None
            and evaluate(config, _nvcc_macros(compiler, allow_unsupported=False)).accepted
        ):
            accepted.append(compiler)
    accepted.sort(key=lambda c: (c.family != "gnu", [-x for x in _version_key(c.version)]))
    return tuple(accepted)


def _driver_stub(root: str) -> str | None:
    candidates = [
        os.path.join(root, "lib64", "stubs", "libcuda.so"),
        os.path.join(root, "lib", "stubs", "libcuda.so"),
    ]
    candidates += sorted(
        glob.glob(os.path.join(root, "targets", "*", "lib", "stubs", "libcuda.so"))
    )
    if _IS_WINDOWS:
        candidates += [os.path.join(root, "lib", "x64", "cuda.lib")]
    return next((c for c in candidates if os.path.isfile(c)), None)


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
    t, d = _version_key(toolkit)[:2], _version_key(driver)[:2]
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


def probe_tool(
    name: str,
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
) -> Tool:
    """``name`` on PATH and the first version number in ``name --version``."""
    env = os.environ if env is None else env
    path = _which(name, env)
    if path is None:
        return Tool(name=name, reason=f"{name} not found on PATH")
    out = _capture([path, "--version"], env=env, run=run, timeout=timeout)
    if out.reason:
        return Tool(name=name, path=path, reason=out.reason)
    match = re.search(r"(\d+\.\d+(?:\.\d+)*)", out.text)
    if not match:
        first = " ".join(out.text.split())[:80] or "nothing"
        return Tool(name=name, path=path, reason=f"'{name} --version' printed {first!r}")
    return Tool(name=name, path=path, version=match.group(1))


# --- manifest [build] needs -----------------------------------------------------------------


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
    if _which("pkg-config", env):
        out = _capture(["pkg-config", "--modversion", name], env=env, run=run, timeout=timeout)
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
