"""The one check that needs a real NVIDIA GPU: NVML through nvidia-ml-py, end to end.

Skipped unless RESOLVER_HOOK_REAL_GPU=1 (set by scripts/device_check.sh on a GPU
machine); everywhere else the fakes in test_host_probes.py cover detection.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        os.environ.get("RESOLVER_HOOK_REAL_GPU") != "1",
        reason="needs a real NVIDIA GPU (RESOLVER_HOOK_REAL_GPU=1)",
    ),
]


def test_detect_reads_nvml_and_agrees_with_nvidia_smi() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "detect", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    data = json.loads(proc.stdout)
    nvml = next(p for p in data["probes"] if p["name"] == "nvidia-nvml")
    assert nvml["found"], nvml["detail"]
    nv = data["nvidia"]
    assert nv["driver_version"]
    assert nv["cuda_version"]
    assert nv["gpus"]
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return
    out = subprocess.run(
        [smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        assert [(g["name"], g["cc"]) for g in nv["gpus"]] == [(r[0], r[1]) for r in rows]
    assert nv["driver_version"] == rows[0][2]
