"""A METADATA file's header block read without the email package gives what
``email.parser`` gives (policy compat32), or leaves the file to it.

``_fields`` answers only for a block of ``Name: value`` lines and their continuation
lines; each of its answers is compared with the fields the feedparser stored (its
``raw_items``, before compat32's fetch, which returns a value without non-ASCII bytes
as stored), and ``parse_metadata`` with the email-only reading it replaced, on
generated files, a table of odd ones, the shipped snapshot's files and the METADATA of
every distribution installed beside the tests.
"""

from __future__ import annotations

import email.parser
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resolver_hook._data import data_path
from resolver_hook.index import metadata
from resolver_hook.index.errors import PageError
from resolver_hook.index.metadata import Metadata, parse_metadata

URL = "https://index.example/pkg-1.0-py3-none-any.whl.metadata"


def email_only(data: bytes) -> Metadata | str:
    """``parse_metadata`` as it was before the fast path (its error as text)."""
    message = email.parser.BytesParser().parsebytes(data, headersonly=True)
    name, version = message.get("Name"), message.get("Version")
    if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
        return f"{URL}: not a core metadata file (no Name or Version)"
    requires_python = message.get("Requires-Python")
    return Metadata(
        url=URL,
        name=name.strip(),
        version=version.strip(),
        requires_dist=tuple(str(v).strip() for v in message.get_all("Requires-Dist") or ()),
        requires_python=str(requires_python).strip() if requires_python else None,
    )


def parsed(data: bytes) -> Metadata | str:
    try:
        return parse_metadata(data, URL)
    except PageError as exc:
        return str(exc)


def fast(data: bytes) -> dict[str, list[str]] | None:
    return metadata._fields(data.decode("ascii", "surrogateescape"))


def check(data: bytes) -> bool:
    """Assert the fast path, where it answers, and parse_metadata agree with the email
    package; whether the fast path answered."""
    message = email.parser.BytesParser().parsebytes(data, headersonly=True)
    fields = fast(data)
    if fields is not None:
        stored: dict[str, list[str]] = {}
        for name, value in message.raw_items():
            stored.setdefault(name.lower(), []).append(value)
        assert fields == stored
        # Nothing the feedparser noted as odd, no envelope line: what it read as plain fields.
        assert (message.defects, message.get_unixfrom()) == ([], None)
    assert parsed(data) == email_only(data)
    return fields is not None


# Pieces of generated files: the names, separators, values and line ends a METADATA file
# has, and the ones a broken or hostile one may have (non-ASCII bytes as UTF-8 and raw,
# the characters str.splitlines splits on and the feedparser does not).
NAMES = [
    *[b"Name", b"name", b"NAME", b"Version", b"version", b"Requires-Dist", b"requires-dist"],
    *[b"Requires-Python", b"REQUIRES-PYTHON", b"Author", b"Summary", b"X-Odd_name!~"],
    *[b"", b"From", b"N\xc3\xa4me", b"Na me", b"Name ", b"\tName", b"Name\x00"],
]
VALUE_PIECES = [
    *[b"torch", b">=2.0", b"1.0", b" ", b"\t", b":", b";", b"python_version < '3.11'"],
    *[b'extra == "x"', b"\xc3\xa9", b"\xff", b"\x00", b"\x0b", b"\x0c", b"\x1c", b"\xc2\x85"],
    *[b"\xe2\x80\xa8", b"From "],
]
ENDS = [b"\n", b"\r\n", b"\r", b""]

values = st.lists(st.sampled_from(VALUE_PIECES), max_size=6).map(b"".join)
ends = st.sampled_from(ENDS)
field_lines = st.tuples(
    st.sampled_from(NAMES), st.sampled_from([b":", b": ", b":\t", b":  "]), values, ends
).map(b"".join)
continuations = st.tuples(st.sampled_from([b" ", b"\t", b"        |"]), values, ends).map(b"".join)
lines = st.one_of(
    field_lines,
    field_lines,
    continuations,
    ends,  # an empty line: the end of the header block
    st.tuples(st.just(b"From "), values, ends).map(b"".join),
    st.binary(max_size=12),
)
files = st.lists(lines, max_size=14).map(b"".join)


@settings(max_examples=600)
@given(files)
@example(b"Name: a\nVersion: 1\nRequires-Dist: x;\n  extra == 'y'\n")
@example(b"Name: a\r\nVersion: 1\r\n\r\nRequires-Dist: in the body\r\n")
def test_generated_files_read_as_the_email_package_reads_them(data: bytes) -> None:
    check(data)


@settings(max_examples=200)
@given(st.binary(max_size=200))
def test_any_bytes_read_as_the_email_package_reads_them(data: bytes) -> None:
    check(data)


