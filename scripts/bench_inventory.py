"""Benchmark planning from the inventory: five packages, warm and cold.

Three figures, measured in the same run:

- today's plan: the manifests as written (pages, no files), ``resolve`` only;
- warm: the index client's page cache holds every page and metadata file (fresh), the
  index flavours are expanded into files and resolved; the ratio to today's;
- cold: the five pages read from a loopback server that waits 200 ms before each
  page, concurrently, then expanded and resolved; its excess over the warm time is
  compared with one page's delay (the goal: at most 1.5 x 200 ms), beside the same
  read one page after another.

With ``--baseline-tree DIR`` (a checkout of the commit to compare with), also the
command itself: ``plan`` of five built-in packages from the shipped snapshot
(``--offline``) against the same command of DIR, each a fresh process, median of 5.

Run from the repository root:

    PYTHONPATH=. python3 scripts/bench_inventory.py [--baseline-tree DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from resolver_hook.host import parse_target
from resolver_hook.index import IndexClient
from resolver_hook.index.model import Page
from resolver_hook.inventory import expand_manifests
from resolver_hook.manifest import Manifest
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.resolve import resolve
from tests.indexreplica import (
    File,
    PageServer,
    metadata_text,
    pypi_json,
    pytorch_html,
)

DELAY = 0.2
PACKAGES = ("torch", "torchvision", "torchaudio", "tilert", "kernels")
X86 = "manylinux_2_28_x86_64"
PLATS = (X86, "manylinux_2_28_aarch64", "win_amd64")
PYS = ("cp310", "cp311", "cp312", "cp313", "cp314")
REPS = 20


def _files(name: str, versions: Sequence[str], label: str, requires: Sequence[str]) -> list[File]:
    return [
        File(
            f"{name}-{v}{label}-{py}-{py}-{plat}.whl",
            metadata=metadata_text(name, v + label, requires),
        )
        for v in versions
        for py in PYS
        for plat in PLATS
    ]


def serve(server: PageServer) -> None:
    pytorch_html(
        server,
        "/whl/cu130/torch/",
        "/whl/cu130/",
        _files("torch", ["2.12.1", "2.13.0", "2.14.0", "2.15.0"], "+cu130", ["filelock"]),
    )
    pytorch_html(
        server,
        "/whl/cu130/torchvision/",
        "/whl/cu130/",
        _files("torchvision", ["0.28.0", "0.29.0", "0.29.2"], "+cu130", ["torch"]),
    )
    pytorch_html(
        server,
        "/whl/cu130/torchaudio/",
        "/whl/cu130/",
        _files("torchaudio", ["2.11.0", "2.11.1"], "+cu130", ["torch"]),
    )
    pypi_json(
        server,
        "/simple/tilert/",
        "/files/",
        _files("tilert", ["0.1.5", "0.1.6"], "", ["torch<2.14,>=2.12"]),
    )
    pypi_json(server, "/simple/kernels/", "/files/", _files("kernels", ["1.0", "1.1"], "", []))


def manifests(base: str) -> dict[str, Manifest]:
    def entry(name: str, page: str, version: str) -> Manifest:
        return loads_manifest(
            f"""
schema = 1
[package]
name = "{name}"
[[index]]
url = "{base}{page}"
{version}
cuda = ">=13.0"
gpu = ["sm_80", "sm_90", "sm_100", "sm_120"]
platforms = ["{X86}"]
python = ["3.10", "3.11", "3.12", "3.13", "3.14"]
checked = "2026-11-30"
""",
            source="bench",
            allow_insecure=True,
        )

    return {
        "torch": entry("torch", "/whl/cu130/torch/", 'version = "2.13.0+cu130"'),
        "torchvision": entry("torchvision", "/whl/cu130/torchvision/", 'version = "0.28.0+cu130"'),
        "torchaudio": entry("torchaudio", "/whl/cu130/torchaudio/", 'version = "2.11.0+cu130"'),
        "tilert": entry("tilert", "/simple/tilert/", 'versions = ">=0.1.5"'),
        "kernels": entry("kernels", "/simple/kernels/", 'versions = ">=1.0"'),
    }


def median(f: object, reps: int = REPS) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


BUILTIN = ("torch", "torchvision", "torchaudio", "tilert", "xformers")
TARGET = "linux-x86_64-py313-cuda13.0-sm100"


def cli_median(tree: str, extra: Sequence[str]) -> float:
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = [sys.executable, "-m", "resolver_hook", "plan", *BUILTIN, "--target", TARGET, *extra]
    subprocess.run(cmd, env=env, capture_output=True, check=False)  # warm the OS caches

    def once() -> None:
        subprocess.run(cmd, env=env, capture_output=True, check=False)

    return median(once, reps=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-tree", metavar="DIR")
    args = parser.parse_args()
    profile = parse_target("linux-x86_64-py312-cuda13.0-sm100")
    server = PageServer()
    with server.serving():
        serve(server)
        mans = manifests(server.url)
        reqs = list(PACKAGES)
        urls = [str(m.indexes[0].url) for m in mans.values()]
        cache = Path(tempfile.mkdtemp(prefix="bench-inventory-"))
        warm_client = IndexClient(allow_insecure=True, cache_dir=cache)

        def cold_client(workers: int = 8) -> IndexClient:
            return IndexClient(allow_insecure=True, cache=False, max_workers=workers)

        def today() -> None:
            resolve(reqs, mans, profile)

        accepted = frozenset(profile.tags)

        def wanted(tags: frozenset[object]) -> bool:  # as the CLI does: this machine's
            return any(str(t) in accepted for t in tags)

        def plan_with(source: object) -> None:
            done = expand_manifests(mans, reqs, source, wanted=wanted)  # type: ignore[arg-type]
            plan = resolve(reqs, done.manifests, profile)
            assert plan.ok, plan.errors

        plan_with(warm_client)  # fills the page cache
        pages = warm_client.pages(urls)
        base = median(today)
        warm = median(lambda: plan_with(warm_client))
        server.delay = DELAY
        cold = median(lambda: plan_with(cold_client()), reps=5)
        serial = median(lambda: plan_with(cold_client(workers=1)), reps=3)
        shutil.rmtree(cache, ignore_errors=True)
    links = sum(len(p.links) for p in pages.values() if isinstance(p, Page))
    print(f"five packages, {len(urls)} pages, {links} links")
    print(f"today's plan (pages, no files):  {base * 1000:8.1f} ms")
    print(f"warm (pages read, files pinned): {warm * 1000:8.1f} ms  ({warm / base:.2f}x today's)")
    print(
        f"cold, {DELAY * 1000:.0f} ms per page, concurrent: {cold * 1000:8.1f} ms  "
        f"(excess over warm {(cold - warm) * 1000:.0f} ms = {(cold - warm) / DELAY:.2f}x one "
        "page's delay; goal <= 1.5x)"
    )
    print(
        f"cold, one page after another:     {serial * 1000:8.1f} ms  "
        f"({(serial - warm) / DELAY:.2f}x one page's delay)"
    )
    if args.baseline_tree:
        here = str(Path(__file__).resolve().parent.parent)
        ours = cli_median(here, ["--offline"])
        theirs = cli_median(args.baseline_tree, [])
        print(f"plan {' '.join(BUILTIN)} (a process each):")
        print(f"  baseline tree:                 {theirs * 1000:8.1f} ms")
        print(f"  this tree, --offline snapshot: {ours * 1000:8.1f} ms  ({ours / theirs:.2f}x)")


if __name__ == "__main__":
    main()
