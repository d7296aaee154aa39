"""The inventory's Python check on wheel tags is ``packaging``'s verdict.

The candidates of a page are filtered by the flavour's Pythons on the name's tag fields
(a name that does not fit is never parsed): the check must say what the target's
``packaging.tags`` list says: abi3 from that CPython down (``cp38-abi3`` installs on
3.14), none on a free-threaded build, ``py3`` and ``py2.py3`` anywhere, compressed tag
sets as every combination.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from resolver_hook.host.profile import compute_tags
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import candidates
from resolver_hook.manifest.model import IndexFlavour

X86 = "manylinux_2_28_x86_64"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.13t", "3.14t"]
_INTERPS = ["cp38", "cp310", "cp311", "cp312", "cp313", "cp314", "cp315", "py3", "py2", "py312"]
_INTERPS += ["pp310", "cp39", "py310"]
_ABIS = ["abi3", "none", "cp312", "cp313", "cp313t", "cp314t", "cp38", "abi3t", "pypy310_pp73"]


def _tag_field(values: list[str]) -> st.SearchStrategy[str]:
    """One tag field: a value, or a compressed set of them (``py2.py3``)."""
    return st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True).map(".".join)


def _accepted(filename: str, python: str) -> bool:
    """``packaging``'s verdict: a tag of the wheel is in the target's tag list."""
    major, minor = python.removesuffix("t").split(".")
    tags = set(
        compute_tags(
            "linux",
            "x86_64",
            (int(major), int(minor)),
            libc_version="2.35",
            free_threaded=python.endswith("t"),
        )
    )
    return any(str(t) in tags for t in parse_wheel_filename(filename)[3])


@settings(max_examples=400)
@given(
    _tag_field(_INTERPS),
    _tag_field(_ABIS),
    st.lists(st.sampled_from(PYTHONS), min_size=1, max_size=3, unique=True),
)
def test_the_python_check_is_packagings_verdict(interp: str, abi: str, pythons: list[str]) -> None:
    filename = f"pkg-1.0-{interp}-{abi}-{X86}.whl"
    flavour = IndexFlavour(
        url="https://example.org/pkg/",
        name="pkg",  # type: ignore[arg-type]
        version=Version("1.0"),
        platforms=(X86,),
        python=tuple(pythons),
    )
    page = Page(
        url=flavour.url or "", links=(Link(url=f"https://x.org/{filename}", filename=filename),)
    )
    want = any(_accepted(filename, p) for p in pythons)
    assert bool(candidates(flavour, page)) == want
    # The check on the name's fields is what decides (never a wheel the parse would keep
    # left out, never one it would refuse let through).
    module = sys.modules["resolver_hook.inventory.candidates"]
    allowed = module._python_pairs(frozenset(pythons))
    # The page's name grouped by what its tag fields say (a wheel's name: one group).
    _rests, groups = module._PageFiles(page).groups()
    (fields,) = groups
    fits = module._fields_fit(fields, {("linux", "x86_64")}, allowed)
    assert fits == want


def test_abi3_from_cp38_is_every_newer_cpython_and_no_free_threaded_one() -> None:
    name = f"tilelang-0.1.15-cp38-abi3-{X86}.whl"
    assert [p for p in PYTHONS if _accepted(name, p)] == ["3.10", "3.11", "3.12", "3.13", "3.14"]
    flavour = IndexFlavour(
        url="https://example.org/tilelang/",
        name="tilelang",  # type: ignore[arg-type]
        version=Version("0.1.13"),
        platforms=(X86,),
        python=("3.10", "3.14"),
    )
    page = Page(url=flavour.url or "", links=(Link(url=f"https://x.org/{name}", filename=name),))
    assert [c.filename for c in candidates(flavour, page)] == [name]


def test_a_machines_tags_are_listed_once_then_read_from_the_user_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """packaging lists the tags of a described machine once; a later process reads
    them from the user cache, the same list, for the same arguments only."""
    first = compute_tags("linux", "x86_64", (3, 12), libc_version="2.35")
    assert first[0] == "cp312-cp312-manylinux_2_35_x86_64"
    profile = sys.modules["resolver_hook.host.profile"]

    def unasked(*_: object, **__: object) -> list[object]:
        raise AssertionError("the tags were listed again")

    monkeypatch.setattr(profile, "cpython_tags", unasked)
    assert compute_tags("linux", "x86_64", (3, 12), libc_version="2.35") == first
    with pytest.raises(AssertionError, match="listed again"):  # other arguments: listed
        compute_tags("linux", "x86_64", (3, 12), libc_version="2.39")
    monkeypatch.undo()
    # Another glibc for the same Python replaced the kept list: listed again, the same.
    assert compute_tags("linux", "x86_64", (3, 12), libc_version="2.35") == first


def test_the_pairs_of_each_python_are_listed_once_then_read_from_the_user_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The (interpreter, ABI) pairs a flavour's Pythons accept are packaging's, listed
    once and kept in the user cache: a later process reads the same pairs, for every
    CPython from 3.0 to 3.20, free-threaded or not (and none for what is no CPython),
    without listing them; a kept file that holds anything else is not used."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    pythons = [f"3.{minor}{free}" for minor in range(21) for free in ("", "t")]
    pythons += ["2.7", "3", "pypy3.10"]
    module._python_pairs.cache_clear()
    module._pairs_of.cache_clear()
    module._kept_pairs.cache_clear()
    listed = {p: module._listed_pairs(p) for p in pythons}
    assert {("cp312", "cp312"), ("cp38", "abi3"), ("py3", "none")} <= listed["3.12"]
    assert listed["3"] == listed["pypy3.10"] == frozenset()
    for p in pythons:
        assert module._python_pairs(frozenset((p,))) == listed[p]
    every = frozenset().union(*listed.values())
    assert module._python_pairs(frozenset(pythons)) == every

    def unasked(*_: object, **__: object) -> list[object]:
        raise AssertionError("the pairs were listed again")

    monkeypatch.setattr(module, "cpython_tags", unasked)
    monkeypatch.setattr(module, "compatible_tags", unasked)
    module._python_pairs.cache_clear()
    module._pairs_of.cache_clear()
    module._kept_pairs.cache_clear()  # a later process
    assert module._python_pairs(frozenset(pythons)) == every
    for p in pythons:
        assert module._python_pairs(frozenset((p,))) == listed[p]
    with pytest.raises(AssertionError, match="listed again"):  # one not met: listed
        module._python_pairs(frozenset(("3.21",)))
    # A kept file whose rows are not pairs: not used, the pairs listed again.
    kept = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"], "tags", "pairs.json")
    kept.write_text(kept.read_text().replace('"cp312-cp312"', '"cp312"'))
    module._python_pairs.cache_clear()
    module._pairs_of.cache_clear()
    module._kept_pairs.cache_clear()
    with pytest.raises(AssertionError, match="listed again"):
        module._python_pairs(frozenset(("3.12",)))


def test_the_kept_tags_of_any_cpu_a_profile_names_stay_in_their_folder() -> None:
    """A profile's CPU is any text: the file of its tags is named within ``tags/``."""
    cache = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"])
    compute_tags("linux", "../x86_64", (3, 12))
    compute_tags("linux", "x86_64", (3, 12))
    kept = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
    assert kept == ["tags/linux-.._x86_64-cp312.json", "tags/linux-x86_64-cp312.json"]
