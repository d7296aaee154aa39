"""Fatbin containers outside ``.nv_fatbin`` (docs/facts.md section 1.11).

CUPTI keeps its kernels in ``.rodata``, cuFFT 11.2 in ``.data``: scan searches the
object for every container (magic 0xBA55ED50), keeps those wholly inside an allocated,
non-executable ``PROGBITS`` section, skips magic numbers that start no valid container,
and stays bounded on a hostile object. ``libdatafatbin.so`` was built by
scripts/make_cuda_fixtures.sh (step 12, gcc arrays holding nvcc 13.0 fatbins); the
other objects are written here.
"""

from __future__ import annotations

import struct
import tracemalloc
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook.binaries import fatbin as fatbin_module
from resolver_hook.binaries import scan as scan_module
from resolver_hook.binaries.elf import BytesSource, parse_elf
from resolver_hook.binaries.fatbin import (
    FATBIN_MAGIC,
    EntryBudget,
    FatbinLimitError,
    find_fatbins,
    parse_fatbin,
)
from resolver_hook.binaries.scan import ScanError, scan_wheel
from resolver_hook.limits import MAX_FATBIN_FALSE_STARTS

DATA = Path(__file__).parent / "data" / "cuda"
ARRAYS = (DATA / "libdatafatbin.so").read_bytes()
KFATBIN = (DATA / "k.fatbin").read_bytes()  # compute_100f (zstd) + sm_100f, from nvcc 13.0
KTARGETS = ("compute_100f", "sm_100f")
WHEEL = "ext-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"
MIB = 1 << 20

PROGBITS, NOBITS = 1, 8
A, W, X = 0x2, 0x1, 0x4  # SHF_ALLOC, SHF_WRITE, SHF_EXECINSTR


def elf(sections: Sequence[tuple[str, int, int, bytes]]) -> bytes:
    """A 64-bit little-endian x86_64 shared object holding ``sections`` (name, sh_type,
    sh_flags, bytes) back to back after the ELF header, 8-byte aligned, then
    ``.shstrtab`` and the section header table."""
    names = b"\0"
    body = bytearray(64)
    rows = [struct.pack("<IIQQQQIIQQ", *([0] * 10))]
    for name, sh_type, flags, given in [*sections, (".shstrtab", 3, 0, b"")]:
        name_at = len(names)
        names += name.encode() + b"\0"
        data = names if name == ".shstrtab" else given
        body += bytes(-len(body) % 8)
        rows.append(
            struct.pack("<IIQQQQIIQQ", name_at, sh_type, flags, 0, len(body), len(data), 0, 0, 8, 0)
        )
        if sh_type != NOBITS:
            body += data
    body += bytes(-len(body) % 8)
    shoff = len(body)
    body += b"".join(rows)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    header = struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(rows), len(rows) - 1
    )
    body[:64] = ident + header
    return bytes(body)


def wheel(directory: Path, obj: bytes, *, stored: bool = False) -> Path:
    path = directory / WHEEL
    kind = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w", kind) as zf:
        zf.writestr("ext/libext.so", obj)
        zf.writestr("ext-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: ext\n")
    return path


def targets_of(directory: Path, obj: bytes) -> tuple[str, ...]:
    [found] = scan_wheel(wheel(directory, obj)).objects
    return found.targets


def with_arch(container: bytes, entry_at: int, arch: int) -> bytes:
    """``container`` with the arch field of the entry at ``entry_at`` set to ``arch``."""
    out = bytearray(container)
    struct.pack_into("<I", out, entry_at + 28, arch)
    return bytes(out)


class CountingSource:
    """A ByteSource that records how much is read, and the largest single read."""

    def __init__(self, data: bytes) -> None:
        self.inner = BytesSource(data)
        self.total = 0
        self.largest = 0

    @property
    def size(self) -> int:
        return self.inner.size

    def read_at(self, offset: int, length: int) -> bytes:
        self.total += length
        self.largest = max(self.largest, length)
        return self.inner.read_at(offset, length)


# --- the nvcc/gcc fixture ----------------------------------------------------------------


