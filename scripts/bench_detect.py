#!/usr/bin/env python3
"""Start-up cost of the hook, side by side with a baseline measured in the same run.

Everything runs with the python of a clean venv that holds only resolver-hook (a wheel
of the checkout, bytecode compiled: scripts/_benchutil.py), so neither side is slowed
or flattered by a development environment:

- `resolver-hook detect --json` with a cold cache (`--no-cache`) and a warm one, next to
  `python -c pass` (whose own figure is printed: a slow baseline shows);
- `resolver-hook plan --example` (five packages, the detected machine, warm cache), next
  to `pip --version` (what every pip install pays before it starts work).

The commands run in turn (A, B, A, B, ...) so a drifting machine hits both alike; the
medians and their ratios are printed. Not a test: figures go in notes.

Usage: python3 scripts/bench_detect.py [--runs N] [--source DIR]
  --source: the tree to build the wheel from (default: this checkout), e.g. a
  `git worktree` of an older commit, to measure before and after in the same way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _benchutil import REPO, clean_venv


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--source", type=Path, default=REPO)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        py = str(clean_venv(Path(tmp), args.source))
        hook = [str(Path(py).parent / "resolver-hook")]
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESOLVER_HOOK_")}
        env["RESOLVER_HOOK_CACHE_DIR"] = str(Path(tmp) / "cache")
        env.pop("PYTHONPATH", None)
        commands = {
            "python -c pass": [py, "-c", "pass"],
            "detect --json (cold)": [*hook, "detect", "--json", "--no-cache"],
            "detect --json (warm)": [*hook, "detect", "--json"],
            "pip --version": [py, "-m", "pip", "--version"],
            "plan --example (warm)": [*hook, "plan", "--example"],
        }
        wall(commands["detect --json (warm)"], env)  # fill the cache
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.runs):
            for label, argv in commands.items():
                times[label].append(wall(argv, env))
    print(f"source: {args.source}; python: a clean venv of it ({args.runs} runs each)")
    med = {k: statistics.median(v) for k, v in times.items()}
    for label, value in med.items():
        low, high = min(times[label]), max(times[label])
        print(
            f"{label:<24} median {value * 1000:7.1f} ms  "
            f"(min {low * 1000:.1f}, max {high * 1000:.1f})"
        )
    floor = med["python -c pass"]
    cold, warm = med["detect --json (cold)"] / floor, med["detect --json (warm)"] / floor
    print(f"ratio detect cold / python -c pass   {cold:5.2f}  goal <= 6")
    print(f"ratio detect warm / python -c pass   {warm:5.2f}  goal <= 3")
    plan = med["plan --example (warm)"] / med["pip --version"]
    print(f"ratio plan (5 packages) / pip --version {plan:5.2f}  goal <= 0.35")


if __name__ == "__main__":
    main()
