"""Kernel-target algebra and the driver <-> CUDA runtime rules.

Pure and standard-library only: a generated placeholder embeds this file verbatim,
so it must run on any Python >= 3.8 with nothing installed. Keep it that way (no
``packaging``, no imports from the rest of resolver-hook, no f-string ``=``).

Facts encoded here come from NVIDIA's CUDA documentation, as summarised in the
project's docs/facts.md section 1:

- ``sm_XY`` (SASS) runs on CC X.Y and every X.Z with Z >= Y (same major only);
- ``sm_XYa`` (arch-specific) runs on exactly CC X.Y;
- ``sm_XYf`` (family-specific, CUDA >= 12.9) runs on CC X.Y and the higher minors
  of the same family (sm_100f: 10.0 and 10.3; sm_120f: 12.0 and 12.1);
- ``compute_XY`` (PTX) runs on any CC >= X.Y by JIT, if the driver is new enough;
- Tegra (Jetson) is the exception to the SASS rules: on a Tegra CC (5.3, 6.2, 7.2,
  8.7, and 10.1, Jetson Thor under CUDA 12.9 naming) only SASS built for exactly that
  CC runs, and SASS built for a Tegra CC runs nowhere else (NVIDIA CUDA C++
  Programming Guide, Binary Compatibility: "not supported for Tegra" and "between
  desktop and Tegra"); PTX still JITs. CC 11.0 (Jetson Thor under CUDA 13) is not in
  that set: CUDA 13 ships Thor as a server-Arm (SBSA) platform (docs/facts.md 1.2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "DRIVER_CUDA",
    "GPU_NAMES",
    "JETSON_AI_LAB_JP6",
    "JETSON_ONLY_CCS",
    "TEGRA_CCS",
    "KernelTarget",
    "cuda_for_driver",
    "decode_cuda_version",
    "describe_cc",
    "describe_target",
    "driver_meets_runtime",
    "format_cc",
    "min_driver_for_cuda",
    "min_driver_for_runtime",
    "parse_cc",
    "parse_driver_version",
    "parse_target",
    "ptx_isa_cuda",
    "targets_cover",
    "uncovered",
]

# Compute capability -> GPUs people know it by (docs/facts.md section 1, from NVIDIA's
# "CUDA GPUs - Compute Capability" table).
GPU_NAMES = {
    (5, 3): "Jetson Nano/TX1",
    (6, 2): "Jetson TX2",
    (7, 0): "V100",
    (7, 2): "Jetson Xavier",
    (7, 5): "T4, RTX 20xx",
    (8, 0): "A100",
    (8, 6): "A10, RTX 30xx",
    (8, 7): "Jetson Orin",
    (8, 9): "L4, L40S, RTX 40xx",
    (9, 0): "H100, H200, GH200",
    (10, 0): "B200/GB200",
    (10, 1): "Jetson Thor (CUDA 12.9 naming)",
    (10, 3): "B300/GB300",
    (11, 0): "Jetson Thor",
    (12, 0): "RTX 50xx, RTX PRO 6000 Blackwell",
    (12, 1): "GB10 (DGX Spark)",
}

# Tegra compute capabilities: SASS runs on them only when built for exactly that CC,
# and their SASS runs on no other CC (docs/facts.md section 1.1, NVIDIA CUDA C++
# Programming Guide, Binary Compatibility). 10.1 is Jetson Thor under CUDA 12.9 naming.
TEGRA_CCS = frozenset({(5, 3), (6, 2), (7, 2), (8, 7), (10, 1)})

# Compute capabilities that exist only on Jetson modules: a target naming one names a
# Jetson. 11.0 is Jetson Thor under CUDA 13, an SBSA platform (docs/facts.md 1.2), so it
# is a Jetson but not in TEGRA_CCS.
JETSON_ONLY_CCS = TEGRA_CCS | {(11, 0)}

# Where JetPack 6 (L4T r36) Jetson wheels come from: NVIDIA's Jetson AI Lab index
# (docs/facts.md section 1.2).
JETSON_AI_LAB_JP6 = "https://pypi.jetson-ai-lab.io/jp6/cu126"

# NVIDIA CUDA Toolkit release notes, Table 3 "CUDA Toolkit and Corresponding Driver
# Versions", Linux x86_64 column (docs/facts.md section 1.3): the oldest Linux driver
# of each CUDA toolkit release, newest first. A driver supports the newest CUDA whose
# row it meets. Only the GA row of each minor is kept: it is the lowest driver of that
# minor, and the driver's CUDA version has no update number.
DRIVER_CUDA = (
    ((595, 45, 4), (13, 2)),
    ((590, 44, 1), (13, 1)),
    ((580, 65, 6), (13, 0)),
    ((575, 51, 3), (12, 9)),
    ((570, 26), (12, 8)),
    ((560, 28, 3), (12, 6)),
    ((555, 42, 2), (12, 5)),
    ((550, 54, 14), (12, 4)),
    ((545, 23, 6), (12, 3)),
    ((535, 54, 3), (12, 2)),
    ((530, 30, 2), (12, 1)),
    ((525, 60, 13), (12, 0)),
    ((520, 61, 5), (11, 8)),
    ((515, 43, 4), (11, 7)),
    ((510, 39, 1), (11, 6)),
    ((495, 29, 5), (11, 5)),
    ((470, 42, 1), (11, 4)),
    ((465, 19, 1), (11, 3)),
    ((460, 27, 3), (11, 2)),
    ((455, 23), (11, 1)),
    ((450, 36, 6), (11, 0)),
)

# Minimum NVIDIA driver for a CUDA runtime major, per OS (docs/facts.md section 1, from
# NVIDIA's CUDA Toolkit release notes, "CUDA Driver" table, minor-version
# compatibility column).
_MIN_DRIVER = {
    13: {"linux": "580", "windows": "580"},
    12: {"linux": "525.60.13", "windows": "528.33"},
    11: {"linux": "450.80.02", "windows": "452.39"},
}

# PTX ISA version -> the CUDA release that introduced it, which is the oldest driver
# CUDA version that can JIT-compile PTX of that ISA (cudaErrorUnsupportedPtxVersion
# otherwise; docs/facts.md section 1). From NVIDIA's PTX ISA release notes, "PTX release
# history" (docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history;
# to 9.4 as printed in the 9.4 edition, CUDA 13.4.1), 9.5 from a secondary source
# (docs/facts.md section 1.8). Note the gap: there is no PTX ISA for CUDA 12.6 (8.5 is
# 12.5, 8.6 is 12.7).
_PTX_ISA_CUDA = {
    (7, 0): (11, 0),
    (7, 1): (11, 1),
    (7, 2): (11, 2),
    (7, 3): (11, 3),
    (7, 4): (11, 4),
    (7, 5): (11, 5),
    (7, 6): (11, 6),
    (7, 7): (11, 7),
    (7, 8): (11, 8),
    (8, 0): (12, 0),
    (8, 1): (12, 1),
    (8, 2): (12, 2),
    (8, 3): (12, 3),
    (8, 4): (12, 4),
    (8, 5): (12, 5),
    (8, 6): (12, 7),
    (8, 7): (12, 8),
    (8, 8): (12, 9),
    (9, 0): (13, 0),
    (9, 1): (13, 1),
    (9, 2): (13, 2),
    (9, 3): (13, 3),
    (9, 4): (13, 4),
    (9, 5): (13, 5),
}

_SM = re.compile(r"^sm_(\d+)([af]?)$")
# These two compiled when first used (re's cache): most targets are sm_XY.
_COMPUTE = r"^compute_(\d+)([af]?)$"
# PEP 817 / NVIDIA variant provider spelling: "100_real" (SASS), "120_virtual" (PTX).
_PEP817 = r"^(\d+)([af]?)_(real|virtual)$"
# A compute capability: major 1-99, minor one digit (sm_XY / sm_XYZ: the last digit is
# the minor). "0.0" or a 20-digit major is no GPU.
_CC = re.compile(r"^([1-9]\d?)\.(\d)$")


def _split_arch(number: str) -> tuple[int, int]:
    # "90" -> (9, 0), "100" -> (10, 0), "121" -> (12, 1): the last digit is the minor.
    return int(number[:-1]), int(number[-1])


class KernelTarget:
    """One compiled kernel target: SASS for one architecture, or PTX.

    ``kind`` is ``"sass"`` or ``"ptx"``; ``suffix`` is ``""``, ``"a"`` or ``"f"``.
    Instances compare and hash by value and sort by (major, minor, kind, suffix).
    """

    __slots__ = ("kind", "major", "minor", "suffix")

    def __init__(self, kind: str, major: int, minor: int, suffix: str = "") -> None:
        if kind not in ("sass", "ptx") or suffix not in ("", "a", "f"):
            raise ValueError("bad kernel target")
        self.kind = kind
        self.major = major
        self.minor = minor
        self.suffix = suffix

    def _key(self) -> tuple[int, int, str, str]:
        return (self.major, self.minor, self.kind, self.suffix)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelTarget) and self._key() == other._key()

    def __lt__(self, other: KernelTarget) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "KernelTarget(%r)" % str(self)

    def __str__(self) -> str:
        prefix = "sm" if self.kind == "sass" else "compute"
        return "%s_%d%d%s" % (prefix, self.major, self.minor, self.suffix)

    @property
    def pep817(self) -> str:
        """The PEP 817 ``nvidia :: sm_arch`` value, e.g. ``100_real``."""
        kind = "real" if self.kind == "sass" else "virtual"
        return "%d%d%s_%s" % (self.major, self.minor, self.suffix, kind)

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """Whether this target can execute on a GPU of compute capability ``cc``."""
        major, minor = cc
        own = (self.major, self.minor)
        if self.kind == "ptx" and not self.suffix:
            # Plain PTX is JIT-compiled for any newer architecture, Tegra included.
            return cc >= own
        if self.suffix == "a":
            return cc == own
        if (cc in TEGRA_CCS or own in TEGRA_CCS) and cc != own:
            # Tegra: SASS (and family code) for exactly this CC only, both ways
            # (docs/facts.md section 1.1).
            return False
        # Plain and family SASS, family PTX: same major, equal or higher minor.
        return major == self.major and minor >= self.minor


def parse_target(text: str) -> KernelTarget:
    """Parse ``sm_XY``, ``sm_XYa``, ``sm_XYf``, ``compute_XY`` or ``XY_real``/``XY_virtual``.

    Raises ValueError with the offending text when it is none of these.
    """
    s = text.strip().lower()
    m = _SM.match(s)
    if m:
        kind, number, suffix = "sass", m.group(1), m.group(2)
    else:
        m = re.match(_COMPUTE, s)
        if m:
            kind, number, suffix = "ptx", m.group(1), m.group(2)
        else:
            m = re.match(_PEP817, s)
            if not m:
                raise ValueError(
                    "%r is not a kernel target (expected sm_XY, sm_XYa, sm_XYf, "
                    "compute_XY, XY_real or XY_virtual)" % text
                )
            number, suffix = m.group(1), m.group(2)
            kind = "sass" if m.group(3) == "real" else "ptx"
    if len(number) < 2 or len(number) > 3 or number.startswith("0"):
        raise ValueError("%r has no valid architecture number" % text)
    major, minor = _split_arch(number)
    return KernelTarget(kind, major, minor, suffix)


def parse_cc(text: str) -> tuple[int, int]:
    """Parse a compute capability: ``12.1``, ``sm_121`` or ``sm121``.

    Bare digits are refused: ``12`` could mean 1.2 or 12.0.
    """
    s = text.strip().lower()
    m = _CC.match(s)
    if m:
        return int(m.group(1)), int(m.group(2))
    digits = s[3:] if s.startswith("sm_") else s[2:] if s.startswith("sm") else ""
    if digits.isdigit() and 2 <= len(digits) <= 3 and not digits.startswith("0"):
        return _split_arch(digits)
    raise ValueError("%r is not a compute capability (expected X.Y such as 12.1)" % text)


def format_cc(cc: tuple[int, int]) -> str:
    """``(12, 1)`` -> ``"12.1"``."""
    return "%d.%d" % cc


def describe_cc(cc: tuple[int, int]) -> str:
    """``(12, 1)`` -> ``"sm_121 (GB10 (DGX Spark))"``, or ``"sm_121"`` when unnamed."""
    name = GPU_NAMES.get(cc)
    label = "sm_%d%d" % cc
    return "%s (%s)" % (label, name) if name else label


def describe_target(target: KernelTarget) -> str:
    """The GPUs a target runs on, in words: ``sm_100f: NVIDIA B200/GB200, B300/GB300``."""
    names = [GPU_NAMES[cc] for cc in sorted(GPU_NAMES) if target.runs_on(cc)]
    if target.kind == "ptx" and not target.suffix:
        first = names[0] if names else "newer GPUs"
        return "%s: any NVIDIA GPU of compute capability %d.%d or newer (%s and later), by JIT" % (
            target,
            target.major,
            target.minor,
            first,
        )
    if not names:
        return "%s: NVIDIA GPUs of compute capability %d.%d" % (target, target.major, target.minor)
    return "%s: NVIDIA %s" % (target, ", ".join(names))


def targets_cover(targets: Iterable[KernelTarget], ccs: Iterable[tuple[int, int]]) -> bool:
    """Whether every compute capability in ``ccs`` runs at least one of ``targets``."""
    return not uncovered(targets, ccs)


def uncovered(
    targets: Iterable[KernelTarget], ccs: Iterable[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The compute capabilities in ``ccs`` that none of ``targets`` runs on, in order."""
    tlist = list(targets)
    return [cc for cc in ccs if not any(t.runs_on(cc) for t in tlist)]


