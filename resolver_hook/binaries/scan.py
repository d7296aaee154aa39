"""Derive a wheel's support matrix from the wheel itself.

:func:`scan_wheel` reads a built wheel without unpacking it: the file is hashed by
streaming (in a thread; ``hashlib`` releases the GIL on large buffers), and only the
members that start with the ELF magic are read, through a bounded stream. From each
ELF object it takes the CPU (``e_machine``), the ``DT_NEEDED`` libraries and the kernel
targets of its fatbins, and from those the requirements a machine must meet:

* ``libcudart.so.13`` (or ``libcublas``/``libcublasLt``/``libnvrtc``/``libnvJitLink``/
  ``libcupti`` ``.so.13``; ``libcudart.so.11.0``; auditwheel's renamed copies such as
  ``libcudart-53d54daa.so.12.6.68``) -> built against CUDA runtime 13 -> the driver must
  support CUDA ``>=13.0`` (NVIDIA minor-version compatibility; docs/facts.md section 1).
  These libraries' soname major is the toolkit major (nvidia-*-cu12 wheels ship
  ``.so.12``); cuFFT, cuRAND, cuSPARSE, cuSOLVER and cuDNN number theirs differently and
  say nothing. Libraries that each link a different runtime major, none two, are one
  library per CUDA version chosen at run time (bitsandbytes): the wheel serves the
  lowest.
* Kernel targets come from ``.nv_fatbin`` sections, from fatbin containers found in the
  other allocated, non-executable data sections (``.rodata``, ``.data``: CUPTI, cuFFT;
  docs/facts.md section 1.11), from standalone ``.cubin`` members
  (ELF, ``EM_CUDA``) and ``.fatbin`` members; a PTX target's driver floor is its ISA's
  (:func:`resolver_hook.portable.cuda.ptx_isa_cuda`), a SASS target's its runtime's, kept
  per target in :attr:`WheelReport.floors`.
* ROCm libraries (``libamdhip64``, ``librocm*``) in NEEDED and the gfx targets of a
  ``.hip_fatbin`` section are reported (:mod:`resolver_hook.binaries.rocm`).
* ``libtorch*.so`` / ``libc10*.so`` -> the extension is bound to the torch build it was
  compiled against: the version comes from the wheel's own ``Requires-Dist`` on torch
  (any range: ``torch==2.13.*``, ``torch>=2.11,<2.13``), else from the local version
  label (:mod:`resolver_hook.binaries.locallabel`), else the coupling is reported
  unpinned (``torch``).

Hostile input is bounded: members declaring more than ``max_member_size`` bytes, or
compressing better than ``MAX_COMPRESSION_RATIO``:1, are refused, and the bytes actually
decompressed per member are counted against a budget, so a lying zip header cannot
make the scan read (or allocate) without limit.
"""

from __future__ import annotations

import bisect
import email.parser
import email.policy
import functools
import re
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from resolver_hook.binaries.elf import ByteSource, BytesSource, ElfError, Section, is_elf, read_elf
from resolver_hook.binaries.fatbin import (
    CUBIN_TKINFO,
    MAX_TKINFO_BYTES,
    Container,
    FatbinEntry,
    FatbinError,
    cubin_target,
    find_fatbins,
    is_fatbin,
    read_fatbin,
)
from resolver_hook.binaries.locallabel import LabelFacts, parse_local_label
from resolver_hook.binaries.rocm import (
    HIP_FATBIN,
    BundleError,
    RocmCode,
    is_rocm_library,
    read_offload_bundles,
)
from resolver_hook.errors import OperationalError
from resolver_hook.ground.fs import sha256_file
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.limits import (
    MAX_ARCHIVE_MEMBERS,
    MAX_COMPRESSION_RATIO,
    MAX_MEMBER_BYTES,
    parse_wheel_name,
)
from resolver_hook.portable.cuda import TEGRA_CCS, describe_cc, parse_cc, parse_target, ptx_isa_cuda

__all__ = [
    "DEFAULT_MAX_MEMBER_SIZE",
    "ZIP_ERRORS",
    "ObjectReport",
    "ScanError",
    "WheelReport",
    "cuda_runtime_major",
    "metadata_headers",
    "scan_wheel",
    "sort_targets",
]

