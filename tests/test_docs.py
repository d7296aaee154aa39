"""Docs that stay true: the README's quick start works as written, its links land on
files and headings that exist, and the built-in packages table is the manifests'.
(The manual's own links are checked by the strict Sphinx build in .ci/run.)"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import cli
from tests.paths import REPO, script

README = (REPO / "README.md").read_text(encoding="utf-8")
QUICK_START = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install .",
    "resolver-hook plan --example --target linux-x86_64-py312-cuda13.0-sm100",
]


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and MyST (myst_heading_anchors) spell it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_quick_start_is_as_written_and_plans(capsys: pytest.CaptureFixture[str]) -> None:
    block = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert block.splitlines() == QUICK_START
    argv = shlex.split(QUICK_START[1])
    code, out, err = cli(capsys, *argv[1:])
    assert (code, err) == (0, "")
    assert "torch==2.13.0+cu130" in out


def test_readme_links_land() -> None:
    links = re.findall(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)", README)
    assert len(links) > 10
    for target, anchor in links:
        path = REPO / target
        assert path.is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{target}#{anchor}"


@pytest.mark.builtin_data
def test_builtin_table_matches_the_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    table_script = script("builtin_table")
    assert table_script.main(["--check"]) == 0
    table = table_script.table()
    for path in table_script.FILES:
        assert table in Path(path).read_text(encoding="utf-8")
    assert "| torch |" in table


def test_builtin_table_check_fails_on_a_stale_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    table_script = script("builtin_table")
    copy = tmp_path / "README.md"
    copy.write_text(table_script.replaced(README, "| stale |"), encoding="utf-8")
    monkeypatch.setattr(table_script, "ROOT", tmp_path)
    monkeypatch.setattr(table_script, "FILES", (copy,))
    assert table_script.main(["--check"]) == 1
    assert table_script.main([]) == 0  # rewrites it
    assert table_script.main(["--check"]) == 0


@pytest.mark.builtin_data
def test_builtin_table_is_the_same_every_run() -> None:
    # Set order changes with the hash seed: the table must not ("2.8" and "2.8.0" are one
    # release, spelled one way).
    code = (
        "import sys; sys.path.insert(0, 'scripts'); import builtin_table; "
        "print(builtin_table.table())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for seed in ("0", "1", "2", "3")
    }
    assert len(runs) == 1


def _layout() -> dict[str, str]:
    """docs/development.md's layout block: each entry's first line (from its name) ->
    the whole entry's text."""
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    block = text.split("## How the code is laid out", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    head = None
    for line in block.splitlines():
        if line.startswith("  ") and not line.startswith(("   ", "  #")):
            head = line[2:]
            entries[head] = head
        elif head is not None and line.startswith("   "):
            entries[head] += " " + line
    return entries


def _skipped(child: Path) -> bool:
    # A hidden folder is a tool's (ruff leaves .ruff_cache beside portable/ruff.toml).
    return (
        child.name in ("__init__.py", "__main__.py", "__pycache__", "data")
        or child.name.startswith(".")
        or (child.is_file() and child.suffix != ".py")
    )


def test_the_layout_names_every_module_and_only_modules_that_exist() -> None:
    package = REPO / "resolver_hook"
    named: set[str] = set()
    problems = []
    for head, whole in _layout().items():
        # An entry's names come before its first run of spaces: `_stdout.py _tempdir.py   ...`.
        for name in re.findall(r"(?:^|\s)([\w-]+/|[\w-]+\.py)(?=\s|$)", head.split("   ")[0]):
            named.add(name)
            if not (package / name).exists():
                problems.append(f"{name} is in the layout but not in resolver_hook/")
            elif name.endswith("/"):
                words = set(re.findall(r"[\w-]+", whole))
                problems += [
                    f"{name}{child.name} is not named in its folder's entry"
                    for child in sorted((package / name).iterdir())
                    if not _skipped(child) and child.name.removesuffix(".py") not in words
                ]
    problems += [
        f"resolver_hook/{child.name} is not in the layout"
        for child in sorted(package.iterdir())
        if not _skipped(child) and (child.name + "/" if child.is_dir() else child.name) not in named
    ]
    assert problems == []


def test_the_design_names_only_paths_that_exist() -> None:
    """docs/design.md's layout section: each path it names (`install/`, `appenv/create.py`)
    is in resolver_hook/ (placeholder/ is publish's)."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## How the code is laid out", 1)[1].split("\n## ", 1)[0]
    paths = [p for p in re.findall(r"`([\w/]+(?:/|\.py))`", section) if p != "resolver_hook/"]
    assert paths, "the section names no path: the pattern no longer reads it"
    package = REPO / "resolver_hook"
    missing = [
        p for p in paths if not (package / p).exists() and not (package / "publish" / p).exists()
    ]
    assert missing == []
