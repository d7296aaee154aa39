"""Jetson: detection from fake trees, targets, and the plan rules.

Facts: docs/facts.md section 1.1 (Tegra binary compatibility) and 1.2 (Jetson
detection, JetPack 6 = L4T r36, server-Arm builds vs Jetson builds, Thor on CUDA 13).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.host.detect import detect_host, parse_target
from resolver_hook.host.probes import probe_jetson
from resolver_hook.manifest import parse_manifest
from resolver_hook.resolve import resolve
from tests.fake_nvml import FakeNVML
from tests.fakeproc import no_programs
from tests.manifestdata import index_manifest

ORIN_RELEASE = (
    "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, "
    "DATE: Fri Sep 13 04:36:44 UTC 2024\n"
)
ORIN_COMPATIBLE = "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0"
ORIN_GPU = {"name": "Orin (nvgpu)", "cc": (8, 7), "mem": None, "uuid": "GPU-0e0e0e0e"}


def fake_tree(root: Path, release: str | None, compatible: str | None) -> Path:
    if release is not None:
        (root / "etc").mkdir(parents=True, exist_ok=True)
        (root / "etc/nv_tegra_release").write_text(release)
    if compatible is not None:
        (root / "proc/device-tree").mkdir(parents=True, exist_ok=True)
        (root / "proc/device-tree/compatible").write_bytes(compatible.encode())
    return root


@pytest.mark.parametrize(
    ("release", "compatible", "l4t", "detail"),
    [
        (ORIN_RELEASE, ORIN_COMPATIBLE, "36.4", "Jetson (Jetson Orin): L4T 36.4"),
        ("# R35 (release), REVISION: 5.0, GCID: 1\n", None, "35.5", "Jetson: L4T 35.5"),
        (
            None,
            "nvidia,p2972-0000\0nvidia,tegra194\0",
            None,
            "Jetson Xavier per the device tree, but /etc/nv_tegra_release is missing or "
            "unreadable: L4T release unknown",
        ),
        (None, None, None, "not a Jetson (no /etc/nv_tegra_release)"),
        ("garbage\n", "\0\0", None, "not a Jetson (no /etc/nv_tegra_release)"),
    ],
)
def test_probe_jetson_reads_fake_trees(
    tmp_path: Path, release: str | None, compatible: str | None, l4t: str | None, detail: str
) -> None:
    found, probe = probe_jetson(fake_tree(tmp_path, release, compatible))
    assert found == l4t
    assert probe.detail == detail


def detect_orin(tmp_path: Path) -> Any:
    root = fake_tree(tmp_path, ORIN_RELEASE, ORIN_COMPATIBLE)
    return detect_host(
        env={},
        root=root,
        run=no_programs,
        load_nvml=lambda: FakeNVML([ORIN_GPU], driver="540.4.0", cuda=12060),
        system="linux",
        machine="aarch64",
    )


def test_detect_puts_the_l4t_release_in_the_profile(tmp_path: Path) -> None:
    profile = detect_orin(tmp_path)
    assert profile.l4t == "36.4"
    assert profile.jetson
    assert profile.needs_jetson_builds
    assert "Jetson L4T 36.4" in profile.describe()


@pytest.mark.parametrize(
    ("spec", "needs_jetson_builds"),
    [
        ("linux-aarch64-py310-cuda12.6-sm87", True),  # Orin: a Tegra CC
        ("linux-aarch64-py310-cuda12.6-sm87-l4t36.4", True),
        ("linux-aarch64-py38-cuda11.4-sm72", True),  # Xavier
        ("linux-aarch64-py312-cuda13.0-sm110", False),  # Thor on CUDA 13: SBSA
        ("linux-aarch64-py312-cuda13.0-sm110-l4t38.2", False),
        ("linux-aarch64-py312-cuda13.0-sm121", False),  # GB10: not a Jetson
    ],
)
def test_a_jetson_only_cc_names_a_jetson(spec: str, needs_jetson_builds: bool) -> None:
    profile = parse_target(spec)
    assert profile.jetson is ("sm121" not in spec)
    assert profile.needs_jetson_builds is needs_jetson_builds


@pytest.mark.parametrize("spec", ["linux-x86_64-py312-cuda12.6-sm87", "windows-arm64-sm110"])
def test_jetson_ccs_are_linux_aarch64_only(spec: str) -> None:
    with pytest.raises(UsageError, match="a Jetson module: Linux aarch64 only"):
        parse_target(spec)


def test_an_unknown_l4t_release_is_noted() -> None:
    profile = parse_target("linux-aarch64-py310-cuda12.6-sm87")
    assert any("add l4tX.Y to the target" in n for n in profile.notes)
    assert "Jetson, L4T release unknown" in profile.describe()


# --- plans --------------------------------------------------------------------------

SBSA_AND_JETSON = index_manifest(
    "torch",
    {
        "url": "https://download.pytorch.org/whl/cu126/torch/",
        "version": "2.13.0+cu126",
        "cuda": ">=12.0",
        "gpu": ["sm_80", "sm_90"],
        "platforms": ["manylinux_2_28_aarch64"],
    },
    {
        "url": "https://pypi.jetson-ai-lab.io/jp6/cu126/+simple/torch/",
        "version": "2.8.0",
        "cuda": ">=12.6",
        "l4t": ">=36,<37",
        "gpu": ["sm_87"],
        "platforms": ["linux_aarch64"],
        "python": ["3.10"],
    },
)


def test_orin_target_never_gets_a_download_pytorch_org_build() -> None:
    plan = resolve(
        ["torch"],
        {"torch": SBSA_AND_JETSON},
        parse_target("linux-aarch64-py310-cuda12.6-sm87-l4t36.4"),
    )
    (pkg,) = plan.packages
    assert pkg.action == "rewrite"
    assert pkg.url is not None
    assert pkg.url.startswith("https://pypi.jetson-ai-lab.io/jp6/")
    (sbsa,) = pkg.rejected
    assert sbsa.rules == ("jetson", "gpu")
    assert sbsa.failures[0].reason == (
        "a server-Arm (SBSA) CUDA build; JetPack 6 and older (L4T r36 and before) need a "
        "Jetson build, e.g. from NVIDIA's Jetson AI Lab index "
        "https://pypi.jetson-ai-lab.io/jp6/cu126"
    )


def test_a_detected_orin_never_gets_a_download_pytorch_org_build(tmp_path: Path) -> None:
    plan = resolve(["torch"], {"torch": SBSA_AND_JETSON}, detect_orin(tmp_path).for_python((3, 10)))
    assert plan.packages[0].url.startswith("https://pypi.jetson-ai-lab.io/")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        # No L4T release: the Jetson build cannot be checked, the SBSA one never fits.
        (
            "linux-aarch64-py310-cuda12.6-sm87",
            "a Jetson build for L4T <37,>=36; this Jetson's L4T release is unknown "
            "(add l4tX.Y to --target, e.g. l4t36.4)",
        ),
        ("linux-aarch64-py310-cuda12.6-sm87-l4t35.5", "this Jetson has L4T 35.5"),
        ("linux-aarch64-py310-cuda12.6-sm90", "this machine is not a Jetson"),
    ],
)
def test_jetson_builds_fit_only_their_jetsons(spec: str, why: str) -> None:
    plan = resolve(["torch"], {"torch": SBSA_AND_JETSON}, parse_target(spec))
    reasons = {r.candidate: r.reason for r in plan.packages[0].rejected}
    jetson = next(v for k, v in reasons.items() if "jetson-ai-lab" in k)
    assert why in jetson


def test_thor_on_cuda13_uses_the_server_arm_build() -> None:
    manifest = index_manifest(
        "torch",
        {
            "url": "https://download.pytorch.org/whl/cu130/torch/",
            "version": "2.13.0+cu130",
            "cuda": ">=13.0",
            "gpu": ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"],
            "platforms": ["manylinux_2_28_aarch64"],
        },
    )
    for spec in (
        "linux-aarch64-py312-cuda13.0-sm110",
        "linux-aarch64-py312-cuda13.0-sm110-l4t38.2",
    ):
        plan = resolve(["torch"], {"torch": manifest}, parse_target(spec))
        assert plan.packages[0].version == "2.13.0+cu130", spec


@pytest.mark.parametrize(
    ("gpu", "fits"), [(["sm_80"], False), (["compute_80"], True), (["sm_87"], True)]
)
def test_kernels_on_orin(gpu: list[str], fits: bool) -> None:
    # sm_80 SASS does not run on Tegra 8.7; PTX JITs; sm_87 is exact (docs/facts.md 1.1).
    manifest = index_manifest(
        "kern",
        {
            "url": "https://example.org/jp6/kern/",
            "version": "1.0",
            "cuda": ">=12.0",
            "l4t": ">=36,<37",
            "gpu": gpu,
        },
    )
    plan = resolve(
        ["kern"], {"kern": manifest}, parse_target("linux-aarch64-py310-cuda12.6-sm87-l4t36.4")
    )
    assert plan.ok is fits
    if not fits:
        assert plan.packages[0].rejected[0].reason == (
            "kernels sm_80 does not run on Jetson Orin (sm_87)"
        )


@pytest.mark.builtin_data  # the shipped manifests, not the frozen copies
def test_builtin_torch_is_never_sbsa_on_orin(capsys: pytest.CaptureFixture[str]) -> None:
    # The case: the built-in torch for an Orin target never goes to
    # download.pytorch.org, whatever the built-in data holds.
    code = main(["plan", "torch", "--json", "--target", "linux-aarch64-py310-cuda12.6-sm87"])
    data = json.loads(capsys.readouterr().out)
    (pkg,) = data["packages"]
    assert not (pkg.get("url") or "").startswith("https://download.pytorch.org"), pkg
    assert not (pkg.get("find_links") or "").startswith("https://download.pytorch.org"), pkg
    if pkg["action"] == "error":
        assert code == 1
        assert any(
            "pypi.jetson-ai-lab.io/jp6/cu126" in f["reason"]
            for r in pkg["rejected"]
            for f in r["failures"]
        )


def test_l4t_in_a_manifest_must_be_a_specifier() -> None:
    from resolver_hook.manifest import ManifestError

    with pytest.raises(ManifestError, match=r"index\[0\]\.l4t"):
        parse_manifest(
            {
                "schema": 1,
                "package": {"name": "x"},
                "index": [{"url": "https://example.org/x/", "version": "1", "l4t": "r36"}],
            },
            source="test",
        )