def min_driver_for_runtime(runtime_major: int, os_name: str = "linux") -> str | None:
    """Minimum driver version for wheels built against CUDA ``runtime_major``.x.

    None when the major is not in the table (docs/facts.md section 1).
    """
    row = _MIN_DRIVER.get(runtime_major)
    if row is None:
        return None
    return row.get(os_name, row["linux"])


def min_driver_for_cuda(cuda: tuple[int, int], os_name: str = "linux") -> str | None:
    """The oldest driver whose own CUDA version is at least ``cuda`` (what a manifest's
    ``cuda = ">=X.Y"`` asks of the driver).

    X.0: the minor-version-compatibility minimum of that major
    (:func:`min_driver_for_runtime`). X.Y above 0: the first row of NVIDIA's toolkit
    and driver table that reaches it (Linux only: docs/facts.md section 1.3); None
    where the table cannot say.
    """
    if cuda[1] == 0:
        return min_driver_for_runtime(cuda[0], os_name)
    if os_name != "linux":
        return None
    rows = [floor for floor, have in DRIVER_CUDA if have >= cuda]
    return ".".join("%02d" % n if i else str(n) for i, n in enumerate(min(rows))) if rows else None


def driver_meets_runtime(driver_cuda: tuple[int, int], runtime: tuple[int, int]) -> bool:
    """Minor-version compatibility: runtime X.y runs on a driver supporting CUDA >= X.0.

    (NVIDIA, "CUDA Compatibility", minor version compatibility.) PTX built by a
    newer toolkit is a separate matter: see :func:`KernelTarget.runs_on` callers.
    """
    return driver_cuda >= (runtime[0], 0)


