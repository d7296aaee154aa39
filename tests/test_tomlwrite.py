"""Tests for resolver_hook.tomlwrite: what it writes reads back identically with tomllib."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resolver_hook.errors import OperationalError
from resolver_hook.tomlwrite import dumps, quote_string, write_atomic

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param({}, "", id="empty"),
        pytest.param({"schema": 1}, "schema = 1\n", id="int"),
        pytest.param({"ok": True, "no": False}, "ok = true\nno = false\n", id="bools"),
        pytest.param({"a b": "x"}, '"a b" = "x"\n', id="quoted-key"),
        pytest.param({"gpu": ["sm_90a", "sm_100f"]}, 'gpu = ["sm_90a", "sm_100f"]\n', id="array"),
        pytest.param(
            {"wheel": [{"url": "u1"}, {"url": "u2"}], "schema": 1},
            'schema = 1\n\n[[wheel]]\nurl = "u1"\n\n[[wheel]]\nurl = "u2"\n',
            id="values-before-table-arrays",
        ),
        pytest.param(
            {"package": {"name": "tilert", "extra": {"k": "v"}}},
            '[package]\nname = "tilert"\n\n[package.extra]\nk = "v"\n',
            id="nested-table",
        ),
    ],
)
def test_dumps_exact_text(doc: dict[str, Any], expected: str) -> None:
    assert dumps(doc) == expected
    assert tomllib.loads(expected) == doc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a"b', r'"a\"b"'),
        ("back\\slash", r'"back\\slash"'),
        ("tab\tnl\ncr\r", r'"tab\tnl\ncr\r"'),
        ("\x00\x1f\x7f", r'"\u0000\u001F\u007F"'),
        ("ünïcødé ✓", '"ünïcødé ✓"'),
    ],
)
def test_quote_string_escapes(text: str, expected: str) -> None:
    assert quote_string(text) == expected
    assert tomllib.loads(f"k = {expected}")["k"] == text


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        pytest.param({"f": 1.5}, TypeError, id="float"),
        pytest.param({"n": None}, TypeError, id="none"),
        pytest.param({"big": 1 << 63}, ValueError, id="int-too-big"),
        pytest.param({"mixed": [{"a": "b"}, "c"]}, TypeError, id="mixed-array"),
        pytest.param({"s": "\ud800"}, ValueError, id="lone-surrogate"),
        pytest.param({1: "x"}, TypeError, id="non-string-key"),
    ],
)
def test_dumps_refuses_what_it_cannot_round_trip(doc: dict[Any, Any], error: type) -> None:
    with pytest.raises(error):
        dumps(doc)


_keys = st.text(max_size=12)
_scalars = st.one_of(
    st.text(), st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), st.booleans()
)
_str_lists = st.lists(st.text(), max_size=4)


def _tables(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_keys, children, max_size=4)


_values = st.recursive(
    st.one_of(_scalars, _str_lists),
    lambda inner: st.one_of(_tables(inner), st.lists(_tables(inner), min_size=1, max_size=3)),
    max_leaves=12,
)
_documents = st.dictionaries(_keys, _values, max_size=5)


@given(_documents)
def test_round_trip_through_tomllib(doc: dict[str, Any]) -> None:
    assert tomllib.loads(dumps(doc)) == doc


@given(st.text())
def test_any_string_round_trips(text: str) -> None:
    assert tomllib.loads(dumps({text: text, "list": [text, text]})) == {
        text: text,
        "list": [text, text],
    }


def test_write_atomic_replaces_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "manifest.toml"
    write_atomic(target, "a = 1\n")
    assert target.read_text() == "a = 1\n"
    assert target.stat().st_mode & 0o777 == 0o644
    os.chmod(target, 0o600)
    write_atomic(target, "a = 2\n")
    assert target.read_text() == "a = 2\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.toml"]


def test_write_atomic_leaves_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "manifest.toml"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "bad \ud800")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.toml"]


@pytest.mark.parametrize("where", ["missing-folder", "is-a-folder"])
def test_write_atomic_file_system_error_names_the_path(tmp_path: Path, where: str) -> None:
    # `scan -o` and `manifest import -o` print this as one error: line, not a traceback.
    target = tmp_path / ("no/m.toml" if where == "missing-folder" else "m.toml")
    if where == "is-a-folder":
        target.mkdir()
        (target / "keep").write_text("x")
    with pytest.raises(OperationalError, match=f"^{re.escape(str(target))}: cannot write: "):
        write_atomic(target, "a = 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        [] if where == "missing-folder" else ["m.toml"]
    )
