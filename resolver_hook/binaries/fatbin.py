"""Read the kernel targets out of a CUDA fat binary (the ``.nv_fatbin`` ELF section).

Hand-written because no Python library reads this container (NVIDIA's cuobjdump is a
toolkit binary, not on users' machines), and bounded like the ELF reader.

NVIDIA does not document the container; the layout below was confirmed against objects
built with nvcc 13.0 (``scripts/make_cuda_fixtures.sh``) and agrees with public
reverse-engineered descriptions (e.g. the fatbin notes in GrigoryEvko/nvopen-tools).
All fields are little-endian on every platform CUDA ships for; we use the byte order
of the enclosing ELF object anyway.

Most objects keep their containers in ``.nv_fatbin``; some keep them among other data
(CUPTI in ``.rodata``, cuFFT in ``.data``): :func:`find_fatbins` searches a region for
them by magic number, bounded, skipping what does not parse (docs/facts.md 1.11).

A section holds one or more *containers*, back to back (zero padding allowed between)::

    container header (16 bytes)
      u32 magic        0xBA55ED50
      u16 version      1
      u16 header_size  16: offset of the first entry
      u64 fat_size     bytes of entries that follow the header

    entry header (header_size bytes, 64 or more; newer nvcc writes 80/96/112)
      u16 kind         1 = PTX, 2 = ELF (SASS cubin)
      u16 version      0x0101
      u32 header_size  offset of the payload from the entry start
      u64 payload_size bytes after the header, up to the next entry
      ...
      u16 minor, u16 major at 24: PTX ISA version for PTX entries (9.0 = CUDA 13.0)
      u32 arch         at 28: SM number (90, 100, 120, ...)
      u64 flags        at 40

Flag bits, found by compiling every suffix with nvcc 13.0 and comparing:

    0x000001  64-bit device code        0x000010  Linux host
    0x002000  payload LZ4-compressed    0x008000  payload zstd-compressed
    0x100000  arch-specific ("a": sm_90a, compute_100a)
    0x200000  family-specific ("f": sm_100f, compute_120f)

The cubin's own ELF ``e_flags`` do *not* distinguish ``sm_100f`` from ``sm_100``, and
PTX payloads are usually compressed (zstd is not in the standard library), so the entry
flags are the source of the suffix. When a PTX payload is stored uncompressed its
``.target`` line is read too and must agree.

A standalone cubin (a ``.cubin`` member: an ELF object with ``e_machine`` 190,
``EM_CUDA``) is one SASS entry without the container. Its SM number is in ``e_flags``:
bits 0-7 up to ELF ABI version 7 (``EF_CUDA_SM``), bits 8-15 from ABI version 8 (what
nvcc 13 writes: ``0x06006402`` for sm_100, ``0x06005704`` for sm_87). The suffix is not
in ``e_flags`` (sm_100, sm_100a and sm_100f cubins carry the same value); ptxas records
its command line in the ``.note.nv.tkinfo`` note (``-arch sm_100a -m 64``), and a build
with ``arch=compute_100f,code=sm_100`` says ``-arch sm_100f`` there, which is the name
the fatbin entry flags give the same code. Observed on nvcc 13.0 output
(scripts/make_cuda_fixtures.sh); without that note the target is the plain ``sm_XY``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from resolver_hook.binaries.elf import ByteSource, BytesSource, section_reader
from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_FATBIN_ENTRIES, MAX_FATBIN_FALSE_STARTS

__all__ = [
    "CUBIN_TKINFO",
    "FATBIN_MAGIC",
    "Container",
    "EntryBudget",
    "FatbinEntry",
    "FatbinError",
    "FatbinLimitError",
    "FoundFatbins",
    "cubin_target",
    "find_fatbins",
    "is_fatbin",
    "parse_fatbin",
    "read_fatbin",
]

FATBIN_MAGIC = 0xBA55ED50

KIND_PTX = 1
KIND_ELF = 2

_FLAG_COMPRESSED_LZ4 = 0x2000
_FLAG_COMPRESSED_ZSTD = 0x8000
_FLAG_ARCH_SPECIFIC = 0x100000
_FLAG_FAMILY_SPECIFIC = 0x200000

_CONTAINER_HEADER = 16
_ENTRY_BASE = 64
# An entry header is 64-112 bytes with nvcc 11-13; anything past this is corruption.
_MAX_ENTRY_HEADER = 4096
# Caps the work a hostile section can cause (libcublasLt.so.13 has ~5,400 entries).
_PTX_PEEK = 4096
_ZERO_SCAN_CHUNK = 1 << 16
# Bytes read at a time while searching a data section for containers.
_SEARCH_CHUNK = 1 << 20
_PTX_TARGET = re.compile(rb"^\s*\.target\s+(sm_\d+[af]?)", re.MULTILINE)
_TKINFO_ARCH = re.compile(rb"-arch[= ]+sm_(\d+)([af]?)\b")

# e_flags bits of an arch-specific cubin (sm_90a, sm_100a): LLVM's BinaryFormat/ELF.h,
# "NVPTX specific e_flags" (docs/facts.md section 1.12).
_EF_CUDA_ACCELERATORS = 0x8  # EI_ABIVERSION 8 (the SM in bits 8-15)
_EF_CUDA_ACCELERATORS_V1 = 0x800  # EI_ABIVERSION 7 (the SM in bits 0-7)

CUBIN_TKINFO = ".note.nv.tkinfo"
"""The cubin note section whose ptxas command line names the target with its suffix."""
MAX_TKINFO_BYTES = 4096


class FatbinError(OperationalError):
    """A ``.nv_fatbin`` section is malformed (bad magic, sizes past its end, ...)."""


class FatbinLimitError(FatbinError):
    """An object asks for more work than the limits allow (too many entries or false
    starts): refused, never skipped as a false match."""


class EntryBudget:
    """The entry headers one object may make us read, over all its containers
    (:data:`~resolver_hook.limits.MAX_FATBIN_ENTRIES`), those of candidates that did not
    parse included, so no layout of fake containers makes the search quadratic."""

    def __init__(self, limit: int = MAX_FATBIN_ENTRIES) -> None:
        self.limit = limit
        self.used = 0

    def take(self) -> None:
        self.used += 1
        if self.used > self.limit:
            raise FatbinLimitError(f"more than {self.limit} fatbin entries")


@valueclass
class FatbinEntry:
    """One piece of device code in a fat binary."""

    kind: int
    arch: int
    flags: int
    version: tuple[int, int]
    offset: int
    payload_size: int

    @property
    def is_ptx(self) -> bool:
        return self.kind == KIND_PTX

    @property
    def compressed(self) -> bool:
        return bool(self.flags & (_FLAG_COMPRESSED_LZ4 | _FLAG_COMPRESSED_ZSTD))

    @property
    def suffix(self) -> str:
        """``a`` (arch-specific), ``f`` (family-specific) or ``""``."""
        if self.flags & _FLAG_ARCH_SPECIFIC:
            return "a"
        if self.flags & _FLAG_FAMILY_SPECIFIC:
            return "f"
        return ""

    @property
    def target(self) -> str | None:
        """``sm_90a`` / ``compute_120`` style name; ``None`` for kinds we do not know."""
        if self.kind == KIND_ELF:
            return f"sm_{self.arch}{self.suffix}"
        if self.kind == KIND_PTX:
            return f"compute_{self.arch}{self.suffix}"
        return None


def is_fatbin(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts like a fat binary container."""
    return len(head) >= 4 and struct.unpack_from("<I", head)[0] == FATBIN_MAGIC


