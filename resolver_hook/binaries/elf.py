"""Read the parts of an ELF object that say what it runs on and what it links against.

Pure Python over a :class:`ByteSource`, so the same code reads a file in memory and a
member streamed out of a wheel. Only what :mod:`resolver_hook.binaries.scan` needs is read: the
header (class, byte order, ``e_machine``), the section headers with their names, the
``DT_NEEDED`` entries of ``.dynamic`` (strings from the section its ``sh_link`` names,
normally ``.dynstr``), and caller-chosen sections such as ``.nv_fatbin``
handed to a visitor.

Every offset and size read from the file is checked against the object's size and
against fixed caps before anything is read or allocated, so a corrupt or hostile object
gives an :class:`ElfError` naming the offending field, never a huge allocation.

Hand-written on purpose: an ELF library (pyelftools) would be a dependency that reads
whole sections of a 1.5 GB ``libtorch_cuda.so`` into memory and trusts their sizes;
this reader streams a wheel member and bounds every size (resolver_hook/limits.py).

Layout source: the System V ABI, "ELF header" and "Sections" chapters
(https://refspecs.linuxfoundation.org/elf/gabi4+/ch4.eheader.html), and
``/usr/include/elf.h`` for the ``EM_*`` numbers.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import (
    MAX_ELF_DYNAMIC_BYTES,
    MAX_ELF_DYNSTR_BYTES,
    MAX_ELF_LIBRARY_NAME,
    MAX_ELF_SECTION_NAME,
    MAX_ELF_SECTIONS,
    MAX_ELF_SHSTRTAB_BYTES,
)

__all__ = [
    "ByteSource",
    "BytesSource",
    "ElfError",
    "ElfObject",
    "Section",
    "is_elf",
    "machine_name",
    "parse_elf",
    "read_elf",
    "section_reader",
]

_ELF_MAGIC = b"\x7fELF"

_T = TypeVar("_T")

# Caps on what one object may ask us to read (resolver_hook/limits.py). Real objects are
# far below them: libtorch_cuda.so has ~40 sections and a ~4 MB .dynstr.

_SHT_PROGBITS = 1
_SHT_NOBITS = 8
_SHF_ALLOC = 0x2  # gABI "Sections", sh_flags: occupies memory at run time
_SHF_EXECINSTR = 0x4  # holds machine instructions
_SHT_DYNAMIC = 6
_DT_NULL = 0
_DT_NEEDED = 1
_SHN_XINDEX = 0xFFFF

# e_machine -> the CPU name used in wheel platform tags (PEP 600 / PEP 656).
# Numbers from /usr/include/elf.h. Where the name depends on class or byte order
# (ppc64 vs ppc64le, s390 vs s390x, riscv32 vs riscv64) machine_name() decides.
_MACHINES: Mapping[int, str] = {
    2: "sparc",
    3: "i686",
    8: "mips",
    20: "ppc",
    21: "ppc64",
    22: "s390",
    40: "armv7l",
    43: "sparcv9",
    62: "x86_64",
    183: "aarch64",
    190: "cuda",
    224: "amdgpu",
    243: "riscv",
    258: "loongarch64",
}


class ElfError(OperationalError):
    """The bytes are not a well-formed ELF object (or ask for more than we allow)."""


class ByteSource(Protocol):
    """Random-access bytes of a known size.

    Readers ask for regions in ascending order where they can, because a streamed zip
    member seeks forward cheaply and backward only by decompressing again.
    """

    @property
    def size(self) -> int: ...

    def read_at(self, offset: int, length: int) -> bytes:
        """Return exactly ``length`` bytes at ``offset`` (callers check the bounds)."""
        ...


@valueclass(kw_only=False)
class BytesSource:
    """A :class:`ByteSource` over bytes already in memory."""

    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    def read_at(self, offset: int, length: int) -> bytes:
        return self.data[offset : offset + length]


@valueclass
class Section:
    """One section header: where its bytes are in the file."""

    name: str
    type: int
    offset: int
    size: int
    link: int
    flags: int = 0
    """``sh_flags`` (``SHF_ALLOC``, ``SHF_EXECINSTR``, ...)."""

    @property
    def loaded_data(self) -> bool:
        """Bytes the program sees at run time that are not code: an allocated,
        non-executable ``PROGBITS`` section (``.rodata``, ``.data``, ``.nv_fatbin``)."""
        return (
            self.type == _SHT_PROGBITS
            and bool(self.flags & _SHF_ALLOC)
            and not self.flags & _SHF_EXECINSTR
        )


@valueclass
class ElfObject:
    """What an ELF object says about itself."""

    bits: int
    little_endian: bool
    e_machine: int
    machine: str
    sections: tuple[Section, ...]
    needed: tuple[str, ...]
    flags: int = 0
    """``e_flags``: for a cubin (``EM_CUDA``) it holds the SM number."""
    abi_version: int = 0
    """``e_ident[EI_ABIVERSION]``: a cubin's layout of ``e_flags`` depends on it."""

    def section(self, name: str) -> Section | None:
        """The first section called ``name``, if any."""
        for sec in self.sections:
            if sec.name == name:
                return sec
        return None


