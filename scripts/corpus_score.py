#!/usr/bin/env python3
"""How the plan treats the GPU lines of real requirement files, per machine class.

    python scripts/corpus_score.py [--corpus DIR] [--json]

Plans every file of ``tests/data/requirements-corpus`` (each with its source in
``SOURCES.tsv``) offline, with the built-in data and the shipped snapshot, for four
machine classes (an L40 on a CUDA 12.8 driver, an A100 on 12.4 with Python 3.11, a B200
on 13.0, a GB10 aarch64 on 13.0), and counts what each line of a package with a
built-in manifest ends in: a flavoured build (``flavoured``), a refusal (``refused``),
a loud ``unjudged`` outcome, a pass that says why the installer's own choice is right
(``passed``), or a silent pass (``silent``: left to the installer with no judgement, as
plain pip would take it). Files the planner refuses as input (not valid for pip) are
counted apart. It does not say whether a flavoured build is the right one: no truth
table is kept here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "requirements-corpus"
MACHINES = {
    "L40 12.8": "linux-x86_64-py312-cuda12.8-sm89",
    "A100 12.4 py311": "linux-x86_64-py311-cuda12.4-sm80",
    "B200 13.0": "linux-x86_64-py312-cuda13.0-sm100",
    "GB10 aarch64 13.0": "linux-aarch64-py312-cuda13.0-sm121",
}
KINDS = ("flavoured", "refused", "unjudged", "passed", "silent")


def outcome(p: dict[str, object]) -> str:
    """What one package of a plan ends in, in the script's words."""
    if p["action"] == "rewrite":
        return "flavoured"
    if p["action"] in ("error", "build"):
        return "refused"
    if p.get("cause") == "unjudged":
        return "unjudged"
    if p.get("cause") in ("fit", "marker") or (
        p.get("cause") == "as-written" and "runs here" in str(p.get("reason"))
    ):
        return "passed"
    return "silent"


def _layout(corpus: Path, folder: Path) -> list[Path]:
    """The corpus files at their paths in their repositories (under ``folder``), so a
    ``-r common.txt`` line finds its sibling as it would in the repository."""
    out = []
    rows = (corpus / "SOURCES.tsv").read_text(encoding="utf-8").splitlines()[1:]
    for row in rows:
        name, repo, path = row.split("\t")[:3]
        target = folder / repo.replace("/", "__") / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((corpus / name).read_bytes())
        out.append(target)
    return sorted(out)


def score(corpus: Path) -> dict[str, dict[str, int]]:
    from resolver_hook.manifest import builtin_manifests

    managed = set(builtin_manifests())
    out: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="corpus-score-") as tmp:
        files = _layout(corpus, Path(tmp))
        for label, target in MACHINES.items():
            out[label] = _score_one(files, target, managed)
    return out


def _score_one(files: list[Path], target: str, managed: set[str]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for f in files:
        proc = subprocess.run(
            [sys.executable, "-m", "resolver_hook", "plan", "-r", f.name, "--offline",
             "--json", "--target", target],
            capture_output=True, text=True, check=False, cwd=f.parent,
        )  # fmt: skip
        try:
            plan = json.loads(proc.stdout)
        except json.JSONDecodeError:
            counts["file not planned"] += 1
            continue
        for p in plan["packages"]:
            if p["name"] in managed:
                counts[outcome(p)] += 1
    return {k: counts.get(k, 0) for k in (*KINDS, "file not planned")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = score(args.corpus)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    head = ["machine", *KINDS, "file not planned"]
    print("  ".join(f"{h:>17}" if i == 0 else f"{h:>9}" for i, h in enumerate(head)))
    for label, counts in result.items():
        print(f"{label:>17}  " + "  ".join(f"{counts[k]:>9}" for k in head[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
