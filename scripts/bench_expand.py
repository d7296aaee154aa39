#!/usr/bin/env python3
"""The inventory expansion of a warm plan, side by side with a baseline tree.

What ``plan torch torchvision torchaudio xformers triton --target
linux-x86_64-py312-cuda13.0-sm100 --offline`` spends turning the manifests' index
flavours into files (``cli._inputs.planning_manifests``: pages from the page cache or
the shipped snapshot, candidates, metadata, expansion), timed in-process in a fresh
interpreter, and the whole command (a fresh process, wall clock; the plans earlier runs
stored are removed first, so it plans anew instead of replaying). Each tree runs the
python of its own clean venv (a wheel of the tree, bytecode compiled:
scripts/_benchutil.py). One online plan fills a page cache first (PyPI; a page it
cannot reach is served from the shipped snapshot); every timed run reads that one
cache ``--offline``, so both trees see the same pages.

Runs alternate (A, B, A, B, ...) so a drifting machine hits both alike; medians (and
min, max) of wall and CPU time are printed with the load average before and after (on
a busy machine the CPU time moves least). Not a test: figures go in notes.

Usage: python3 scripts/bench_expand.py [--runs N] [--source DIR] [--compare DIR]
  --source: the tree to measure (default: this checkout); --compare: a baseline tree
  (e.g. ``git worktree add --detach ../base main``).
"""

from __future__ import annotations

import os
import resource
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

# The phase, timed in a fresh interpreter (imports the command needs before it are
# done first, as the command does them).
PHASE = """
import sys, time
from resolver_hook.cli import build_parser, _inputs
from resolver_hook.cli._machine import machine_from_args
args = build_parser("plan").parse_args(sys.argv[1:])
reqs = _inputs.requirements_from_args(args)
prof = machine_from_args(args)
found = _inputs.manifests_from_args(args)
start, cpu = time.perf_counter(), time.process_time()
_inputs.planning_manifests(args, found, _inputs.requirement_names(reqs), prof)
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def phase(py: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of planning_manifests in a fresh interpreter
    (run in a folder of its own: ``python -c`` imports from the current folder first,
    which from a checkout would be the checkout's package, not the venv's)."""
    done = subprocess.run(
        [py, "-c", PHASE, *PLAN, "--offline"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    wall_s, cpu_s = done.stdout.split()[-2:]
    return float(wall_s), float(cpu_s)


def command(hook: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of the whole command, planned anew."""
    shutil.rmtree(Path(env["RESOLVER_HOOK_CACHE_DIR"]) / "plans", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [hook, *PLAN, "--offline"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        check=False,
    )
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall_s, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    args, trees = tree_arguments(__doc__, runs=9)
    with tempfile.TemporaryDirectory(prefix="bench-expand-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESOLVER_HOOK_")}
        env.pop("PYTHONPATH", None)
        env["RESOLVER_HOOK_CACHE_DIR"] = str(Path(tmp) / "cache")
        pythons = {name: str(clean_venv(Path(tmp) / str(i), src)) for i, (name, src) in
                   enumerate(trees.items())}  # fmt: skip
        first = next(iter(pythons.values()))
        subprocess.run(  # fill the page cache (what can be reached)
            [str(Path(first).parent / "resolver-hook"), *PLAN],
            capture_output=True,
            env=env,
            cwd=tmp,
            check=False,
        )
        times: dict[str, dict[str, list[tuple[float, float]]]] = {
            n: {"phase": [], "plan": []} for n in trees
        }
        load = os.getloadavg()
        for _ in range(args.runs):
            for name, py in pythons.items():
                times[name]["phase"].append(phase(py, env, Path(tmp)))
            for name, py in pythons.items():
                hook = str(Path(py).parent / "resolver-hook")
                times[name]["plan"].append(command(hook, env, Path(tmp)))
        after = os.getloadavg()
        pages = len(list((Path(tmp) / "cache" / "index").glob("*.page")))
        print(f"{args.runs} runs each; {pages} files in the page cache")
        print(f"load average {load[0]:.2f} before, {after[0]:.2f} after")
        print("(CPU: what the machine's other work changes least)")
        for name, got in times.items():
            print(name)
            for label, shown in (("phase", "planning_manifests"), ("plan", "plan --offline")):
                for i, kind in enumerate(("wall", "CPU")):
                    values = [x[i] * 1000 for x in got[label]]
                    print(
                        f"  {shown:<20} {kind:<4} median {statistics.median(values):7.1f} ms  "
                        f"(min {min(values):.1f}, max {max(values):.1f})"
                    )


if __name__ == "__main__":
    main()