# Called with (members done, members in all, compressed bytes done).
Progress = Callable[[int, int, int], None]

DEFAULT_MAX_MEMBER_SIZE = MAX_MEMBER_BYTES  # libtorch_cuda.so is ~1.5 GB uncompressed
EM_CUDA = 190  # /usr/include/elf.h
_RATIO_MIN_SIZE = 8 << 20  # small members may compress well and harm nobody
_IN_MEMORY = 32 << 20  # members up to this size are read once, into memory
_CHUNK = 4 << 20
_WINDOW = 4 << 20
_PREFIX_KEEP = 16 << 20  # .dynstr and friends sit near the start; keep it across rewinds
_MAX_METADATA = 16 << 20
_NV_FATBIN = ".nv_fatbin"

# The soname major, also of auditwheel's renamed copies (``libcudart-53d54daa.so.12.6.68``)
# and of CUDA 11's ``libcudart.so.11.0``.
_CUDA_RUNTIME_LIB = re.compile(
    r"^lib(?:cudart|cublas|cublasLt|nvrtc|nvJitLink|cupti)(?:-[0-9a-f]{8})?\.so\.(\d+)(?:\.\d+)*$"
)
# Objects named in one note before "and N more": a wheel may hold 16,000 cubins.
_NOTE_EXAMPLES = 3
_TORCH_LIB = re.compile(r"^lib(?:torch|c10)[A-Za-z0-9_]*\.so")
_METADATA = re.compile(r"^[^/]+\.dist-info/METADATA$")
# What zipfile raises for a damaged or unreadable archive or member: garbage deflate data
# (zlib.error), a compression method it lacks (NotImplementedError), an encrypted member
# (RuntimeError), besides the I/O and format errors.
ZIP_ERRORS = (
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    NotImplementedError,
    RuntimeError,
)


class ScanError(OperationalError):
    """A wheel could not be scanned (not a zip, corrupt member, refused as a bomb)."""


@valueclass
class ObjectReport:
    """One ELF object inside a wheel."""

    path: str
    machine: str
    bits: int
    needed: tuple[str, ...]
    targets: tuple[str, ...]
    cuda_runtime: int | None
    torch_linked: bool
    ptx_isa: tuple[int, int] | None = None
    """Newest PTX ISA among the object's PTX entries (9.0 = CUDA 13.0's), if any."""
    kind: str = "elf"
    """``elf`` (a host object), ``cubin`` (an ``EM_CUDA`` ELF) or ``fatbin`` (a bare fat
    binary)."""
    rocm_targets: tuple[str, ...] = ()
    """AMD GPU processors of its ``.hip_fatbin`` (``gfx942``)."""

    @property
    def device_code(self) -> bool:
        """A standalone cubin or fatbin: GPU code, no host CPU."""
        return self.kind != "elf"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "machine": self.machine,
            "bits": self.bits,
            "needed": list(self.needed),
            "targets": list(self.targets),
            "cuda_runtime": self.cuda_runtime,
            "torch_linked": self.torch_linked,
            "ptx_isa": "{}.{}".format(*self.ptx_isa) if self.ptx_isa else None,
            "rocm_targets": list(self.rocm_targets),
        }