def test_arrays_in_data_and_rodata_are_found_and_the_fake_skipped(tmp_path: Path) -> None:
    report = scan_wheel(wheel(tmp_path, ARRAYS))
    # .data: sm_75 + compute_86; .rodata: sm_89; the .rodata fake adds nothing.
    assert report.gpu == ("sm_75", "compute_86", "sm_89")
    [obj] = report.objects
    assert obj.ptx_isa == (9, 0)
    sections = {s.name: s for s in parse_elf(ARRAYS).sections}
    assert ".nv_fatbin" not in sections
    found = find_fatbins(BytesSource(ARRAYS), 0, len(ARRAYS))
    where = {
        name
        for c in found.containers
        for name, s in sections.items()
        if s.offset <= c.offset < s.offset + s.size
    }
    assert where == {".data", ".rodata"}
    assert found.false_starts == 1


def test_streamed_member_gives_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = wheel(tmp_path, ARRAYS)
    expected = scan_wheel(path)
    monkeypatch.setattr(scan_module, "_IN_MEMORY", 0)
    monkeypatch.setattr(scan_module, "_CHUNK", 4096)
    monkeypatch.setattr(scan_module, "_WINDOW", 4096)
    monkeypatch.setattr(scan_module, "_PREFIX_KEEP", 0)
    monkeypatch.setattr(fatbin_module, "_SEARCH_CHUNK", 1000)  # magics straddle chunks
    assert scan_wheel(path) == expected


# --- which sections count ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sh_type", "flags", "counted"),
    [
        pytest.param(".data", PROGBITS, A | W, True, id="data"),
        pytest.param(".rodata", PROGBITS, A, True, id="rodata"),
        pytest.param("__nv_relfatbin", PROGBITS, A, True, id="nv-relfatbin"),
        pytest.param(".text", PROGBITS, A | X, False, id="code"),
        pytest.param(".comment", PROGBITS, 0, False, id="not-loaded"),
        pytest.param(".note.x", 7, A, False, id="not-progbits"),
    ],
)
def test_container_counts_only_in_loaded_data(
    tmp_path: Path, name: str, sh_type: int, flags: int, counted: bool
) -> None:
    obj = elf([(".text", PROGBITS, A | X, b"\xc3" * 40), (name, sh_type, flags, KFATBIN)])
    assert targets_of(tmp_path, obj) == (KTARGETS if counted else ())


def test_container_cut_by_its_section_end_is_not_counted(tmp_path: Path) -> None:
    half = len(KFATBIN) // 2
    obj = elf(
        [(".data", PROGBITS, A | W, KFATBIN[:half]), (".text", PROGBITS, A | X, KFATBIN[half:])]
    )
    assert targets_of(tmp_path, obj) == ()


def test_nv_fatbin_and_data_containers_are_joined(tmp_path: Path) -> None:
    kernels = (DATA / "libkernels.so").read_bytes()
    sec = parse_elf(kernels).section(".nv_fatbin")
    assert sec is not None
    nv = kernels[sec.offset : sec.offset + sec.size]
    obj = elf([(".nv_fatbin", PROGBITS, A, nv), (".data", PROGBITS, A | W, KFATBIN)])
    assert targets_of(tmp_path, obj) == (
        "sm_90a", "compute_100f", "sm_100f", "compute_120", "sm_120",
    )  # fmt: skip


# --- false matches ---------------------------------------------------------------------------

MAGIC = struct.pack("<I", FATBIN_MAGIC)
SASS_AT = 456  # the sm_100f entry of k.fatbin (after its 16-byte header and the PTX entry)


@pytest.mark.parametrize(
    "fake",
    [
        pytest.param(MAGIC + b"garbage!" * 10, id="magic-then-garbage"),
        pytest.param(MAGIC + struct.pack("<HHQ", 1, 16, 1 << 40) + bytes(64), id="huge-size"),
        pytest.param(MAGIC + struct.pack("<HHQ", 2, 16, 64) + bytes(64), id="version-2"),
        pytest.param(with_arch(KFATBIN, SASS_AT, 12345), id="nonsense-arch"),
        pytest.param(
            KFATBIN[: SASS_AT + 8]
            + struct.pack("<Q", struct.unpack_from("<Q", KFATBIN, SASS_AT + 8)[0] + 8)
            + KFATBIN[SASS_AT + 16 :],
            id="payload-past-its-container",
        ),
    ],
)
def test_a_fake_is_skipped_and_the_real_container_after_it_found(
    tmp_path: Path, fake: bytes
) -> None:
    data = b"\x11" * 13 + fake + bytes(24) + KFATBIN + MAGIC
    obj = elf([(".data", PROGBITS, A | W, data)])
    assert targets_of(tmp_path, obj) == KTARGETS
    found = find_fatbins(BytesSource(data), 0, len(data), accept=scan_module._known_targets)
    assert [c.offset for c in found.containers] == [13 + len(fake) + 24]
    assert found.false_starts >= 2  # the fake (and magics inside it), the trailing magic