def cubin_target(flags: int, abi_version: int, tkinfo: bytes | None) -> str:
    """The SASS target of a standalone cubin: ``e_flags`` give the SM, ``tkinfo`` (the
    ``.note.nv.tkinfo`` bytes, if any) the suffix. Raises :class:`FatbinError` when the
    two disagree on the SM number.

    Without the note (a cubin from another assembler), the arch-specific ``a`` comes from
    ``e_flags``: ``EF_CUDA_ACCELERATORS`` (0x8) under ABI version 8, ``EF_CUDA_ACCELERATORS_V1``
    (0x800) under 7 (LLVM's ``BinaryFormat/ELF.h``, docs/facts.md section 1.12). ptxas 13
    leaves the bit clear even for sm_100a, so a clear bit says nothing: the note decides
    where there is one."""
    v2 = abi_version >= 8
    arch = (flags >> 8) & 0xFF if v2 else flags & 0xFF
    suffix = "a" if flags & (_EF_CUDA_ACCELERATORS if v2 else _EF_CUDA_ACCELERATORS_V1) else ""
    match = _TKINFO_ARCH.search(tkinfo or b"")
    if match is not None:
        said = int(match.group(1))
        if said != arch:
            raise FatbinError(
                f"cubin e_flags {flags:#010x} say sm_{arch} but its ptxas note says sm_{said}"
            )
        suffix = match.group(2).decode("ascii")
    return f"sm_{arch}{suffix}"