def decode_cuda_version(value: int) -> tuple[int, int] | None:
    """NVML's and the driver API's CUDA version integer: ``13000`` -> ``(13, 0)``.

    ``1000 * major + 10 * minor`` (docs/facts.md section 1.3); None for 0 or less.
    """
    if value <= 0:
        return None
    return value // 1000, (value % 1000) // 10


def parse_driver_version(text: str) -> tuple[int, ...] | None:
    """``"580.95.05"`` -> ``(580, 95, 5)``; None when it is not a dotted number."""
    parts = text.strip().split(".")
    if not parts or not all(p.isdigit() and len(p) <= 6 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def cuda_for_driver(driver: str) -> tuple[tuple[int, int], bool] | None:
    """The newest CUDA a Linux driver version supports, from NVIDIA's table.

    Returns ``(cuda, exact)``: ``exact`` is False for a driver newer than the
    table's newest row, where ``cuda`` is that row's CUDA (a lower bound). None when
    the driver is older than every row or not a version (docs/facts.md section 1.3).
    """
    version = parse_driver_version(driver)
    if version is None:
        return None
    for i, (floor, cuda) in enumerate(DRIVER_CUDA):
        if version >= floor:
            # Newer than the newest row's major release: the driver may support more.
            return cuda, not (i == 0 and version[0] > floor[0])
    return None


def ptx_isa_cuda(isa: tuple[int, int]) -> tuple[tuple[int, int], bool]:
    """The oldest driver CUDA version that JIT-compiles PTX of ISA ``isa``.

    Returns ``(cuda, exact)``: ``exact`` is False for an ISA newer than the table, where
    ``cuda`` is the newest CUDA the table knows (a lower bound), and for one older than
    7.0, where it is CUDA 11.0 (CUDA 11 is the oldest runtime in this module's tables).
    """
    if isa in _PTX_ISA_CUDA:
        return _PTX_ISA_CUDA[isa], True
    known = sorted(_PTX_ISA_CUDA)
    if isa > known[-1]:
        return _PTX_ISA_CUDA[known[-1]], False
    return _PTX_ISA_CUDA[known[0]], False