@valueclass
class WheelReport:
    """What a wheel needs, read from its name, metadata and binaries."""

    filename: str
    name: str
    version: str
    tags: tuple[str, ...]
    sha256: str
    size: int
    objects: tuple[ObjectReport, ...]
    cuda: str | None
    """PEP 440 specifier on the driver's CUDA version (``>=13.0``), if a runtime is linked."""
    gpu: tuple[str, ...]
    """Kernel targets over all objects, ordered by SM number (see :func:`sort_targets`)."""
    requires: tuple[str, ...]
    """Couplings to other distributions, as PEP 508 strings (``torch==2.13.*``)."""
    notes: tuple[str, ...] = field(default=())
    floors: tuple[tuple[str, str], ...] = ()
    """Driver floor per kernel target (``("sm_89", ">=12.0")``, ``("compute_89",
    ">=12.9")``), in :attr:`gpu` order: SASS needs its library's runtime, PTX also its
    ISA's CUDA. Empty when no runtime, PTX ISA or label gives one."""
    rocm: tuple[str, ...] = ()
    """AMD GPU processors over all objects (``gfx90a``, ``gfx942``)."""
    rocm_libraries: tuple[str, ...] = ()
    """ROCm libraries in NEEDED (``libamdhip64.so.7``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "filename": self.filename,
            "name": self.name,
            "version": self.version,
            "tags": list(self.tags),
            "sha256": self.sha256,
            "size": self.size,
            "cuda": self.cuda,
            "gpu": list(self.gpu),
            "cuda_floors": dict(self.floors),
            "rocm": list(self.rocm),
            "rocm_libraries": list(self.rocm_libraries),
            "requires": list(self.requires),
            "objects": [obj.to_dict() for obj in self.objects],
            "notes": list(self.notes),
        }


def sort_targets(targets: Iterable[str]) -> tuple[str, ...]:
    """Unique targets, validated and ordered by the kernel-target algebra (SM number first).

    Raises :class:`ScanError` for a name the kernel-target algebra does not know (an
    architecture number nvcc never produced means a corrupt fatbin entry).
    """
    parsed = set()
    for text in targets:
        try:
            parsed.add(parse_target(text))
        except ValueError as exc:
            raise ScanError(f"unrecognised kernel target in fatbin: {exc}") from None
    return tuple(str(t) for t in sorted(parsed))


class _Budget:
    """Counts decompressed bytes of one member; refuses past the limit."""

    def __init__(self, limit: int, member: str) -> None:
        self.limit = limit
        self.used = 0
        self.member = member

    def spend(self, count: int) -> None:
        self.used += count
        if self.used > self.limit:
            raise ScanError(
                f"{self.member}: decompressed more than {self.limit} bytes while reading it; "
                "refusing (corrupt or a zip bomb)"
            )


class _MemberSource:
    """A :class:`~resolver_hook.binaries.elf.ByteSource` over a zip member, streamed.

    Forward reads decompress and discard; a read behind the current position restarts
    decompression, except for the first ``_PREFIX_KEEP`` bytes and the last ``_WINDOW``
    bytes read, which are kept. Memory stays near prefix + window + the largest single
    region asked for (capped by the ELF reader).
    """

    def __init__(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> None:
        self._zf = zf
        self._info = info
        self._budget = budget
        self._stream: Any = None
        self._pos = 0
        self._prefix = bytearray()
        self._win_start = 0
        self._win = bytearray()

    @property
    def size(self) -> int:
        return self._info.file_size

    def _restart(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = self._zf.open(self._info)
        self._pos = 0
        self._win_start = 0
        self._win = bytearray()

    def read_at(self, offset: int, length: int) -> bytes:
        end = offset + length
        if end <= len(self._prefix):
            return bytes(self._prefix[offset:end])
        if self._win_start <= offset and end <= self._pos:
            return bytes(self._win[offset - self._win_start : end - self._win_start])
        if self._stream is None or offset < self._win_start:
            self._restart()
        while self._pos < end:
            chunk = self._stream.read(_CHUNK)
            if not chunk:
                break
            self._budget.spend(len(chunk))
            if len(self._prefix) == self._pos < _PREFIX_KEEP:
                self._prefix += chunk[: _PREFIX_KEEP - self._pos]
            self._win += chunk
            self._pos += len(chunk)
            drop_to = min(offset, self._pos - _WINDOW)
            if drop_to > self._win_start:
                del self._win[: drop_to - self._win_start]
                self._win_start = drop_to
        return bytes(self._win[offset - self._win_start : end - self._win_start])

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


def _hash_file(path: Path, out: dict[str, Any]) -> None:
    try:
        out["sha256"] = sha256_file(path)
    except OSError as exc:
        out["error"] = exc


def _scan_object(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, *, max_member_size: int
) -> ObjectReport:
    name = info.filename
    if info.file_size > max_member_size:
        raise ScanError(
            f"{name}: declares {info.file_size} bytes, more than the {max_member_size} allowed"
        )
    if info.file_size >= _RATIO_MIN_SIZE and info.file_size > MAX_COMPRESSION_RATIO * max(
        info.compress_size, 1
    ):
        raise ScanError(
            f"{name}: compresses {info.file_size // max(info.compress_size, 1)}:1 "
            f"({info.compress_size} -> {info.file_size} bytes); refusing (zip bomb?)"
        )
    # Up to ~3 passes (headers at the end, then sections in order) plus slack.
    budget = _Budget(4 * info.file_size + _CHUNK, name)
    src: ByteSource
    member: _MemberSource | None = None
    if info.file_size <= _IN_MEMORY:
        with zf.open(info) as handle:
            data = handle.read(info.file_size + 1)
        budget.spend(len(data))
        if len(data) != info.file_size:
            raise ScanError(f"{name}: holds {len(data)} bytes, header says {info.file_size}")
        src = BytesSource(data)
    else:
        src = member = _MemberSource(zf, info, budget)

    visitors: dict[str, Callable[[ByteSource, Section], Any]] = {
        _NV_FATBIN: lambda s, sec: read_fatbin(s, sec.offset, sec.size, little_endian=little),
        CUBIN_TKINFO: lambda s, sec: s.read_at(sec.offset, min(sec.size, MAX_TKINFO_BYTES)),
        HIP_FATBIN: lambda s, sec: read_offload_bundles(s, sec.offset, sec.size),
    }
    try:
        head = src.read_at(0, 6)
        little = len(head) < 6 or head[5] != 2
        if is_fatbin(head):
            entries = read_fatbin(src, 0, src.size)
            return _device_code(name, "fatbin", entries, ())
        # Containers outside .nv_fatbin (docs/facts.md 1.11): searched for over the
        # whole object first, in the pass that decompresses a streamed member up to its
        # section headers anyway; which of them count is decided by the section table.
        searched = find_fatbins(src, 0, src.size, little_endian=little, accept=_known_targets)
        obj, found = read_elf(src, visitors=visitors)
        if obj.e_machine == EM_CUDA:
            target = cubin_target(obj.flags, obj.abi_version, found.get(CUBIN_TKINFO))
            return _device_code(name, "cubin", (), (target,))
    except (ElfError, FatbinError, BundleError) as exc:
        raise ScanError(f"{name}: {exc.message}") from None
    finally:
        if member is not None:
            member.close()
    # .nv_fatbin, read strictly, then the containers found in the other data sections.
    code: list[FatbinEntry] = [
        *found.get(_NV_FATBIN, ()),
        *(e for c in _in_data(searched.containers, obj.sections) for e in c.entries),
    ]
    targets = sort_targets(e.target for e in code if e.target is not None)
    majors = [m for lib in obj.needed if (m := cuda_runtime_major(lib)) is not None]
    rocm: RocmCode | None = found.get(HIP_FATBIN)
    return ObjectReport(
        path=name,
        machine=obj.machine,
        bits=obj.bits,
        needed=obj.needed,
        targets=targets,
        cuda_runtime=max(majors) if majors else None,
        torch_linked=any(_TORCH_LIB.match(lib) for lib in obj.needed),
        ptx_isa=max((e.version for e in code if e.is_ptx), default=None),
        rocm_targets=rocm.targets if rocm is not None else (),
    )


def _in_data(containers: Sequence[Container], sections: Iterable[Section]) -> list[Container]:
    """The containers that lie wholly inside one allocated, non-executable ``PROGBITS``
    section other than ``.nv_fatbin`` (read on its own): ``.rodata``, ``.data``,
    ``__nv_relfatbin``, ... (docs/facts.md section 1.11). A match in code, in a section
    not loaded at run time, or across a section's end is not device code the library
    can load."""
    spans = sorted(
        (sec.offset, sec.offset + sec.size)
        for sec in sections
        if sec.loaded_data and sec.name != _NV_FATBIN and sec.size > 0
    )
    # Overlapping or touching sections merged, so the lookup below is one bisection.
    starts: list[int] = []
    stops: list[int] = []
    for start, stop in spans:
        if stops and start <= stops[-1]:
            stops[-1] = max(stops[-1], stop)
        else:
            starts.append(start)
            stops.append(stop)
    kept = []
    for container in containers:
        i = bisect.bisect_right(starts, container.offset) - 1
        if i >= 0 and container.offset + container.size <= stops[i]:
            kept.append(container)
    return kept


def _known_targets(entries: tuple[FatbinEntry, ...]) -> bool:
    """Whether a container found by searching names only kernel targets nvcc can
    produce: a structurally valid container of nonsense architectures in random data is
    a false match, not a reason to refuse the wheel. Entries of kinds other than PTX and
    SASS name no target and are let through (cuFFT 11.2's kind-8 entries, its LTO code,
    fill 5,965 of its containers)."""
    return all(_known_target(e.target) for e in entries if e.target is not None)


@functools.lru_cache(maxsize=1024)
def _known_target(target: str) -> bool:
    try:
        parse_target(target)
    except ValueError:
        return False
    return True


def _device_code(
    name: str, kind: str, entries: tuple[FatbinEntry, ...], cubin: tuple[str, ...]
) -> ObjectReport:
    """The report of a standalone cubin or fatbin member."""
    targets = sort_targets([*cubin, *(e.target for e in entries if e.target is not None)])
    return ObjectReport(
        path=name,
        kind=kind,
        machine="cuda",
        bits=64,
        needed=(),
        targets=targets,
        cuda_runtime=None,
        torch_linked=False,
        ptx_isa=max((e.version for e in entries if e.is_ptx), default=None),
    )


def cuda_runtime_major(soname: str) -> int | None:
    """13 for ``libcudart.so.13`` (and the other CUDA libraries numbered by toolkit major)."""
    match = _CUDA_RUNTIME_LIB.match(soname)
    return int(match.group(1)) if match else None


def _spec_text(req: Requirement) -> str:
    """The requirement's specifiers, lower bounds first (``>=2.11,<2.13``)."""

    def key(spec: Any) -> tuple[int, str]:
        return (0 if spec.operator.startswith((">", "=", "~")) else 1, str(spec))

    return ",".join(str(spec) for spec in sorted(req.specifier, key=key))


