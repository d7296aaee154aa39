"""C++ compilers a source build would use, and what nvcc makes of them.

:func:`identify_compiler` tells a compiler's family, version and predefined macros;
:func:`find_host_compiler` is the one nvcc would run for host code (``CUDAHOSTCXX``,
``-ccbin`` in ``NVCC_APPEND_FLAGS``/``NVCC_PREPEND_FLAGS``, ``NVCC_CCBIN``, nvcc's
default); :func:`find_cxx` the plain C++ compiler; :func:`candidate_compilers` the other
C++ compilers on PATH; :func:`nvcc_macros` the macros ``crt/host_config.h`` sees.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Literal

from resolver_hook.ground.patterns import version_numbers
from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.toolchain._base import (
    DEFAULT_TIMEOUT,
    IS_WINDOWS,
    Runner,
    path_dirs,
    run_subprocess,
    tool_output,
    which,
)

__all__ = [
    "ALLOW_UNSUPPORTED",
    "Compiler",
    "Family",
    "candidate_compilers",
    "find_cxx",
    "find_host_compiler",
    "identify_compiler",
    "nvcc_macros",
]

Family = Literal["gnu", "clang", "msvc", "unknown"]


@valueclass
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
    macros: tuple[tuple[str, str], ...] = field(default=(), repr=False, metadata={"json": False})
    reason: str | None = None

    @property
    def label(self) -> str:
        """``'g++ 12.2.0 (GNU)'``."""
        name = os.path.basename(self.command)
        if self.family is None or self.version is None:
            return name
        family = {"gnu": "GNU", "clang": "clang", "msvc": "MSVC", "unknown": "unknown"}
        return f"{name} {self.version} ({family[self.family]})"


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
    parts = [*version_numbers(version), 0, 0, 0]
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
    found = command if os.sep in command or "/" in command else which(command, env)
    if found is None:
        return Compiler(command=command, source=source, reason=f"{command} not found on PATH")
    if os.path.isdir(found):
        return Compiler(command=command, source=source, reason=f"{found} is a directory")
    if not os.path.exists(found):
        return Compiler(command=command, source=source, reason=f"{found} does not exist")
    path = os.path.realpath(found)
    base = Compiler(command=found, source=source, path=path)

    if os.path.basename(found).lower() in ("cl", "cl.exe"):
        out = tool_output([found], env=env, run=run, timeout=timeout)  # banner; exits non-zero
        match = _MSVC_RE.search(out.text)
        if not match:
            why = out.reason or "cl printed no 'Compiler Version'"
            return replace(base, reason=why)
        version = ".".join(match.groups())
        return replace(
            base,
            family="msvc",
            version=version,
            macro_source="synthesised",
            macros=tuple(sorted(_synthesised_macros("msvc", version).items())),
        )

    out = tool_output([found, "--version"], env=env, run=run, timeout=timeout)
    if out.reason:
        return replace(base, reason=out.reason)
    family: Family
    clang = _CLANG_RE.search(out.text)
    if clang:
        family, version = "clang", clang.group(1)
    else:
        version = ""
        for flag in ("-dumpfullversion", "-dumpversion"):  # -dumpfullversion: GCC >= 7
            dumped = tool_output([found, flag], env=env, run=run, timeout=timeout)
            text = dumped.text.strip()
            if dumped.reason is None and _PLAIN_VERSION_RE.match(text):
                version = text
                break
        if not version:
            first = " ".join(out.text.split())[:80] or "nothing"
            return replace(
                base,
                family="unknown",
                reason=(f"cannot tell which compiler {found} is: '--version' printed {first!r}"),
            )
        family = "gnu"

    dump = tool_output(
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
    return replace(
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
ALLOW_UNSUPPORTED = ("-allow-unsupported-compiler", "--allow-unsupported-compiler")


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
    # nvcc runs `gcc` from PATH on Linux (`nvcc -dryrun` shows `gcc -E -x c++ ...`), cl.exe
    # on Windows, clang on macOS.
    default = "cl.exe" if IS_WINDOWS else ("clang" if sys.platform == "darwin" else "gcc")
    if choice is None:
        choice = (default, f"nvcc's default: {default} on PATH")
    command, source = choice
    if os.path.isdir(command):
        command = os.path.join(command, default)
    return identify_compiler(command, source=source, env=env, run=run, timeout=timeout)


def find_cxx(env: Mapping[str, str], run: Runner, timeout: float) -> Compiler:
    """The plain C++ compiler a build uses: ``CXX``, else c++, g++, clang++ on PATH."""
    if env.get("CXX"):
        return identify_compiler(env["CXX"], source="CXX", env=env, run=run, timeout=timeout)
    names = ("cl.exe",) if IS_WINDOWS else ("c++", "g++", "clang++")
    for name in names:
        if which(name, env):
            return identify_compiler(name, source="PATH", env=env, run=run, timeout=timeout)
    return Compiler(
        command=names[0], source="PATH", reason=f"no CXX and none of {', '.join(names)} on PATH"
    )


# g++, g++-15, x86_64-pc-linux-gnu-g++-15, clang++, clang++-20 (not g++-ar and friends).
_CANDIDATE_RE = re.compile(r"^(?:[A-Za-z0-9_.]+-)*(?:g\+\+|clang\+\+)(?:-\d+(?:\.\d+)*)?$")
_MAX_CANDIDATES = 24


def candidate_compilers(env: Mapping[str, str]) -> list[str]:
    """Executables on PATH that look like C++ compilers, one per real file.

    Of several names for one file the versioned (``g++-15``), then shortest, name wins:
    it stays right when the system default moves to another version.
    """
    groups: dict[str, list[str]] = {}
    for directory in path_dirs(env):
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


_NVCC_BASE_MACROS = {
    "__CUDACC__": "1",
    "__NVCC__": "1",
    "__CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__": "",
}


def nvcc_macros(compiler: Compiler, *, allow_unsupported: bool) -> dict[str, str]:
    """The macros ``crt/host_config.h`` sees when nvcc runs ``compiler``."""
    macros = {**dict(compiler.macros), **_NVCC_BASE_MACROS}
    if allow_unsupported:  # what nvcc passes for -allow-unsupported-compiler
        macros["__NV_NO_HOST_COMPILER_CHECK"] = "1"
    return macros
