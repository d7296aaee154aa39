"""Benchmark the resolver: 1,000 requirements, 200 generated manifests, 20 targets.

Prints the time per plan next to the start-up floor (``python -c pass`` and
``python -c "import resolver_hook.resolve"``), so the cost of resolving can be read
against the cost of starting the tool at all. Run from the repository root:

    PYTHONPATH=. python3 scripts/bench_resolve.py
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time

from _benchutil import compile_package

from resolver_hook.host import parse_target
from resolver_hook.manifest import parse_manifest
from resolver_hook.resolve import resolve

PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_34_aarch64", "win_amd64", "macosx_11_0_arm64"]
PYTHONS = ["cp310", "cp311", "cp312", "cp313", "cp314"]
CUDA = [
    ("cu126", ">=12.0", ["sm_80", "sm_86", "sm_90"]),
    ("cu130", ">=13.0", ["sm_90", "sm_100f", "sm_120", "compute_120"]),
]
TARGETS = [
    f"{os_}-{arch}-py{py}-{gpu}"
    for os_, arch in (("linux", "x86_64"), ("linux", "aarch64"), ("windows", "x86_64"))
    for py in ("311", "312")
    for gpu in ("cuda13.0-sm100", "cuda12.6-sm89", "cuda13.0-sm121")
]
TARGETS = [*TARGETS[:18], "linux-x86_64-py312", "macos-arm64-py312"]


def make_manifests(n: int, rng: random.Random) -> dict[str, object]:
    out = {}
    for i in range(n):
        name = f"pkg{i:03d}"
        wheels = []
        for label, cuda, gpu in CUDA:
            for py in rng.sample(PYTHONS, 3):
                for plat in rng.sample(PLATFORMS, 2):
                    w = {
                        "url": f"https://x.org/{name}-1.{i % 7}+{label}-{py}-{py}-{plat}.whl",
                        "cuda": cuda,
                        "gpu": gpu,
                    }
                    if i % 5 and i > 0:  # most packages couple with an earlier one
                        w["requires"] = [f"pkg{rng.randrange(i):03d}>=1.0"]
                    wheels.append(w)
        out[name] = parse_manifest(
            {
                "package": {"name": name},
                "wheel": wheels,
                "index": [{"version": f"1.{i % 7}+cpu", "url": f"https://x.org/cpu/{name}/"}],
            },
            source="generated",
        )
    return out


def floor(code: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    compile_package()  # the start-up floor as `pip install` leaves the tool
    rng = random.Random(1)
    manifests = make_manifests(200, rng)
    names = list(manifests)
    reqs = [rng.choice(names) + rng.choice(["", ">=1.0", "<2"]) for _ in range(600)]
    reqs += [f"plain{i}>=1" for i in range(400)]  # packages with no manifest
    profiles = [parse_target(t) for t in TARGETS]
    times = []
    outcomes = {"rewrite": 0, "pass": 0, "error": 0}
    for profile in profiles:
        t = time.perf_counter()
        plan = resolve(reqs, manifests, profile)  # type: ignore[arg-type]
        times.append(time.perf_counter() - t)
        for p in plan.packages:
            outcomes[p.action] += 1
    print(
        f"resolve: {len(reqs)} requirements, {len(manifests)} manifests, "
        f"{sum(len(m.flavours) for m in manifests.values())} flavours, {len(profiles)} targets"
    )
    print(
        f"  per plan: median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms, total {sum(times):.2f} s"
    )
    print(f"  outcomes over all plans: {outcomes}")
    print(
        f"start-up floor: python -c pass: {floor('pass') * 1000:.1f} ms; "
        f"import resolver_hook.resolve: {floor('import resolver_hook.resolve') * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
