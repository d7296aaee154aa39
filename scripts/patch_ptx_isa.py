"""Rewrite the PTX ISA version of every uncompressed PTX entry in a shared object.

Used by scripts/make_cuda_fixtures.sh to make a fixture whose PTX claims a newer ISA
than the local nvcc emits (nvcc 13.0 writes ISA 9.0 only). Both places that carry the
version change together, byte for byte in place: the fatbin entry header (u16 minor,
u16 major at offset 24, see resolver_hook/binaries/fatbin.py) and the PTX text's
``.version X.Y`` line. The result is a test fixture, not code any driver should load.

Usage: python scripts/patch_ptx_isa.py LIB.so OLD NEW   (e.g. 9.0 9.1)
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from resolver_hook.binaries.elf import BytesSource, Section, read_elf
from resolver_hook.binaries.fatbin import FatbinEntry, read_fatbin


def main(argv: list[str]) -> int:
    path, old, new = Path(argv[0]), argv[1], argv[2]
    if len(old) != len(new):
        raise SystemExit("OLD and NEW must have the same length (the patch is in place)")
    data = bytearray(path.read_bytes())
    src = BytesSource(bytes(data))

    def visit(source: BytesSource, sec: Section) -> tuple[int, tuple[FatbinEntry, ...]]:
        return sec.offset, read_fatbin(source, sec.offset, sec.size, little_endian=True)

    _obj, found = read_elf(src, visitors={".nv_fatbin": visit})  # type: ignore[dict-item]
    section_offset, entries = found[".nv_fatbin"]
    major, minor = (int(p) for p in new.split("."))
    patched = 0
    for entry in entries:
        if not entry.is_ptx or entry.compressed:
            continue
        at = section_offset + entry.offset
        (header_size,) = struct.unpack_from("<I", data, at + 4)
        payload = at + header_size
        text = bytes(data[payload : payload + entry.payload_size])
        line = f".version {old}".encode()
        index = text.find(line)
        if index < 0:
            raise SystemExit(f"{path}: PTX entry at {entry.offset} has no '{line.decode()}'")
        data[payload + index : payload + index + len(line)] = f".version {new}".encode()
        struct.pack_into("<HH", data, at + 24, minor, major)
        patched += 1
    if not patched:
        raise SystemExit(f"{path}: no uncompressed PTX entry to patch")
    path.write_bytes(bytes(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
