"""The host profile: what a machine is, as a frozen, serialisable value.

A profile is made by detection (this machine), by a target spec or a saved JSON
file (another machine), and then possibly overridden. Everything downstream (the
resolver, placeholders, doctor) reads profiles and never the host itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.tags import compatible_tags, cpython_tags, mac_platforms

from resolver_hook.errors import UsageError
from resolver_hook.ground.valueclass import fields, is_value, replace, valueclass
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    JETSON_ONLY_CCS,
    TEGRA_CCS,
    cuda_for_driver,
    format_cc,
    parse_cc,
)
from resolver_hook.portable.platforms import (
    OS_NAMES,
    OS_WORDS,
    WINDOWS_PLATFORMS,
    linux_platforms,
    python_label,
    python_words,
)

__all__ = [
    "SCHEMA",
    "HostProfile",
    "NvidiaGpu",
    "NvidiaInfo",
    "Probe",
    "RocmInfo",
    "compute_tags",
]

SCHEMA = 1


@valueclass
class NvidiaGpu:
    """One visible NVIDIA GPU."""

    index: int
    name: str
    cc: tuple[int, int]
    memory_mib: int | None = None
    uuid: str | None = None

    @classmethod
    def synthetic(cls, index: int, cc: tuple[int, int]) -> NvidiaGpu:
        """A GPU described only by its compute capability (targets, overrides)."""
        known = GPU_NAMES.get(cc)
        name = f"NVIDIA {known}" if known else f"NVIDIA GPU of compute capability {format_cc(cc)}"
        return cls(index=index, name=name, cc=cc)


@valueclass
class NvidiaInfo:
    """The NVIDIA driver and the GPUs it shows this process."""

    driver_version: str | None = None
    cuda_version: str | None = None  # the driver's CUDA version, "13.0"
    gpus: tuple[NvidiaGpu, ...] = ()
    # True when cuda_version was not reported by the driver but inferred from the driver
    # version with NVIDIA's table (docs/facts.md section 1.3): a lower bound.
    cuda_inferred: bool = False

    @property
    def cuda(self) -> tuple[int, int] | None:
        if self.cuda_version is None:
            return None
        major, _, minor = self.cuda_version.partition(".")
        return int(major), int(minor or 0)


@valueclass
class RocmInfo:
    """AMD ROCm: the runtime version (when known) and the gfx names of the GPUs."""

    version: str | None = None
    gfx: tuple[str, ...] = ()


@valueclass
class Probe:
    """The outcome of one detection probe: what it found, or why it found nothing."""

    name: str
    found: bool
    detail: str


@valueclass
class HostProfile:
    """A machine as resolver-hook sees it.

    ``arch`` is canonical (``x86_64``, ``aarch64``, ...; Apple's and Windows'
    ``arm64`` is ``aarch64``). ``tags`` are the wheel tags this machine's Python
    accepts, best first. ``overridden`` names the fields set by an override rather
    than detected; ``origin`` says where the profile came from.
    """

    os: str
    arch: str
    python: str  # "3.12"
    implementation: str = "cp"
    free_threaded: bool = False  # a free-threaded CPython build (ABI cp313t)
    tags: tuple[str, ...] = ()
    libc: str | None = None  # "glibc" or "musl" (Linux only)
    libc_version: str | None = None
    wsl: bool = False
    container: str | None = None
    nvidia: NvidiaInfo | None = None
    rocm: RocmInfo | None = None
    mps: bool = False
    # NVIDIA Jetson (Tegra): the L4T release, "36.4" (JetPack 6 is L4T r36); None elsewhere.
    l4t: str | None = None
    probes: tuple[Probe, ...] = ()
    notes: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()
    origin: str = "detected"

    # --- derived facts ------------------------------------------------------

    @property
    def gpus(self) -> tuple[NvidiaGpu, ...]:
        return self.nvidia.gpus if self.nvidia else ()

    @property
    def gpu_ccs(self) -> tuple[tuple[int, int], ...]:
        """Distinct compute capabilities of the visible NVIDIA GPUs, in order."""
        return tuple(dict.fromkeys(g.cc for g in self.gpus))

    @property
    def cuda(self) -> tuple[int, int] | None:
        """The driver's CUDA version, or None without an NVIDIA driver."""
        return self.nvidia.cuda if self.nvidia else None

    @property
    def l4t_major(self) -> int | None:
        """The L4T major release of a Jetson (36 for JetPack 6), or None off Jetson."""
        return int(self.l4t.partition(".")[0]) if self.l4t else None

    @property
    def python_tuple(self) -> tuple[int, int]:
        major, _, minor = self.python.partition(".")
        return int(major), int(minor)

    @property
    def python_label(self) -> str:
        """``3.12``, or ``3.13t`` for a free-threaded build (index flavours' spelling)."""
        return python_label(self.python_tuple, self.free_threaded)

    @property
    def python_words(self) -> str:
        """``Python 3.12``, or ``Python 3.13 (free-threaded)``."""
        return python_words(self.python_tuple, self.free_threaded)

    @property
    def jetson(self) -> bool:
        """An NVIDIA Jetson: Linux aarch64 with an L4T release or a Jetson-only GPU CC."""
        if (self.os, self.arch) != ("linux", "aarch64"):
            return False
        return self.l4t is not None or any(cc in JETSON_ONLY_CCS for cc in self.gpu_ccs)

    @property
    def needs_jetson_builds(self) -> bool:
        """A Jetson that cannot use server-Arm (SBSA) CUDA builds (docs/facts.md 1.2).

        JetPack 6 and older (L4T r36 and before); with the L4T release unknown, a Jetson
        whose GPU has a Tegra CC (Orin, Xavier, ...). Thor on CUDA 13 (CC 11.0, JetPack 7,
        L4T r38) is an SBSA platform.
        """
        if not self.jetson:
            return False
        major = self.l4t_major
        if major is not None:
            return major <= 36
        return any(cc in TEGRA_CCS for cc in self.gpu_ccs)

    def for_python(
        self, python: tuple[int, int], *, free_threaded: bool = False, why: str = ""
    ) -> HostProfile:
        """This machine as seen by another interpreter: its version and wheel tags.

        The running interpreter's tags cannot be reused for another Python, so they are
        computed; the same Python keeps the profile as it is. ``why`` becomes a note.
        """
        if python == self.python_tuple and free_threaded == self.free_threaded:
            return self
        tags = compute_tags(
            self.os,
            self.arch,
            python,
            libc=self.libc,
            libc_version=self.libc_version,
            free_threaded=free_threaded,
        )
        return self.replace(
            python=f"{python[0]}.{python[1]}",
            free_threaded=free_threaded,
            tags=tags,
            notes=(*self.notes, why) if why else self.notes,
        )

    @property
    def nvidia_reason(self) -> str:
        """Why no NVIDIA GPU is listed (the probes' reasons), or ``""`` when one is."""
        if self.gpus:
            return ""
        reasons = [p.detail for p in self.probes if not p.found and p.name.startswith("nvidia")]
        return "; ".join(reasons) or "no NVIDIA GPU"

    def describe(self) -> str:
        """One line in words: ``Linux aarch64, Python 3.12, glibc 2.39, NVIDIA GB10 ...``."""
        os_word = OS_WORDS.get(self.os, self.os)
        parts = [f"{os_word} {self.arch}", self.python_words]
        if self.libc and self.libc_version:
            parts.append(f"{self.libc} {self.libc_version}")
        if self.gpus:
            gpus = ", ".join(f"{g.name} (sm_{g.cc[0]}{g.cc[1]})" for g in self.gpus)
            parts.append(f"{gpus}, driver CUDA {self.cuda_words()}")
        elif self.nvidia and self.nvidia.cuda_version:
            parts.append(f"NVIDIA driver CUDA {self.cuda_words()}, no visible GPU")
        elif self.rocm is None:
            parts.append(f"no NVIDIA GPU ({self.nvidia_reason})")
        if self.rocm is not None:
            gfx = f" ({', '.join(self.rocm.gfx)})" if self.rocm.gfx else ""
            parts.append(f"AMD ROCm {self.rocm.version or '(version unknown)'}{gfx}")
        if self.mps:
            parts.append("Apple MPS")
        if self.l4t:
            parts.append(f"Jetson L4T {self.l4t}")
        elif self.jetson:
            parts.append("Jetson, L4T release unknown")
        return ", ".join(parts)

    def cuda_words(self) -> str:
        """``13.0``, or ``13.0 (inferred from driver 580.95.05)``, or ``unknown``."""
        nv = self.nvidia
        if nv is None or nv.cuda_version is None:
            return "unknown"
        if nv.cuda_inferred:
            # Newer than NVIDIA's table: a lower bound (docs/facts.md section 1.3).
            found = cuda_for_driver(nv.driver_version or "")
            least = "at least " if found is not None and not found[1] else ""
            return f"{least}{nv.cuda_version} (inferred from driver {nv.driver_version or '?'})"
        return nv.cuda_version

    # --- serialisation ------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"schema": SCHEMA}
        for f in fields(self):
            data[f.name] = _plain(getattr(self, f.name))
        return data

    @classmethod
    def from_dict(cls, data: object, *, where: str = "profile") -> HostProfile:
        """Build a profile from :meth:`to_dict` output; UsageError naming the bad key."""
        return _ProfileReader(where).read(data)

    def replace(self, **changes: Any) -> HostProfile:
        return replace(self, **changes)


