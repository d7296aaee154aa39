"""Threat model: arbitrary bytes into every hand-written reader, and memory on the worst.

Each reader either returns or raises its own module's error (what the CLI turns into
one ``error:`` line): never IndexError, struct.error, RecursionError, MemoryError,
ValueError from an int conversion. Inputs are random bytes and real seeds (nvcc-built
objects, CUDA's host_config.h shape, saved index pages, the built-in manifests) with
random patches. Then each reader's hostile fixtures must stay under 64 MiB of peak
traced memory (resolver_hook/limits.py holds the bounds that make it so).
"""

# ruff: noqa: PT017 - here raising is one allowed outcome of many, not the expected one

from __future__ import annotations

import contextlib
import struct
import tracemalloc
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resolver_hook.binaries.elf import ElfError, parse_elf
from resolver_hook.binaries.fatbin import FATBIN_MAGIC, FatbinError, parse_fatbin
from resolver_hook.errors import OperationalError, ResolverHookError, UsageError
from resolver_hook.index.errors import PageError
from resolver_hook.index.htmlpage import parse_html
from resolver_hook.index.jsonpage import parse_json
from resolver_hook.index.metadata import parse_metadata
from resolver_hook.limits import MAX_FATBIN_ENTRIES, MAX_PAGE_LINKS, MAX_REQUIREMENT_LINES
from resolver_hook.manifest import ManifestError, loads_manifest
from resolver_hook.publish.indexpage import import_manifest
from resolver_hook.reqfile import parse_requirements
from resolver_hook.toolchain.hostconfig import HostConfigError, evaluate, parse_host_config
from tests.adversarial.test_archives import many_sections_one_long_name
from tests.cudawheels import CPU, KERNELS, PTX
from tests.test_toolchain import header

DATA = Path(__file__).resolve().parent.parent / "data"
PAGES = [p.read_bytes() for p in sorted((DATA / "index").glob("*.html"))]
MANIFESTS = [
    f.read_bytes()
    for f in sorted(resources.files("resolver_hook").joinpath("manifests").iterdir())
    if f.name.endswith(".toml")
]
JSON_PAGES = [
    (
        '{"meta": {"api-version": "1.1"}, "name": "pkg", "files": [{"filename": '
        f'"pkg-1.0-py3-none-any.whl", "url": "pkg-1.0-py3-none-any.whl", "hashes": '
        f'{{"sha256": "{"ab" * 32}"}}, "requires-python": ">=3.9", "yanked": "bad", '
        '"core-metadata": {"sha256": "' + "cd" * 32 + '"}}]}'
    ).encode()
]
METADATA = b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nRequires-Dist: torch>=2.1\n\nText\n"
REQUIREMENTS = b"torch>=2.13\n-r other.txt\nflash-attn @ https://x.org/f-1.0-py3-none-any.whl\n"
HOST_CONFIG = header(15).encode()
PAGE_URL = "https://index.example/simple/pkg/"
MIB = 1 << 20
LIMIT_MIB = 64

FEW = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _fatbin_of(obj: bytes) -> bytes:
    sec = parse_elf(obj).section(".nv_fatbin")
    assert sec is not None
    return obj[sec.offset : sec.offset + sec.size]


FATBINS = [_fatbin_of(KERNELS), _fatbin_of(PTX)]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with random bytes written over it at random places, maybe cut short."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 8))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        patch = draw(st.binary(min_size=1, max_size=16))
        data[at : at + len(patch)] = patch
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


def inputs(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=512), mutated(seeds))


def text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# --- arbitrary bytes ------------------------------------------------------------------


@FEW
@given(inputs([KERNELS, PTX, CPU]))
def test_elf_reader_raises_only_elf_error(data: bytes) -> None:
    with contextlib.suppress(ElfError):
        parse_elf(data)


@FEW
@given(inputs(FATBINS))
def test_fatbin_reader_raises_only_fatbin_error(data: bytes) -> None:
    for little in (True, False):
        with contextlib.suppress(FatbinError):
            parse_fatbin(data, little_endian=little)


@FEW
@given(inputs([HOST_CONFIG]), st.sampled_from(["15", "16", "08", "9" * 30]))
def test_host_config_evaluator_raises_only_its_error(data: bytes, gnu: str) -> None:
    try:
        config = parse_host_config(text(data))
    except HostConfigError:
        return
    evaluate(config, {"__CUDACC__": "1", "__GNUC__": gnu})  # never raises


@FEW
@given(inputs(PAGES))
@example(b"<![OCTYPE html>")  # html.parser asserted on it (Python 3.11.7)
@example(b"<!DOCTYPE html [ x")
def test_index_page_parser_raises_only_its_errors(data: bytes) -> None:
    try:
        links = parse_html(text(data), PAGE_URL)
    except PageError:
        return
    try:
        import_manifest(links)
    except (OperationalError, UsageError) as exc:  # what the import itself says, no more
        assert exc.message.startswith(("no wheels on the page", "the page lists wheels of"))


def test_an_unknown_marked_section_is_skipped_like_a_browser_does() -> None:
    links = parse_html('<![OCTYPE html><a href="x-1.0-py3-none-any.whl">x</a>', PAGE_URL)
    assert [link.url for link in links] == [PAGE_URL + "x-1.0-py3-none-any.whl"]


