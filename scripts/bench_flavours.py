"""Benchmark resolution against one package with 1k, 10k and 100k flavours.

Resolution must grow near-linearly with the number of flavours a manifest lists (a
nightly index can list tens of thousands of wheels). Prints the time of one plan at
each size and the 100k/1k ratio; the goal is at most 150 (linear would be 100). Half
the wheels are CPU-only and the machine has an NVIDIA GPU, the case that was
quadratic (every CPU-only flavour looked at every other flavour). Each size is planned
three times and the fastest run counts. Run from the
repository root:

    PYTHONPATH=. python3 scripts/bench_flavours.py
"""

from __future__ import annotations

import sys
import time

from resolver_hook.host import parse_target
from resolver_hook.manifest import Manifest, parse_manifest
from resolver_hook.resolve import resolve

SIZES = (1_000, 10_000, 100_000)
GOAL = 150
REPEAT = 3
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64")
PYTHONS = ("cp311", "cp312", "cp313")
TARGET = "linux-x86_64-py312-cuda13.0-sm100"


def make_manifest(n: int) -> Manifest:
    wheels: list[dict[str, object]] = []
    i = 0
    while len(wheels) < n:
        py = PYTHONS[i % len(PYTHONS)]
        plat = PLATFORMS[(i // len(PYTHONS)) % len(PLATFORMS)]
        version = f"1.{i // 9}"
        if i % 2:
            wheels.append(
                {
                    "url": f"https://x.org/pkg-{version}+cu130-{py}-{py}-{plat}.whl",
                    "cuda": ">=13.0",
                    "gpu": ["sm_90", "sm_100f"],
                }
            )
        else:
            wheels.append({"url": f"https://x.org/pkg-{version}+cpu-{py}-{py}-{plat}.whl"})
        i += 1
    return parse_manifest({"package": {"name": "pkg"}, "wheel": wheels}, source="generated")


def main() -> int:
    profile = parse_target(TARGET)
    times: dict[int, float] = {}
    for n in SIZES:
        manifest = make_manifest(n)
        runs = []
        for _ in range(REPEAT):
            start = time.perf_counter()
            plan = resolve(["pkg"], {"pkg": manifest}, profile)
            runs.append(time.perf_counter() - start)
        times[n] = min(runs)  # the least disturbed run (the machine is shared)
        (chosen,) = plan.packages
        print(f"{n:>7} flavours: {times[n]:8.3f} s  (chose {chosen.version})", flush=True)
    ratio = times[SIZES[-1]] / times[SIZES[0]]
    verdict = "ok" if ratio <= GOAL else "TOO SLOW"
    print(f"100k/1k ratio: {ratio:.0f} (goal <= {GOAL}, linear = 100): {verdict}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
