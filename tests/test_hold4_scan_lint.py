"""Issue 42, scan and lint: a cubin without ptxas's note keeps its arch-specific ``a``
(read from ``e_flags``), and one wheel's caveat is a note, not a finding.

The cubins are the nvcc-built ones of tests/data/cuda/ with their ``.note.nv.tkinfo``
section renamed away (as another assembler writes them, flashinfer-cubin's) and, where
said, the ``e_flags`` bit LLVM's ELF.h names set (docs/facts.md section 1.12).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from resolver_hook.binaries.scan import scan_wheel
from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.install.doctor import check_installed
from tests.cudawheels import KERNELS, binary_wheel, fixture
from tests.test_doctor import BLACKWELL, BUILTIN, TORCH_FILE, inst, scanned

_E_FLAGS = 48  # ELF64 header offset of e_flags
_ABI_VERSION = 8  # e_ident[EI_ABIVERSION]


def _without_note(cubin: bytes, *, abi: int | None = None, flags: int | None = None) -> bytes:
    """``cubin`` with no ``.note.nv.tkinfo`` section (its name changed, same length), and
    ``e_flags`` / ABI version replaced when given."""
    assert b".note.nv.tkinfo" in cubin
    data = bytearray(cubin.replace(b".note.nv.tkinfo", b".note.nv.xxinfo"))
    if abi is not None:
        data[_ABI_VERSION] = abi
    if flags is not None:
        struct.pack_into("<I", data, _E_FLAGS, flags)
    return bytes(data)


def _scan_one(tmp_path: Path, cubin: bytes) -> tuple[str, ...]:
    report = scan_wheel(binary_wheel(tmp_path, "fi-1.0-py3-none-any.whl", {"fi/k.cubin": cubin}))
    (obj,) = report.objects
    return obj.targets


@pytest.mark.parametrize(
    ("name", "bit", "target"),
    [
        ("k_sm100a.cubin", True, "sm_100a"),
        ("k_sm103a.cubin", True, "sm_103a"),
        ("k_sm100a.cubin", False, "sm_100"),  # no note, no bit: nothing says 'a'
    ],
)
def test_a_cubin_without_the_note_takes_its_a_from_e_flags(
    tmp_path: Path, name: str, bit: bool, target: str
) -> None:
    real = fixture(name)
    (flags,) = struct.unpack_from("<I", real, _E_FLAGS)
    assert real[_ABI_VERSION] == 8
    assert not flags & 0x8  # ptxas 13 leaves the bit clear
    cubin = _without_note(real, flags=flags | 0x8 if bit else flags)
    assert _scan_one(tmp_path, cubin) == (target,)


def test_an_abi_7_cubin_takes_its_a_from_the_v1_bit(tmp_path: Path) -> None:
    # ABI 7: the SM in bits 0-7 (0x5a: sm_90), EF_CUDA_ACCELERATORS_V1 = 0x800.
    cubin = _without_note(fixture("k_sm100a.cubin"), abi=7, flags=0x0500_0D5A)
    assert _scan_one(tmp_path, cubin) == ("sm_90a",)
    plain = _without_note(fixture("k_sm100a.cubin"), abi=7, flags=0x0500_055A)
    assert _scan_one(tmp_path, plain) == ("sm_90",)


def test_the_note_still_decides_where_there_is_one(tmp_path: Path) -> None:
    # sm_100f's note says 'f'; its e_flags are sm_100a's (docs/facts.md section 1.12).
    assert _scan_one(tmp_path, fixture("k_sm100f.cubin")) == ("sm_100f",)


def _caveat_only_wheel(tmp_path: Path) -> Path:
    """A platform wheel for one CPython whose only lint output is the one-file caveat."""
    return binary_wheel(
        tmp_path,
        "solo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        {"solo/__init__.py": b"x = 1\n", "solo/core.py": b"y = 2\n"},
    )


def test_the_one_file_caveat_is_a_note_and_lint_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _caveat_only_wheel(tmp_path)
    assert main(["lint", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"note: {path}: this wheel is for manylinux_2_28_x86_64 and ")
    assert "one file cannot tell" in out
    assert "warning:" not in out
    assert main(["lint", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == []
    assert [n["code"] for n in doc["notes"]] == ["one-wheel"]


def test_a_real_finding_beside_the_caveat_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = binary_wheel(
        tmp_path, "gpu-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", {"gpu/libk.so": KERNELS}
    )
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\nwarning: " in "\n" + out
    assert f"note: {path}: this wheel is for" in out


def test_doctor_says_a_scanned_wheel_holds_no_kernels() -> None:
    """A scan with no library holding kernels is not '0 libraries ... each runs on every
    visible GPU'."""
    sha = "ab" * 32
    torch = inst("torch", "2.13.0+cu130", TORCH_FILE, sha256=sha)
    (c,) = check_installed([torch], BUILTIN, parse_target(BLACKWELL), scans=scanned(sha))
    assert c.kernels == (
        f"read from the installed wheel (sha256 {sha[:12]}): it holds no GPU kernels"
    )
