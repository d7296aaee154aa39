#!/usr/bin/env python3
"""The hook's overhead on a real install: `resolver-hook pip install` vs plain `pip install`.

Both install the same three small wheels from a loopback index built here into fresh
venvs (made outside the timed part): plain pip gets the already-resolved lines (URL with
sha256, pinned local version and its find-links page), the hook gets the bare names and
resolves them. Same for uv (its binary, on both sides).

An unchecked install (``--no-proof``) stores its plan (resolver_hook/_plancache.py)
and replays it when run again with nothing it read changed; the venv's facts are
checked by what they say (resolver_hook/ground/record.py), so a fresh venv made at the same
path, as CI makes one, replays the plan too. Three rows per installer tell the cases
apart:

- ``hook pip --no-proof``: a fresh venv each run, the plan stored by an earlier run;
- ``hook pip --no-proof first``: a fresh venv each run, and the stored plans removed
  before it (a cache folder of its own, its pages kept warm): the plan made anew, as
  on the first install of a requirement set;
- ``hook pip --no-proof again``: one venv kept for the whole run (the three packages
  removed after each run, outside the timed part); plain pip/uv are timed the same way
  (``pip again``).

The hook runs with the python of a clean venv holding only a wheel of the checkout
(scripts/_benchutil.py); the target venvs are made from the same interpreter, and both
interpreters' own start-up (`python -c pass`) is printed, so a slow baseline shows, and
the hook's interpreter importing packaging.requirements: the least any plan made anew
costs, the floor under the hook's own work on a first run.

Each hook run writes its timing record (``RESOLVER_HOOK_TIMINGS``:
resolver_hook/ground/timings.py), which splits the run's wall time into the installer's dry run
that proves the plan (its child processes), the install itself (its child processes;
under pip the dry run's process runs the install too, timed as a step of its own),
and the hook's own work: everything else, interpreter start-up and any probe the hook
runs included. Printed: medians, and the ratios with the proof and without it
(``--no-proof``), for pip and for uv, and what the two children alone take against a
bare install, with and without the least a plan made anew costs (a checked install is
never stored, so it plans anew each time): the floor under the ratio with the proof,
which no work of the hook's can go below. The commands run in turn, run
after run, so a drifting machine hits every side alike, and each run's files (the venv
made for it, and then that venv removed) are synced to disk before it starts and
before the next starts. Not a test: figures go in notes.

Every side runs with pip's and uv's caches off (``PIP_NO_CACHE_DIR``, ``UV_NO_CACHE``),
as the tests run them; ``--caches`` turns both on instead, each in a folder of the run
(warmed by the rounds before the timed ones), as a user's machine has them: uv's side
is then some five times quicker, and the hook's own work weighs the more.

Usage: python3 scripts/bench_install.py [--runs N] [--source DIR ...] [--caches]
  --source: a tree to build the hook's wheel from (default: this checkout); give it more
  than once (e.g. a `git worktree` of an older commit, then this checkout) to measure
  before and after in one run, against the same baselines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from _benchutil import REPO, clean_venv

from tests.installenv import PY, GpuIndex, build_gpu_index, clean_env, make_venv, write_manifests

TARGET = f"linux-x86_64-py{PY}-cuda13.0-sm100"
NAMES = ["demo-gpu", "demo-idx", "plainpkg"]
GOAL_OWN_MS = 60.0
# The hook's interpreter importing the parser of requirement lines (with packaging.tags,
# specifiers and markers): the least a run that plans pays, so the floor of the hook's
# own work on a first run.
FLOOR = "python + packaging.requirements"
GOALS = {"pip": 1.10, "uv": 1.5}  # without the proof


def timed(argv: list[str], env: dict[str, str]) -> float:
    return launched(argv, env)[0]


def launched(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Run ``argv``: its wall time (s), and when it was started and when it ended
    (seconds since the epoch, to set beside its timing record's)."""
    # Run from a folder of no package: `-m` and a script's folder put it on sys.path,
    # and the checkout's own tree would be imported instead of the clean venv's wheel.
    began = time.time()
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),
    )
    wall = time.perf_counter() - start
    return wall, began, time.time()


