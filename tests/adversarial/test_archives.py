"""Threat model: hostile wheels and sdists given to ``scan`` and ``lint``.

Archives come from anywhere (a release page, a colleague, PyPI). Their headers may lie:
a member claiming 65,535 section headers that all name one long string, a pyproject
with the wrong types, build code of one 200k-character expression. Reading them ends
in a finding or one ``error:`` line, in bounded memory, never a traceback.
"""

from __future__ import annotations

import os
import struct
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from resolver_hook.binaries import scan as scan_module
from resolver_hook.binaries.elf import ElfError, parse_elf
from resolver_hook.binaries.scan import ScanError, scan_wheel
from resolver_hook.cli import main
from resolver_hook.limits import MAX_ELF_SECTION_NAME
from resolver_hook.publish.lint import LintError, lint_paths
from tests.cudawheels import metadata, sdist

MIB = 1 << 20
_T = TypeVar("_T")


def peak_mib(call: Callable[[], _T]) -> tuple[_T, float]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def many_sections_one_long_name(name_bytes: int = 20_000, count: int = 65_535) -> bytes:
    """A 64-bit ELF object whose ``count`` section headers all name one long string."""
    names = b"A" * name_bytes + b"\0"
    shoff = 64 + len(names)
    ehdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    ehdr += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, count, 1)
    shdr = struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, 64, len(names), 0, 0, 0, 0)
    return ehdr + names + shdr * count


def test_section_names_are_bounded_in_memory() -> None:
    obj, peak = peak_mib(lambda: parse_elf(many_sections_one_long_name()))
    assert len(obj.sections) == 65_535
    assert {len(s.name) for s in obj.sections} == {MAX_ELF_SECTION_NAME}
    assert peak < 64, f"{peak:.0f} MiB"  # was 65,535 copies of a 20 KB name: 1.3 GB


def test_distinct_indices_into_one_long_name_are_each_cut() -> None:
    # Every header names a different suffix of one 16 MiB string: each name is found
    # within MAX_ELF_SECTION_NAME bytes of its start, not by a search to the string's end.
    long = (16 << 20) - 1
    obj = bytearray(many_sections_one_long_name(name_bytes=long, count=4096))
    for i in range(4096):
        struct.pack_into("<I", obj, 64 + long + 1 + i * 64, i * 4096)
    parsed = parse_elf(bytes(obj))
    assert [len(s.name) for s in parsed.sections] == [MAX_ELF_SECTION_NAME] * 4096


def test_a_name_past_the_tables_last_nul_is_refused() -> None:
    obj = bytearray(many_sections_one_long_name(name_bytes=100, count=2))
    obj[64 + 100] = ord("A")  # the table's only NUL is gone
    with pytest.raises(ElfError, match="string at index 0 is not NUL-terminated"):
        parse_elf(bytes(obj))