def parse_fatbin(data: bytes, *, little_endian: bool = True) -> tuple[FatbinEntry, ...]:
    """Parse a fat binary held in memory (the bytes of a ``.nv_fatbin`` section)."""
    return read_fatbin(BytesSource(data), 0, len(data), little_endian=little_endian)


def read_fatbin(
    src: ByteSource,
    offset: int,
    size: int,
    *,
    little_endian: bool = True,
    budget: EntryBudget | None = None,
) -> tuple[FatbinEntry, ...]:
    """Read every entry header of the containers in ``src[offset:offset+size]``.

    Payloads are skipped (a streamed source reads forward over them), except the first
    few KiB of an uncompressed PTX payload, to check its ``.target`` line. Offsets in
    errors are relative to the start of the section.
    """
    if offset < 0 or size < 0 or offset + size > src.size:
        raise FatbinError(f"section of {size} bytes at {offset} lies outside the object")
    bo = "<" if little_endian else ">"
    end = offset + size
    pos = offset
    entries: list[FatbinEntry] = []
    budget = budget if budget is not None else EntryBudget()

    read = section_reader(src, offset, size, FatbinError)

    while pos < end:
        # Zero padding may separate containers; skip it in chunks.
        head = read(pos, min(8, end - pos), "container header")
        if not any(head):
            pos = _skip_zeros(src, pos, end)
            continue
        magic, version, header_size, fat_size = struct.unpack(
            bo + "IHHQ", read(pos, _CONTAINER_HEADER, "container header")
        )
        if magic != FATBIN_MAGIC:
            raise FatbinError(
                f"bad fatbin magic {magic:#010x} at section offset {pos - offset} "
                f"(expected {FATBIN_MAGIC:#010x})"
            )
        if version != 1:
            raise FatbinError(f"unknown fatbin container version {version} at {pos - offset}")
        if header_size < _CONTAINER_HEADER:
            raise FatbinError(f"fatbin container header size {header_size} is below 16")
        container_end = pos + header_size + fat_size
        if container_end > end:
            raise FatbinError(
                f"fatbin container at section offset {pos - offset} claims "
                f"{header_size + fat_size} bytes but only {end - pos} remain"
            )
        entry_pos = pos + header_size
        while entry_pos < container_end:
            if entry_pos + _ENTRY_BASE > container_end:
                raise FatbinError(
                    f"fatbin entry at section offset {entry_pos - offset} is cut off by the "
                    "end of its container"
                )
            budget.take()
            base = read(entry_pos, _ENTRY_BASE, "fatbin entry header")
            kind, _ver, entry_header, payload = struct.unpack_from(bo + "HHIQ", base, 0)
            minor, major, arch = struct.unpack_from(bo + "HHI", base, 24)
            (flags,) = struct.unpack_from(bo + "Q", base, 40)
            if not _ENTRY_BASE <= entry_header <= _MAX_ENTRY_HEADER:
                raise FatbinError(
                    f"fatbin entry at section offset {entry_pos - offset} has header size "
                    f"{entry_header} (expected 64..{_MAX_ENTRY_HEADER})"
                )
            payload_at = entry_pos + entry_header
            if payload_at + payload > container_end:
                raise FatbinError(
                    f"fatbin entry at section offset {entry_pos - offset} claims a "
                    f"{payload}-byte payload but its container has only "
                    f"{max(container_end - payload_at, 0)} bytes left"
                )
            entry = FatbinEntry(
                kind=kind,
                arch=arch,
                flags=flags,
                version=(major, minor),
                offset=entry_pos - offset,
                payload_size=payload,
            )
            if entry.is_ptx and not entry.compressed and payload:
                _check_ptx_target(entry, read(payload_at, min(payload, _PTX_PEEK), "PTX"))
            entries.append(entry)
            entry_pos = payload_at + payload
        pos = container_end
    return tuple(entries)


@valueclass
class Container:
    """One fatbin container found by searching: where it lies and what it holds."""

    offset: int
    size: int
    entries: tuple[FatbinEntry, ...]


@valueclass
class FoundFatbins:
    """What a search of one region found."""

    containers: tuple[Container, ...]
    false_starts: int
    """Magic numbers that started no valid container (skipped)."""


