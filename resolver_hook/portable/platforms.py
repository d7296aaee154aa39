"""Operating systems, CPU architectures, wheel platform tags and Python ABI words.

Pure and standard-library only: a generated placeholder embeds this file verbatim,
so it must run on any Python >= 3.8 with nothing installed (no ``packaging``, no
imports from the rest of resolver-hook).

Canonical words: OS ``linux``, ``macos``, ``windows``; CPU ``x86_64``, ``aarch64``
(Apple's and Windows' ``arm64``), ``i686`` (32-bit x86, Windows' ``win32``),
``ppc64le``, ``s390x``, ``riscv64``, ``armv7l``. Platform tags follow PEP 425, PEP 600
(``manylinux_X_Y``, with the legacy ``manylinux1/2010/2014`` aliases) and PEP 656
(``musllinux_X_Y``); a free-threaded CPython's ABI is ``cp313t`` (docs/facts.md
section 3, "Free-threaded CPython").
"""

from __future__ import annotations

import re
import sysconfig
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ARCH_ALIASES",
    "LEGACY_MANYLINUX",
    "OS_ALIASES",
    "OS_NAMES",
    "OS_WORDS",
    "PLATFORM_MACHINE",
    "PLATFORM_SYSTEM",
    "SYS_PLATFORM",
    "WINDOWS_PLATFORMS",
    "canonical_arch",
    "describe_platform",
    "describe_python",
    "is_free_threaded",
    "linux_platforms",
    "os_of_sys_platform",
    "parse_platform",
    "parse_python",
    "platform_name",
    "python_label",
    "python_words",
]

OS_NAMES = ("linux", "macos", "windows")
OS_WORDS = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}

# What people (and target specs) call an OS -> the canonical word.
OS_ALIASES = {
    "linux": "linux",
    "macos": "macos",
    "darwin": "macos",
    "osx": "macos",
    "windows": "windows",
    "win": "windows",
    "win32": "windows",
}

# What platform.machine(), uname and wheel tags call a CPU -> the canonical word.
ARCH_ALIASES = {
    "amd64": "x86_64",
    "x86_64": "x86_64",
    "x64": "x86_64",
    "arm64": "aarch64",
    "aarch64": "aarch64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "i686": "i686",
    "i386": "i686",
    "x86": "i686",
    "win32": "i686",
    "armv7l": "armv7l",
}

# PEP 508 marker values for a canonical OS and CPU.
SYS_PLATFORM = {"linux": "linux", "macos": "darwin", "windows": "win32"}
PLATFORM_SYSTEM = {"linux": "Linux", "macos": "Darwin", "windows": "Windows"}
PLATFORM_MACHINE = {
    "macos": {"aarch64": "arm64"},
    "windows": {"x86_64": "AMD64", "aarch64": "ARM64", "i686": "x86"},
}

# Windows platform tag of a canonical CPU (PEP 425: distutils.util.get_platform()).
WINDOWS_PLATFORMS = {"x86_64": "win_amd64", "aarch64": "win_arm64", "i686": "win32"}

# PEP 600: the legacy manylinux names and the glibc each stands for.
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
# The oldest glibc minor that manylinux tags go down to (manylinux1 = glibc 2.5).
_OLDEST_GLIBC_MINOR = 5

_IMPL_WORDS = {"cp": "CPython", "pp": "PyPy", "py": "Python"}


def canonical_arch(text: str) -> str | None:
    """``AMD64`` -> ``x86_64``, ``arm64`` -> ``aarch64``, ``x86`` -> ``i686``; None if unknown."""
    return ARCH_ALIASES.get(text.strip().lower())


def os_of_sys_platform(value: str) -> str:
    """``sys.platform`` -> ``linux``, ``macos`` or ``windows`` (other values unchanged)."""
    if value.startswith("linux"):
        return "linux"
    return {"darwin": "macos", "win32": "windows", "cygwin": "windows"}.get(value, value)


def linux_platforms(arch: str, libc: str | None, libc_version: str | None) -> list[str]:
    """The Linux platform tags a machine accepts, best first (PEP 600, PEP 656)."""
    out = []
    if libc == "musl":
        minor = int((libc_version or "1.2").split(".")[1])
        out += ["musllinux_1_%d_%s" % (m, arch) for m in range(minor, -1, -1)]
    else:
        minor = int((libc_version or "2.17").split(".")[1])
        legacy = {v[1]: k for k, v in LEGACY_MANYLINUX.items()}
        for m in range(minor, _OLDEST_GLIBC_MINOR - 1, -1):
            out.append("manylinux_2_%d_%s" % (m, arch))
            # PEP 600: the legacy aliases exist for x86_64/i686 (all three) and for
            # the other architectures from manylinux2014 on.
            if m in legacy and (arch in ("x86_64", "i686") or m == 17):
                out.append("%s_%s" % (legacy[m], arch))
    out.append("linux_%s" % arch)
    return out