def hostile_wheel(tmp_path: Path, member: bytes, pad: int) -> Path:
    """A wheel whose one .so is ``member`` preceded by ``pad`` zero bytes and some noise
    (so it compresses below the zip-bomb ratio, as the issue's 2.5 MB wheel did)."""
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: x\nVersion: 1.0\n")
        with zf.open("x/lib.so", "w", force_zip64=True) as f:
            f.write(member[:64])  # the ELF header; its e_shoff points past the padding
            f.write(os.urandom(pad // 150))
            f.write(bytes(pad - pad // 150))
            f.write(member[64:])
    return path


def test_scan_of_a_member_claiming_65535_sections_stays_small(tmp_path: Path) -> None:
    pad = 40 * MIB  # above the in-memory size: read as a stream, as the 400 MB member was
    obj = many_sections_one_long_name()
    # Move the name table and headers after the padding.
    names_at = 64 + pad
    shoff = names_at + 20_001
    head = bytearray(obj[:64])
    struct.pack_into("<Q", head, 40, shoff)
    tail = bytearray(obj[64:])
    shdr = struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, names_at, 20_001, 0, 0, 0, 0)
    tail[20_001:] = shdr * 65_535
    path = hostile_wheel(tmp_path, bytes(head) + bytes(tail), pad)
    report, peak = peak_mib(lambda: scan_wheel(path))
    assert [o.path for o in report.objects] == ["x/lib.so"]
    assert peak < 64, f"{peak:.0f} MiB"  # was 1.27 GB


def test_archive_member_count_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "MAX_ARCHIVE_MEMBERS", 10)
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(11):
            zf.writestr(f"x/{i}.py", "")
    with pytest.raises(ScanError, match="11 members, more than the 10 allowed"):
        scan_wheel(path)


def test_wheel_filename_with_a_200_digit_version_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file name holds at most 255 bytes: 200 digits is past the version bound.
    path = tmp_path / ("x-1." + "1" * 200 + "-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x/__init__.py", "")
    assert main(["scan", str(path)]) == 1
    err = capsys.readouterr().err
    assert "not a wheel file name" in err
    assert "Traceback" not in err


# --- lint: a pyproject with the wrong types ---------------------------------------------


def sdist_with(tmp_path: Path, pyproject: str, **files: str) -> Path:
    return sdist(
        tmp_path,
        "pkg",
        "1.0",
        {"PKG-INFO": metadata("pkg", "1.0"), "pyproject.toml": pyproject, **files},
    )


@pytest.mark.parametrize(
    ("pyproject", "key"),
    [
        ('build-system = "x"\n', "[build-system] must be a table"),
        ("[build-system]\nbackend-path = [1]\n", "build-system.backend-path"),
        ('[build-system]\nbackend-path = "abc"\n', "build-system.backend-path"),
        ("[build-system]\nrequires = 5\n", "build-system.requires"),
        ('[build-system]\nrequires = ["x", 5]\n', "build-system.requires"),
        ("[build-system]\nbuild-backend = 5\n", "build-system.build-backend"),
        ("[project]\nname = 5\n", "project.name"),
        ('project = "x"\n', "[project] must be a table"),
    ],
    ids=[
        "build-system-string",
        "backend-path-int",
        "backend-path-string",
        "requires-int",
        "requires-mixed",
        "build-backend-int",
        "name-int",
        "project-string",
    ],
)
def test_sdist_pyproject_with_wrong_types_is_one_error(
    pyproject: str, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sdist_with(tmp_path, pyproject)
    _, errors = lint_paths([path])
    assert [type(e) for e in errors] == [LintError]
    assert key in errors[0].message
    assert errors[0].message.startswith(f"{path.name}: pyproject.toml: ")
    assert main(["lint", str(path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("pyproject", "key"),
    [('[project]\nname = 5\nversion = "1"\n', "project.name"), ('build-system = "x"\n', "")],
)
def test_pyproject_file_with_wrong_types_is_one_error(
    pyproject: str, key: str, tmp_path: Path
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(pyproject)
    _, errors = lint_paths([path])
    assert [type(e) for e in errors] == [LintError]
    assert key in errors[0].message


@pytest.mark.parametrize(
    "expression",
    ["-" * 200_000 + "1", "not " * 50_000 + "1", "1+" * 100_000 + "1", "a." * 100_000 + "b"],
    ids=["unary-minus", "not", "sum", "attributes"],
)
def test_200k_character_backend_expression_is_not_a_crash(expression: str, tmp_path: Path) -> None:
    path = sdist_with(
        tmp_path,
        '[build-system]\nrequires = []\nbuild-backend = "be"\nbackend-path = ["_be"]\n',
        **{"_be/be.py": f"x = {expression}\n", "pkg/__init__.py": f"x = {expression}\n"},
    )
    findings, errors = lint_paths([path])
    assert errors == []
    assert all(f.file == str(path) for f in findings)


@pytest.mark.parametrize("where", ["sdist", "file"])
def test_deeply_nested_toml_in_a_linted_pyproject_is_one_error(where: str, tmp_path: Path) -> None:
    text = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    if where == "sdist":
        path = sdist_with(tmp_path, text)
    else:
        path = tmp_path / "pyproject.toml"
        path.write_text(text)
    _, errors = lint_paths([path])
    assert [type(e) for e in errors] == [LintError]
    assert "not valid TOML: nested too deeply" in errors[0].message


def test_scan_url_prefix_with_shell_metacharacters_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x/__init__.py", "")
    out = tmp_path / "m.toml"
    prefix = "https://example.org/a;touch$IFS/tmp/x;/"
    assert main(["scan", str(path), "-o", str(out), "--url-prefix", prefix]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --url-prefix: ")
    assert "contains ';'" in err
    assert not out.exists()
