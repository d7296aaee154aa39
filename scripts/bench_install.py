#!/usr/bin/env python3
"""The hook's overhead on a real install: `resolver-hook pip install` vs plain `pip install`.

Both install the same packages from a loopback index of wheels built here into
fresh venvs (made outside the timed part): plain pip gets the already-resolved
lines (URL with sha256, pinned local version and its find-links page), the hook
gets the bare names and resolves them. Same for uv. Prints the medians and the
ratio of medians, which is the hook's overhead.

Usage: python3 scripts/bench_install.py [--runs N]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from _benchutil import compile_package

from tests.installenv import PY, build_gpu_index, clean_env, make_venv, write_manifests

TARGET = f"linux-x86_64-py{PY}-cuda13.0-sm100"


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def tool_python(root: Path) -> tuple[str, str]:
    """resolver-hook installed in a venv of its own, as `pipx`/`uv tool` would do.

    Its dependencies come from the package registry; without one, this checkout's
    interpreter is used instead (and the figures say so).
    """
    venv = root / "tool"
    uv = [sys.executable, "-m", "uv"]
    repo = str(Path(__file__).resolve().parent.parent)
    try:
        subprocess.run(
            [*uv, "venv", "-q", "--python", sys.executable, str(venv)],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                *uv,
                "pip",
                "install",
                "-q",
                "--compile-bytecode",
                "--python",
                str(venv / "bin/python"),
                repo,
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        compile_package()  # as `pip install` would: see scripts/_benchutil.py
        return sys.executable, f"this checkout's interpreter ({exc})"
    return str(venv / "bin/python"), "resolver-hook installed in its own venv (as pipx would)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-install-"))
    try:
        hook_python, where = tool_python(root)
        print(f"hook runs from: {where}")
        gi = build_gpu_index(root)
        with gi.index.serving():
            write_manifests(gi)
            w, idx = gi.wheels, gi.index
            resolved = [
                f"demo-gpu @ {idx.wheel_url(w['gpu130'])}#sha256={w['gpu130'].sha256}",
                "demo-idx==2.0+cu130",
                "plainpkg",
                "--find-links",
                idx.links_url("cu130", "demo-idx"),
            ]
            names = ["demo-gpu", "demo-idx", "plainpkg"]
            uv = [sys.executable, "-m", "uv"]
            # Time the uv binary itself on both sides: `python -m uv` and a pyenv shim each
            # add tens of milliseconds of their own before uv starts.
            from uv import find_uv_bin

            uv_bin = str(find_uv_bin())
            results: dict[str, list[float]] = {k: [] for k in ("pip", "hook pip", "uv", "hook uv")}
            for i in range(args.runs):
                for label, times in results.items():
                    venv = root / f"venv-{label.replace(' ', '-')}-{i}"
                    if label.endswith("pip"):
                        make_venv(venv)
                    else:
                        subprocess.run(
                            [*uv, "venv", "-q", "--python", sys.executable, str(venv)],
                            check=True,
                            env=clean_env(),
                        )
                    env = clean_env(
                        VIRTUAL_ENV=str(venv),
                        RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
                        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
                    )
                    env["PATH"] = os.pathsep.join(
                        [str(venv / "bin"), os.path.dirname(uv_bin), env["PATH"]]
                    )
                    py = str(venv / "bin" / "python")
                    index = ["--index-url", gi.simple]
                    argv = {
                        "pip": [py, "-m", "pip", "install", *index, *resolved],
                        "hook pip": [
                            hook_python,
                            "-m",
                            "resolver_hook",
                            "pip",
                            "--target",
                            TARGET,
                            "install",
                            *index,
                            *names,
                        ],
                        "uv": [uv_bin, "pip", "install", "--python", py, *index, *resolved],
                        "hook uv": [
                            hook_python,
                            "-m",
                            "resolver_hook",
                            "uv",
                            "--target",
                            TARGET,
                            "pip",
                            "install",
                            *index,
                            *names,
                        ],
                    }[label]
                    times.append(timed(argv, env))
                    shutil.rmtree(venv)
        med = {k: statistics.median(v) for k, v in results.items()}
        for k, v in med.items():
            print(f"{k:<9} median {v * 1000:8.1f} ms over {args.runs} runs")
        print(f"overhead with pip: ratio of medians {med['hook pip'] / med['pip']:.2f}")
        print(f"overhead with uv:  ratio of medians {med['hook uv'] / med['uv']:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
