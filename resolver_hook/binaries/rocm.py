"""Read the AMD GPU targets out of a ROCm object's ``.hip_fatbin`` section.

hipcc (clang) embeds device code as a *clang offload bundle*: the magic string
``__CLANG_OFFLOAD_BUNDLE__`` (24 bytes), a u64 count of entries, then per entry a u64
code-object offset, a u64 size, a u64 ID length and the ID, such as
``hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`` (offload kind, target triple, then
the target ID: processor and features). All integers little-endian. Source: Clang's
"Clang Offload Bundler" documentation, "Bundled Code Object Layout" and "Target ID"
(https://clang.llvm.org/docs/ClangOffloadBundler.html, read 2026-12-01). A bundle
compressed by ``--compress`` starts ``CCOB`` instead and keeps its IDs inside the
compressed data: it is reported as compressed, its targets unread.

Bounded like the fatbin reader (resolver_hook/limits.py): the entry count and each ID's
length are checked before anything is read.
"""

from __future__ import annotations

import struct

from resolver_hook.binaries.elf import ByteSource, section_reader
from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_OFFLOAD_BUNDLE_ENTRIES, MAX_OFFLOAD_BUNDLE_ID

__all__ = ["HIP_FATBIN", "BundleError", "RocmCode", "is_rocm_library", "read_offload_bundles"]

HIP_FATBIN = ".hip_fatbin"
_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
_COMPRESSED_MAGIC = b"CCOB"
_ROCM_LIBS = ("libamdhip64.so", "librocm", "libhiprtc.so", "libhsa-runtime64.so")


class BundleError(OperationalError):
    """A ``.hip_fatbin`` section is malformed."""


@valueclass
class RocmCode:
    """What one ``.hip_fatbin`` section holds."""

    targets: tuple[str, ...]
    """AMD GPU processors (``gfx90a``, ``gfx942``), in bundle order, without repeats."""
    compressed: bool = False


def is_rocm_library(soname: str) -> bool:
    """``libamdhip64.so.7``, ``librocblas.so.4``... (auditwheel-renamed ones too)."""
    return soname.startswith(_ROCM_LIBS)


def read_offload_bundles(src: ByteSource, offset: int, size: int) -> RocmCode:
    """The gfx targets of the bundles in ``src[offset:offset+size]`` (zero padding
    between bundles, of any length, is skipped)."""
    end = offset + size
    pos = offset
    targets: list[str] = []
    compressed = False
    entries = 0

    read = section_reader(src, offset, size, BundleError)

    while pos < end:
        head = read(pos, min(len(_MAGIC), end - pos), "offload bundle header")
        if not head[0]:
            # Zero padding up to the next bundle (hipcc aligns bundles to 4096 bytes,
            # so the gap need not be a multiple of the header's length): skip exactly
            # the zero bytes, never into the next magic.
            pos += len(head) - len(head.lstrip(b"\0"))
            continue
        if head.startswith(_COMPRESSED_MAGIC):
            return RocmCode(targets=tuple(dict.fromkeys(targets)), compressed=True)
        if head != _MAGIC:
            raise BundleError(f"bad offload bundle magic at section offset {pos - offset}")
        (count,) = struct.unpack("<Q", read(pos + 24, 8, "offload bundle entry count"))
        entries += count
        if entries > MAX_OFFLOAD_BUNDLE_ENTRIES:
            raise BundleError(f"more than {MAX_OFFLOAD_BUNDLE_ENTRIES} offload bundle entries")
        at = pos + 32
        bundle_end = at
        for _ in range(count):
            code_at, code_size, id_len = struct.unpack("<QQQ", read(at, 24, "bundle entry"))
            if id_len > MAX_OFFLOAD_BUNDLE_ID:
                raise BundleError(
                    f"bundle entry ID of {id_len} bytes, more than {MAX_OFFLOAD_BUNDLE_ID}"
                )
            ident = read(at + 24, id_len, "bundle entry ID").decode("ascii", "replace")
            at += 24 + id_len
            if code_size and pos + code_at + code_size > end:
                raise BundleError(
                    f"bundle entry {ident!r} claims {code_size} bytes past the section's end"
                )
            bundle_end = max(bundle_end, at, pos + code_at + code_size)
            kind, _, target_id = ident.partition("--")
            if kind.startswith(("hip", "openmp")) and target_id.startswith("gfx"):
                targets.append(target_id.split(":", 1)[0])
        pos = bundle_end
    return RocmCode(targets=tuple(dict.fromkeys(targets)), compressed=compressed)