def _plain(value: Any) -> Any:
    if isinstance(value, str):  # most values: a detected profile holds ~900 wheel tags
        return value
    if is_value(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        if len(value) == 2 and all(isinstance(v, int) for v in value):
            return format_cc(value)  # compute capabilities are written "12.1"
        return [_plain(v) for v in value]
    return value


class _ProfileReader:
    """Strict reader for profile JSON: every wrong type is a UsageError with its key path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {path}: {problem}")

    def mapping(self, value: object, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, got {type(value).__name__}")
        return value

    def get(
        self,
        m: Mapping[str, Any],
        key: str,
        kind: type | tuple[type, ...],
        path: str,
        *,
        required: bool = False,
        default: Any = None,
    ) -> Any:
        if key not in m or m[key] is None:
            if required:
                raise self.fail(f"{path}{key}", "missing")
            return default
        value = m[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(f"{path}{key}", f"expected {names}, got {type(value).__name__}")
        return value

    def strings(self, m: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        items = self.get(m, key, list, path, default=[])
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(f"{path}{key}[{i}]", "expected a string")
        return tuple(items)

    def read(self, data: object) -> HostProfile:
        m = self.mapping(data, "(top)")
        schema = self.get(m, "schema", int, "", default=SCHEMA)
        if schema != SCHEMA:
            raise self.fail("schema", f"unsupported version {schema} (this tool reads {SCHEMA})")
        os_name = self.get(m, "os", str, "", required=True)
        if os_name not in OS_NAMES:
            raise self.fail("os", f"{os_name!r} is not one of {', '.join(OS_NAMES)}")
        python = self.get(m, "python", str, "", required=True)
        if not re.fullmatch(r"\d{1,2}\.\d{1,3}", python):
            raise self.fail("python", f"{python!r} is not a version like 3.12")
        major, minor = (int(x) for x in python.split("."))
        nvidia = None
        if m.get("nvidia") is not None:
            nv = self.mapping(m["nvidia"], "nvidia")
            gpus = []
            for i, g in enumerate(self.get(nv, "gpus", list, "nvidia.", default=[])):
                gp = f"nvidia.gpus[{i}]."
                gm = self.mapping(g, gp[:-1])
                cc_text = self.get(gm, "cc", str, gp, required=True)
                try:
                    cc = parse_cc(cc_text)
                except ValueError as exc:
                    raise self.fail(gp + "cc", str(exc)) from None
                gpus.append(
                    NvidiaGpu(
                        index=self.get(gm, "index", int, gp, default=i),
                        name=self.get(gm, "name", str, gp, default="NVIDIA GPU"),
                        cc=cc,
                        memory_mib=self.get(gm, "memory_mib", int, gp),
                        uuid=self.get(gm, "uuid", str, gp),
                    )
                )
            cuda_version = self.get(nv, "cuda_version", str, "nvidia.")
            if cuda_version is not None:
                cuda_version = _check_version(
                    cuda_version, lambda p: self.fail("nvidia.cuda_version", p)
                )
            nvidia = NvidiaInfo(
                driver_version=self.get(nv, "driver_version", str, "nvidia."),
                cuda_version=cuda_version,
                gpus=tuple(gpus),
                cuda_inferred=self.get(nv, "cuda_inferred", bool, "nvidia.", default=False),
            )
        rocm = None
        if m.get("rocm") is not None:
            rm = self.mapping(m["rocm"], "rocm")
            rocm_version = self.get(rm, "version", str, "rocm.")
            if rocm_version is not None and not re.fullmatch(
                r"\d{1,3}(?:\.\d{1,3}){0,2}", rocm_version
            ):
                raise self.fail("rocm.version", f"{rocm_version!r} is not a version like 7.0")
            rocm = RocmInfo(version=rocm_version, gfx=self.strings(rm, "gfx", "rocm."))
        probes = []
        for i, p in enumerate(self.get(m, "probes", list, "", default=[])):
            pp = f"probes[{i}]."
            pm = self.mapping(p, pp[:-1])
            probes.append(
                Probe(
                    name=self.get(pm, "name", str, pp, required=True),
                    found=self.get(pm, "found", bool, pp, default=False),
                    detail=self.get(pm, "detail", str, pp, default=""),
                )
            )
        arch = self.get(m, "arch", str, "", required=True)
        libc_version = self.get(m, "libc_version", str, "")
        if libc_version is not None and not re.fullmatch(r"\d{1,3}\.\d{1,3}", libc_version):
            raise self.fail("libc_version", f"{libc_version!r} is not a version like 2.39")
        l4t = self.get(m, "l4t", str, "")
        if l4t is not None and not re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){0,2}", l4t):
            raise self.fail("l4t", f"{l4t!r} is not an L4T release like 36.4")
        free_threaded = self.get(m, "free_threaded", bool, "", default=False)
        tags = self.strings(m, "tags", "")
        if not tags:
            tags = compute_tags(
                os_name,
                arch,
                (major, minor),
                libc_version=libc_version,
                libc=self.get(m, "libc", str, ""),
                free_threaded=free_threaded,
            )
        return HostProfile(
            os=os_name,
            arch=arch,
            python=f"{major}.{minor}",
            implementation=self.get(m, "implementation", str, "", default="cp"),
            free_threaded=free_threaded,
            tags=tags,
            libc=self.get(m, "libc", str, ""),
            libc_version=libc_version,
            wsl=self.get(m, "wsl", bool, "", default=False),
            container=self.get(m, "container", str, ""),
            nvidia=nvidia,
            rocm=rocm,
            mps=self.get(m, "mps", bool, "", default=False),
            l4t=l4t,
            probes=tuple(probes),
            notes=self.strings(m, "notes", ""),
            overridden=self.strings(m, "overridden", ""),
            origin=self.get(m, "origin", str, "", default=self.where),
        )


def _check_version(text: str, fail: Any) -> str:
    m = re.fullmatch(r"(\d{1,3})(?:\.(\d{1,3}))?", text)
    if not m:
        raise fail(f"{text!r} is not a version like 13.0")
    return f"{int(m.group(1))}.{int(m.group(2) or 0)}"


# --- wheel tags for a described machine ---------------------------------------


def _platforms(
    os_name: str, arch: str, libc: str | None, libc_version: str | None
) -> Iterable[str]:
    if os_name == "linux":
        yield from linux_platforms(arch, libc, libc_version)
    elif os_name == "macos":
        mac_arch = "arm64" if arch == "aarch64" else arch
        version = (14, 0) if mac_arch == "arm64" else (13, 0)
        yield from mac_platforms(version, mac_arch)
    elif os_name == "windows":
        yield WINDOWS_PLATFORMS.get(arch, arch)


def compute_tags(
    os_name: str,
    arch: str,
    python: tuple[int, int],
    *,
    libc: str | None = "glibc",
    libc_version: str | None = None,
    free_threaded: bool = False,
) -> tuple[str, ...]:
    """The wheel tags a CPython ``python`` on that machine accepts, best first.

    Used for targets and overrides, where the running interpreter cannot be asked
    (``packaging.tags.sys_tags`` answers for this machine only). A free-threaded
    build has its own ABI (``cp313t``) and no ``abi3`` (docs/facts.md section 3).

    A Linux machine accepts some 1,000 tags (a manylinux tag per glibc release), which
    packaging's generators take ~1 ms to list, in every plan for a ``--target``. The
    list depends only on the arguments and the code (the tool's and packaging's): it
    is kept in the user cache by them (:func:`resolver_hook.ground.contentcache.kept`).
    """
    # Imported when tags are asked: detection imports this module, and asks for none
    # unless an override changes the machine.
    from packaging import __version__ as packaging_version

    from resolver_hook.ground.contentcache import kept

    abi = f"cp{python[0]}{python[1]}{'t' if free_threaded else ''}"
    asked = json.dumps([os_name, arch, list(python), libc, libc_version, free_threaded])
    # A file per OS, CPU and ABI (a lock for several targets finds each one's), named in
    # the characters any file name may hold (a profile's CPU is any text).
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{os_name}-{arch}-{abi}")
    return kept(
        "tags",
        name,
        asked,
        make=lambda: _compute_tags(
            os_name, arch, python, libc=libc, libc_version=libc_version, free_threaded=free_threaded
        ),
        dump=lambda tags: {"tags": list(tags)},
        rebuild=_kept_tags,
        code=(packaging_version,),
    )


def _kept_tags(data: dict[str, Any]) -> tuple[str, ...]:
    tags = tuple(data["tags"])
    if not all(isinstance(t, str) for t in tags):
        raise TypeError("a tag that is not a string")
    return tags


def _compute_tags(
    os_name: str,
    arch: str,
    python: tuple[int, int],
    *,
    libc: str | None,
    libc_version: str | None,
    free_threaded: bool,
) -> tuple[str, ...]:
    platforms = list(_platforms(os_name, arch, libc, libc_version))
    abi = f"cp{python[0]}{python[1]}{'t' if free_threaded else ''}"
    tags = list(cpython_tags(python, abis=[abi], platforms=platforms))
    tags += compatible_tags(python, interpreter=f"cp{python[0]}{python[1]}", platforms=platforms)
    return tuple(dict.fromkeys(str(t) for t in tags))