def metadata_headers(raw: bytes) -> email.message.Message:
    """The header fields of a core metadata file (``METADATA``, ``PKG-INFO``), read with
    the compat32 policy the format is written for."""
    return email.parser.BytesParser(policy=email.policy.compat32).parsebytes(raw, headersonly=True)


def _torch_from_metadata(zf: zipfile.ZipFile, names: list[str]) -> str | None:
    """``torch`` with the wheel's own ``Requires-Dist`` range on it (``torch==2.13.*``,
    ``torch>=2.11,<2.13``), if the wheel states one."""
    for member in names:
        if not _METADATA.match(member):
            continue
        info = zf.getinfo(member)
        if info.file_size > _MAX_METADATA:
            raise ScanError(f"{member}: {info.file_size} bytes is too large for METADATA")
        with zf.open(info) as handle:
            raw = handle.read(_MAX_METADATA + 1)
        for value in metadata_headers(raw).get_all("Requires-Dist") or ():
            try:
                req = Requirement(str(value))
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) != "torch":
                continue
            if req.marker is not None and "extra" in str(req.marker):
                continue
            if len(req.specifier):
                return f"torch{_spec_text(req)}"
        return None
    return None


def _some(paths: Sequence[str]) -> str:
    """``a, b, c and 15967 more``: a bounded list for a note."""
    shown = ", ".join(paths[:_NOTE_EXAMPLES])
    more = len(paths) - _NOTE_EXAMPLES
    return f"{shown} and {more} more" if more > 0 else shown