@FEW
@given(inputs(JSON_PAGES))
def test_json_page_parser_raises_only_page_error(data: bytes) -> None:
    with contextlib.suppress(PageError):
        parse_json(text(data), PAGE_URL)


@FEW
@given(inputs([METADATA]))
def test_metadata_parser_raises_only_page_error(data: bytes) -> None:
    with contextlib.suppress(PageError):
        parse_metadata(data, PAGE_URL + "pkg-1.0-py3-none-any.whl.metadata")


@FEW
@given(inputs([REQUIREMENTS]))
def test_requirement_reader_raises_only_usage_error(data: bytes) -> None:
    try:
        parse_requirements(text(data), source="r.txt", read=lambda path: "numpy\n", env={})
    except ResolverHookError as exc:
        assert exc.exit_code == 2


@FEW
@given(inputs(MANIFESTS))
def test_manifest_loader_raises_only_manifest_error(data: bytes) -> None:
    with contextlib.suppress(ManifestError):
        loads_manifest(text(data), source="m.toml")


# --- hostile fixtures: bounded memory ---------------------------------------------------


def _fatbin_entries(count: int) -> bytes:
    entry = struct.pack("<HHIQ", 2, 0x101, 64, 0) + bytes(8)
    entry += struct.pack("<HHI", 0, 0, 90) + bytes(4) + struct.pack("<Q", 0) + bytes(16)
    body = entry * count
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def _elf_extended_count() -> bytes:
    """Section count 0 in the header, 65,535 in section 0 (gABI extended numbering)."""
    obj = bytearray(many_sections_one_long_name())
    struct.pack_into("<H", obj, 60, 0)  # e_shnum
    shoff = struct.unpack_from("<Q", obj, 40)[0]
    struct.pack_into("<Q", obj, shoff + 32, 65_535)  # sh_size of section 0
    return bytes(obj)


def _requirements_many_lines() -> str:
    return "ab\n" * (MAX_REQUIREMENT_LINES * 50)


HOSTILE: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
    ("elf-65535-sections", many_sections_one_long_name, parse_elf),
    ("elf-extended-count", _elf_extended_count, parse_elf),
    ("fatbin-too-many-entries", lambda: _fatbin_entries(MAX_FATBIN_ENTRIES + 1), parse_fatbin),
    ("fatbin-32mb-padding", lambda: bytes(32 * MIB), parse_fatbin),
    (
        "host-config-hostile",
        lambda: (
            "".join(
                f"#if {c}\n#error -- x\n#endif\n"
                for c in ("!" * 5000 + "1", "(" * 500 + "1" + ")" * 500, "9" * 400, "08")
            )
            + "#if 1\n" * 10_000
            + "#endif\n" * 10_000
        ),
        lambda t: evaluate(parse_host_config(t), {"__GNUC__": "16"}),
    ),
    (
        "page-too-many-links",
        lambda: '<a href="x-1.0-py3-none-any.whl">x</a>' * (MAX_PAGE_LINKS + 1),
        lambda t: parse_html(t, PAGE_URL),
    ),
    (
        "page-long-base",
        lambda: '<base href="https://e.org/' + "a/" * 4000 + '">' + '<a href="x.whl">' * 50_000,
        lambda t: parse_html(t, PAGE_URL),
    ),
    (
        "page-unclosed-tag",
        lambda: '<a href="' + "x" * (30 * MIB),
        lambda t: parse_html(t, PAGE_URL),
    ),
    (
        "requirements-many-lines",
        _requirements_many_lines,
        lambda t: parse_requirements(t, source="r.txt"),
    ),
    (
        "requirements-5000-digits",
        lambda: "".join(f"a{i}=={'1' * 5000}\n" for i in range(200)),
        lambda t: parse_requirements(t, source="r.txt"),
    ),
    (
        "manifest-deep",
        lambda: "x = " + "[" * 100_000 + "]" * 100_000,
        lambda t: loads_manifest(t, source="m.toml"),
    ),
    (
        "manifest-matrix",
        lambda: (
            'schema = 1\n[package]\nname = "p"\n[[matrix]]\n'
            'url = "https://x.org/p-1.0+{a}{b}{c}{d}-py3-none-any.whl"\n[matrix.axes]\n'
            + "".join(f"{k} = [{', '.join(repr(str(i)) for i in range(40))}]\n" for k in "abcd")
        ),
        lambda t: loads_manifest(t, source="m.toml"),
    ),
    (
        "manifest-many-tables",
        lambda: "a = [" + "{}," * (600_000) + "]",
        lambda t: loads_manifest(t, source="m.toml"),
    ),
]


@pytest.mark.parametrize(("name", "make", "read"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_fixture_peak_memory(
    name: str, make: Callable[[], object], read: Callable[[object], object]
) -> None:
    fixture = make()  # built before tracing: only the reader's own memory counts
    tracemalloc.start()
    try:
        # Refusing is one right answer; any other exception fails the test.
        with contextlib.suppress(ResolverHookError, HostConfigError):
            read(fixture)
        peak = tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()
    assert peak < LIMIT_MIB, f"{name}: {peak:.0f} MiB"
