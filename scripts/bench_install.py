#!/usr/bin/env python3
"""The hook's overhead on a real install: `resolver-hook pip install` vs plain `pip install`.

Both install the same packages from a loopback index of wheels built here into
fresh venvs (made outside the timed part): plain pip gets the already-resolved
lines (URL with sha256, pinned local version and its find-links page), the hook
gets the bare names and resolves them. Same for uv. Prints the medians and the
ratio of medians, which is the hook's overhead; and the hook with ``--no-proof`` (no
dry run of the installer first), so the time that dry run adds stands beside the
install time.

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


def hook_argv(
    python: str, tool: str, index: list[str], names: list[str], *, proof: bool
) -> list[str]:
    """``resolver-hook pip|uv [--no-proof] --target T [pip] install INDEX NAMES``."""
    argv = [python, "-m", "resolver_hook", tool, *([] if proof else ["--no-proof"])]
    argv += ["--target", TARGET, *(["pip"] if tool == "uv" else []), "install"]
    return [*argv, *index, *names]


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
            labels = (
                "pip",
                "hook pip",
                "hook pip --no-proof",
                "uv",
                "hook uv",
                "hook uv --no-proof",
            )
            results: dict[str, list[float]] = {k: [] for k in labels}
            for i in range(args.runs):
                for label, times in results.items():
                    venv = root / f"venv-{label.replace(' ', '-')}-{i}"
                    tool = "pip" if "pip" in label.split()[:2] else "uv"
                    if tool == "pip":
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
                    if label == "pip":
                        argv = [py, "-m", "pip", "install", *index, *resolved]
                    elif label == "uv":
                        argv = [uv_bin, "pip", "install", "--python", py, *index, *resolved]
                    else:
                        proof = not label.endswith("--no-proof")
                        argv = hook_argv(hook_python, tool, index, names, proof=proof)
                    times.append(timed(argv, env))
                    shutil.rmtree(venv)
        med = {k: statistics.median(v) for k, v in results.items()}
        for k, v in med.items():
            print(f"{k:<19} median {v * 1000:8.1f} ms over {args.runs} runs")
        for tool in ("pip", "uv"):
            hooked, unchecked = med[f"hook {tool}"], med[f"hook {tool} --no-proof"]
            print(
                f"overhead with {tool}: ratio of medians {hooked / med[tool]:.2f} "
                f"({unchecked / med[tool]:.2f} with --no-proof); the dry run adds "
                f"{(hooked - unchecked) * 1000:.1f} ms to the {unchecked * 1000:.1f} ms install"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