def _check_platform(tags: Iterable[str], objects: Iterable[ObjectReport]) -> list[str]:
    platforms = {tag.rsplit("-", 1)[-1] for tag in tags}
    objects = list(objects)
    if platforms & {"any"}:
        # The GPU code first, then the binaries of each CPU.
        kinds = {"CUDA": [o.path for o in objects if o.device_code]}
        for machine in sorted({o.machine for o in objects if not o.device_code}):
            kinds[machine] = [o.path for o in objects if not o.device_code and o.machine == machine]
        return [
            f"{len(paths)} {kind} binar{'y' if len(paths) == 1 else 'ies'}"
            + (" (cubin/fatbin: GPU code, no host CPU)" if kind == "CUDA" else "")
            + f" in a wheel tagged 'any': {_some(paths)}"
            for kind, paths in kinds.items()
            if paths
        ]
    notes = []
    for obj in objects:
        if obj.machine == "cuda" or obj.device_code:
            continue
        if not any(plat.endswith(obj.machine) for plat in platforms):
            notes.append(
                f"{obj.path} is a {obj.machine} binary but the wheel is tagged for "
                f"{', '.join(sorted(platforms))}"
            )
    return notes


def _cuda_from_ptx(
    objects: Iterable[ObjectReport], notes: list[str], runtime: int | None = None
) -> str | None:
    """The driver floor from the newest PTX ISA, never below the linked ``runtime`` major.

    The PTX ISA version names the toolkit that compiled the object (:func:`ptx_isa_cuda`),
    and PTX needs a driver at least that new to JIT (docs/facts.md section 1), so the
    floor is the higher of the runtime's (``runtime``.0, minor-version compatibility)
    and the PTX ISA's. SASS beside the PTX runs on older drivers of the same major; that
    is noted, because only the GPUs that PTX alone reaches need the higher floor.
    None when no object carries PTX.
    """
    objects = list(objects)
    isas = [o.ptx_isa for o in objects if o.ptx_isa is not None]
    if not isas:
        return None
    isa = max(isas)
    (major, minor), exact = ptx_isa_cuda(isa)
    isa_words = f"PTX ISA {isa[0]}.{isa[1]}"
    if not exact:
        notes.append(
            f"{isa_words} is not in this tool's table; assuming it needs at least "
            f"CUDA {major}.{minor} (a guess: the newest CUDA the table knows)"
        )
    floor = max((major, minor), (runtime, 0)) if runtime is not None else (major, minor)
    if runtime is not None and floor == (runtime, 0):
        return f">={runtime}.0"  # the runtime already asks as much: nothing to add
    sass = sorted({t for o in objects for t in o.targets if not t.startswith("compute_")})
    where = f"links CUDA runtime {runtime}" if runtime is not None else "no CUDA runtime in NEEDED"
    origin = (
        f"{isa_words} comes from CUDA {major}.{minor}: JIT-compiling that PTX needs a "
        f"driver for CUDA >= {major}.{minor}"
        if exact
        else f"{isa_words} is newer than this tool's table: JIT-compiling that PTX needs a "
        f"driver for CUDA >= {major}.{minor} at the least (the guess above)"
    )
    notes.append(
        f"{where}; {origin}"
        + (f" (the SASS targets alone would run on CUDA >= {major}.0)" if sass else "")
    )
    return ">={}.{}".format(*floor)


