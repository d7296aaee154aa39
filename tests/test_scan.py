"""Tests for the ELF, fatbin and wheel scanners (resolver_hook.publish) and `scan`.

The objects under tests/data/cuda/ were built by scripts/make_cuda_fixtures.sh with
nvcc 13.0; their expected contents are stated there. Wheels are zipped around them here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from resolver_hook.binaries import scan as scan_module
from resolver_hook.binaries.elf import ElfError, parse_elf
from resolver_hook.binaries.fatbin import FatbinError, parse_fatbin
from resolver_hook.binaries.locallabel import parse_local_label
from resolver_hook.binaries.scan import ScanError, scan_wheel
from resolver_hook.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data" / "cuda"
KERNELS = (DATA / "libkernels.so").read_bytes()
PTX = (DATA / "libptx.so").read_bytes()
CPU = (DATA / "libcpu.so").read_bytes()
TORCHEXT = (DATA / "libtorchext.so").read_bytes()
WHEEL = "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl"


def make_wheel(
    directory: Path,
    filename: str = WHEEL,
    members: dict[str, bytes] | None = None,
    *,
    requires_dist: tuple[str, ...] = (),
) -> Path:
    """A wheel (zip) holding ``members`` plus a METADATA file."""
    name, version = filename.split("-")[:2]
    path = directory / filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in (members or {"tilert/libkernels.so": KERNELS}).items():
            zf.writestr(member, data)
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        meta += "".join(f"Requires-Dist: {r}\n" for r in requires_dist)
        zf.writestr(f"{name}-{version}.dist-info/METADATA", meta)
    return path


def fatbin_section(obj: bytes) -> bytes:
    sec = parse_elf(obj).section(".nv_fatbin")
    assert sec is not None
    return obj[sec.offset : sec.offset + sec.size]


# --- ELF -------------------------------------------------------------------------------


def test_elf_of_nvcc_object() -> None:
    obj = parse_elf(KERNELS)
    assert (obj.machine, obj.bits, obj.little_endian) == ("x86_64", 64, True)
    assert obj.needed == ("libcudart.so.13", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6")
    assert obj.section(".nv_fatbin") is not None


def test_elf_needed_of_torch_extension() -> None:
    assert parse_elf(TORCHEXT).needed == ("libtorch.so", "libc10.so", "libc.so.6")
    assert parse_elf(CPU).needed == ()


def _tiny_elf(*, bits: int, little: bool, machine: int, needed: tuple[str, ...]) -> bytes:
    """A minimal ELF with .dynstr, .dynamic and .shstrtab, in any class and byte order."""
    bo = "<" if little else ">"
    shstr = b"\0.dynstr\0.dynamic\0.shstrtab\0"
    dynstr = b"\0" + b"".join(n.encode() + b"\0" for n in needed)
    offsets, pos = [], 1
    for n in needed:
        offsets.append(pos)
        pos += len(n) + 1
    dyn_fmt = bo + ("qQ" if bits == 64 else "iI")
    dynamic = b"".join(struct.pack(dyn_fmt, 1, off) for off in offsets) + struct.pack(dyn_fmt, 0, 0)
    ehsize = 64 if bits == 64 else 52
    shfmt = bo + ("IIQQQQIIQQ" if bits == 64 else "IIIIIIIIII")
    shsize = struct.calcsize(shfmt)
    body = bytearray(ehsize)
    dynstr_off = len(body)
    body += dynstr
    dynamic_off = len(body)
    body += dynamic
    shstr_off = len(body)
    body += shstr
    shoff = len(body)
    headers = [
        struct.pack(shfmt, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        struct.pack(shfmt, 1, 3, 0, 0, dynstr_off, len(dynstr), 0, 0, 1, 0),
        struct.pack(shfmt, 9, 6, 0, 0, dynamic_off, len(dynamic), 1, 0, 8, 0),
        struct.pack(shfmt, 18, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0),
    ]
    body += b"".join(headers)
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1 if little else 2, 1]) + bytes(9)
    addr = "Q" if bits == 64 else "I"
    ehdr = struct.pack(
        bo + f"HHI{addr}{addr}{addr}IHHHHHH",
        3, machine, 1, 0, 0, shoff, 0, ehsize, 0, 0, shsize, 4, 3,
    )  # fmt: skip
    body[0:ehsize] = ident + ehdr
    return bytes(body)


@pytest.mark.parametrize(
    ("bits", "little", "e_machine", "expected"),
    [
        pytest.param(64, True, 183, "aarch64", id="aarch64"),
        pytest.param(64, True, 21, "ppc64le", id="ppc64le"),
        pytest.param(64, False, 21, "ppc64", id="ppc64-big-endian"),
        pytest.param(64, False, 22, "s390x", id="s390x-big-endian"),
        pytest.param(32, True, 3, "i686", id="i686-32bit"),
        pytest.param(32, True, 40, "armv7l", id="armv7l-32bit"),
        pytest.param(32, False, 8, "mips", id="mips-32bit-big-endian"),
        pytest.param(64, True, 9999, "e_machine_9999", id="unknown"),
    ],
)
def test_elf_classes_and_byte_orders(
    bits: int, little: bool, e_machine: int, expected: str
) -> None:
    obj = parse_elf(
        _tiny_elf(bits=bits, little=little, machine=e_machine, needed=("libfoo.so.1", "libm.so.6"))
    )
    assert (obj.machine, obj.bits, obj.little_endian) == (expected, bits, little)
    assert obj.needed == ("libfoo.so.1", "libm.so.6")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"", "runs past the end", id="empty"),
        pytest.param(b"MZ\x90\x00" + bytes(60), "bad magic", id="not-elf"),
        pytest.param(KERNELS[:40], "runs past the end", id="truncated-header"),
        pytest.param(KERNELS[: len(KERNELS) // 2], "runs past the end", id="truncated-body"),
        pytest.param(b"\x7fELF\x03\x01\x01" + bytes(57), "unknown ELF class", id="bad-class"),
        pytest.param(b"\x7fELF\x02\x07\x01" + bytes(57), "unknown ELF byte order", id="bad-order"),
    ],
)
def test_elf_corrupt_input_is_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(ElfError, match=message):
        parse_elf(data)


def test_elf_huge_section_count_is_refused_without_allocating() -> None:
    data = bytearray(KERNELS)
    data[0x3C:0x3E] = struct.pack("<H", 0)  # e_shnum = 0 -> count from section 0 ...
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    data[shoff + 32 : shoff + 40] = struct.pack("<Q", 1 << 40)  # ... which claims 2**40
    with pytest.raises(ElfError, match="section headers, more than"):
        parse_elf(bytes(data))


# --- fatbin ----------------------------------------------------------------------------


def test_fatbin_targets_of_nvcc_object() -> None:
    targets = {e.target for e in parse_fatbin(fatbin_section(KERNELS))}
    assert targets == {"sm_90a", "sm_100f", "sm_120", "compute_120"}


def test_fatbin_uncompressed_ptx_agrees_with_flags() -> None:
    entries = parse_fatbin(fatbin_section(PTX))
    ptx = [e for e in entries if e.is_ptx]
    assert [(e.target, e.compressed, e.version) for e in ptx] == [("compute_100f", False, (9, 0))]
    assert {e.target for e in entries} == {"sm_80", "compute_100f"}


def test_fatbin_ptx_target_disagreeing_with_flags_is_an_error() -> None:
    section = bytearray(fatbin_section(PTX))
    at = bytes(section).index(b".target sm_100f")
    section[at : at + 15] = b".target sm_100a"
    with pytest.raises(FatbinError, match=r"says \.target sm_100a"):
        parse_fatbin(bytes(section))


def _first_entry(section: bytes) -> int:
    return struct.unpack_from("<H", section, 6)[0]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(lambda s: struct.pack_into("<I", s, 0, 0xDEADBEEF), "bad fatbin magic",
                     id="bad-magic"),
        pytest.param(lambda s: struct.pack_into("<Q", s, 8, 1 << 62), "claims", id="huge-fat-size"),
        pytest.param(lambda s: struct.pack_into("<Q", s, _first_entry(s) + 8, 1 << 40),
                     "payload", id="huge-payload"),
        pytest.param(lambda s: struct.pack_into("<I", s, _first_entry(s) + 4, 8), "header size",
                     id="tiny-entry-header"),
        pytest.param(lambda s: struct.pack_into("<H", s, 4, 7), "container version",
                     id="bad-version"),
    ],
)  # fmt: skip
def test_fatbin_bad_sizes_are_clear_errors(patch: object, message: str) -> None:
    section = bytearray(fatbin_section(KERNELS))
    patch(section)  # type: ignore[operator]
    with pytest.raises(FatbinError, match=message):
        parse_fatbin(bytes(section))


def test_fatbin_truncated_section() -> None:
    with pytest.raises(FatbinError, match="claims"):
        parse_fatbin(fatbin_section(KERNELS)[:100])


def test_fatbin_zero_padding_between_containers_is_skipped() -> None:
    section = fatbin_section(KERNELS)
    assert {e.target for e in parse_fatbin(bytes(24) + section + bytes(8))} == {
        "sm_90a", "sm_100f", "sm_120", "compute_120",
    }  # fmt: skip


# --- local labels ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "cuda", "torch"),
    [
        ("cu130", ">=13.0", None),
        ("cu126", ">=12.0", None),
        ("torch2130cu130", ">=13.0", "==2.13.0"),
        ("cu130torch2.13", ">=13.0", "==2.13.*"),
        ("cu12torch2.6cxx11abiFALSE", ">=12.0", "==2.6.*"),
        ("torch260", None, "==2.6.0"),
        ("cpu", None, None),
    ],
)
def test_local_label(label: str, cuda: str | None, torch: str | None) -> None:
    facts = parse_local_label(label)
    assert (facts.cuda_lower_bound, facts.torch) == (cuda, torch)


# --- wheels ----------------------------------------------------------------------------


def test_scan_wheel_reports_exact_targets_runtime_and_machine(tmp_path: Path) -> None:
    path = make_wheel(tmp_path)
    report = scan_wheel(path)
    assert (report.name, report.version) == ("tilert", "0.1.5.post2")
    assert report.tags == ("cp312-cp312-manylinux_2_28_x86_64",)
    assert report.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert report.size == path.stat().st_size
    assert report.cuda == ">=13.0"
    assert set(report.gpu) == {"sm_90a", "sm_100f", "sm_120", "compute_120"}
    assert report.requires == ()
    [obj] = report.objects
    assert (obj.path, obj.machine, obj.cuda_runtime) == ("tilert/libkernels.so", "x86_64", 13)
    assert report.notes == ()


def test_scan_streaming_path_matches_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_wheel(tmp_path)
    expected = scan_wheel(path)
    # Force every member through the streamed reader, with a tiny window and no
    # prefix cache, so rewinds happen.
    monkeypatch.setattr(scan_module, "_IN_MEMORY", 0)
    monkeypatch.setattr(scan_module, "_CHUNK", 4096)
    monkeypatch.setattr(scan_module, "_WINDOW", 4096)
    monkeypatch.setattr(scan_module, "_PREFIX_KEEP", 0)
    assert scan_wheel(path) == expected


def test_scan_torch_coupling_from_metadata_pin(tmp_path: Path) -> None:
    path = make_wheel(
        tmp_path,
        "ext-1.0-cp312-cp312-linux_x86_64.whl",
        {"ext/_C.so": TORCHEXT},
        requires_dist=("torch==2.13.0", "numpy"),
    )
    report = scan_wheel(path)
    assert report.requires == ("torch==2.13.0",)
    assert report.cuda is None
    assert report.gpu == ()


@pytest.mark.parametrize(
    ("version", "requires_dist", "expected"),
    [
        pytest.param("1.0+torch2130cu130", (), ("torch==2.13.0",), id="label-undotted"),
        pytest.param("1.0+cu130torch2.13", (), ("torch==2.13.*",), id="label-dotted"),
        pytest.param("1.0", ("torch>=2.0",), ("torch>=2.0",), id="lower-bound"),
        # tilert 0.1.6.post3's METADATA: the range is the coupling, lower bound first.
        pytest.param("1.0", ("torch<2.13,>=2.11",), ("torch>=2.11,<2.13",), id="range"),
        pytest.param("1.0", ("torch",), ("torch",), id="unpinned"),
        pytest.param("1.0", ('torch>=2.0; extra == "gpu"',), ("torch",), id="extra-only"),
        pytest.param("1.0+cu130torch2.13", ("torch==2.13.1",), ("torch==2.13.1",),
                     id="metadata-beats-label"),
    ],
)  # fmt: skip
def test_scan_torch_coupling_sources(
    tmp_path: Path, version: str, requires_dist: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    path = make_wheel(
        tmp_path, f"ext-{version}-cp312-cp312-linux_x86_64.whl", {"ext/_C.so": TORCHEXT},
        requires_dist=requires_dist,
    )  # fmt: skip
    assert scan_wheel(path).requires == expected


def test_scan_of_torch_itself_is_not_coupled_to_torch(tmp_path: Path) -> None:
    # torch's own wheel: torch/_C links libtorch.so and libc10.so, shipped beside it.
    path = make_wheel(
        tmp_path,
        "torch-2.13.0-cp312-cp312-linux_x86_64.whl",
        {"torch/_C.so": TORCHEXT, "torch/lib/libtorch.so": CPU, "torch/lib/libc10.so": CPU},
    )
    report = scan_wheel(path)
    assert report.requires == ()
    assert "links libc10.so, libtorch.so: this is torch itself, so no torch coupling" in (
        report.notes
    )


def test_a_wheel_that_ships_the_libraries_it_links_is_not_coupled(tmp_path: Path) -> None:
    vendored = {"ext/_C.so": TORCHEXT, "ext/lib/libtorch.so": CPU, "ext/lib/libc10.so": CPU}
    path = make_wheel(tmp_path, "ext-1.0-cp312-cp312-linux_x86_64.whl", vendored)
    assert scan_wheel(path).requires == ()
    # Only one of the two shipped: the other still comes from a torch install.
    del vendored["ext/lib/libc10.so"]
    path = make_wheel(tmp_path, "ext-1.1-cp312-cp312-linux_x86_64.whl", vendored)
    assert scan_wheel(path).requires == ("torch",)


def test_scan_pure_python_wheel(tmp_path: Path) -> None:
    path = make_wheel(tmp_path, "pure-1.0-py3-none-any.whl", {"pure/__init__.py": b"x = 1\n" * 10})
    report = scan_wheel(path)
    assert (report.objects, report.cuda, report.gpu, report.requires) == ((), None, (), ())


def test_scan_notes_machine_not_matching_platform_tag(tmp_path: Path) -> None:
    aarch64 = _tiny_elf(bits=64, little=True, machine=183, needed=("libc.so.6",))
    path = make_wheel(
        tmp_path, "x-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", {"x/lib.so": aarch64}
    )
    assert scan_wheel(path).notes == (
        "x/lib.so is a aarch64 binary but the wheel is tagged for manylinux_2_28_x86_64",
    )


# e_shoff = 2**40, e_shentsize = 64, e_shnum = 1: the table lies far past the end.
_SHOFF_PAST_END = (
    b"\x7fELF\x02\x01\x01" + bytes(33) + struct.pack("<Q", 1 << 40) + bytes(10)
    + struct.pack("<HH", 64, 1) + bytes(100)
)  # fmt: skip


@pytest.mark.parametrize(
    ("members", "message"),
    [
        pytest.param({"x/lib.so": KERNELS[:3000]}, "x/lib.so: .*runs past the end",
                     id="truncated-elf"),
        pytest.param({"x/lib.so": _SHOFF_PAST_END},
                     "x/lib.so: section header 0 at offset 1099511627776",
                     id="section-table-past-end"),
    ],
)  # fmt: skip
def test_scan_corrupt_member_names_wheel_and_member(
    tmp_path: Path, members: dict[str, bytes], message: str
) -> None:
    path = make_wheel(tmp_path, members=members)
    with pytest.raises(ScanError, match=f"^{WHEEL}: {message}"):
        scan_wheel(path)


def test_scan_corrupt_fatbin_in_wheel(tmp_path: Path) -> None:
    data = bytearray(KERNELS)
    sec = parse_elf(KERNELS).section(".nv_fatbin")
    assert sec is not None
    struct.pack_into("<Q", data, sec.offset + 8, 1 << 50)
    path = make_wheel(tmp_path, members={"x/lib.so": bytes(data)})
    with pytest.raises(ScanError, match=f"^{WHEEL}: x/lib.so: fatbin container"):
        scan_wheel(path)


def test_scan_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / WHEEL
    path.write_bytes(b"this is not a zip file at all" * 10)
    with pytest.raises(ScanError, match="cannot read the wheel"):
        scan_wheel(path)


def test_scan_truncated_zip(tmp_path: Path) -> None:
    path = make_wheel(tmp_path)
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(ScanError, match="cannot read the wheel"):
        scan_wheel(path)


def test_scan_bad_wheel_filename(tmp_path: Path) -> None:
    path = tmp_path / "not-a-wheel.zip"
    path.write_bytes(b"")
    with pytest.raises(ScanError, match="not a wheel file name"):
        scan_wheel(path)


def _bomb_wheel(tmp_path: Path, *, elf: bool) -> Path:
    path = tmp_path / WHEEL
    member = "x/libbomb.so" if elf else "x/zeros.bin"
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf,
        zf.open(member, "w", force_zip64=True) as out,
    ):
        out.write(KERNELS[:64] if elf else b"\0" * 64)
        chunk = bytes(1 << 20)
        for _ in range(100):  # 100 MiB of zeros, about 100 KiB compressed
            out.write(chunk)
    return path


def test_scan_refuses_elf_zip_bomb_by_ratio(tmp_path: Path) -> None:
    path = _bomb_wheel(tmp_path, elf=True)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ScanError, match="zip bomb"):
        scan_wheel(path)


def test_scan_refuses_member_over_size_limit(tmp_path: Path) -> None:
    path = make_wheel(tmp_path)
    with pytest.raises(ScanError, match="more than the 1000 allowed"):
        scan_wheel(path, max_member_size=1000)


def test_scan_reads_big_non_elf_member_without_loading_it(tmp_path: Path) -> None:
    path = _bomb_wheel(tmp_path, elf=False)
    tracemalloc.start()
    try:
        report = scan_wheel(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.objects == ()
    assert peak < 16 << 20, f"peak {peak} bytes: the member was read whole"


def test_scan_lying_zip_header_is_caught(tmp_path: Path) -> None:
    # Central directory says the member is small; the data decompresses to more.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x/lib.so", KERNELS)
    raw = bytearray(buf.getvalue())
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = bytes(raw).index(sig)
        struct.pack_into("<I", raw, at + off, 1000)  # uncompressed size
    path = tmp_path / WHEEL
    path.write_bytes(bytes(raw))
    with pytest.raises(ScanError, match=WHEEL):
        scan_wheel(path)


def _damaged_member_wheel(tmp_path: Path, damage: str) -> Path:
    """A wheel whose ELF member's data is garbage, or uses a compression zipfile lacks."""
    buf = io.BytesIO()
    kind = zipfile.ZIP_DEFLATED if damage == "deflate" else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", kind) as zf:
        zf.writestr("x/lib.so", KERNELS[:20000])
    raw = bytearray(buf.getvalue())
    if damage == "deflate":
        start = 30 + len("x/lib.so")
        for i in range(start, start + 64):
            raw[i] ^= 0x55
    else:  # compression method 99 (AE-x encryption) in both headers
        raw[8] = 99
        raw[bytes(raw).index(b"PK\x01\x02") + 10] = 99
    path = tmp_path / WHEEL
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("damage", ["deflate", "method"])
def test_scan_damaged_member_is_a_scan_error(tmp_path: Path, damage: str) -> None:
    # zlib.error / NotImplementedError from zipfile must not escape as a traceback.
    path = _damaged_member_wheel(tmp_path, damage)
    with pytest.raises(ScanError, match=f"^{WHEEL}: cannot read the wheel"):
        scan_wheel(path)


