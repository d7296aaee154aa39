"""Threat model: careless or hostile machine descriptions on the command line.

``--target``, ``--glibc``/``--sm``/``--cuda`` and their ``RESOLVER_HOOK_OVERRIDE_*``
variables, a saved ``--profile``, ``placeholder build --version``: each is one string
a person typed (or a script built). A wrong one is one ``error:`` line naming the flag
or variable (exit 2), quickly; never silently ignored, never a MemoryError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver_hook.cli import main

TARGET = "linux-x86_64-py312"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["detect", "--target", TARGET, "--glibc", "2.999999"], "error: --glibc: '2.999999'"),
        (["detect", "--target", f"{TARGET}-glibc2.999999"], "field 'glibc2.999999'"),
        (["detect", "--target", f"{TARGET}-glibc2.39.1"], "field 'glibc2.39.1'"),
        (["detect", "--target", f"{TARGET}-rocm7.99999"], "field 'rocm7.99999'"),
    ],
    ids=["flag", "target", "three-part", "rocm"],
)
def test_huge_machine_versions_are_refused(
    args: list[str], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(args, capsys)
    assert code == 2
    assert where in err


def test_glibc_override_variable_is_bounded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_GLIBC", "2.999999")
    code, err = run(["detect"], capsys)
    assert code == 2
    assert err.startswith("error: RESOLVER_HOOK_OVERRIDE_GLIBC: '2.999999' is not a glibc")


def test_largest_allowed_glibc_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["detect", "--json", "--target", f"{TARGET}-glibc2.999"], capsys)
    assert code == 0


def test_empty_target_is_an_error_not_detection(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["detect", "--target", ""], capsys)
    assert code == 2
    assert err.startswith("error: --target '': expected OS-ARCH first")


def test_empty_profile_is_an_error_not_detection(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["detect", "--profile", ""], capsys)
    assert code == 2
    assert err == "error: --profile '': an empty path is not a file name\n"


@pytest.mark.parametrize(
    "spec",
    [
        f"{TARGET[:-6]}-py311-py312",
        f"{TARGET[:-6]}-cp311-py312",
        f"{TARGET}-cuda12.8-cuda13.0",
        f"{TARGET}-glibc2.28-glibc2.39",
        f"{TARGET}-sm90-sm100",
    ],
)
def test_a_target_field_given_twice_is_refused(
    spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["detect", "--target", spec], capsys)
    assert code == 2
    assert "give it once" in err


@pytest.mark.parametrize("value", ["0.0", "0.5", "99999999999999999999.1", "9.10", "12.1.1"])
def test_sm_override_must_be_a_real_compute_capability(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", value)
    code, err = run(["detect"], capsys)
    assert code == 2
    assert err.startswith(f"error: RESOLVER_HOOK_OVERRIDE_SM: {value!r} is not")


def test_sm_override_takes_two_digit_majors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "9.0,12.1")
    code = main(["detect", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    gpus = json.loads(out)["nvidia"]["gpus"]
    assert [g["cc"] for g in gpus] == ["9.0", "12.1"]


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"libc_version": "2.999999"}, "libc_version"),
        ({"python": "3.999999"}, "python"),
        ({"python": "3." + "1" * 5000}, "python"),
        ({"nvidia": {"cuda_version": "1" * 5000, "gpus": []}}, "nvidia.cuda_version"),
        ({"rocm": {"version": "7." + "0" * 5000}}, "rocm.version"),
    ],
    ids=["glibc", "python-minor", "python-digits", "cuda-digits", "rocm-digits"],
)
def test_saved_profile_with_huge_versions_is_refused(
    change: dict[str, object], key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = {"os": "linux", "arch": "x86_64", "python": "3.12", "libc": "glibc"}
    profile.update(change)  # type: ignore[arg-type]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile))
    code, err = run(["detect", "--profile", str(path)], capsys)
    assert code == 2
    assert err.startswith(f"error: --profile {path}: {key}: ")


def test_placeholder_version_with_5000_digits_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "pkg"\ndownloads = "https://example.org/"\n'
        '[[wheel]]\nurl = "https://example.org/pkg-1.0-py3-none-any.whl"\n'
    )
    code, err = run(
        [
            "placeholder", "build", str(manifest), "--version", "1." + "0" * 5000,
            "-o", str(tmp_path / "out"),
        ],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert err.startswith("error: --version: ")
    assert len(err) < 500


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RESOLVER_HOOK_OVERRIDE_CUDA", "1" * 5000),
        ("RESOLVER_HOOK_OVERRIDE_GLIBC", "2." + "9" * 5000),
        ("RESOLVER_HOOK_OVERRIDE_SM", "9" * 5000 + ".0"),
    ],
)
def test_the_placeholder_runtime_survives_huge_override_numbers(name: str, value: str) -> None:
    # The generated placeholder detects the machine with its own stdlib code: a number
    # Python will not turn into an int must not turn its message into a traceback.
    from resolver_hook.publish.placeholder.render import runtime

    # detect() never raises; the huge value is ignored and the rest of detection stands
    # (before, the ValueError threw the whole detection away: arch "unknown").
    host = runtime().detect({name: value, "RESOLVER_HOOK_OVERRIDE_ARCH": "aarch64"})
    assert host["arch"] == "aarch64"
    assert name not in host["overridden"]


def test_a_jetson_compute_capability_override_off_linux_aarch64_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # --target refuses linux-x86_64-...-sm87; the override must not build that machine.
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "8.7")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_ARCH", "x86_64")
    code, err = run(["detect"], capsys)
    assert code == 2
    assert "Jetson Orin, a Jetson module: Linux aarch64 only" in err
