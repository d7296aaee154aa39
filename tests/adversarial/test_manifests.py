"""Threat model: a hostile or careless flavour manifest.

A manifest is data someone else wrote (a built-in file, a project's pyproject, a
``--manifest`` from a blog post). What it says ends up in lock files pip reads, in
commands people paste into a shell and in placeholder READMEs. Every case here must
end in one ``error:`` line naming the key (exit 2), quickly, never a traceback.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.ground.valueclass import replace
from resolver_hook.limits import MAX_MATRIX_WHEELS, MAX_VERSION_DIGITS
from resolver_hook.manifest import ManifestError, loads_manifest, parse_manifest

HEX = "ab" * 32
WHEEL = "https://example.org/dl/pkg-1.0-py3-none-any.whl"
INJECTION = "https://example.org/a;touch$IFS/tmp/x;/pkg-1.0-py3-none-any.whl"


def manifest(**wheel: object) -> dict[str, object]:
    return {"schema": 1, "package": {"name": "pkg"}, "wheel": [{"url": WHEEL, **wheel}]}


def only_problem(data: dict[str, object]) -> str:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, source="m.toml")
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0]


# --- URLs: one policy (resolver_hook/manifest/urls.py) -------------------------------


@pytest.mark.parametrize(
    "char",
    [";", "$", "`", '"', "'", "|", "<", ">", "\\", " ", "\t", "\n", "\r", "\x00", "\x1b"],
    ids=repr,
)
def test_url_with_shell_or_markdown_metacharacter_is_refused(char: str) -> None:
    url = f"https://example.org/a{char}b/pkg-1.0-py3-none-any.whl"
    problem = only_problem(manifest(url=url))
    assert problem.startswith("m.toml: wheel[0].url: ")
    assert f"contains {char!r}" in problem


def test_the_issue_injection_url_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f'schema = 1\n[package]\nname = "pkg"\n[[wheel]]\nurl = "{INJECTION}"\n')
    code = main(["plan", "pkg", "--manifest", str(path), "--target", "linux-x86_64-py312"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {path}: wheel[0].url: ")
    assert "contains ';'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("key", ["homepage", "downloads"])
def test_package_urls_follow_the_same_policy(key: str) -> None:
    data = manifest()
    data["package"] = {"name": "pkg", key: "https://example.org/$(id)"}
    assert only_problem(data).startswith(f"m.toml: package.{key}: ")


def test_index_url_follows_the_same_policy() -> None:
    data = {
        "schema": 1,
        "package": {"name": "pkg"},
        "index": [{"url": "https://example.org/whl/`id`/", "version": "1.0"}],
    }
    assert only_problem(data).startswith("m.toml: index[0].url: ")


def test_placeholder_data_applies_the_policy_to_urls_it_is_given() -> None:
    # A Manifest built in code (an entry point) skips parse_manifest: placeholder data
    # checks every URL again before it reaches README, metadata and commands.
    from resolver_hook.errors import UsageError
    from resolver_hook.publish.placeholder.data import placeholder_data

    good = parse_manifest(manifest(), source="m.toml")
    bad = replace(good, downloads=INJECTION)
    with pytest.raises(UsageError, match=r"^package\.downloads: .* contains ';'"):
        placeholder_data(bad)
    wheel = replace(good.wheels[0], url=INJECTION)
    with pytest.raises(UsageError, match=r"^wheel\[0\]\.url: .* contains ';'"):
        placeholder_data(replace(good, wheels=(wheel,), downloads=WHEEL))


def test_query_string_is_kept() -> None:
    url = "https://example.org/dl/pkg-1.0-py3-none-any.whl?X-Amz-Date=1&token=a%3Bb"
    (w,) = parse_manifest(manifest(url=url)).wheels
    assert w.url == url


# --- hashes ------------------------------------------------------------------------


def test_fragment_hash_differing_from_sha256_is_refused() -> None:
    problem = only_problem(manifest(url=f"{WHEEL}#sha256={'cd' * 32}", sha256=HEX))
    assert problem.startswith("m.toml: wheel[0].url: ")
    assert "differs from sha256" in problem


def test_fragment_hash_alone_becomes_the_sha256() -> None:
    (w,) = parse_manifest(manifest(url=f"{WHEEL}#sha256={HEX.upper()}")).wheels
    assert (w.url, w.sha256) == (WHEEL, HEX)


@pytest.mark.parametrize("sha", [HEX + "\n", HEX + " ", "\n" + HEX, HEX[:-1], HEX + "0"])
def test_sha256_must_be_exactly_64_hex_digits(sha: str) -> None:
    problem = only_problem(manifest(sha256=sha))
    assert problem.startswith("m.toml: wheel[0].sha256: ")


# --- sizes ---------------------------------------------------------------------------


def test_matrix_expansion_is_bounded_before_expanding() -> None:
    values = [f"v{i}" for i in range(40)]
    data = {
        "schema": 1,
        "package": {"name": "pkg"},
        "matrix": [
            {
                "url": "https://example.org/pkg-1.0+{a}.{b}.{c}.{d}-py3-none-any.whl",
                "axes": {"a": values, "b": values, "c": values, "d": values},
            }
        ],
    }
    problem = only_problem(data)  # refused before building any of the 2.56M wheels
    assert problem.startswith("m.toml: matrix[0].axes: ")
    assert f"40 x 40 x 40 x 40 = 2560000 wheels, more than the {MAX_MATRIX_WHEELS}" in problem


@pytest.mark.parametrize(
    ("key", "entry"),
    [
        ("wheel[0].url", {"url": f"https://example.org/pkg-1.{'9' * 5000}-py3-none-any.whl"}),
        ("wheel[0].cuda", {"url": WHEEL, "cuda": ">=" + "1" * 5000}),
        ("wheel[0].requires[0]", {"url": WHEEL, "requires": ["torch==" + "2" * 5000]}),
        (
            "wheel[0].properties[0]",
            {"url": WHEEL, "properties": ["nvidia :: cuda_version_lower_bound :: " + "1" * 5000]},
        ),
    ],
    ids=["wheel-filename", "cuda", "requires", "property"],
)
def test_versions_with_5000_digits_are_refused_by_key(key: str, entry: dict[str, object]) -> None:
    problem = only_problem({"schema": 1, "package": {"name": "pkg"}, "wheel": [entry]})
    assert problem.startswith(f"m.toml: {key}: ")


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ("1." + "0" * 5000, "longer than"),
        ("1." + "7" * (MAX_VERSION_DIGITS + 1), f"more than {MAX_VERSION_DIGITS} digits"),
    ],
    ids=["5000-digits", "33-digits"],
)
def test_index_version_with_huge_numbers_is_refused(version: str, why: str) -> None:
    data = {"schema": 1, "package": {"name": "pkg"}, "index": [{"version": version}]}
    problem = only_problem(data)
    assert problem.startswith("m.toml: index[0].version: ")
    assert why in problem


@pytest.mark.parametrize("text", ["x = " + "[" * 5000 + "]" * 5000, "x = " + "{a=" * 3000 + "1"])
def test_deeply_nested_toml_is_a_manifest_error(text: str) -> None:
    with pytest.raises(ManifestError, match=r"^m\.toml: not valid TOML"):
        loads_manifest(text, source="m.toml")


def test_deeply_nested_toml_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    code = main(["plan", "pkg", "--manifest", str(path), "--target", "linux-x86_64-py312"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {path}: not valid TOML")


def test_manifest_larger_than_the_limit_is_refused() -> None:
    from resolver_hook.limits import MAX_MANIFEST_BYTES

    text = (
        textwrap.dedent("""\
        schema = 1
        [package]
        name = "pkg"
        """)
        + "#" * MAX_MANIFEST_BYTES
    )
    with pytest.raises(ManifestError, match="larger than"):
        loads_manifest(text, source="m.toml")


def _matrix(url: str, axes: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "schema": 1,
        "package": {"name": "pkg"},
        "matrix": [{"url": url, "axes": axes, **extra}],
    }


def test_matrix_urls_that_would_grow_to_megabytes_are_refused() -> None:
    url = "https://example.org/pkg-1.0+" + "{a}" * 1000 + "-py3-none-any.whl"
    problem = only_problem(_matrix(url, {"a": ["x" * 1000, "y"]}))
    assert problem.startswith("m.toml: matrix[0].url: expands into URLs longer than")


def test_matrix_needs_copied_into_every_wheel_are_bounded() -> None:
    values = [f"v{i}" for i in range(100)]
    data = _matrix(
        "https://example.org/pkg-1.0+{a}{b}-py3-none-any.whl",
        {"a": values, "b": values},
        requires=[f"dep{i}>=1" for i in range(20)],
    )
    problem = only_problem(data)
    assert problem.startswith("m.toml: matrix[0].axes: expands into 10000 wheels of 21 entries")


def test_matrix_exclude_list_is_bounded() -> None:
    from resolver_hook.limits import MAX_MATRIX_EXCLUDES

    data = _matrix(
        "https://example.org/pkg-1.0+{a}-py3-none-any.whl",
        {"a": ["x", "y"]},
        exclude=[{"a": f"z{i}"} for i in range(MAX_MATRIX_EXCLUDES + 1)],
    )
    assert only_problem(data).startswith("m.toml: matrix[0].exclude: ")


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(
            '[[wheel]]\nurl = "https://e.org/foo-1.0-cp312-cp312-'
            'manylinux_2_99999999999999999_x86_64.whl"\n',
            id="huge-glibc-in-a-wheel-tag",
        ),
        pytest.param(
            '[[index]]\nurl = "https://e.org/foo/"\nversion = "1.0"\n'
            'python = ["3.99999999999999999999"]\nplatforms = ["manylinux_2_28_x86_64"]\n',
            id="huge-python-in-an-index",
        ),
    ],
)
def test_a_huge_number_in_a_manifest_is_never_tried_as_a_machine(
    tmp_path: Path, entry: str
) -> None:
    # The hints re-plan with one fact changed; a glibc or Python taken from such an
    # entry made wheel tags one per minor version: minutes and gigabytes, then OOM.
    from resolver_hook.host import parse_target
    from resolver_hook.manifest import loads_manifest
    from resolver_hook.resolve import resolve

    m = loads_manifest('schema = 1\n[package]\nname = "foo"\n' + entry, source="m.toml")
    plan = resolve(["foo"], {"foo": m}, parse_target("linux-x86_64-py312"))
    (foo,) = plan.packages
    assert foo.action == "error"
    assert foo.fix is None


# --- a range no version can meet ---------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "text", "why"),
    [
        ("cuda", ">=13.0,<12.0", ">=13.0 and <12.0 leave nothing between them"),
        ("cuda", ">12.8,<=12.8", ">12.8 and <=12.8 leave nothing between them"),
        ("rocm", "==6.2,==6.3", "==6.3 and ==6.2 leave nothing between them"),
        ("cuda", "~=12.4,>=13", ">=13 and ~=12.4 leave nothing between them"),
    ],
)
def test_an_empty_range_is_a_manifest_error(key: str, text: str, why: str) -> None:
    problem = only_problem(manifest(**{key: text}))
    assert problem == f"m.toml: wheel[0].{key}: {text!r} matches no version: {why}"


@pytest.mark.parametrize(
    "text", [">=12.0,<13.0", "==12.8", ">=12.8,<=12.8", "~=12.4", ">=12,!=12.5"]
)
def test_a_range_with_room_loads(text: str) -> None:
    assert parse_manifest(manifest(cuda=text), source="m.toml").name == "pkg"


def test_an_empty_range_is_exit_2_from_lint_and_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(
        f'schema = 1\n[package]\nname = "pkg"\n[[wheel]]\nurl = "{WHEEL}"\ncuda = ">=13.0,<12.0"\n'
    )
    for argv in (["lint", str(path)], ["plan", "pkg", "--manifest", str(path), "--target",
                                       "linux-x86_64-py312-cuda13.0-sm100"]):  # fmt: skip
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "wheel[0].cuda: '>=13.0,<12.0' matches no version" in err


# --- thousands of builds, none fits: bounded output --------------------------------------


def test_none_fits_among_thousands_is_a_short_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from resolver_hook.limits import SHOWN_REJECTED_BUILDS, SHOWN_VERSIONS

    n = 3000
    path = tmp_path / "big.toml"
    lines = ["schema = 1", "[package]", 'name = "pkg"']
    for i in range(n):
        url = f"https://example.org/dl/pkg-1.{i}+cu99-py3-none-any.whl"
        lines += ["[[wheel]]", f'url = "{url}"', 'cuda = ">=99.0"']
    path.write_text("\n".join(lines) + "\n")
    argv = ["plan", "pkg", "--manifest", str(path), "--target", "linux-x86_64-py312-cuda13.0-sm100"]
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 + SHOWN_REJECTED_BUILDS + 1 + 1  # error, the nearest, a count, hint
    assert max(map(len, err)) < 400
    assert f"and {n - SHOWN_VERSIONS:,} older versions exist for" in err[0]
    assert err[-2] == (
        f"  ... and {n - SHOWN_REJECTED_BUILDS:,} more builds that do not fit here "
        "(-v or --json lists every one)"
    )
    assert main(["-v", *argv]) == 1
    assert len(capsys.readouterr().err.splitlines()) > n  # -v: every one


@pytest.mark.parametrize("value", ["9" * 5_000, "-" + "9" * 5_000], ids=["long", "negative"])
def test_a_number_longer_than_python_reads_is_one_error_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Python refuses to read an int of more digits than sys.get_int_max_str_digits()
    # (4,300 by default) with a plain ValueError, which tomllib lets through.
    path = tmp_path / "m.toml"
    path.write_text(f'schema = {value}\n[package]\nname = "pkg"\n')
    code = main(["plan", "pkg", "--manifest", str(path), "--target", "linux-x86_64-py312"])
    err = capsys.readouterr().err
    assert code == 2
    limit = sys.get_int_max_str_digits()
    assert err.splitlines()[0] == (
        f"error: {path}: not valid TOML: a number of more than {limit} digits"
    )
