"""Threat model: a hostile or corrupt ``crt/host_config.h`` read by ``doctor --build``.

The header is evaluated, not compiled: a condition this tool cannot follow (thousands
of ``!``, hundreds of nested parentheses, ``08``, a 400-digit number) becomes an
*unknown* condition reported with its line, never a RecursionError, ValueError or
OverflowError. Arithmetic is the preprocessor's: 64-bit, truncating division.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.toolchain.hostconfig import evaluate, parse_host_config
from tests.test_toolchain import check, env_of, header, report_for, toolkit

GNU16 = {"__CUDACC__": "1", "__GNUC__": "16"}


def one_condition(condition: str) -> str:
    return f"#if {condition}\n#error -- reached\n#endif\n"


@pytest.mark.parametrize(
    "condition",
    [
        "!" * 5000 + "0",
        "-" * 5000 + "1",
        "(" * 500 + "1" + ")" * 500,
        "1 ? " * 300 + "1" + " : 0" * 300,
        "1" + " + 1" * 5000,
        "__GNUC__ > " + "9" * 400,
    ],
    ids=["5000-not", "5000-minus", "500-parens", "300-ternaries", "5000-terms", "400-digits"],
)
def test_hostile_condition_is_unknown_not_a_crash(condition: str) -> None:
    verdict = evaluate(parse_host_config(one_condition(condition)), GNU16)
    assert verdict.accepted  # an unknown condition is taken as false ...
    (unknown,) = verdict.unknown  # ... and said, with its line
    assert unknown.startswith("line 1: ")


@pytest.mark.parametrize("number", ["08", "09", "0779"])
def test_invalid_octal_constant_is_unknown(number: str) -> None:
    verdict = evaluate(parse_host_config(one_condition(f"__GNUC__ > {number}")), GNU16)
    assert verdict.unknown == (f"line 1: {number!r} is not a C integer constant",)


@pytest.mark.parametrize(
    ("condition", "reached"),
    [
        ("0x7fffffffffffffff + 1 < 0", True),  # wraps as intmax_t does in GCC
        ("-7 / 2 == -3", True),  # truncates toward zero
        ("-7 % 2 == -1", True),
        ("99999999999999999 / 3 == 33333333333333333", True),  # exact, not through a float
        ("010 == 8", True),
        ("0x10 == 16", True),
    ],
)
def test_preprocessor_arithmetic(condition: str, reached: bool) -> None:
    verdict = evaluate(parse_host_config(one_condition(condition)), {})
    assert verdict.unknown == ()
    assert (not verdict.accepted) is reached


def test_doctor_build_with_a_hostile_header_reports_instead_of_crashing(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    from tests.test_toolchain import gnu

    gnu(bin_dir / "gcc", "16.1.0")
    gnu(bin_dir / "g++", "16.1.0")
    cuda = toolkit(tmp_path / "cuda")
    path = cuda / "include" / "crt" / "host_config.h"
    hostile = "".join(
        one_condition(c)
        for c in ("!" * 5000 + "1", "(" * 500 + "1" + ")" * 500, "__GNUC__ > 08", "9" * 400)
    )
    path.write_text(hostile + header(15))
    report = report_for(env_of({"bin": bin_dir, "cuda": cuda}))
    accept = check(report, "nvcc accepts host compiler")
    assert accept.status == "fail"  # the real GNU limit below still applies
    assert "gcc versions later than 15 are not supported!" in accept.summary


def test_a_need_with_a_5000_digit_version_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from resolver_hook.cli import main

    assert main(["doctor", "--build", "--need", "nvcc>=" + "9" * 5000]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --need ")
    assert len(err.splitlines()) == 1


def test_a_5000_digit_cudart_version_is_no_version(tmp_path: Path) -> None:
    from resolver_hook.toolchain.toolkit import _version_from_files

    (tmp_path / "include").mkdir()
    header = tmp_path / "include" / "cuda_runtime_api.h"
    header.write_text("#define CUDART_VERSION " + "9" * 5000 + "\n")
    assert _version_from_files(str(tmp_path)) == (None, None)
    header.write_text("#define CUDART_VERSION 13020\n")
    assert _version_from_files(str(tmp_path)) == ("13.2", "CUDART_VERSION in cuda_runtime_api.h")