SPLIT = [b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e"]
PLAIN = b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nRequires-Dist: torch>=2.1\n"

# (id, file, whether the fast path answers)
CASES = [
    ("plain", PLAIN, True),
    ("plain, body", PLAIN + b"\nText\nFrom here\n:\n", True),
    ("no field", b"", True),
    ("folded Requires-Dist", PLAIN + b"Requires-Dist: numpy;\n\tpython_version<'3.11'\n", True),
    ("folded, empty first line", b"Name:\n  pkg\nVersion: 1\n", True),
    ("folded, blank continuation", b"Name: pkg\n \nVersion: 1\n", True),
    ("CRLF", PLAIN.replace(b"\n", b"\r\n") + b"\r\nbody\r\n", True),
    ("lone CR", PLAIN.replace(b"\n", b"\r") + b"\rbody\r", True),
    ("mixed line ends", b"Name: pkg\r\nVersion: 1\rRequires-Dist: a\n\r\n", True),
    ("CR CR LF", b"Name: pkg\r\r\nVersion: 1\n", True),
    ("tabs", b"Name:\tpkg\t\nVersion:\t \t1\n", True),
    ("empty values", b"Name:\nVersion: \nRequires-Python:\t\n", True),
    ("duplicate Name", b"Name: a\nName: b\nVersion: 1\n", True),
    ("lower-case names", b"name: pkg\nversion: 1\nrequires-dist: a\nREQUIRES-DIST: b\n", True),
    ("no end of line at the end", b"Name: pkg\nVersion: 1", True),
    ("non-ASCII Author", b"Name: pkg\nVersion: 1\nAuthor: J\xc3\xb6rg\n", True),
    ("odd name characters", b"X!#$%&'*+-.^_`|~: 1\nName: pkg\nVersion: 1\n", True),
    # Line ends for str.splitlines, not for the feedparser: one field, then an empty line.
    *[(f"{ch!r} in a line", b"Name: pkg" + ch + b"Version: 1\n", False) for ch in SPLIT],
    *[(f"{ch!r} then LF", b"Name: pkg" + ch + b"\nVersion: 1\n", False) for ch in SPLIT],
    ("form feed in the body", b"Name: pkg\nVersion: 1\n\n\x0c\n", True),
    ("non-ASCII in Name", b"Name: p\xc3\xa4kg\nVersion: 1\n", None),
    ("non-ASCII in Requires-Dist", PLAIN + b"Requires-Dist: \xff\n", None),
    ("a line without a colon", b"Name: pkg\nVersion: 1\nno colon\nRequires-Dist: a\n", False),
    ("a line with no name", b"Name: pkg\n: 1\nVersion: 1\n", False),
    ("a first line that is a continuation", b" x\nName: pkg\nVersion: 1\n", False),
    ("a continuation after a nameless line", b"Name: pkg\n:x\n more\nVersion: 1\n", False),
    ("From line first", b"From someone\nName: pkg\nVersion: 1\n", False),
    ("From line inside", b"Name: pkg\nFrom x\nVersion: 1\n", False),
    ("From line last", b"Name: pkg\nVersion: 1\nFrom x\n", False),
    ("a space before the colon", b"Name : pkg\nVersion: 1\n", False),
    ("a control character in a name", b"Name: pkg\nX\x00: 1\nVersion: 1\n", False),
    ("DEL in a name", b"Name: pkg\nX\x7f: 1\nVersion: 1\n", False),
    ("a line starting with a non-ASCII byte", b"Name: pkg\n\xc3\xa9: 1\nVersion: 1\n", False),
    ("very long", PLAIN + b"Summary: " + b"s" * 100_000 + b"\nRequires-Dist: b\n", True),
]


@pytest.mark.parametrize(("data", "answers"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_odd_files_are_left_to_the_email_package(
    data: bytes, answers: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``answers`` None: the fast path reads the block but a field the planner reads
    holds non-ASCII bytes, which compat32 returns as a Header: email reads it."""
    assert check(data) == (answers is not False)
    used: list[bytes] = []
    real: Callable[[bytes], dict[str, Sequence[object]]] = metadata._email_fields
    monkeypatch.setattr(metadata, "_email_fields", lambda d: used.append(d) or real(d))
    parsed(data)
    assert used == ([] if answers else [data])


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"])
def test_line_ends_across_the_parsers_8192_character_reads(end: bytes) -> None:
    """email.parser feeds the text in reads of 8192 characters; a line end split by one
    (\\r, then \\n) or one at its edge is still one line end."""
    for pad in range(8170, 8200):
        data = b"Name: pkg" + end + b"Summary: " + b"s" * pad + end + b"Requires-Dist: a" + end
        data += b" b" + end + end + b"body" + end
        assert check(data)


def snapshot_files() -> list[bytes]:
    doc = json.loads(Path(data_path("inventory", "data", "snapshot.json")).read_text("utf-8"))
    found: list[bytes] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("metadata"), str):
                found.append(node["metadata"].encode("utf-8"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return found


def test_the_shipped_snapshots_files_take_the_fast_path() -> None:
    files = snapshot_files()
    assert len(files) > 10
    assert all(check(data) for data in files)


def test_installed_distributions_metadata_reads_as_the_email_package_reads_it() -> None:
    """Real METADATA files: every distribution beside the tests (pytest, hypothesis,
    packaging...), with their long descriptions and non-ASCII authors."""
    real = [
        path.read_bytes()
        for entry in sys.path
        if Path(entry).is_dir()
        for path in sorted(Path(entry).glob("*.dist-info/METADATA"))
    ]
    assert len(real) > 5
    answered = [check(data) for data in real]
    assert sum(answered) > len(real) // 2
