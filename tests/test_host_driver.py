"""A driver without NVML: its CUDA version inferred from NVIDIA's table.

Fake /proc and /sys trees stand in for the kernel module; NVML is missing. The table
is NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" (docs/facts.md 1.3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resolver_hook.host.detect import detect_host
from resolver_hook.host.profile import HostProfile
from resolver_hook.resolve import resolve
from tests.fakeproc import no_programs, no_pynvml
from tests.manifestdata import index_manifest


def detect_with(tmp_path: Path, *, proc: str | None = None, sys_module: str | None = None) -> Any:
    if proc is not None:
        (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
        (tmp_path / "proc/driver/nvidia/version").write_text(
            f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {proc}  Release Build\n"
            "GCC version:  gcc version 13.3.0\n"
        )
    if sys_module is not None:
        (tmp_path / "sys/module/nvidia").mkdir(parents=True)
        (tmp_path / "sys/module/nvidia/version").write_text(sys_module + "\n")
    return detect_host(
        env={},
        root=tmp_path,
        run=no_programs,
        load_nvml=no_pynvml,
        system="linux",
        machine="x86_64",
    )


@pytest.mark.parametrize(
    ("driver", "cuda", "words"),
    [
        ("580.95.05", "13.0", "13.0"),
        ("570.124.06", "12.8", "12.8"),  # a 12.x row: 12.8 GA needs >= 570.26
        ("560.35.03", "12.6", "12.6"),
        ("612.3.1", "13.2", "at least 13.2"),  # newer than every row: at least the newest
    ],
)
def test_proc_driver_version_gives_an_inferred_cuda(
    tmp_path: Path, driver: str, cuda: str, words: str
) -> None:
    profile = detect_with(tmp_path, proc=driver)
    assert profile.nvidia.driver_version == driver
    assert profile.nvidia.cuda_version == cuda
    assert profile.nvidia.cuda_inferred
    assert (
        f"driver CUDA version {words} inferred from driver {driver} with NVIDIA's table "
        "(NVML did not report it)"
    ) in profile.notes
    assert f"NVIDIA driver CUDA {words} (inferred from driver {driver})" in profile.describe()


def test_sys_module_version_is_read_too(tmp_path: Path) -> None:
    profile = detect_with(tmp_path, sys_module="580.82.07")
    assert (profile.nvidia.cuda_version, profile.nvidia.cuda_inferred) == ("13.0", True)


def test_a_driver_older_than_the_table_stays_unknown(tmp_path: Path) -> None:
    profile = detect_with(tmp_path, proc="440.33.01")
    assert profile.nvidia.cuda_version is None
    assert not profile.nvidia.cuda_inferred
    assert "driver 440.33.01 is older than NVIDIA's table" in " ".join(profile.notes)


def test_inferred_survives_a_saved_profile(tmp_path: Path) -> None:
    profile = detect_with(tmp_path, proc="580.95.05")
    again = HostProfile.from_dict(profile.to_dict())
    assert again.nvidia is not None
    assert again.nvidia.cuda_inferred


MANIFEST = index_manifest(
    "kern",
    {
        "url": "https://example.org/cu130/kern/",
        "version": "1.0+cu130",
        "cuda": ">=13.0",
        "gpu": ["sm_90"],
    },
    {"url": "https://example.org/cu130/any/", "version": "1.0+cuda", "cuda": ">=13.0"},
)


def test_a_plan_that_needs_a_compute_capability_names_the_override(tmp_path: Path) -> None:
    profile = detect_with(tmp_path, proc="580.95.05")
    plan = resolve(["kern==1.0+cu130"], {"kern": MANIFEST}, profile)
    (pkg,) = plan.packages
    assert pkg.action == "error"
    reason = pkg.rejected[0].reason
    assert reason.startswith(
        "needs a GPU for kernels sm_90; this machine's GPU compute capability is unknown ("
    )
    assert reason.endswith("); set RESOLVER_HOOK_OVERRIDE_SM=X.Y (or --sm X.Y) to name it")
    # A build that needs only the driver fits on the inferred CUDA version.
    plan = resolve(["kern==1.0+cuda"], {"kern": MANIFEST}, profile)
    assert plan.packages[0].action == "rewrite"
    assert "(inferred from driver 580.95.05)" in plan.to_dict()["machine"]
