#!/usr/bin/env python3
"""The plan of five packages in-process, side by side with a baseline tree.

What ``plan torch torchvision torchaudio flash-attn xformers --target
linux-x86_64-py312-cuda13.0-sm100 --offline`` spends after its imports, timed
in-process in a fresh interpreter, in three phases: reading the manifests (the built-in
ones parse when first used, so most of it lands in the next phase), turning their index
flavours into files (pages from the page cache or the shipped snapshot, candidates,
metadata, expansion), and resolving; and the whole command (a fresh process, wall
clock; the plans earlier runs stored are removed first, so it plans anew instead of
replaying). Each tree runs the python of its own clean venv (a wheel of the tree,
bytecode compiled: scripts/_benchutil.py). One online plan fills a page cache first
(PyPI; a page it cannot reach is served from the shipped snapshot); every timed run
reads that one cache ``--offline``, so both trees see the same pages. A baseline tree
from before the planner (``cli._inputs.planning_manifests``) is timed through that
function, the same phases.

Runs alternate (A, B, A, B, ...) so a drifting machine hits both alike; medians (and
min, max) of wall and CPU time are printed with the load average before and after (on
a busy machine the CPU time moves least). Not a test: figures go in notes.

Usage: python3 scripts/bench_expand.py [--runs N] [--source DIR] [--compare DIR]
  --source: the tree to measure (default: this checkout); --compare: a baseline tree
  (e.g. ``git archive`` of a commit extracted to a folder, as for
  scripts/differential.py).
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
    *["plan", "torch", "torchvision", "torchaudio", "flash-attn", "xformers"],
    *["--target", "linux-x86_64-py312-cuda13.0-sm100"],
]

# The phases, timed in a fresh interpreter (the imports the command needs are done
# first, as the command does them before it plans).
PHASES = ("manifests", "pages", "resolve", "in-process")
PHASE = """
import sys, time
from resolver_hook.cli import build_parser, _inputs
from resolver_hook.cli._machine import machine_from_args
from resolver_hook.resolve import resolve
planned = hasattr(_inputs, "planner_from_args")
if planned:
    import resolver_hook.planner
args = build_parser("plan").parse_args(sys.argv[1:])
reqs = _inputs.requirements_from_args(args)
prof = machine_from_args(args)
def clock():
    return time.perf_counter(), time.process_time()
t0 = clock()
found = _inputs.manifests_from_args(args)
t1 = clock()
if planned:
    planner = _inputs.planner_from_args(args)
    manifests = planner.pages_for(found, reqs, prof)
    t2 = clock()
    planner.plan(reqs, manifests, prof)
else:  # a tree from before the planner
    manifests = _inputs.planning_manifests(args, found, _inputs.requirement_names(reqs), prof)
    t2 = clock()
    resolve(reqs, manifests, prof)
t3 = clock()
for a, b in ((t0, t1), (t1, t2), (t2, t3), (t0, t3)):
    print(b[0] - a[0], b[1] - a[1])
"""


def phase(py: str, env: dict[str, str], cwd: Path) -> list[tuple[float, float]]:
    """Wall and CPU seconds (all threads) of each of :data:`PHASES` in a fresh
    interpreter (run in a folder of its own: ``python -c`` imports from the current
    folder first, which from a checkout would be the checkout's package, not the
    venv's)."""
    done = subprocess.run(
        [py, "-c", PHASE, *PLAN, "--offline"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    values = [float(x) for x in done.stdout.split()[-2 * len(PHASES) :]]
    return list(zip(values[::2], values[1::2], strict=True))


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
            n: {label: [] for label in (*PHASES, "plan")} for n in trees
        }
        load = os.getloadavg()
        for _ in range(args.runs):
            for name, py in pythons.items():
                for label, got in zip(PHASES, phase(py, env, Path(tmp)), strict=True):
                    times[name][label].append(got)
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
            for label in (*PHASES, "plan"):
                shown = "plan --offline" if label == "plan" else label
                for i, kind in enumerate(("wall", "CPU")):
                    values = [x[i] * 1000 for x in got[label]]
                    print(
                        f"  {shown:<20} {kind:<4} median {statistics.median(values):7.1f} ms  "
                        f"(min {min(values):.1f}, max {max(values):.1f})"
                    )


if __name__ == "__main__":
    main()