def hook_argv(
    python: str, tool: str, index: list[str], names: list[str], *, proof: bool
) -> list[str]:
    """``resolver-hook pip|uv [--no-proof] --target T [pip] install INDEX NAMES``, the
    command the venv of ``python`` installed."""
    hook = str(Path(python).parent / "resolver-hook")
    argv = [hook, tool, *([] if proof else ["--no-proof"])]
    argv += ["--target", TARGET, *(["pip"] if tool == "uv" else []), "install"]
    return [*argv, *index, *names]


def split(run: tuple[float, float, float], record: dict[str, Any]) -> dict[str, float]:
    """A hook run (:func:`launched`) as ms: its dry run's and its install's child
    processes, and the hook's own work (the rest), that in turn split into the start-up
    before the command began (interpreter, imports, command line), its phases, the rest of
    the session, and the exit."""
    wall, began, ended = run
    children = record["children"]
    proof = sum(c["ms"] for c in children if c["phase"] == "proof")
    install = sum(c["ms"] for c in children if c["phase"] == "install")
    probes = sum(c["ms"] for c in children if c["phase"] not in ("proof", "install"))
    phases = record["phases"]
    part = {
        "own": wall * 1000 - proof - install,
        "proof": proof,
        "install": install,
        "probes": probes,
        "start-up": (record["started"] - began) * 1000,
        "exit": (ended - record["ended"]) * 1000,
    }
    for name in ("manifests", "pages", "plan"):
        part[name] = phases.get(name, 0.0)
    part["plan"] += phases.get("machine", 0.0)
    part["session"] = record["total_ms"] - sum(phases.values())
    # Work of the hook's own inside the proof and install phases (judging, reading).
    part["session"] += phases.get("proof", 0.0) - proof + phases.get("install", 0.0) - install
    return part


def median_ms(argv: list[str], runs: int) -> float:
    return statistics.median(timed(argv, clean_env()) for _ in range(runs)) * 1000