def parse_platform(tag: str) -> dict[str, Any]:
    """A wheel platform tag as {os, arch, libc, libc_min}; os ``any`` for ``any``.

    ``libc_min`` is the oldest glibc/musl (Linux) or macOS version, as ``[X, Y]``.
    """
    if tag == "any":
        return {"os": "any", "arch": "any", "libc": None, "libc_min": None}
    m = re.match(r"^(manylinux|musllinux)_(\d+)_(\d+)_(.+)$", tag)
    if m:
        libc = "glibc" if m.group(1) == "manylinux" else "musl"
        return {
            "os": "linux",
            "arch": _arch_word(m.group(4)),
            "libc": libc,
            "libc_min": [int(m.group(2)), int(m.group(3))],
        }
    m = re.match(r"^(manylinux1|manylinux2010|manylinux2014)_(.+)$", tag)
    if m:
        return {
            "os": "linux",
            "arch": _arch_word(m.group(2)),
            "libc": "glibc",
            "libc_min": list(LEGACY_MANYLINUX[m.group(1)]),
        }
    if tag.startswith("linux_"):
        return {"os": "linux", "arch": _arch_word(tag[6:]), "libc": None, "libc_min": None}
    windows = {v: k for k, v in WINDOWS_PLATFORMS.items()}
    if tag in windows:
        return {"os": "windows", "arch": windows[tag], "libc": None, "libc_min": None}
    m = re.match(r"^macosx_(\d+)_(\d+)_(.+)$", tag)
    if m:
        arch = {"universal2": "universal2", "intel": "x86_64"}.get(
            m.group(3), _arch_word(m.group(3))
        )
        return {
            "os": "macos",
            "arch": arch,
            "libc": None,
            "libc_min": [int(m.group(1)), int(m.group(2))],
        }
    return {"os": tag, "arch": "", "libc": None, "libc_min": None}


def _arch_word(text: str) -> str:
    return canonical_arch(text) or text.strip().lower() or "unknown"


def platform_name(tag: str) -> str:
    """``manylinux_2_28_x86_64`` -> ``Linux x86_64``; an unknown tag as it is."""
    p = parse_platform(tag)
    if p["os"] == "any":
        return "any platform"
    word = OS_WORDS.get(p["os"])
    return "%s %s" % (word, p["arch"]) if word else tag


def describe_platform(tag: str) -> str:
    """``manylinux_2_28_x86_64`` -> ``Linux x86_64 (glibc 2.28 or newer)``."""
    p = parse_platform(tag)
    if p["os"] == "any":
        return "any platform"
    if p["os"] == "macos":
        arch = "Apple silicon and Intel" if p["arch"] == "universal2" else p["arch"]
        return "macOS %s (%d.%d or newer)" % (arch, p["libc_min"][0], p["libc_min"][1])
    word = OS_WORDS.get(p["os"])
    if word is None:
        return tag
    text = "%s %s" % (word, p["arch"])
    if p["libc_min"]:
        text += " (%s %d.%d or newer)" % (p["libc"], p["libc_min"][0], p["libc_min"][1])
    elif p["libc"]:
        text += " (%s)" % p["libc"]
    return text


def parse_python(interpreter: str, abi: str) -> dict[str, Any]:
    """``cp313``/``cp313t`` -> {impl cp, version [3, 13], abi3 False, free_threaded True}."""
    m = re.match(r"^([a-z]+)(\d)(\d*)$", interpreter)
    if not m:
        return {"impl": interpreter, "version": None, "abi3": False, "free_threaded": False}
    version = [int(m.group(2))] + ([int(m.group(3))] if m.group(3) else [])
    return {
        "impl": m.group(1),
        "version": version,
        "abi3": abi == "abi3",
        "free_threaded": abi.endswith("t") and abi.startswith("cp"),
    }


def describe_python(interpreter: str, abi: str) -> str:
    """``cp312``/``abi3`` -> ``CPython 3.12 or newer``; ``cp313t`` -> ``... (free-threaded)``."""
    p = parse_python(interpreter, abi)
    if p["version"] is None:
        return interpreter
    impl = _IMPL_WORDS.get(p["impl"], p["impl"])
    text = "%s %s" % (impl, ".".join(str(v) for v in p["version"]))
    if p["abi3"]:
        text += " or newer"
    if p["free_threaded"]:
        text += " (free-threaded)"
    return text


def python_label(version: tuple[int, ...], free_threaded: bool) -> str:
    """``(3, 13), True`` -> ``3.13t``: the spelling of index flavours' ``python`` lists."""
    return "%d.%d%s" % (version[0], version[1], "t" if free_threaded else "")


def python_words(version: tuple[int, ...], free_threaded: bool) -> str:
    """``(3, 13), True`` -> ``Python 3.13 (free-threaded)``."""
    text = "Python %d.%d" % (version[0], version[1])
    return text + (" (free-threaded)" if free_threaded else "")


def is_free_threaded(get_config_var: Callable[[str], Any] = sysconfig.get_config_var) -> bool:
    """Whether this CPython is a free-threaded build (``Py_GIL_DISABLED``).

    The build decides the ABI (``cp313t``), not whether the GIL happens to be enabled
    at run time (docs/facts.md section 3, "Free-threaded CPython").
    """
    try:
        return bool(get_config_var("Py_GIL_DISABLED"))
    except Exception:  # a broken sysconfig must not stop detection
        return False