def _read_members(
    path: Path, *, max_member_size: int, progress: Progress | None = None
) -> tuple[list[ObjectReport], str | None, set[str]]:
    """The ELF objects, the METADATA torch pin, and the base names of every member."""
    objects: list[ObjectReport] = []
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_ARCHIVE_MEMBERS:
            raise ScanError(
                f"{path.name}: {len(infos)} members, more than the {MAX_ARCHIVE_MEMBERS} allowed"
            )
        shipped = {PurePosixPath(i.filename).name for i in infos if not i.is_dir()}
        done = 0
        for i, info in enumerate(infos):
            done += info.compress_size
            if progress is not None:
                progress(i + 1, len(infos), done)
            if info.is_dir() or info.file_size < 16:
                continue
            with zf.open(info) as handle:
                head = handle.read(4)
            if is_elf(head) or is_fatbin(head):
                objects.append(_scan_object(zf, info, max_member_size=max_member_size))
        return objects, _torch_from_metadata(zf, zf.namelist()), shipped


def _couplings(
    name: str,
    *,
    objects: Iterable[ObjectReport],
    shipped: set[str],
    torch_pin: str | None,
    label: LabelFacts | None,
    notes: list[str],
) -> list[str]:
    """The torch requirement of a wheel whose objects link libtorch, if any."""
    requires: list[str] = []
    # A package is never coupled to itself: torch's own wheel links libtorch, and a
    # wheel that ships the torch libraries it links (vendored) needs no torch install.
    torch_libs = {lib for o in objects for lib in o.needed if _TORCH_LIB.match(lib)}
    itself = name == "torch"
    if torch_libs and (itself or torch_libs <= shipped):
        why = "this is torch itself" if itself else "this wheel ships them"
        notes.append(f"links {', '.join(sorted(torch_libs))}: {why}, so no torch coupling")
    elif torch_libs:
        if torch_pin is not None:
            requires.append(torch_pin)
        elif label is not None and label.torch is not None:
            requires.append(f"torch{label.torch}")
        else:
            requires.append("torch")
            notes.append("links libtorch but neither METADATA nor the version label pins torch")
    return requires


