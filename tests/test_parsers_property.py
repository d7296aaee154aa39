"""Parsers never crash: any input is parsed or refused with a UsageError (exit 2)."""

# ruff: noqa: PT017 - here raising is one allowed outcome of many, not the expected one

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from resolver_hook.errors import UsageError
from resolver_hook.host import HostProfile, parse_target
from resolver_hook.limits import MAX_VERSION_DIGITS, check_version_text
from resolver_hook.manifest import loads_manifest
from resolver_hook.reqfile import parse_requirements

_req_text = st.lists(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            [
                "torch==2.13.*",
                "-r other.txt",
                "--hash=sha256:00",
                "flash-attn @ ",
                "https://x.org/a-1.0-py3-none-any.whl",
                "-e .",
                "\\",
                "# c",
                "${CUDA_TAG}",
                "x ; python_version <",
                "--index-url",
                "-c",
                "pkg[extra",
                "a==1 b==2",
            ]
        ),
    ),
    max_size=8,
).map("\n".join)


@given(_req_text)
def test_requirement_files_parse_or_refuse(text: str) -> None:
    try:
        parse_requirements(text, source="r.txt", read=lambda path: "numpy\n", env={})
    except UsageError as exc:
        assert exc.message.startswith("r.txt")


_spec = st.lists(
    st.one_of(
        st.text(max_size=8),
        st.sampled_from(
            [
                "linux",
                "macos",
                "x86_64",
                "aarch64",
                "py312",
                "cuda13.0",
                "sm121",
                "sm90,sm121",
                "glibc2.39",
                "rocm7.1",
                "",
            ]
        ),
    ),
    max_size=7,
).map("-".join)


@given(_spec)
def test_target_specs_parse_or_refuse(spec: str) -> None:
    try:
        profile = parse_target(spec)
    except UsageError as exc:
        assert exc.message.startswith("--target")
    else:
        assert HostProfile.from_dict(json.loads(json.dumps(profile.to_dict()))) == profile


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=20,
)
_profile_like = st.fixed_dictionaries(
    {},
    optional={
        "os": st.sampled_from(["linux", "macos", "x"]) | _json,
        "arch": st.just("x86_64") | _json,
        "python": st.just("3.12") | _json,
        "nvidia": _json,
        "tags": _json,
        "probes": _json,
        "schema": _json,
    },
)


@given(_profile_like)
def test_profiles_load_or_refuse(data: dict[str, object]) -> None:
    try:
        HostProfile.from_dict(data, where="p.json")
    except UsageError as exc:
        assert exc.message.startswith("p.json: ")


_toml_value = st.one_of(
    st.text(max_size=20),
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.lists(st.text(max_size=12), max_size=3),
)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "url",
                "sha256",
                "cuda",
                "gpu",
                "requires",
                "version",
                "platforms",
                "properties",
                "urll",
            ]
        ),
        _toml_value,
        max_size=6,
    ),
    st.sampled_from(["wheel", "index"]),
)
def test_manifests_load_or_refuse(entry: dict[str, object], kind: str) -> None:
    import tomli_w

    text = tomli_w.dumps({"schema": 1, "package": {"name": "demo"}, kind: [entry]})
    try:
        loads_manifest(text, source="m.toml")
    except UsageError as exc:
        assert "m.toml" in exc.message


@given(
    st.lists(
        st.one_of(st.text(alphabet="0123456789", min_size=30, max_size=36), st.text(max_size=4)),
        max_size=4,
    ).map("".join)
)
def test_version_bound_counts_digits_as_str_isdigit(text: str) -> None:
    """The bound on a version's numbers: any run of more than MAX_VERSION_DIGITS
    characters that ``str.isdigit`` calls digits (what ``int()`` would convert)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch.isdigit() else 0
        longest = max(longest, run)
    assert (check_version_text(text, max_length=None) is None) == (longest <= MAX_VERSION_DIGITS)


@given(
    st.lists(
        st.one_of(
            st.text(alphabet="0123456789", min_size=30, max_size=36),
            st.text(alphabet="0123456789.-+\n", max_size=8),
            st.just("torch-2.13.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl\n"),
        ),
        max_size=12,
    ).map("".join)
)
def test_version_bound_in_a_long_text(text: str) -> None:
    """The same bound on a long text (a page's wheel names checked at once), which is
    searched another way than a short one."""
    text = "a.whl\n" * 100 + text
    longest = run = 0
    for ch in text:
        run = run + 1 if ch.isdigit() else 0
        longest = max(longest, run)
    assert (check_version_text(text, max_length=None) is None) == (longest <= MAX_VERSION_DIGITS)