def test_parse_fatbin_itself_stays_strict() -> None:
    """The search skips what does not parse; a .nv_fatbin section is still an error."""
    with pytest.raises(fatbin_module.FatbinError, match="claims"):
        parse_fatbin(KFATBIN[:-8])


# --- bounds ------------------------------------------------------------------------------------


def test_a_big_region_is_read_once_in_bounded_chunks() -> None:
    data = bytes(64 * MIB) + KFATBIN
    src = CountingSource(data)
    tracemalloc.start()
    try:
        found = find_fatbins(src, 0, len(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [c.offset for c in found.containers] == [64 * MIB]
    assert src.largest <= fatbin_module._SEARCH_CHUNK
    assert src.total < len(data) + 2 * len(KFATBIN) + 3 * (len(data) // MIB + 1)
    assert peak < 4 * MIB, f"peak {peak} bytes"


def test_a_flood_of_magic_numbers_is_refused_after_the_limit() -> None:
    flood = (MAGIC + struct.pack("<HHQ", 1, 16, 64)) * 1_000_000  # 16 MB of false starts
    src = CountingSource(flood)
    with pytest.raises(FatbinLimitError, match=f"more than {MAX_FATBIN_FALSE_STARTS}"):
        find_fatbins(src, 0, len(flood))
    # It stopped near the limit: one chunk, plus a few headers per false start.
    assert src.total < fatbin_module._SEARCH_CHUNK + 256 * (MAX_FATBIN_FALSE_STARTS + 1)


def test_a_flood_in_a_library_is_one_scan_error(tmp_path: Path) -> None:
    flood = (MAGIC + struct.pack("<HHQ", 1, 16, 64)) * (MAX_FATBIN_FALSE_STARTS + 1)
    obj = elf([(".data", PROGBITS, A | W, flood)])
    with pytest.raises(ScanError, match=r"libext\.so: more than .* start no valid container"):
        scan_wheel(wheel(tmp_path, obj))


def _walks_then_breaks(entries: int) -> bytes:
    """A container of ``entries`` valid sm_90 entry headers whose last entry claims more
    payload than the container holds: read to its end, then rejected."""
    entry = struct.pack("<HHIQ", 2, 0x101, 64, 0) + bytes(8)
    entry += struct.pack("<HHI", 0, 0, 90) + bytes(8) + struct.pack("<Q", 0x11) + bytes(16)
    last = struct.pack("<HHIQ", 2, 0x101, 64, 1 << 20) + entry[16:]
    body = entry * (entries - 1) + last
    return MAGIC + struct.pack("<HHQ", 1, 16, len(body)) + body


def test_entries_of_rejected_candidates_count_against_the_budget() -> None:
    data = _walks_then_breaks(40) * 3
    found = find_fatbins(BytesSource(data), 0, len(data), budget=EntryBudget(1000))
    assert (found.containers, found.false_starts) == ((), 3)
    with pytest.raises(FatbinLimitError, match="more than 100 fatbin entries"):
        find_fatbins(BytesSource(data), 0, len(data), budget=EntryBudget(100))


def _streamed_peak(path: Path) -> tuple[int, tuple[str, ...]]:
    tracemalloc.start()
    try:
        [found] = scan_wheel(path).objects
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, found.targets


def test_a_big_streamed_library_stays_within_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 96 MiB .data, stored (so no ratio refusal), read through the streamed path: the
    container at its end is found without holding the member, and the search adds
    next to nothing to what the streamed reader holds anyway."""
    path = wheel(
        tmp_path, elf([(".data", PROGBITS, A | W, bytes(96 * MIB) + KFATBIN)]), stored=True
    )
    peak, targets = _streamed_peak(path)
    assert targets == KTARGETS
    assert peak < 48 * MIB, f"peak {peak} bytes: the member was read whole"
    monkeypatch.setattr(
        scan_module,
        "find_fatbins",
        lambda *a, **k: fatbin_module.FoundFatbins(containers=(), false_starts=0),
    )
    without, targets = _streamed_peak(path)
    assert targets == ()
    assert peak - without < 4 * MIB, f"search peak {peak} bytes, without it {without}"
