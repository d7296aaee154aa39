"""The placeholder's message and its own detection (the runtime in placeholder_template/).

The message is the product, so these tests compare it exactly. Hosts are
injected as data; detection is exercised through the same override variables that
resolver-hook reads (RESOLVER_HOOK_OVERRIDE_*), so no GPU is needed.
"""

from __future__ import annotations

import shlex
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resolver_hook.manifest import load_manifest
from resolver_hook.publish.placeholder.data import placeholder_data
from resolver_hook.publish.placeholder.render import runtime
from tests.placeholder_support import host

DATA = Path(__file__).resolve().parent / "data"
TILERT_URL = (
    "https://github.com/tile-ai/TileRT/releases/download/v0.1.5.post2/"
    "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl"
)


def tilert() -> dict[str, Any]:
    return placeholder_data(load_manifest(DATA / "tilert.toml"))


# The seed report: GB10 (DGX Spark) is aarch64, CC 12.1, driver CUDA 13.0.
GB10 = {
    "arch": "aarch64",
    "nvidia": {"cuda": "13.0", "gpus": [{"name": "NVIDIA GB10 (DGX Spark)", "cc": [12, 1]}]},
    "nvidia_reason": "",
}
# B200: x86_64, CC 10.0 (docs/facts.md section 1).
B200 = {
    "nvidia": {"cuda": "13.0", "gpus": [{"name": "NVIDIA B200/GB200", "cc": [10, 0]}]},
    "nvidia_reason": "",
}

HEAD = """\
tilert 0.0.0.dev0 is a placeholder, not a broken install.
It only reserves the name tilert on PyPI; the real builds are listed below. \
It refuses to install or import so that you read this instead of finding a \
half-working package later.

"""
SUPPORTED = """
tilert builds exist (0.1.5.post2) for:
  platforms:      Linux x86_64 (glibc 2.28 or newer)
  Python:         CPython 3.12
  NVIDIA driver:  CUDA 13.0 or newer (driver 580 or newer)
  GPU kernels:    sm_100f: NVIDIA B200/GB200, B300/GB300

"""
TAIL_NO_FIT = """
Real downloads: https://github.com/tile-ai/TileRT/releases
Homepage: https://github.com/tile-ai/TileRT
(TILERT_ALLOW_PLACEHOLDER=1 only lets this placeholder install; it still cannot be imported.)"""


def test_gb10_says_which_requirements_fail() -> None:
    # The seed report's machine: the CPU arch and the GPU family do not match;
    # Python 3.12 and CUDA 13.0 do, so they are not blamed.
    text = runtime().render_message(
        tilert(),
        host(
            **GB10,
            overridden=[
                "RESOLVER_HOOK_OVERRIDE_ARCH",
                "RESOLVER_HOOK_OVERRIDE_SM",
                "RESOLVER_HOOK_OVERRIDE_CUDA",
            ],
        ),
    )
    first, rest = HEAD.split("\n", 1)
    assert (
        text
        == first
        + "\n"
        + (
            "No tilert build exists for this machine: none is for Linux aarch64 and none has "
            "GPU kernels for its NVIDIA GB10 (DGX Spark) (compute capability 12.1, sm_121). "
            "Nothing you change on this machine (another Python, a newer NVIDIA driver, pip or "
            "uv options) will make one fit.\n"
        )
        + rest
        + (
            "This machine: Linux aarch64, CPython 3.12, glibc 2.39, NVIDIA GB10 (DGX Spark) "
            "(compute capability 12.1, sm_121), NVIDIA driver CUDA 13.0; as set by "
            "RESOLVER_HOOK_OVERRIDE_ARCH, RESOLVER_HOOK_OVERRIDE_SM, RESOLVER_HOOK_OVERRIDE_CUDA.\n"
        )
        + SUPPORTED
        + (
            "What does not match this machine:\n"
            "  - Linux x86_64 (glibc 2.28 or newer); this machine is Linux aarch64 with "
            "glibc 2.39\n"
            "  - a GPU for sm_100f: NVIDIA B200/GB200, B300/GB300; this machine's NVIDIA GB10 "
            "(DGX Spark) (compute capability 12.1, sm_121) is not one of them\n"
        )
        + TAIL_NO_FIT
    )