def is_elf(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) starts like an ELF object."""
    return head[:4] == _ELF_MAGIC


def machine_name(e_machine: int, *, bits: int, little_endian: bool) -> str:
    """The wheel-tag CPU name for ``e_machine``, or ``e_machine_<n>`` when unknown."""
    name = _MACHINES.get(e_machine)
    if name is None:
        return f"e_machine_{e_machine}"
    if name == "ppc64" and little_endian:
        return "ppc64le"
    if name == "s390" and bits == 64:
        return "s390x"
    if name == "riscv":
        return "riscv64" if bits == 64 else "riscv32"
    return name


def section_reader(
    src: ByteSource, offset: int, size: int, error: type[OperationalError]
) -> Callable[[int, int, str], bytes]:
    """``read(at, length, what)`` confined to ``src[offset:offset+size]``: a region past
    either end, or a short read, raises ``error`` naming ``what`` and its offset in the
    section. The fatbin and offload-bundle readers share it."""

    def read(at: int, length: int, what: str) -> bytes:
        if at < offset or at + length > offset + size:
            raise error(
                f"{what} at section offset {at - offset} ({length} bytes) runs past the "
                f"end of the {size}-byte section"
            )
        data = src.read_at(at, length)
        if len(data) != length:
            raise error(f"{what} at section offset {at - offset}: short read")
        return data

    return read


def parse_elf(data: bytes) -> ElfObject:
    """Parse an ELF object held in memory."""
    obj, _ = read_elf(BytesSource(data))
    return obj


def _check_range(what: str, offset: int, length: int, size: int, cap: int | None = None) -> None:
    if cap is not None and length > cap:
        raise ElfError(f"{what} is {length} bytes, more than the {cap} allowed")
    if offset < 0 or length < 0 or offset + length > size:
        raise ElfError(
            f"{what} at offset {offset} ({length} bytes) runs past the end of the "
            f"{size}-byte object (truncated or corrupt)"
        )


def _read(src: ByteSource, what: str, offset: int, length: int, cap: int | None = None) -> bytes:
    _check_range(what, offset, length, src.size, cap)
    data = src.read_at(offset, length)
    if len(data) != length:
        raise ElfError(f"{what} at offset {offset}: short read (truncated object)")
    return data


class _Strings:
    """A string table (``.shstrtab``, ``.dynstr``) read by index, each string cut to
    ``cap`` bytes and decoded once. The search for a string's end stops at the cap, so
    65,535 indices into one 16 MiB string cost 65,535 short searches, not 1 TB of them."""

    def __init__(self, table: bytes, cap: int) -> None:
        self.table, self.cap = table, cap
        self.last_nul = table.rfind(b"\0")  # a string at or before it is NUL-terminated
        self.decoded: dict[int, str] = {}

    def at(self, index: int, what: str) -> str:
        hit = self.decoded.get(index)
        if hit is not None:
            return hit
        table = self.table
        if not 0 <= index < len(table):
            raise ElfError(f"{what}: string index {index} outside its {len(table)}-byte table")
        if index > self.last_nul:
            raise ElfError(f"{what}: string at index {index} is not NUL-terminated")
        end = table.find(b"\0", index, index + self.cap)
        text = table[index : index + self.cap if end < 0 else end].decode("utf-8", "replace")
        self.decoded[index] = text
        return text


@valueclass(kw_only=False)
class _Layout:
    bits: int
    little: bool
    abi_version: int
    shdr_fmt: str
    dyn_fmt: str


def _read_header(src: ByteSource) -> tuple[_Layout, tuple[int, ...]]:
    ident = _read(src, "ELF identification", 0, 16)
    if not is_elf(ident):
        raise ElfError("not an ELF object (bad magic)")
    ei_class, ei_data = ident[4], ident[5]
    if ei_class not in (1, 2):
        raise ElfError(f"unknown ELF class {ei_class} (expected 1 = 32-bit or 2 = 64-bit)")
    if ei_data not in (1, 2):
        raise ElfError(f"unknown ELF byte order {ei_data} (expected 1 = LSB or 2 = MSB)")
    bo = "<" if ei_data == 1 else ">"
    if ei_class == 2:
        ehdr_fmt, shdr_fmt, dyn_fmt = bo + "HHIQQQIHHHHHH", bo + "IIQQQQIIQQ", bo + "qQ"
    else:
        ehdr_fmt, shdr_fmt, dyn_fmt = bo + "HHIIIIIHHHHHH", bo + "IIIIIIIIII", bo + "iI"
    raw = _read(src, "ELF header", 16, struct.calcsize(ehdr_fmt))
    layout = _Layout(
        bits=64 if ei_class == 2 else 32,
        little=ei_data == 1,
        abi_version=ident[8],
        shdr_fmt=shdr_fmt,
        dyn_fmt=dyn_fmt,
    )
    return layout, struct.unpack(ehdr_fmt, raw)


def _read_sections(
    src: ByteSource,
    layout: _Layout,
    *,
    e_shoff: int,
    e_shentsize: int,
    e_shnum: int,
    e_shstrndx: int,
) -> tuple[Section, ...]:
    if not e_shoff:
        return ()  # no section headers (sstrip-ed); nothing more to learn cheaply
    shdr_fmt = layout.shdr_fmt
    shdr_size = struct.calcsize(shdr_fmt)
    if e_shentsize < shdr_size:
        raise ElfError(f"e_shentsize {e_shentsize} is smaller than a section header")
    zero = struct.unpack(shdr_fmt, _read(src, "section header 0", e_shoff, shdr_size))
    # Extended numbering: with 0xff00 or more sections the real count and the
    # string-table index live in section header 0 (gABI, "Sections").
    count = e_shnum or zero[5]
    if e_shstrndx == _SHN_XINDEX:
        e_shstrndx = zero[6]
    if count > MAX_ELF_SECTIONS:
        raise ElfError(f"{count} section headers, more than the {MAX_ELF_SECTIONS} allowed")
    table = _read(src, "section header table", e_shoff, count * e_shentsize)
    rows = [struct.unpack_from(shdr_fmt, table, i * e_shentsize) for i in range(count)]
    names = b""
    if 0 < e_shstrndx < count:
        row = rows[e_shstrndx]
        if row[1] != _SHT_NOBITS:
            names = _read(src, "section name table", row[4], row[5], MAX_ELF_SHSTRTAB_BYTES)
    sections: list[Section] = []
    # 65,535 headers may all name one long string: names are cut to MAX_ELF_SECTION_NAME
    # bytes and decoded once per distinct index, so memory stays bounded.
    strings = _Strings(names, MAX_ELF_SECTION_NAME)
    for i, row in enumerate(rows):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link (gABI order)
        name_idx, sh_type, sh_flags, _addr, sh_offset, sh_size, sh_link = row[:7]
        name = strings.at(name_idx, f"section {i} name") if names else ""
        if sh_type != _SHT_NOBITS:
            _check_range(f"section {name or i}", sh_offset, sh_size, src.size)
        sections.append(
            Section(
                name=name,
                type=sh_type,
                offset=sh_offset,
                size=sh_size,
                link=sh_link,
                flags=sh_flags,
            )
        )
    return tuple(sections)


def _dynamic_entries(layout: _Layout, dyn: bytes, dynstr: bytes) -> tuple[str, ...]:
    needed: list[str] = []
    strings = _Strings(dynstr, MAX_ELF_LIBRARY_NAME)
    step = struct.calcsize(layout.dyn_fmt)
    for pos in range(0, len(dyn) - step + 1, step):
        tag, val = struct.unpack_from(layout.dyn_fmt, dyn, pos)
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            needed.append(strings.at(val, "DT_NEEDED"))
    return tuple(needed)


def read_elf(
    src: ByteSource,
    *,
    visitors: Mapping[str, Callable[[ByteSource, Section], _T]] | None = None,
) -> tuple[ElfObject, dict[str, _T]]:
    """Read the header, sections and dynamic entries of the ELF object in ``src``.

    ``visitors`` maps a section name to a function called with the source and that
    section; its results come back keyed by name. All regions (the dynamic section,
    its string table, visited sections) are read in ascending file order, so a
    streamed source is decompressed at most twice (once up to the section headers at
    the end, once more for the sections).
    """
    layout, header = _read_header(src)
    (_type, e_machine, _ver, _entry, _phoff, e_shoff, e_flags, _ehsize, _phentsize, _phnum,
     e_shentsize, e_shnum, e_shstrndx) = header  # fmt: skip
    sections = _read_sections(
        src,
        layout,
        e_shoff=e_shoff,
        e_shentsize=e_shentsize,
        e_shnum=e_shnum,
        e_shstrndx=e_shstrndx,
    )

    # The regions to read, in file order: (offset, key, section, visitor or None).
    jobs: list[tuple[int, str, Section, Callable[[ByteSource, Section], _T] | None]] = []
    dynamic = next((s for s in sections if s.type == _SHT_DYNAMIC), None)
    if dynamic is not None:
        if not 0 < dynamic.link < len(sections):
            raise ElfError(f"dynamic section links to section {dynamic.link}, which does not exist")
        jobs.append((dynamic.offset, "dynamic", dynamic, None))
        jobs.append((sections[dynamic.link].offset, "dynstr", sections[dynamic.link], None))
    for name, visitor in (visitors or {}).items():
        found = next((s for s in sections if s.name == name and s.type != _SHT_NOBITS), None)
        if found is not None:
            jobs.append((found.offset, name, found, visitor))
    blobs: dict[str, bytes] = {}
    results: dict[str, _T] = {}
    caps = {"dynamic": MAX_ELF_DYNAMIC_BYTES, "dynstr": MAX_ELF_DYNSTR_BYTES}
    for _offset, key, sec, visit in sorted(jobs, key=lambda job: job[0]):
        if visit is None:
            blobs[key] = _read(src, f"section {sec.name or key}", sec.offset, sec.size, caps[key])
        else:
            results[key] = visit(src, sec)

    needed = (
        _dynamic_entries(layout, blobs["dynamic"], blobs["dynstr"]) if dynamic is not None else ()
    )
    obj = ElfObject(
        bits=layout.bits,
        little_endian=layout.little,
        e_machine=e_machine,
        machine=machine_name(e_machine, bits=layout.bits, little_endian=layout.little),
        sections=sections,
        needed=needed,
        flags=e_flags,
        abi_version=layout.abi_version,
    )
    return obj, results
