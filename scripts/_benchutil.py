"""Shared by the benchmarks: measure the tool as a user's install leaves it.

:func:`clean_venv` installs a wheel of the checkout, bytecode compiled, into a venv of
its own with nothing else beside it (no editable-install hooks, no ``.pth`` files of
other packages), so the interpreter's own start-up, the baseline, is not slowed by
what a development environment carries. Both sides of a ratio run that venv's python.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def clean_venv(root: Path, source: Path = REPO) -> Path:
    """A fresh venv under ``root`` holding resolver-hook (a wheel of ``source``) and its
    dependencies, bytecode compiled; returns its python. Needs the package registry."""
    uv = [sys.executable, "-m", "uv"]
    venv = root / "venv"
    subprocess.run(
        [*uv, "venv", "-q", "--python", sys.executable, str(venv)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    subprocess.run(
        [*uv, "build", "-q", "--wheel", "--out-dir", str(root / "wheel"), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = next((root / "wheel").glob("resolver_hook-*.whl"))
    python = venv / "bin" / "python"
    subprocess.run(
        # pip for the `pip --version` baseline; no setuptools (its distutils-precedence.pth
        # would slow every start of the interpreter, the baseline too).
        [
            *[*uv, "pip", "install", "-q", "--compile-bytecode"],
            *["--python", str(python), str(wheel), "pip"],
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return python


def tree_arguments(doc: str | None, *, runs: int) -> tuple[argparse.Namespace, dict[str, Path]]:
    """``--runs N``, ``--source DIR`` (default: this checkout) and ``--compare DIR`` (a
    baseline tree, measured first; repeatable, in the order given): the parsed
    arguments and the trees by label."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--source", type=Path, default=REPO)
    parser.add_argument("--compare", type=Path, metavar="DIR", action="append", default=[])
    args = parser.parse_args()
    trees = {f"compare {tree}": tree for tree in args.compare}
    trees[f"source {args.source}"] = args.source
    return args, trees


def compile_package() -> None:
    """Write resolver_hook's bytecode in the checkout, as installing it would (for the
    benchmarks that time the checkout's own interpreter, in-process)."""
    import compileall

    compileall.compile_dir(str(REPO / "resolver_hook"), quiet=1)
