"""Detection against fakes of what cannot exist here: NVML, /proc, nvidia-smi."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook.host.detect import detect_host
from resolver_hook.host.probes import (
    _NoNvmlLibrary,
    filter_visible,
    probe_nvml,
    probe_procfs,
    run_subprocess,
)
from resolver_hook.process.proc import Result, Runner
from tests.fake_nvml import (
    GB10,
    H100,
    NA_DEVICE,
    FakeNVML,
    NVMLError_DriverNotLoaded,
    NVMLError_LibraryNotFound,
)
from tests.fakeproc import done, missing, no_programs, timed_out


def detect(
    nvml: FakeNVML | None, tmp_path: Path, env: dict[str, str] | None = None, run=no_programs, **kw
) -> object:
    def load() -> FakeNVML:
        if nvml is None:
            raise ImportError("No module named 'pynvml'")
        return nvml

    return detect_host(
        env=env or {},
        root=tmp_path,
        run=run,
        load_nvml=load,
        system="linux",
        machine="x86_64",
        **kw,
    )


def test_library_missing(tmp_path: Path) -> None:
    p = detect(FakeNVML(init_error=NVMLError_LibraryNotFound()), tmp_path)
    assert p.nvidia is None
    assert "NVML init failed: NVML Shared Library Not Found" in p.nvidia_reason
    assert "NVIDIA driver not loaded" in p.nvidia_reason
    assert "nvidia-smi not found" in p.nvidia_reason


def test_pynvml_not_installed(tmp_path: Path) -> None:
    p = detect(None, tmp_path)
    assert "nvidia-ml-py (pynvml) not importable" in p.nvidia_reason


def test_init_error_with_driver_in_procfs(tmp_path: Path) -> None:
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build\n"
        "GCC version:  gcc version 13.3.0\n"
    )
    p = detect(FakeNVML(init_error=NVMLError_DriverNotLoaded()), tmp_path)
    assert p.nvidia is not None
    assert p.nvidia.driver_version == "580.95.05"
    assert p.gpus == ()
    assert "NVML init failed: Driver Not Loaded" in p.nvidia_reason


def test_sys_module_version(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia/version").write_text("575.57.08\n")
    assert probe_procfs(tmp_path)[0] == "575.57.08"


def test_zero_devices(tmp_path: Path) -> None:
    p = detect(FakeNVML([]), tmp_path)
    assert p.gpus == ()
    assert "driver 580.95.05 has no devices" in p.nvidia_reason


def test_one_gpu(tmp_path: Path) -> None:
    nvml = FakeNVML([GB10], cuda=13000)
    p = detect(nvml, tmp_path)
    assert p.nvidia is not None
    assert p.nvidia.cuda_version == "13.0"
    assert p.nvidia.driver_version == "580.95.05"
    assert [(g.name, g.cc, g.memory_mib) for g in p.gpus] == [("NVIDIA GB10", (12, 1), None)]
    assert nvml.shutdown_called


def test_two_gpus_of_different_cc(tmp_path: Path) -> None:
    p = detect(FakeNVML([H100, GB10], cuda=12080), tmp_path)
    assert p.gpu_ccs == ((9, 0), (12, 1))
    assert p.gpus[0].memory_mib == 80 * 1024
    assert p.nvidia.cuda_version == "12.8"


def test_na_device_skipped_with_note(tmp_path: Path) -> None:
    p = detect(FakeNVML([NA_DEVICE, GB10]), tmp_path)
    assert p.gpu_ccs == ((12, 1),)
    assert any("GPU 0 (NVIDIA Tegra NPU) skipped: compute capability unknown" in n for n in p.notes)


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        ("1", ((12, 1),)),
        ("1,0", ((12, 1), (9, 0))),
        ("GPU-bbbb2222", ((12, 1),)),  # a unique UUID prefix, as the CUDA runtime accepts
        # NVIDIA documents UUIDs as nvidia-smi prints them, "GPU-..." (docs/facts.md 1.4):
        # a bare UUID is an invalid entry, so nothing from it on is visible.
        ("bbbb2222-0000-0000-0000-000000000000", ()),
        ("0,7,1", ((9, 0),)),  # the runtime stops at the first invalid entry
        ("", ()),
        ("-1", ()),
    ],
)
def test_cuda_visible_devices(
    tmp_path: Path, visible: str, expected: tuple[tuple[int, int], ...]
) -> None:
    p = detect(FakeNVML([H100, GB10]), tmp_path, env={"CUDA_VISIBLE_DEVICES": visible})
    assert p.gpu_ccs == expected
    if not expected:
        assert "CUDA_VISIBLE_DEVICES" in p.nvidia_reason


def test_visible_unset_changes_nothing() -> None:
    gpus = (object(),)  # identity is kept when nothing is filtered
    assert filter_visible(gpus, {}) == (gpus, None)  # type: ignore[arg-type]


def test_nvml_hang_times_out(tmp_path: Path) -> None:
    start = time.monotonic()
    p = detect(FakeNVML([GB10], init_sleep=30), tmp_path, nvml_timeout=0.3)
    assert time.monotonic() - start < 5
    assert "NVML timed out after 0.3 s" in p.nvidia_reason


def test_no_nvml_library_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the library no driver call is made, so nothing can hang: the stand-in's
    nvmlInit is asked at once, without a worker thread to start and wait for."""

    def no_thread(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker thread was started")

    monkeypatch.setattr(threading, "Thread", no_thread)
    info, notes, probe = probe_nvml(_NoNvmlLibrary)
    assert (info, notes) == (None, [])
    assert probe.detail == "NVML init failed: NVML Shared Library Not Found"


SMI_OK = (
    "0, NVIDIA GB10, 12.1, 580.95.05, [N/A], GPU-bbbb2222-0000\n"
    "1, Tegra NPU, [N/A], 580.95.05, [N/A], [N/A]\n"
)
SMI_HEADER = "| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0     |\n"


def fake_smi(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
    return done(argv, 0, SMI_OK if len(argv) > 1 else SMI_HEADER)


def test_nvidia_smi_fallback_skips_na_rows(tmp_path: Path) -> None:
    p = detect(FakeNVML(init_error=NVMLError_LibraryNotFound()), tmp_path, run=fake_smi)
    assert [(g.name, g.cc) for g in p.gpus] == [("NVIDIA GB10", (12, 1))]
    assert p.nvidia.cuda_version == "13.0"
    assert any("Tegra NPU) skipped: compute capability [N/A]" in n for n in p.notes)


def real_smi(tmp_path: Path, script: str) -> Runner:
    """A runner whose nvidia-smi is a real shell script; other programs are missing."""
    smi = tmp_path / "bin/nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(f"#!/bin/sh\n{script}\n")
    smi.chmod(0o755)

    def run(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
        if argv[0] != "nvidia-smi":
            return missing(argv)
        return run_subprocess([str(smi), *argv[1:]], timeout=timeout)

    return run


def test_nvidia_smi_that_hangs(tmp_path: Path) -> None:
    """A real subprocess that hangs: the timeout fires and detection returns."""
    start = time.monotonic()
    p = detect(
        FakeNVML(init_error=NVMLError_LibraryNotFound()),
        tmp_path,
        run=real_smi(tmp_path, "sleep 30"),
        smi_timeout=0.5,
    )
    assert time.monotonic() - start < 10
    assert "nvidia-smi timed out after 0.5 s" in p.nvidia_reason


def test_nvidia_smi_failure_is_a_reason(tmp_path: Path) -> None:
    def run(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
        return done(
            argv,
            9,
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        )

    p = detect(FakeNVML(init_error=NVMLError_LibraryNotFound()), tmp_path, run=run)
    assert "nvidia-smi failed: NVIDIA-SMI has failed" in p.nvidia_reason


def test_rocm_from_kfd_topology(tmp_path: Path) -> None:
    for node, version in (("0", "0"), ("1", "90010"), ("2", "110000")):
        d = tmp_path / "sys/class/kfd/kfd/topology/nodes" / node
        d.mkdir(parents=True)
        (d / "properties").write_text(f"cpu_cores_count 0\ngfx_target_version {version}\n")
    p = detect(None, tmp_path)
    assert p.rocm is not None
    assert p.rocm.gfx == ("gfx90a", "gfx1100")


def test_wsl_and_container_hints(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/version").write_text("Linux version 5.15.153.1-microsoft-standard-WSL2\n")
    (tmp_path / ".dockerenv").write_text("")
    p = detect(None, tmp_path)
    assert p.wsl is True
    assert p.container == "docker"


def test_macos_arm64_has_mps(tmp_path: Path) -> None:
    p = detect_host(env={}, root=tmp_path, run=no_programs, system="darwin", machine="arm64")
    assert (p.os, p.arch, p.mps, p.nvidia) == ("macos", "aarch64", True, None)
    assert "no NVIDIA CUDA driver exists for macos" in p.nvidia_reason


def test_probes_never_raise_on_garbage(tmp_path: Path) -> None:
    class Broken(FakeNVML):
        def nvmlDeviceGetCount(self) -> int:
            raise RuntimeError("garbage")

    def run(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
        return timed_out(argv, timeout)

    p = detect(Broken([GB10]), tmp_path, run=run)
    assert "NVML query failed: garbage" in p.nvidia_reason


def test_probes_never_raise_on_bytes_that_are_not_text(tmp_path: Path) -> None:
    """Undecodable bytes from nvidia-smi or in /proc and /sys files are read, not raised."""
    run = real_smi(tmp_path, "printf '0, NVIDIA \\377, 9.0, 550.54.14, 81559, GPU-1\\n'")
    for name in (
        "proc/version",
        "proc/driver/nvidia/version",
        "sys/module/nvidia/version",
        "opt/rocm/.info/version",
        "sys/class/kfd/kfd/topology/nodes/1/properties",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\xff\xfe garbage\n")
    p = detect(FakeNVML(init_error=NVMLError_LibraryNotFound()), tmp_path, run=run)
    assert [g.cc for g in p.gpus] == [(9, 0)]
    assert (p.wsl, p.rocm) == (False, None)


def test_mig_instances_keep_every_gpu(tmp_path: Path) -> None:
    """MIG instance UUIDs are not mapped to their GPU: no GPU is hidden by them."""
    p = detect(
        FakeNVML([H100, GB10]),
        tmp_path,
        env={"CUDA_VISIBLE_DEVICES": "MIG-1234abcd-0000-0000-0000-000000000000"},
    )
    assert p.gpu_ccs == ((9, 0), (12, 1))
    assert any("names MIG instances" in n for n in p.notes)
