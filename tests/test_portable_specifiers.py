"""The placeholder's stdlib version-specifier check against ``packaging``.

The placeholder runtime cannot import ``packaging`` (it runs on a bare Python >= 3.8), so
it carries a small PEP 440 check for numeric versions. Hypothesis holds it to
``packaging.specifiers.SpecifierSet``: wherever it answers, it answers the same.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from resolver_hook.publish.placeholder.render import runtime

RELEASE = st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=4)
OPS = st.sampled_from(["==", "!=", "<=", ">=", "<", ">", "~=", "==="])


@st.composite
def clauses(draw: st.DrawFn) -> str:
    op = draw(OPS)
    release = ".".join(str(n) for n in draw(RELEASE))
    star = op in ("==", "!=") and draw(st.booleans())
    space = draw(st.sampled_from(["", " "]))
    return f"{op}{space}{release}{'.*' if star else ''}"


SPECS = st.lists(clauses(), min_size=1, max_size=3).map(",".join)


@settings(max_examples=500, deadline=None)
@given(spec=SPECS, version=RELEASE)
def test_spec_allows_agrees_with_packaging(spec: str, version: list[int]) -> None:
    try:
        expected = SpecifierSet(spec).contains(
            Version(".".join(map(str, version))), prereleases=True
        )
    except InvalidSpecifier:
        return  # not a specifier at all (e.g. "~=1"): nothing to compare
    got = runtime().spec_allows(spec, tuple(version))
    assert got is None or got is expected, (spec, version, expected)
    # It only gives up on forms outside its numeric subset, never on these.
    assert got is not None, (spec, version)