def test_b200_under_a_supported_python_gets_the_exact_pip_line() -> None:
    text = runtime().render_message(tilert(), host(**B200))
    assert text == HEAD + (
        "This machine: Linux x86_64, CPython 3.12, glibc 2.39, NVIDIA B200/GB200 "
        "(compute capability 10.0, sm_100), NVIDIA driver CUDA 13.0.\n"
    ) + SUPPORTED + (
        "A listed build fits this machine: "
        "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl. Install it with:\n"
        f"  pip install {TILERT_URL}\n"
        "Or let resolver-hook pick it (pip install resolver-hook): "
        "resolver-hook pip install tilert\n"
        "\n"
        "Real downloads: https://github.com/tile-ai/TileRT/releases\n"
        "Homepage: https://github.com/tile-ai/TileRT\n"
        "(TILERT_ALLOW_PLACEHOLDER=1 only lets this placeholder install; it still cannot be "
        "imported.)"
    )


def test_b200_under_another_python_names_the_pythons_with_wheels() -> None:
    text = runtime().render_message(tilert(), host(**B200, python=[3, 11]))
    assert (
        text
        == HEAD
        + (
            "This machine: Linux x86_64, CPython 3.11, glibc 2.39, NVIDIA B200/GB200 "
            "(compute capability 10.0, sm_100), NVIDIA driver CUDA 13.0.\n"
        )
        + SUPPORTED
        + ("What does not match this machine:\n  - CPython 3.12; this is CPython 3.11\n")
        + TAIL_NO_FIT
    )


def test_no_gpu_says_why() -> None:
    text = runtime().render_message(
        tilert(), host(nvidia_reason="libnvidia-ml.so.1 could not be loaded; nvidia-smi not found")
    )
    assert (
        text
        == HEAD
        + (
            "This machine: Linux x86_64, CPython 3.12, glibc 2.39, no NVIDIA GPU "
            "(libnvidia-ml.so.1 could not be loaded; nvidia-smi not found).\n"
        )
        + SUPPORTED
        + (
            "What does not match this machine:\n"
            "  - an NVIDIA GPU for sm_100f: NVIDIA B200/GB200, B300/GB300 and an NVIDIA driver "
            "for CUDA 13.0 or newer (driver 580 or newer); this machine has no NVIDIA GPU "
            "(libnvidia-ml.so.1 could not be loaded; nvidia-smi not found)\n"
        )
        + TAIL_NO_FIT
    )


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        pytest.param(
            {"nvidia": {"cuda": "12.8", "gpus": [{"name": "B200", "cc": [10, 0]}]}},
            "an NVIDIA driver for CUDA 13.0 or newer (driver 580 or newer); this driver "
            "supports CUDA 12.8",
            id="old-driver",
        ),
        pytest.param(
            {**B200, "libc_version": "2.17"},
            "Linux x86_64 (glibc 2.28 or newer); this machine is Linux x86_64 with glibc 2.17",
            id="old-glibc",
        ),
        pytest.param(
            {**B200, "os": "windows", "libc": None, "libc_version": None},
            "Linux x86_64 (glibc 2.28 or newer); this machine is Windows x86_64",
            id="windows",
        ),
        pytest.param(
            {"nvidia": {"cuda": "13.0", "gpus": [{"name": "NVIDIA H100", "cc": [9, 0]}]}},
            "a GPU for sm_100f: NVIDIA B200/GB200, B300/GB300; this machine's NVIDIA H100 "
            "(compute capability 9.0, sm_90) is not one of them",
            id="h100",
        ),
    ],
)
def test_each_failing_requirement_is_named(changes: dict[str, Any], problem: str) -> None:
    text = runtime().render_message(tilert(), host(**changes))
    assert f"\n  - {problem}\n" in text
    assert text.count("\n  - ") == 1  # nothing else is blamed


def test_b300_is_in_the_sm_100f_family() -> None:
    # sm_100f runs on CC 10.0 and 10.3 (docs/facts.md section 1, family-specific targets).
    b300 = {"nvidia": {"cuda": "13.0", "gpus": [{"name": "NVIDIA B300", "cc": [10, 3]}]}}
    assert f"  pip install {TILERT_URL}\n" in runtime().render_message(tilert(), host(**b300))


def test_sha256_goes_into_the_install_line() -> None:
    data = tilert()
    data["flavours"][0]["sha256"] = "ab" * 32
    text = runtime().render_message(data, host(**B200))
    # A URL inside a command to paste is shell-quoted ('#' is not a safe shell character).
    assert f"  pip install '{TILERT_URL}#sha256={'ab' * 32}'\n" in text


def test_index_flavour_install_line_pins_the_local_version() -> None:
    data = placeholder_data(load_manifest(DATA / "placeholder-torchlike.toml"))
    text = runtime().render_message(data, host(**B200))
    assert (
        "  pip install torchlike==2.13.0+cu130 --find-links "
        "https://download.pytorch.org/whl/cu130/torch/\n"
    ) in text
    assert "listed before it" not in text


