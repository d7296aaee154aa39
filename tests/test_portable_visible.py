"""CUDA_VISIBLE_DEVICES means the same GPUs in ``detect`` and in a placeholder.

One table of the forms NVIDIA documents (docs/facts.md section 1.4: indices, UUIDs,
UUID prefixes, MIG ids, empty, -1, an invalid entry mid-list), each checked against
resolver-hook's detection and the placeholder runtime, with NVML and with nvidia-smi
as the source, both reporting GPU UUIDs. Only the GPU is faked: a fake pynvml for
detection, a fake libnvidia-ml for the placeholder's ctypes calls, a fake nvidia-smi
executable for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.host.detect import detect_host
from resolver_hook.host.probes import run_subprocess
from resolver_hook.portable.visible import select
from resolver_hook.process.proc import Result
from resolver_hook.publish.placeholder.render import runtime
from tests.fake_nvml import GB10, H100, FakeNVML, FakeNvmlLib, fake_nvidia_smi
from tests.fakeproc import missing, no_programs, no_pynvml

L4 = {
    "name": "NVIDIA L4",
    "cc": (8, 9),
    "mem": 24 * 1024**3,
    "uuid": "GPU-aaaa9999-0000-0000-0000-000000000000",  # shares "GPU-aaaa" with the H100
}
GPUS = [H100, GB10, L4]
ALL = [(9, 0), (12, 1), (8, 9)]

# (CUDA_VISIBLE_DEVICES or None for unset, the compute capabilities CUDA would show).
TABLE: list[tuple[str | None, list[tuple[int, int]]]] = [
    (None, ALL),
    ("", []),  # empty: no GPU
    ("-1", []),  # invalid first entry: nothing before it
    ("1", [(12, 1)]),
    ("2,0", [(8, 9), (9, 0)]),  # CUDA's order is the variable's order
    ("0,0", [(9, 0)]),
    ("0,2,-1,1", [(9, 0), (8, 9)]),  # NVIDIA's own example: stops at -1
    ("1,7,0", [(12, 1)]),  # 7 does not exist: invalid mid-list
    ("0,junk,1", [(9, 0)]),
    ("GPU-bbbb2222-0000-0000-0000-000000000000", [(12, 1)]),
    ("GPU-bbbb", [(12, 1)]),  # a unique prefix
    ("GPU-aaaa", []),  # an ambiguous prefix names no GPU
    ("GPU-aaaa9999,GPU-aaaa1111", [(8, 9), (9, 0)]),
    ("1,GPU-aaaa1111-0000-0000-0000-000000000000", [(12, 1), (9, 0)]),
    ("MIG-GPU-bbbb2222-0000-0000-0000-000000000000/1/0", [(12, 1)]),  # its parent GPU
    ("MIG-7a3d2f10-0000-0000-0000-000000000000", ALL),  # unmapped: every GPU, said
]
IDS = [repr(v) for v, _ in TABLE]


def detect_ccs(value: str | None, source: str, tmp_path: Path) -> list[tuple[int, int]]:
    env = {} if value is None else {"CUDA_VISIBLE_DEVICES": value}
    run = no_programs
    load_nvml: Any = lambda: FakeNVML(GPUS)  # noqa: E731
    if source == "nvidia-smi":
        smi = fake_nvidia_smi(tmp_path, GPUS)
        load_nvml = no_pynvml

        def run(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
            if argv[0] != "nvidia-smi":
                return missing(argv)
            return run_subprocess([str(smi), *argv[1:]], timeout=timeout)

    profile = detect_host(
        env=env, root=tmp_path, run=run, load_nvml=load_nvml, system="linux", machine="x86_64"
    )
    return [g.cc for g in profile.gpus]


def placeholder_ccs(
    value: str | None, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[int, int]]:
    rt = runtime()
    monkeypatch.setenv("PATH", str(tmp_path))
    if source == "nvidia-smi":
        fake_nvidia_smi(tmp_path, GPUS)

        def no_lib() -> Any:
            raise OSError("libnvidia-ml.so.1: cannot open shared object file")

        monkeypatch.setattr(rt, "_load_nvml", no_lib)
    else:
        monkeypatch.setattr(rt, "_load_nvml", lambda: FakeNvmlLib(GPUS))
    env = {"RESOLVER_HOOK_OVERRIDE_ARCH": "x86_64"}
    if value is not None:
        env["CUDA_VISIBLE_DEVICES"] = value
    found = rt.detect(env)
    return [tuple(g["cc"]) for g in (found["nvidia"] or {}).get("gpus") or []]


@pytest.mark.parametrize("source", ["nvml", "nvidia-smi"])
@pytest.mark.parametrize(("value", "expected"), TABLE, ids=IDS)
def test_detect_and_placeholder_see_the_same_gpus(
    value: str | None,
    expected: list[tuple[int, int]],
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert detect_ccs(value, source, tmp_path) == expected
    assert placeholder_ccs(value, source, tmp_path, monkeypatch) == expected


def test_the_placeholder_reads_uuids_from_nvml_and_nvidia_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = runtime()
    info = rt._nvml_query(FakeNvmlLib(GPUS))
    assert [g["uuid"] for g in info["gpus"]] == [g["uuid"] for g in GPUS]
    monkeypatch.setenv("PATH", str(tmp_path))
    fake_nvidia_smi(tmp_path, GPUS)
    smi, reason = rt._probe_smi(10)
    assert reason == ""
    assert [g["uuid"] for g in smi["gpus"]] == [g["uuid"] for g in GPUS]


def test_notes_say_what_the_variable_did() -> None:
    gpus = [(0, "GPU-a"), (1, "GPU-b")]
    assert select("1,x,0", gpus) == (
        [1],
        "CUDA_VISIBLE_DEVICES='1,x,0' shows 1 of 2 GPU(s) (CUDA stops at the invalid entry 'x')",
    )
    assert select("0,1", gpus) == ([0, 1], "")
    assert select(None, gpus) == ([0, 1], "")
    assert select("", gpus)[1] == "CUDA_VISIBLE_DEVICES is empty: no GPU is visible to CUDA"