# --- CLI -------------------------------------------------------------------------------


def test_cli_scan_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_wheel(tmp_path)
    assert main(["scan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "needs an NVIDIA driver supporting CUDA >=13.0 (links libcudart.so.13)" in out
    assert "sm_100f: NVIDIA B200/GB200, B300/GB300" in out


def test_cli_scan_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_wheel(tmp_path)
    assert main(["scan", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == []
    assert doc["wheels"][0]["gpu"] == ["sm_90a", "sm_100f", "compute_120", "sm_120"]


def test_cli_scan_writes_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = make_wheel(tmp_path)
    two = make_wheel(
        tmp_path,
        "tilert-0.1.5.post2+torch2130cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
        {"tilert/libkernels.so": KERNELS, "tilert/_C.so": TORCHEXT},
    )
    out = tmp_path / "manifest.toml"
    prefix = "https://example.org/dl/v0.1.5"
    code = main(["scan", str(one), str(two), "-o", str(out), "--url-prefix", prefix])
    assert code == 0, capsys.readouterr().err
    doc = tomllib.loads(out.read_text())
    gpu = ["sm_90a", "sm_100f", "compute_120", "sm_120"]
    assert doc == {
        "schema": 1,
        "package": {"name": "tilert", "downloads": prefix + "/"},
        "wheel": [
            {
                "url": f"{prefix}/{WHEEL}",
                "sha256": hashlib.sha256(one.read_bytes()).hexdigest(),
                "cuda": ">=13.0",
                "gpu": gpu,
            },
            {
                "url": f"{prefix}/tilert-0.1.5.post2%2Btorch2130cu130-cp312-cp312-"
                "manylinux_2_28_x86_64.whl",
                "sha256": hashlib.sha256(two.read_bytes()).hexdigest(),
                "cuda": ">=13.0",
                "gpu": gpu,
                "requires": ["torch==2.13.0"],
            },
        ],
    }


def test_cli_scan_bad_file_is_one_error_others_still_scanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_wheel(tmp_path)
    bad = tmp_path / "broken-1.0-py3-none-any.whl"
    bad.write_bytes(b"garbage")
    out = tmp_path / "m.toml"
    code = main(["scan", str(bad), str(good), "-o", str(out), "--url-prefix", "https://x/"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.splitlines() == [
        "error: broken-1.0-py3-none-any.whl: cannot read the wheel: File is not a zip file",
        "error: manifest not written: 1 wheel could not be read",
    ]
    assert WHEEL in captured.out
    assert not out.exists()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_cli_scan_of_what_is_no_file_is_a_usage_error_others_still_scanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # README "Exit codes": 2 is bad input; lint refuses the same input with exit 2.
    good = make_wheel(tmp_path)
    bad = tmp_path / "in"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.mkdir()
    code = main(["scan", str(bad), str(good)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.splitlines()[0].startswith(f"error: {bad}: is a ")
    assert len(captured.err.splitlines()) == 1
    assert WHEEL in captured.out
    assert main(["lint", str(bad)]) == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["-o", "m.toml"], "error: -o needs --url-prefix", id="no-prefix"),
        pytest.param(["-o", "m.toml", "--url-prefix", "http://example.org/"],
                     "only https URLs are allowed", id="http-prefix"),
    ],
)  # fmt: skip
def test_cli_scan_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    path = make_wheel(tmp_path)
    assert main(["scan", str(path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_scan_refuses_two_projects_in_one_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = make_wheel(tmp_path)
    two = make_wheel(tmp_path, "other-1.0-cp312-cp312-linux_x86_64.whl")
    code = main(["scan", str(one), str(two), "-o", "-", "--url-prefix", "https://x/"])
    assert code == 2
    assert "one manifest describes one project, these wheels are other, tilert" in (
        capsys.readouterr().err
    )