def test_builds_passed_over_for_the_fitting_one_are_explained() -> None:
    # GB10 with a CUDA 12.8 driver: cu130 needs CUDA 13, so the CPU build is the one
    # that fits, and the message says why cu130 was passed over. cu126 has no aarch64
    # build, so it was never a candidate and is not listed.
    data = placeholder_data(load_manifest(DATA / "placeholder-torchlike.toml"))
    gb10 = {**GB10, "nvidia": {"cuda": "12.8", "gpus": GB10["nvidia"]["gpus"]}}
    text = runtime().render_message(data, host(**gb10))
    assert text.split("\n\n")[3] == (
        "A listed build fits this machine: torchlike 2.13.0+cpu from "
        "https://download.pytorch.org/whl/cpu/torch/. Install it with:\n"
        "  pip install torchlike==2.13.0+cpu --find-links "
        "https://download.pytorch.org/whl/cpu/torch/\n"
        "Builds listed before it do not match this machine:\n"
        "  torchlike 2.13.0+cu130 from https://download.pytorch.org/whl/cu130/torch/ needs\n"
        "    - an NVIDIA driver for CUDA 13.0 or newer (driver 580 or newer); this driver "
        "supports CUDA 12.8\n"
        "Or let resolver-hook pick it (pip install resolver-hook): "
        "resolver-hook pip install torchlike"
    )


def test_many_builds_are_summarised_by_requirement() -> None:
    # Thirty flash-attn-like wheels (5 Pythons x 2 CUDA x 3 platforms) on a Mac: one
    # line per failed requirement, not one block per wheel; newest version (+cu130) first.
    data = placeholder_data(load_manifest(DATA / "placeholder-matrix.toml"))
    text = runtime().render_message(
        data,
        host(
            os="macos",
            arch="aarch64",
            libc=None,
            libc_version=None,
            nvidia_reason="macOS has no NVIDIA CUDA driver",
        ),
    )
    assert text.split("\n\n")[3] == (
        "What does not match this machine:\n"
        "  - Linux x86_64 (glibc 2.28 or newer) or Linux aarch64 (glibc 2.34 or newer) or "
        "Windows x86_64; this machine is macOS aarch64\n"
        "  - an NVIDIA GPU for compute_80: any NVIDIA GPU of compute capability 8.0 or newer "
        "(A100 and later), by JIT and an NVIDIA driver for CUDA 13.0 or newer (driver 580 "
        "or newer) or CUDA 12.0 or newer (driver 525.60.13 or newer); this machine has "
        "no NVIDIA GPU (macOS has no NVIDIA CUDA driver)"
    )


# --- detection --------------------------------------------------------------------


def test_detect_honours_every_override() -> None:
    found = runtime().detect(
        {
            "RESOLVER_HOOK_OVERRIDE_ARCH": "arm64",
            "RESOLVER_HOOK_OVERRIDE_SM": "12.1",
            "RESOLVER_HOOK_OVERRIDE_CUDA": "13",
            "RESOLVER_HOOK_OVERRIDE_GLIBC": "2.39",
        }
    )
    assert found["arch"] == "aarch64"
    assert (found["libc"], found["libc_version"]) == ("glibc", "2.39")
    assert found["nvidia"] == {
        "cuda": "13.0",
        "gpus": [{"name": "NVIDIA GB10 (DGX Spark)", "cc": [12, 1]}],
    }
    assert found["overridden"] == [
        "RESOLVER_HOOK_OVERRIDE_ARCH",
        "RESOLVER_HOOK_OVERRIDE_GLIBC",
        "RESOLVER_HOOK_OVERRIDE_SM",
        "RESOLVER_HOOK_OVERRIDE_CUDA",
    ]


def test_empty_cuda_override_means_no_gpu() -> None:
    found = runtime().detect(
        {"RESOLVER_HOOK_OVERRIDE_CUDA": "", "RESOLVER_HOOK_OVERRIDE_SM": "10.0"}
    )
    assert found["nvidia"] is None
    assert found["nvidia_reason"] == "RESOLVER_HOOK_OVERRIDE_CUDA is empty"