def find_fatbins(
    src: ByteSource,
    offset: int,
    size: int,
    *,
    little_endian: bool = True,
    budget: EntryBudget | None = None,
    accept: Callable[[tuple[FatbinEntry, ...]], bool] | None = None,
    false_starts: int = MAX_FATBIN_FALSE_STARTS,
) -> FoundFatbins:
    """Every fatbin container in ``src[offset:offset+size]``, found by its magic number.

    For data sections that may hold containers among other data (cuFFT keeps 17,607 of
    them in ``.data``, CUPTI three in ``.rodata``; docs/facts.md section 1.11). A match
    counts only if the whole container parses as :func:`read_fatbin` reads a
    ``.nv_fatbin`` section and ``accept`` (if given) takes its entries; anything else is
    a false start, skipped, and the search goes on one byte later. A valid container is
    skipped whole, payloads unread.

    Bounded: the region is read forward in chunks of ``_SEARCH_CHUNK`` bytes (each byte
    about once, plus the entry headers of candidates), entry headers count against
    ``budget`` whether their container parses or not, and more than ``false_starts``
    false starts raise :class:`FatbinLimitError`.
    """
    if offset < 0 or size < 0 or offset + size > src.size:
        raise FatbinError(f"region of {size} bytes at {offset} lies outside the object")
    bo = "<" if little_endian else ">"
    magic = struct.pack(bo + "I", FATBIN_MAGIC)
    budget = budget if budget is not None else EntryBudget()
    end = offset + size
    containers: list[Container] = []
    bad = 0
    pos = chunk_at = offset
    chunk = b""
    while pos < end:
        if pos < chunk_at or pos + len(magic) > chunk_at + len(chunk):
            want = min(_SEARCH_CHUNK, end - pos)
            chunk, chunk_at = src.read_at(pos, want), pos
            if len(chunk) != want:
                raise FatbinError(f"short read at offset {pos} while searching for fatbins")
        hit = chunk.find(magic, pos - chunk_at)
        if hit < 0:
            if chunk_at + len(chunk) >= end:
                break
            pos = chunk_at + len(chunk) - (len(magic) - 1)  # a magic may straddle chunks
            chunk = b""
            continue
        at = chunk_at + hit
        found = _container_at(src, at, end, bo=bo, budget=budget, accept=accept)
        if found is None:
            bad += 1
            if bad > false_starts:
                raise FatbinLimitError(
                    f"more than {false_starts} fatbin magic numbers that start no valid "
                    "container (corrupt or hostile object)"
                )
            pos = at + 1
            continue
        containers.append(Container(offset=at, size=found[1] - at, entries=found[0]))
        pos = found[1]
    return FoundFatbins(containers=tuple(containers), false_starts=bad)


def _container_at(
    src: ByteSource,
    at: int,
    end: int,
    *,
    bo: str,
    budget: EntryBudget,
    accept: Callable[[tuple[FatbinEntry, ...]], bool] | None,
) -> tuple[tuple[FatbinEntry, ...], int] | None:
    """The entries of the container at ``at`` and the offset past it, or ``None`` when
    what is there is not one (a false start)."""
    if at + _CONTAINER_HEADER + _ENTRY_BASE > end:
        return None
    head = src.read_at(at, _CONTAINER_HEADER)
    if len(head) != _CONTAINER_HEADER:
        return None
    _magic, version, header_size, fat_size = struct.unpack(bo + "IHHQ", head)
    if version != 1 or not _CONTAINER_HEADER <= header_size <= _MAX_ENTRY_HEADER:
        return None
    stop = at + header_size + fat_size
    if fat_size < _ENTRY_BASE or stop > end:
        return None
    try:
        found = read_fatbin(src, at, stop - at, little_endian=bo == "<", budget=budget)
    except FatbinLimitError:
        raise
    except FatbinError:
        return None
    if not found or (accept is not None and not accept(found)):
        return None
    return found, stop


def _skip_zeros(src: ByteSource, pos: int, end: int) -> int:
    """Return the offset of the first non-zero byte at or after ``pos`` (or ``end``)."""
    while pos < end:
        chunk = src.read_at(pos, min(_ZERO_SCAN_CHUNK, end - pos))
        if not chunk:
            raise FatbinError("short read while skipping padding")
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return pos + len(chunk) - len(stripped)
        pos += len(chunk)
    return end


def _check_ptx_target(entry: FatbinEntry, head: bytes) -> None:
    match = _PTX_TARGET.search(head)
    if match is None:
        return
    said = match.group(1).decode("ascii").replace("sm_", "compute_")
    if said != entry.target:
        raise FatbinError(
            f"fatbin PTX entry at section offset {entry.offset}: header says "
            f"{entry.target} but the PTX says .target {match.group(1).decode('ascii')}"
        )
