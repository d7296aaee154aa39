"""The ``.hip_fatbin`` reader on bundle layouts as hipcc writes them.

Real libraries (for example tilert 0.1.6's ``libtilert_glm52_rocm.so``) hold one clang
offload bundle per translation unit, each starting on a 4096-byte boundary: the zero
padding between two bundles is rarely a multiple of the 24-byte magic.
"""

from __future__ import annotations

import struct

import pytest

from resolver_hook.binaries.elf import BytesSource
from resolver_hook.binaries.rocm import BundleError, read_offload_bundles

_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def _bundle(*targets: str, code: bytes = b"\x7fELF" + bytes(60)) -> bytes:
    """One uncompressed bundle: a host entry, then one code object per target."""
    ids = [b"host-x86_64-unknown-linux-gnu-"] + [
        f"hipv4-amdgcn-amd-amdhsa--{t}".encode() for t in targets
    ]
    header_len = 32 + sum(24 + len(i) for i in ids)
    at = header_len
    entries = b""
    for i, ident in enumerate(ids):
        size = 0 if i == 0 else len(code)
        entries += struct.pack("<QQQ", at, size, len(ident)) + ident
        at += size
    body = b"".join(code for _ in targets)
    return _MAGIC + struct.pack("<Q", len(ids)) + entries + body


def _aligned(*bundles: bytes, align: int = 4096) -> bytes:
    out = b""
    for b in bundles:
        out += bytes(-len(out) % align) + b
    return out


@pytest.mark.parametrize("align", [4096, 1000, 25, 1])
def test_bundles_after_padding_of_any_length_are_all_read(align: int) -> None:
    first = _bundle("gfx950")
    section = _aligned(first, _bundle("gfx942:sramecc+:xnack-"), _bundle("gfx90a"), align=align)
    if align == 4096:
        assert (4096 - len(first)) % len(_MAGIC)  # the gap is not a multiple of the magic
    code = read_offload_bundles(BytesSource(section), 0, len(section))
    assert code.targets == ("gfx950", "gfx942", "gfx90a")
    assert not code.compressed


def test_trailing_zero_padding_ends_the_section() -> None:
    section = _bundle("gfx1100") + bytes(5000)
    assert read_offload_bundles(BytesSource(section), 0, len(section)).targets == ("gfx1100",)


def test_garbage_after_padding_is_still_an_error() -> None:
    section = _aligned(_bundle("gfx950"), b"not a bundle header at all!!")
    with pytest.raises(BundleError, match="bad offload bundle magic at section offset 4096"):
        read_offload_bundles(BytesSource(section), 0, len(section))