def test_detect_without_nvidia_tools_gives_reasons(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No libnvidia-ml.so.1 and no nvidia-smi on PATH: both reasons are given.
    rt = runtime()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(rt, "_nvml_query", _raise_oserror)
    found = rt.detect({"RESOLVER_HOOK_OVERRIDE_ARCH": "x86_64"})
    assert found["nvidia"] is None
    assert found["nvidia_reason"] == ("libnvidia-ml.so.1 could not be loaded; nvidia-smi not found")


def test_detect_reads_a_fake_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # nvidia-smi rows as the field reports them, including an [N/A] row (docs/facts.md 1).
    rt = runtime()
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        'if [ "$#" -gt 0 ]; then '
        'printf "0, NVIDIA GB10, 12.1, GPU-b1\\n1, NVIDIA Foo, [N/A], GPU-c2\\n"; '
        'else echo "| NVIDIA-SMI 580.95.05  Driver Version: 580.95.05  '
        'CUDA Version: 13.0 |"; fi\n'
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(rt, "_nvml_query", _raise_oserror)
    found = rt.detect({})
    assert found["nvidia"] == {
        "cuda": "13.0",
        "gpus": [{"index": 0, "name": "NVIDIA GB10", "cc": [12, 1], "uuid": "GPU-b1"}],
    }


def test_a_hanging_nvml_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    rt = runtime()
    gate = threading.Event()
    monkeypatch.setattr(rt, "_nvml_query", lambda: gate.wait(10))
    try:
        info, reason = rt._probe_nvml(0.05)
    finally:
        gate.set()
    assert info is None
    assert reason == "NVML did not answer within 0.05 s"


def _raise_oserror() -> None:
    raise OSError("libnvidia-ml.so.1: cannot open shared object file")


@pytest.mark.parametrize(
    ("spec", "version", "allowed"),
    [
        (">=13.0", (13, 0), True),
        (">=13.0", (12, 9), False),
        (">=12.6,<13", (12, 8), True),
        (">=12.6,<13", (13, 0), False),
        ("==12.*", (12, 4), True),
        ("!=12.*", (12, 4), False),
        ("~=12.4", (12, 9), True),
        ("~=12.4", (13, 0), False),
        (">=13.0a1", (13, 0), None),
    ],
)
def test_cuda_specifiers(spec: str, version: tuple[int, ...], allowed: bool | None) -> None:
    assert runtime().spec_allows(spec, version) is allowed


@pytest.mark.parametrize(
    ("tag", "words"),
    [
        ("manylinux_2_28_x86_64", "Linux x86_64 (glibc 2.28 or newer)"),
        ("manylinux2014_aarch64", "Linux aarch64 (glibc 2.17 or newer)"),
        ("musllinux_1_2_x86_64", "Linux x86_64 (musl 1.2 or newer)"),
        ("linux_x86_64", "Linux x86_64"),
        ("win_amd64", "Windows x86_64"),
        ("macosx_11_0_arm64", "macOS aarch64 (11.0 or newer)"),
        ("any", "any platform"),
    ],
)
def test_platform_words(tag: str, words: str) -> None:
    assert runtime().describe_platform(tag) == words


# --- manifest strings are data -------------------------------------------------------

# Any text, including quotes, backslashes, braces, percent signs and newlines.
ANY_TEXT = st.text(min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(display=ANY_TEXT, url=ANY_TEXT, downloads=ANY_TEXT, homepage=ANY_TEXT, filename=ANY_TEXT)
def test_arbitrary_strings_reach_the_message_unchanged(
    display: str, url: str, downloads: str, homepage: str, filename: str
) -> None:
    data = tilert()
    data.update(display_name=display, downloads=downloads, homepage=homepage)
    data["flavours"][0].update(url=url, filename=filename)
    text = runtime().render_message(data, host(**B200))
    assert f"\n{display} builds exist (0.1.5.post2) for:\n" in text
    assert f"\nReal downloads: {downloads}\n" in text
    assert f"\nHomepage: {homepage}\n" in text
    assert f"\n  pip install {shlex.quote(url)}\n" in text
    assert f"fits this machine: {filename}. Install it with:\n" in text


def test_message_never_raises_on_broken_data(tmp_path: Path) -> None:
    (tmp_path / "_placeholder_data.json").write_text("{not json")
    text = runtime().message({}, str(tmp_path))
    assert text.startswith(
        "This package is a placeholder, not a broken install; its data "
        "file could not be read (Expecting property name"
    )
    (tmp_path / "_placeholder_data.json").write_text(
        '{"name": "x", "version": "1", "downloads": "https://x.invalid/"}'
    )
    text = runtime().message({}, str(tmp_path))
    assert text.startswith(
        "x 1 is a placeholder, not a broken install. Real downloads: "
        "https://x.invalid/ (the full explanation failed: 'flavours')"
    )


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("tilert", "TILERT_ALLOW_PLACEHOLDER"),
        ("flash-attn", "FLASH_ATTN_ALLOW_PLACEHOLDER"),
        ("a.b_c", "A_B_C_ALLOW_PLACEHOLDER"),
    ],
)
def test_escape_hatch_name(name: str, variable: str) -> None:
    assert runtime().escape_hatch(name) == variable
    assert runtime().allowed(name, {variable: "1"})
    assert not runtime().allowed(name, {variable: "0"})
    assert not runtime().allowed(name, {})


