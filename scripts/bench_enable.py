#!/usr/bin/env python3
"""What `enable` costs a later, unrelated `pip install` while a flavour host is down.

Three venvs made alike install `plainpkg` (a small wheel on a loopback index built here,
no manifest) with `pip install --index-url ...`; it is uninstalled between runs, outside
the timed part:

- ``no hook``: a venv where the hook was never enabled;
- ``enabled, host down``: `resolver-hook enable` ran while every flavour host refused
  connections (a loopback port nothing listens on): it leaves their pages out;
- ``dead pages``: the same venv's pip.conf with the pages it left out written back as
  find-links, as enable wrote them before (each one pip asks for, with its retries).

The script prints each venv's find-links, so a reader sees which pages pip is given.

Prints the median of each and the ratios to ``no hook``. Not a test: figures go in notes.

Usage: python3 scripts/bench_enable.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from resolver_hook.manifest import builtin_manifests
from tests.indexreplica import dead_host_flags
from tests.installenv import build_gpu_index, clean_env, make_venv


def _install_seconds(python: Path, simple: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--index-url", simple, "plainpkg"],
        check=True,
        env=env,
        capture_output=True,
        timeout=600,
    )
    took = time.perf_counter() - start
    subprocess.run(
        [str(python), "-m", "pip", "uninstall", "-q", "-y", "plainpkg"],
        check=True,
        env=env,
        capture_output=True,
        timeout=600,
    )
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-enable-") as tmp:
        root = Path(tmp)
        gi = build_gpu_index(root)
        env = clean_env(root, RESOLVER_HOOK_CACHE_DIR=str(root / "cache"), HOME=str(root))
        # pip reads no configuration file at all when PIP_CONFIG_FILE is os.devnull: the
        # venv's own pip.conf (site) is the point here, a HOME of its own keeps the
        # user's out.
        env.pop("PIP_CONFIG_FILE", None)
        venvs = {}
        for name in ("no hook", "enabled, host down", "dead pages"):
            venvs[name] = make_venv(root / name.replace(" ", "-").replace(",", ""))
        flags = dead_host_flags(builtin_manifests().values())
        mirrors = [flags[i + 1].split("=", 1) for i, f in enumerate(flags) if f == "--mirror"]
        command = [sys.executable, "-m", "resolver_hook", "enable", *flags]
        for name, extra in (("enabled, host down", []), ("dead pages", ["--offline"])):
            venv = venvs[name].parent.parent
            done = subprocess.run(
                [*command, "--venv", str(venv), *extra],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            said = [x.strip() for x in done.stdout.splitlines() if x.startswith("  left out ")]
            print(f"{name}: {said[0] if said else 'nothing left out'}")
            kept = (venv / "pip.conf").read_text().split("find-links =", 1)[1:]
            pages = kept[0].split("constraint", 1)[0].split() if kept else []
            print(f"  its pip.conf's find-links: {', '.join(pages) or 'none'}")
        # Offline, enable leaves nothing out: its pip.conf names every page, as enable
        # wrote them before. Sent to the refusing port, they are the dead pages.
        conf = venvs["dead pages"].parent.parent / "pip.conf"
        text = conf.read_text()
        for upstream, mirror in mirrors:
            text = text.replace(upstream, mirror)
        conf.write_text(text)
        pages = [x for x in text.split() if x.startswith("http://127.0.0.1:")]
        print(f"dead pages: {len(pages)} find-links pages on a refusing port")
        times: dict[str, list[float]] = {name: [] for name in venvs}
        with gi.index.serving():
            for _ in range(args.runs):
                for name, python in venvs.items():  # in turn: a drifting machine hits all
                    times[name].append(_install_seconds(python, gi.simple, env))
        base = statistics.median(times["no hook"])
        print(f"pip install plainpkg, median of {args.runs} (os.cpu_count()={os.cpu_count()}):")
        for name, got in times.items():
            med = statistics.median(got)
            print(f"  {name:<20} {med:6.2f} s  x{med / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