def scan_wheel(
    path: str | Path,
    *,
    max_member_size: int = DEFAULT_MAX_MEMBER_SIZE,
    progress: Progress | None = None,
) -> WheelReport:
    """Scan the wheel at ``path``. Raises :class:`ScanError` naming the file on failure.

    ``progress(members_done, members, bytes_done)`` is called as members are read."""
    path = Path(path)
    filename = path.name
    try:
        dist, version, _build, tag_set = parse_wheel_name(filename)
    except ValueError as exc:  # InvalidWheelFilename, InvalidVersion
        raise ScanError(f"{filename[:200]}: not a wheel file name ({exc})") from None
    hashed: dict[str, Any] = {}
    hasher = threading.Thread(target=_hash_file, args=(path, hashed), daemon=True)
    try:
        size = path.stat().st_size
        hasher.start()
        objects, torch_pin, shipped = _read_members(
            path, max_member_size=max_member_size, progress=progress
        )
    except ScanError as exc:
        raise ScanError(f"{filename}: {exc.message}") from None
    except ZIP_ERRORS as exc:
        raise ScanError(f"{filename}: cannot read the wheel: {exc}") from None
    finally:
        if hasher.is_alive():
            hasher.join()
    if "error" in hashed:
        raise ScanError(f"{filename}: cannot read the wheel: {hashed['error']}")

    tags = tuple(sorted(str(tag) for tag in tag_set))
    notes = _check_platform(tags, objects)
    runtime = _wheel_runtime(objects, notes)
    cuda = _cuda_from_ptx(objects, notes, runtime)
    if cuda is None and runtime is not None:
        cuda = f">={runtime}.0"
    label = parse_local_label(version.local) if version.local else None
    label_floor = None
    if label is not None:
        notes.extend(label.notes)
        if cuda is None and label.cuda is not None and any(o.targets for o in objects):
            # Kernels but no runtime in NEEDED (static cudart): trust the label.
            cuda = label_floor = label.cuda_lower_bound
    gpu = sort_targets(t for o in objects for t in o.targets)
    floors = _target_floors(objects, gpu, runtime, label_floor)
    notes.extend(_rocm_notes(objects, cuda))
    notes.extend(_jetson_notes(tags, gpu))
    requires = _couplings(
        str(canonicalize_name(dist)),
        objects=objects,
        shipped=shipped,
        torch_pin=torch_pin,
        label=label,
        notes=notes,
    )
    return WheelReport(
        filename=filename,
        name=str(canonicalize_name(dist)),
        version=str(version),
        tags=tags,
        sha256=hashed["sha256"],
        size=size,
        objects=tuple(objects),
        cuda=cuda,
        gpu=gpu,
        requires=tuple(requires),
        notes=tuple(notes),
        floors=floors,
        rocm=tuple(dict.fromkeys(t for o in objects for t in o.rocm_targets)),
        rocm_libraries=_rocm_libraries(objects),
    )


def _wheel_runtime(objects: Sequence[ObjectReport], notes: list[str]) -> int | None:
    """The CUDA runtime major the wheel's floor rests on.

    One major: that one. Several, each library linking one (bitsandbytes ships
    ``libbitsandbytes_cuda118.so`` ... ``_cuda130.so`` and loads the one matching the
    machine): the lowest, which the oldest driver can load. A library that links two
    majors at once needs the higher."""
    by_major: dict[int, list[str]] = {}
    mixed = []
    for obj in objects:
        linked = {m for lib in obj.needed if (m := cuda_runtime_major(lib)) is not None}
        for major in linked:
            by_major.setdefault(major, []).append(obj.path)
        if len(linked) > 1:
            mixed.append(obj.path)
    if not by_major:
        return None
    majors = sorted(by_major)
    if len(majors) == 1:
        return majors[0]
    if mixed:
        notes.append(
            f"links CUDA runtimes of several majors: {majors} ({_some(mixed)} links more "
            f"than one, so CUDA {majors[-1]} is needed)"
        )
        return majors[-1]
    sets = "; ".join(f"CUDA {m}: {_some(by_major[m])}" for m in majors)
    notes.append(
        f"one library per CUDA runtime, chosen at run time ({sets}): the wheel serves the "
        f"lowest, CUDA >= {majors[0]}.0, and each library needs its own runtime's driver"
    )
    return majors[0]