def test_ascii_words_only_in_the_fixed_text() -> None:
    # The fixed wording is ASCII so that it survives any console encoding.
    text = runtime().render_message(tilert(), host())
    assert set(text) <= set(string.printable)


# --- no build for this machine at all ---------------------------------------------------------

NOTHING_HELPS = (
    " Nothing you change on this machine (another Python, a newer NVIDIA driver, pip or uv "
    "options) will make one fit."
)


@pytest.mark.parametrize(
    ("changes", "second_line"),
    [
        pytest.param(
            {"nvidia": {"cuda": "13.0", "gpus": [{"name": "NVIDIA H100", "cc": [9, 0]}]},
             "nvidia_reason": ""},
            "No tilert build exists for this machine: none has GPU kernels for its NVIDIA H100 "
            "(compute capability 9.0, sm_90)." + NOTHING_HELPS,
            id="gpu-family",
        ),
        pytest.param(
            {"arch": "aarch64"},
            "No tilert build exists for this machine: none is for Linux aarch64." + NOTHING_HELPS,
            id="cpu",
        ),
        pytest.param(
            {"os": "windows", "libc": None, "libc_version": None, **B200},
            "No tilert build exists for this machine: none is for Windows x86_64."
            + NOTHING_HELPS,
            id="os",
        ),
    ],
)  # fmt: skip
def test_no_build_for_this_hardware_is_said_first_and_nothing_is_suggested(
    changes: dict[str, Any], second_line: str
) -> None:
    text = runtime().render_message(tilert(), host(**changes))
    lines = text.splitlines()
    assert lines[0] == "tilert 0.0.0.dev0 is a placeholder, not a broken install."
    assert lines[1] == second_line
    assert "resolver-hook pip install" not in text


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({**B200, "python": [3, 11]}, id="other-python"),
        pytest.param({**B200, "libc_version": "2.17"}, id="old-glibc"),
        pytest.param({**B200, "nvidia": {"cuda": "12.8", "gpus": B200["nvidia"]["gpus"]}},
                     id="old-driver"),
        pytest.param({}, id="no-gpu-detected"),
    ],
)  # fmt: skip
def test_something_this_machine_can_change_is_not_called_hopeless(
    changes: dict[str, Any],
) -> None:
    text = runtime().render_message(tilert(), host(**changes))
    assert "No tilert build exists for this machine" not in text
    assert text.splitlines()[1].startswith("It only reserves the name tilert")
    # No build fits, so resolver-hook would find none either: not suggested.
    assert "resolver-hook pip install" not in text


# --- retired names ---------------------------------------------------------------------------


def test_a_retired_name_says_so_with_the_exact_lines() -> None:
    from resolver_hook.publish.placeholder.data import retired_data

    data = retired_data("sklearn", "scikit-learn", homepage="https://scikit-learn.org")
    assert runtime().render_retired(data) == (
        "sklearn 0.0.0.dev0: this name is retired; install scikit-learn instead.\n"
        "sklearn is not a broken install: the name sklearn only points to scikit-learn now. "
        "Replace sklearn with scikit-learn where it is written (requirements files, "
        "pyproject.toml, setup.py), then run one of:\n"
        "\n"
        "  pip install scikit-learn\n"
        "  uv pip install scikit-learn\n"
        "\n"
        "Homepage: https://scikit-learn.org\n"
        "(SKLEARN_ALLOW_PLACEHOLDER=1 only lets this placeholder install; it still cannot be "
        "imported.)"
    )


def test_a_retired_message_never_depends_on_the_machine(tmp_path: Path) -> None:
    import json

    from resolver_hook.publish.placeholder.data import retired_data

    data = retired_data("nvidia-npp-cu12", "nvidia-npp")
    (tmp_path / "_placeholder_data.json").write_text(json.dumps(data))
    rt = runtime()
    texts = {
        rt.message(env=env, directory=str(tmp_path))
        for env in (
            {},
            {"RESOLVER_HOOK_OVERRIDE_ARCH": "aarch64", "RESOLVER_HOOK_OVERRIDE_SM": "9.0"},
        )
    }
    assert len(texts) == 1
    assert texts.pop().splitlines()[0] == (
        "nvidia-npp-cu12 0.0.0.dev0: this name is retired; install nvidia-npp instead."
    )
