#!/usr/bin/env python3
"""Wall time of `resolver-hook detect --json` next to `python -c pass`, same machine, same run.

Usage: python3 scripts/bench_detect.py [--runs N]
Prints the median of each and their ratio. Not a test: figures go in notes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from _benchutil import compile_package


def median_wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    compile_package()  # as `pip install` would: see scripts/_benchutil.py
    floor = median_wall([sys.executable, "-c", "pass"], args.runs)
    detect = median_wall([sys.executable, "-m", "resolver_hook", "detect", "--json"], args.runs)
    imports = median_wall([sys.executable, "-c", "import resolver_hook.cli"], args.runs)
    print(f"python -c pass                 median {floor * 1000:7.1f} ms")
    print(f"import resolver_hook.cli       median {imports * 1000:7.1f} ms")
    print(f"resolver-hook detect --json    median {detect * 1000:7.1f} ms")
    print(f"ratio detect / python -c pass  {detect / floor:.2f}")


if __name__ == "__main__":
    main()