@dataclass
class Bench:
    """One run's setting: the loopback index, the hooks' venvs, the uv binary."""

    root: Path
    gi: GpuIndex
    hooks: dict[str, str]  # label prefix -> the python of a clean venv of one source
    uv_bin: str
    caches: bool = False  # pip's and uv's caches on (in the run's folder), else off

    @property
    def timings(self) -> Path:
        return self.root / "timings.json"

    def resolved(self) -> list[str]:
        """What the plan resolves the names to, as plain pip/uv are given it."""
        w, idx = self.gi.wheels, self.gi.index
        return [
            f"demo-gpu @ {idx.wheel_url(w['gpu130'])}#sha256={w['gpu130'].sha256}",
            "demo-idx==2.0+cu130",
            "plainpkg",
            "--find-links",
            idx.links_url("cu130", "demo-idx"),
        ]

    def target_venv(self, tool: str, name: str = "venv") -> Path:
        venv = self.root / name
        if tool == "pip":
            make_venv(venv)
        else:
            argv = [self.uv_bin, "venv", "-q", "--python", sys.executable, str(venv)]
            subprocess.run(argv, check=True, env=clean_env())
        return venv

    def kept_venv(self, label: str) -> Path:
        """The venv of an ``again`` row, made on its first run."""
        name = "kept-" + label.replace(" ", "_").replace("[", "").replace("]", "")
        venv = self.root / name
        if not venv.exists():
            self.target_venv("pip" if "pip" in label.split() else "uv", name)
        return venv

    def remove_installed(self, venv: Path) -> None:
        argv = [self.uv_bin, "pip", "uninstall", "-q", "--python", str(venv / "bin" / "python")]
        subprocess.run([*argv, *NAMES], check=True, env=clean_env())

    def run(self, label: str) -> tuple[float, dict[str, float] | None]:
        """Run ``label`` once into a fresh venv: its wall time (s), and the split of a
        hook run (None for plain pip/uv, or a tree that writes no record)."""
        words = label.split()
        tool = "pip" if "pip" in words else "uv"
        again = words[-1] == "again"
        venv = self.kept_venv(label) if again else self.target_venv(tool)
        cache = self.root / f"cache{label.partition('hook')[0].strip()}"
        if words[-1] == "first":  # its own cache folder, without stored plans
            cache = cache.with_name(cache.name + "-first")
            shutil.rmtree(cache / "plans", ignore_errors=True)
        env = clean_env(
            VIRTUAL_ENV=str(venv),
            RESOLVER_HOOK_MANIFESTS=str(self.gi.manifests),
            RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
            # A cache per tree: two trees' runs in one cache rewrite each other's
            # entries (the entry-point list is keyed by the venv), and no plan settles.
            RESOLVER_HOOK_CACHE_DIR=str(cache),
            RESOLVER_HOOK_TIMINGS=str(self.timings),
        )
        if self.caches:
            del env["PIP_NO_CACHE_DIR"], env["UV_NO_CACHE"]
            env["PIP_CACHE_DIR"] = str(self.root / "pip-cache")
            env["UV_CACHE_DIR"] = str(self.root / "uv-cache")
        env["PATH"] = os.pathsep.join(
            [str(venv / "bin"), os.path.dirname(self.uv_bin), env["PATH"]]
        )
        py = str(venv / "bin" / "python")
        index = ["--index-url", self.gi.simple]
        if words[0] == "pip":
            argv = [py, "-m", "pip", "install", *index, *self.resolved()]
        elif words[0] == "uv":
            argv = [self.uv_bin, "pip", "install", "--python", py, *index, *self.resolved()]
        else:
            hook = self.hooks[label[: label.index("hook")]]
            proof = "--no-proof" not in words
            argv = hook_argv(hook, tool, index, NAMES, proof=proof)
        self.timings.unlink(missing_ok=True)
        # The venv made for this run (a pip venv: some 1,500 files copied) reaches
        # the disk before the run starts: written back during it, it lands in its time.
        os.sync()
        try:
            run = launched(argv, env)
        finally:
            if again:
                self.remove_installed(venv)
            else:
                shutil.rmtree(venv)
            # What the run wrote and what was removed reach the disk now, outside the
            # timed part: written back later, they land in the next run's time.
            os.sync()
        if "hook" not in words or not self.timings.exists():
            return run[0], None
        return run[0], split(run, json.loads(self.timings.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--source", type=Path, action="append")
    parser.add_argument("--caches", action="store_true", help="pip's and uv's caches on")
    args = parser.parse_args()
    sources: list[Path] = args.source or [REPO]
    root = Path(tempfile.mkdtemp(prefix="bench-install-"))
    try:
        tags = [f"[{i}] " if len(sources) > 1 else "" for i in range(len(sources))]
        hooks = {
            tag: str(clean_venv(root / f"hook{i}", src))
            for i, (tag, src) in enumerate(zip(tags, sources, strict=True))
        }
        for tag, src in zip(tags, sources, strict=True):
            print(f"{tag or 'hook: '}a clean venv of {src}")
        print(f"pip's and uv's caches {'on' if args.caches else 'off'}")
        probe = make_venv(root / "probe")
        start_up = {
            "python -c pass (hook's venv)": median_ms([hooks[tags[0]], "-c", "pass"], 11),
            "python -c pass (target venv)": median_ms([str(probe), "-c", "pass"], 11),
            FLOOR: median_ms([hooks[tags[0]], "-c", "import packaging.requirements"], 11),
        }
        shutil.rmtree(root / "probe")
        from uv import find_uv_bin

        # The uv binary itself on both sides: `python -m uv` and a shim each add tens of
        # milliseconds of their own before uv starts.
        bench = Bench(
            root=root,
            gi=build_gpu_index(root),
            hooks=hooks,
            uv_bin=str(find_uv_bin()),
            caches=args.caches,
        )
        labels = ["pip", "uv", "pip again", "uv again"]
        for tag in tags:
            for tool in ("pip", "uv"):
                labels += [f"{tag}hook {tool}", f"{tag}hook {tool} --no-proof"]
                labels += [f"{tag}hook {tool} --no-proof {row}" for row in ("first", "again")]
        walls: dict[str, list[float]] = {k: [] for k in labels}
        parts: dict[str, list[dict[str, float]]] = {k: [] for k in labels}
        with bench.gi.index.serving():
            write_manifests(bench.gi)
            # Two rounds warm the caches and store the plans (a file written less than 2 s
            # before a run is not trusted to stay as it was: the round after stores it).
            for i in range(-2, args.runs):
                for label in labels:
                    wall, part = bench.run(label)
                    if i >= 0:
                        walls[label].append(wall)
                        parts[label] += [part] if part is not None else []
        report(args.runs, start_up, walls, parts, tags)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(
    runs: int,
    start_up: dict[str, float],
    walls: dict[str, list[float]],
    parts: dict[str, list[dict[str, float]]],
    tags: list[str],
) -> None:
    load = os.getloadavg()
    print(f"{runs} runs each; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for label, ms in start_up.items():
        print(f"{label:<32} median {ms:8.1f} ms")
    med = {k: statistics.median(v) * 1000 for k, v in walls.items()}
    for label, ms in med.items():
        line = f"{label:<32} median {ms:8.1f} ms"
        if parts[label]:
            m = {k: statistics.median(p[k] for p in parts[label]) for k in parts[label][0]}
            line += (
                f"  = hook's own {m['own']:6.1f} (probes {m['probes']:.1f})"
                f" + dry run {m['proof']:6.1f} + install {m['install']:6.1f}"
            )
        elif "hook" in label:
            line += "  (no timing record: a tree without RESOLVER_HOOK_TIMINGS)"
        print(line)
    print("the hook's own work, medians (ms): start-up (interpreter, imports, command line)")
    print("  | manifests | pages read | plan | rest of the session | exit")
    for label, rows in parts.items():
        if rows:
            m = {k: statistics.median(p[k] for p in rows) for k in rows[0]}
            names = ("start-up", "manifests", "pages", "plan", "session", "exit")
            print(f"  {label:<30} " + " | ".join(f"{m[k]:6.1f}" for k in names))
    for tag in tags:
        for tool in ("pip", "uv"):
            hooked, unchecked = med[f"{tag}hook {tool}"], med[f"{tag}hook {tool} --no-proof"]
            own = [p["own"] for p in parts[f"{tag}hook {tool} --no-proof"]]
            own_text = (
                f"; hook's own work {statistics.median(own):.1f} ms (goal < {GOAL_OWN_MS:.0f} ms)"
                if own
                else ""
            )
            print(
                f"{tag}{tool}: hook + {tool} / {tool} {hooked / med[tool]:.2f} with the proof "
                f"(never stored), {unchecked / med[tool]:.2f} without (a fresh venv, the plan "
                f"stored; goal <= {GOALS[tool]:.2f}); "
                # Against the first-run row: both plan anew, so the difference is the proof.
                f"the dry run adds {hooked - med[f'{tag}hook {tool} --no-proof first']:.1f} ms"
                f"{own_text}"
            )
            children = [p["proof"] + p["install"] for p in parts[f"{tag}hook {tool}"]]
            if children:
                # The checked ratio cannot go below what its two children take alone, nor,
                # as a checked install plans anew each time, below those and the least any
                # plan made anew pays (the interpreter and packaging's requirement parser).
                alone = statistics.median(children)
                print(
                    f"{tag}{tool}: its dry run and install alone (no hook work) "
                    f"{alone / med[tool]:.2f} x {tool}; with {FLOOR} "
                    f"{(alone + start_up[FLOOR]) / med[tool]:.2f} x {tool}, "
                    "the floor of the ratio with the proof"
                )
            for row, words, baseline in (
                ("first", "a fresh venv, no stored plan", tool),
                ("again", "the same venv, the plan stored", f"{tool} again"),
            ):
                label = f"{tag}hook {tool} --no-proof {row}"
                own = [p["own"] for p in parts[label]]
                print(
                    f"{tag}{tool} {row} ({words}): hook + {tool} / {tool} "
                    f"{med[label] / med[baseline]:.2f} without the proof"
                    + (f"; hook's own work {statistics.median(own):.1f} ms" if own else "")
                    + (f" (floor: {FLOOR} {start_up[FLOOR]:.1f} ms)" if row == "first" else "")
                )


if __name__ == "__main__":
    main()
