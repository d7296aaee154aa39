"""Differential check for structural changes: plan, explain and lock over the built-in
manifests and a table of targets, offline (the shipped snapshot), each in a fresh cache.

    python scripts/differential.py --out DIR [--source TREE] [--again]

writes one file per case (exit code, stdout, stderr) to DIR; ``--source`` runs another
checkout's code (e.g. ``git archive`` of the commit before a structural move). Compare
two runs with ``diff -r``. A structural commit leaves every file identical.
``--again``: each case is run a second time in its cache, the stored plans removed
first, and that run's output is written: what the cache kept of the first run (the
expansions, the manifests read) must give the same files as a fresh cache does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TARGETS = (
    "linux-x86_64-py312-cuda13.0-sm100",
    "linux-x86_64-py312-cuda12.6-sm80",
    "linux-x86_64-py311-cuda12.4-sm90",
    "linux-aarch64-py312-cuda13.0-sm121",
    "linux-x86_64-py313",
)


def cases(source: Path) -> list[tuple[str, list[str]]]:
    names = sorted(p.stem for p in (source / "resolver_hook" / "manifests").glob("*.toml"))
    out: list[tuple[str, list[str]]] = []
    for i, target in enumerate(TARGETS):
        t = ["--target", target]
        out.append((f"plan-example-{i}", ["plan", "--example", "--offline", *t]))
        out.append((f"plan-all-{i}", ["plan", "--offline", *t, *names]))
        out.append((f"plan-json-{i}", ["plan", "--offline", "--json", *t, "torch", "flash-attn"]))
        out.append((f"lock-example-{i}", ["lock", "--example", "--offline", "-o", "-", *t]))
        for name in names:
            out.append((f"explain-{name}-{i}", ["explain", "--offline", *t, name]))
    multi = [a for target in TARGETS[:3] for a in ("--target", target)]
    out.append(("lock-multi", ["lock", "--example", "--offline", "-o", "-", *multi]))
    out.append(("plan-bad-mirror", ["plan", "--offline", "--mirror", "nope", "torch"]))
    out.append(("plan-nothing", ["plan", "--offline"]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--source", type=Path, default=ROOT)
    parser.add_argument("--again", action="store_true")
    args = parser.parse_args()
    source = args.source.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESOLVER_HOOK_", "PIP_"))}
    env["PYTHONPATH"] = str(source)
    env["NO_COLOR"] = "1"
    todo = cases(source)
    for name, argv in todo:
        with tempfile.TemporaryDirectory() as cache:
            for _ in range(2 if args.again else 1):
                shutil.rmtree(os.path.join(cache, "plans"), ignore_errors=True)
                done = subprocess.run(
                    [sys.executable, "-m", "resolver_hook", *argv],
                    env={**env, "RESOLVER_HOOK_CACHE_DIR": cache},
                    capture_output=True,
                    text=True,
                    check=False,
                    cwd=cache,
                )
        text = f"$ {' '.join(argv)}\nexit {done.returncode}\n--- stdout\n{done.stdout}"
        text += f"--- stderr\n{done.stderr}"
        text = text.replace(cache, "CACHE").replace(str(source), "SOURCE")
        (args.out / f"{name}.txt").write_text(text, encoding="utf-8")
    print(f"{len(todo)} cases written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
