"""`plan` reads every real requirement file pip reads, and answers with a plan.

The corpus files (tests/data/requirements-corpus) and the layouts their includes need
are planned offline for a GPU machine: each ends in a plan (exit 0) or in refusals
named per package (exit 1), as JSON that holds a line per requirement pip reads.
How good the choices are is measured by scripts/corpus_score.py, not asserted here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from tests.clirun import cli

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "requirements-corpus"
VERDICTS = json.loads((DATA / "pip-verdicts.json").read_text())
LAYOUTS = json.loads((DATA / "corpus-layouts.json").read_text())
TARGET = "linux-x86_64-py312-cuda13.0-sm100"


def _cases() -> list[tuple[str, str]]:
    files = [("file", n) for n, v in sorted(VERDICTS["files"].items()) if "entries" in v]
    layouts = [("layout", n) for n, v in sorted(VERDICTS["layouts"].items()) if "entries" in v]
    return files + layouts


@pytest.mark.parametrize(("kind", "name"), _cases(), ids=lambda x: x)
def test_plan_answers_every_file_pip_reads(
    kind: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "file":
        path, verdict = CORPUS / name, VERDICTS["files"][name]
    else:
        for target, src in LAYOUTS[name].items():
            shutil.copy(CORPUS / src, tmp_path / target)
        path, verdict = tmp_path / next(iter(LAYOUTS[name])), VERDICTS["layouts"][name]
    code, out, err = cli(capsys, "plan", "-r", str(path), "--target", TARGET, "--offline", "--json")
    assert code in (0, 1), err
    plan = json.loads(out)
    entries = [e for e in verdict["entries"] if e["name"]]
    # Constraint-only names are not packages to install; every other name pip reads is
    # in the plan, one way or another (passed, rewritten, refused).
    wanted = {canonicalize_name(e["name"]) for e in entries if not e["constraint"]}
    planned = {p["name"] for p in plan["packages"]}
    assert wanted <= planned, sorted(wanted - planned)
    assert entries  # the file has requirements at all