def _target_floors(
    objects: Sequence[ObjectReport],
    gpu: Sequence[str],
    runtime: int | None,
    label_floor: str | None,
) -> tuple[tuple[str, str], ...]:
    """The driver floor of each kernel target: SASS needs the runtime of the library it
    is in (or the wheel's, for a library or cubin that links none), PTX also its ISA's
    CUDA; a target in several libraries takes the lowest. Empty when nothing gives a
    floor, or when only the version label does (no per-target knowledge)."""
    if label_floor is not None:
        return ()
    best: dict[str, tuple[int, int]] = {}
    for obj in objects:
        own = obj.cuda_runtime if obj.cuda_runtime is not None else runtime
        base = (own, 0) if own is not None else None
        for target in obj.targets:
            floor = base
            if target.startswith("compute_") and obj.ptx_isa is not None:
                isa_floor, _exact = ptx_isa_cuda(obj.ptx_isa)
                floor = max(floor, isa_floor) if floor is not None else isa_floor
            if floor is not None and (target not in best or floor < best[target]):
                best[target] = floor
    return tuple((t, ">={}.{}".format(*best[t])) for t in gpu if t in best)


def _jetson_notes(tags: Iterable[str], gpu: Sequence[str]) -> list[str]:
    """An aarch64 wheel with SASS for a Tegra GPU was built for Jetson: say what a scan
    can claim of it (docs/facts.md section 1.12) and what it cannot."""
    if not any(tag.endswith("aarch64") for tag in tags):
        return []
    # Tegra CCs only: Thor's 11.0 uses the server-Arm (SBSA) builds (docs/facts.md 1.2).
    tegra = [
        t for t in gpu if (k := parse_target(t)).kind == "sass" and (k.major, k.minor) in TEGRA_CCS
    ]
    if not tegra:
        return []
    named = ", ".join(describe_cc(parse_cc(t)) for t in tegra)
    return [
        f"Jetson-capable: SASS for {named}, which runs on that Jetson GPU only; which "
        "L4T (JetPack) releases the wheel's host side supports is not in the binary, so "
        'no l4t range is written: add one (l4t = ">=36,<37" for JetPack 6) if the '
        "build is meant for JetPack 6 or older"
    ]


def _rocm_libraries(objects: Iterable[ObjectReport]) -> tuple[str, ...]:
    return tuple(sorted({lib for o in objects for lib in o.needed if is_rocm_library(lib)}))


def _rocm_notes(objects: Sequence[ObjectReport], cuda: str | None) -> list[str]:
    """What the wheel carries for AMD GPUs; said once, with CUDA beside it if both."""
    libs = _rocm_libraries(objects)
    gfx = tuple(dict.fromkeys(t for o in objects for t in o.rocm_targets))
    if not libs and not gfx:
        return []
    users = [o.path for o in objects if o.rocm_targets or any(is_rocm_library(x) for x in o.needed)]
    what = ", ".join(
        part
        for part in (
            f"links {', '.join(libs)}" if libs else "",
            f"AMD GPU code for {', '.join(gfx)}" if gfx else "",
        )
        if part
    )
    cuda_side = any(o.targets or o.cuda_runtime is not None for o in objects) or cuda is not None
    both = (
        "; the wheel carries both CUDA and ROCm libraries: its cuda and gpu fields describe "
        "the CUDA side only"
        if cuda_side
        else "; ROCm only: no CUDA requirement is derived from it"
    )
    return [f"ROCm: {_some(users)} ({what}){both}"]
