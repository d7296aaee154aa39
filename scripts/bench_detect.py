#!/usr/bin/env python3
"""Start-up cost of the hook, side by side with a baseline measured in the same run.

Everything runs with the python of a clean venv that holds only resolver-hook (a wheel
of the checkout, bytecode compiled: scripts/_benchutil.py), so neither side is slowed
or flattered by a development environment:

- `resolver-hook detect --json` with a cold cache (`--no-cache`) and a warm one, next to
  `python -c pass` (whose own figure is printed: a slow baseline shows);
- `resolver-hook plan` of five packages (torch, torchvision, torchaudio, xformers,
  triton) for a B200 target with a warm page cache, next to `pip --version` (what every
  pip install pays before it starts work). One online plan fills the page cache first
  (what it can reach: a page it cannot is served from the shipped snapshot); the timed
  plans then run `--offline`, so they read that cache whatever its age and never wait
  on the network. How many pages the cache holds is printed. The plan is timed three
  times: as a user's second run finds it (the plan the first run stored, replayed once
  nothing it read changed: resolver_hook/_plancache.py); with the stored plans removed
  before each run, as a plan of the same packages is made anew (another GPU or
  output, another day, another environment: the expansion an earlier plan kept is
  made again from its file, resolver_hook/inventory/kept.py); and with the kept
  expansions removed too (every page read and its files judged: the planner's whole
  work on a warm page cache, as a plan of packages not planned before);
- `python -c "import packaging.requirements"`: the interpreter and the requirement
  parser every plan made anew imports (a replay does not), the floor under that ratio.

The commands run in turn (A, B, A, B, ...) so a drifting machine hits both alike; the
medians and their ratios are printed, with the load average before and after.
`--compare DIR` measures a second tree (e.g. a `git worktree` of the commit before) in
its own clean venv in the same run, interleaved: before and after in one go. Not a
test: figures go in notes.

Usage: python3 scripts/bench_detect.py [--runs N] [--source DIR] [--compare DIR]
  --source: the tree to build the wheel from (default: this checkout).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _benchutil import clean_venv, tree_arguments

PLAN = [
    *["plan", "torch", "torchvision", "torchaudio", "xformers", "triton"],
    *["--target", "linux-x86_64-py312-cuda13.0-sm100"],
]


# Timed with the plans stored by earlier runs removed first: the planner's own work.
NEW_PLAN = "plan of five (planned)"
# The same with the expansions kept by earlier runs removed too: every page read.
READ_PLAN = "plan of five (pages read)"
# What is removed before each run of these (the stored plans, the kept expansions).
REMOVED = {NEW_PLAN: ("plans",), READ_PLAN: ("plans", "expansions")}
# The interpreter and the parser of requirement lines (packaging.requirements, with what
# it imports: packaging.tags, specifiers, markers): what any plan made anew pays
# before its own code runs. A goal below it cannot be met by the tool's own work.
FLOOR = "import packaging"


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def commands(root: Path, source: Path) -> tuple[dict[str, list[str]], dict[str, str], Path]:
    """The commands of one tree's clean venv, their environment and cache folder."""
    py = str(clean_venv(root, source))
    hook = [str(Path(py).parent / "resolver-hook")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESOLVER_HOOK_")}
    cache = root / "cache"
    env["RESOLVER_HOOK_CACHE_DIR"] = str(cache)
    env.pop("PYTHONPATH", None)
    wall([*hook, "detect", "--json"], env)  # fill the host cache
    wall([*hook, *PLAN], env)  # fill the page cache (what can be reached)
    return (
        {
            "python -c pass": [py, "-c", "pass"],
            "detect --json (cold)": [*hook, "detect", "--json", "--no-cache"],
            "detect --json (warm)": [*hook, "detect", "--json"],
            "pip --version": [py, "-m", "pip", "--version"],
            FLOOR: [py, "-c", "import packaging.requirements"],
            "plan of five (stored)": [*hook, *PLAN, "--offline"],
            NEW_PLAN: [*hook, *PLAN, "--offline"],
            READ_PLAN: [*hook, *PLAN, "--offline"],
        },
        env,
        cache,
    )


def report(name: str, times: dict[str, list[float]], cache: Path) -> None:
    pages = len(list((cache / "index").glob("*.page"))) if (cache / "index").is_dir() else 0
    print(f"{name}: {pages} files in its page cache")
    med = {k: statistics.median(v) for k, v in times.items()}
    for label, value in med.items():
        low, high = min(times[label]), max(times[label])
        print(
            f"  {label:<24} median {value * 1000:7.1f} ms  "
            f"(min {low * 1000:.1f}, max {high * 1000:.1f})"
        )
    floor = med["python -c pass"]
    cold, warm = med["detect --json (cold)"] / floor, med["detect --json (warm)"] / floor
    print(f"  ratio detect cold / python -c pass      {cold:5.2f}  goal <= 6")
    print(f"  ratio detect warm / python -c pass      {warm:5.2f}  goal <= 3")
    stored = med["plan of five (stored)"] / med["pip --version"]
    planned = med[NEW_PLAN] / med["pip --version"]
    plans = len(list((cache / "plans").glob("*.json"))) if (cache / "plans").is_dir() else 0
    read = med[READ_PLAN] / med["pip --version"]
    print(f"  ratio plan of five / pip --version      {stored:5.2f}  goal <= 0.35")
    print(f"  ratio the same, planned anew            {planned:5.2f}  ({plans} stored plans)")
    print(f"  ratio the same, every page read         {read:5.2f}")
    least = med[FLOOR] / med["pip --version"]
    print(f"  ratio {FLOOR} / pip --version       {least:5.2f}  (the floor of any plan)")


def main() -> None:
    args, trees = tree_arguments(__doc__, runs=20)
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        setups = {
            name: commands(Path(tmp) / str(i), src) for i, (name, src) in enumerate(trees.items())
        }
        times = {name: {k: [] for k in cmds} for name, (cmds, _, _) in setups.items()}
        load = os.getloadavg()
        for _ in range(args.runs):
            for label in next(iter(setups.values()))[0]:
                for name, (cmds, env, cache) in setups.items():
                    for folder in REMOVED.get(label, ()):
                        shutil.rmtree(cache / folder, ignore_errors=True)
                    times[name][label].append(wall(cmds[label], env))
        after = os.getloadavg()
        print(f"{args.runs} runs each; python of a clean venv per tree")
        print(f"load average {load[0]:.2f} before, {after[0]:.2f} after")
        for name, (_, _, cache) in setups.items():
            report(name, times[name], cache)


if __name__ == "__main__":
    main()
