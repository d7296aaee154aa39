"""How often each installer gets torch right on real requirement files.

For four machine classes, every torch line of the requirements corpus
(tests/data/requirements-corpus, with the layouts its includes need) is planned the way
a user would plan it, offline (``resolver-hook plan -r FILE --target SPEC --offline
--json``), and the outcome is judged against a truth table kept apart from the
manifests (scripts/data/torch_truth.toml, every fact with its source):

- right: a build that runs on the machine (its CUDA runtime within the driver's major
  version, SASS for the GPU), or a refusal where no build that satisfies the line runs;
- unjudged: the plan names the fact it lacks, loudly;
- silent: handed to the installer unchanged, without a word;
- wrong: a build that cannot run there, or a refusal where one that runs exists;
- unknown: the truth table lacks a fact this line needs (counted, never guessed).

Beside it, by the same table: what plain pip would install (PyPI and the file's own
index lines, the highest version that matches, local labels included), and what uv's
``--torch-backend=auto`` would choose by its documented rule (one index per driver;
uv cannot be run against that index here). Only torch lines are judged: the table has
no facts for the other packages yet.

    python scripts/corpus_score.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from resolver_hook._toml import loads as toml_loads
from resolver_hook.cli import main as resolver_hook
from resolver_hook.errors import UsageError
from resolver_hook.host.detect import parse_target
from resolver_hook.reqfile import ReqEntry, read_requirements
from resolver_hook.resolve.model import marker_environment

ROOT = Path(__file__).resolve().parent.parent
TRUTH = toml_loads((ROOT / "scripts/data/torch_truth.toml").read_text())
LAYOUTS = json.loads((ROOT / "tests/data/corpus-layouts.json").read_text())

MACHINES = {
    "L40, CUDA 12.8 driver": "linux-x86_64-py312-cuda12.8-sm89",
    "A100, CUDA 12.4 driver, Python 3.11": "linux-x86_64-py311-cuda12.4-sm80",
    "B200, CUDA 13.0 driver": "linux-x86_64-py312-cuda13.0-sm100",
    "GB10 (aarch64), CUDA 13.0 driver": "linux-aarch64-py312-cuda13.0-sm121",
}
OUTCOMES = ("right", "unjudged", "silent", "wrong", "unknown")
# Of the silent lines, those where the installer's own choice cannot run here.
COLUMNS = (*OUTCOMES, "cannot run")
_PAGE = re.compile(r"download\.pytorch\.org/whl/(cu\d+|cpu|rocm[\d.]+)(?:/|$|/torch)")


@dataclass(frozen=True)
class Machine:
    cpu: str
    python: str
    cuda: Version
    cc: int  # compute capability x10


@dataclass(frozen=True)
class Build:
    version: Version  # public version
    label: str  # cu128, cpu, rocm6.3, ...


def _minor(v: Version) -> str:
    return f"{v.major}.{v.minor}"


def runs(b: Build, m: Machine) -> bool | None:
    """Whether the build runs on the machine's GPU; None when the table cannot say."""
    if not b.label.startswith("cu"):
        return False  # a CPU or ROCm build on an NVIDIA machine is the wrong build
    runtime = Version(f"{b.label[2:-1]}.{b.label[-1]}")
    if runtime.major > m.cuda.major:
        return False  # NVIDIA's minor-version compatibility stops at the major version
    for row in TRUTH["sass"]:
        if b.label not in row["labels"] or row["cpu"] != m.cpu:
            continue
        if b.version in SpecifierSet(row["releases"]):
            # SASS runs on the same major architecture, this minor or newer.
            return any(s // 10 == m.cc // 10 and s <= m.cc for s in row["sm"])
    return None


def exists(b: Build, m: Machine) -> bool:
    """Whether that build of that release is published for the machine's CPU and Python."""
    minor = _minor(b.version)
    if b.version not in SpecifierSet(TRUTH["python"][m.python]):
        return False
    if str(b.version) not in TRUTH["versions"]:
        return False
    on_pages = b.label in TRUTH["labels"].get(minor, [])
    return on_pages or TRUTH["pypi"][m.cpu].get(minor) == b.label


def pypi_build(v: Version, m: Machine) -> Build | None:
    label = TRUTH["pypi"][m.cpu].get(_minor(v))
    return Build(v, label) if label else None


def candidates(spec: SpecifierSet, m: Machine, labels: list[str | None]) -> list[Build]:
    """The builds an installer could take for ``spec``, best first as pip ranks them
    (the highest version; a local label sorts above its public version). ``None`` in
    ``labels`` is PyPI's own build."""
    found: list[tuple[Version, Build]] = []
    for text in TRUTH["versions"]:
        v = Version(text)
        for label in labels:
            b = pypi_build(v, m) if label is None else Build(v, label)
            if b is None or not exists(b, m):
                continue
            full = v if label is None else Version(f"{v}+{label}")
            if spec.contains(full, prereleases=False):
                found.append((full, b))
    found.sort(key=lambda x: x[0], reverse=True)
    return [b for _full, b in found]


def judge(choice: Build | str | None, spec: SpecifierSet, m: Machine) -> str:
    """right / wrong / unknown for an installed build, or for a failure (None)."""
    if isinstance(choice, str):
        return choice
    if choice is not None:
        ok = runs(choice, m)
        return "unknown" if ok is None else "right" if ok else "wrong"
    every = candidates(spec, m, [None, *_all_labels()])
    verdicts = [runs(b, m) for b in every]
    if any(verdicts):
        return "wrong"  # a refusal where something runs
    return "unknown" if None in verdicts else "right"


def _all_labels() -> list[str]:
    return sorted({x for labels in TRUTH["labels"].values() for x in labels})


def _spec_of(e: ReqEntry) -> SpecifierSet:
    return e.requirement.specifier if e.requirement is not None else SpecifierSet()


def _url_build(url: str) -> Build | None:
    try:
        _name, v, _b, _t = parse_wheel_filename(url.rsplit("/", 1)[-1].split("#", 1)[0])
    except InvalidWheelFilename:
        return None
    return Build(Version(v.public), v.local or "")


def pip_choice(e: ReqEntry, pages: list[str], replaced: bool, m: Machine) -> Build | str | None:
    """What plain pip installs for the line: a build, None (it fails), or "unknown" when
    the file names a page (ROCm, CPU) whose releases the table does not list."""
    if e.url:
        return _url_build(e.url)
    if any(p not in _all_labels() for p in pages):
        return "unknown"
    labels: list[str | None] = [] if replaced else [None]
    labels += pages
    return next(iter(candidates(_spec_of(e), m, labels)), None)


def uv_choice(e: ReqEntry, m: Machine) -> Build | None:
    if e.url:
        return _url_build(e.url)
    label = TRUTH["uv"][str(m.cuda.major)]
    return next(iter(candidates(_spec_of(e), m, [label])), None)


def ours(pkg: dict[str, Any], e: ReqEntry, m: Machine) -> str:
    action, cause = pkg["action"], pkg.get("cause")
    if cause == "unjudged" or action == "unjudged":
        return "unjudged"
    if action == "rewrite" and isinstance(pkg.get("version"), str):
        v = Version(str(pkg["version"]))
        return judge(Build(Version(v.public), v.local or ""), _spec_of(e), m)
    if action == "error":
        return judge(None, _spec_of(e), m)
    return "silent"


def plan(path: Path, spec: str) -> dict[str, Any] | None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        resolver_hook(["plan", "-r", str(path), "--target", spec, "--offline", "--json"])
    try:
        got: dict[str, Any] = json.loads(out.getvalue())
        return got
    except json.JSONDecodeError:
        return None


def corpus_files(corpus: Path, work: Path) -> list[tuple[str, Path]]:
    """Each corpus file, and each layout laid out so its includes resolve."""
    out = [(f.name, f) for f in sorted(corpus.glob("*.txt"))]
    for name, files in sorted(LAYOUTS.items()):
        d = work / name
        d.mkdir()
        for target, src in files.items():
            shutil.copy(corpus / src, d / target)
        out.append((f"{name} (layout)", d / next(iter(files))))
    return out


def machine_of(spec: str) -> tuple[Machine, dict[str, str]]:
    profile = parse_target(spec)
    assert profile.nvidia is not None
    assert profile.nvidia.cuda_version
    m = Machine(
        cpu=profile.arch,
        python=profile.python,
        cuda=Version(profile.nvidia.cuda_version),
        cc=int(spec.rsplit("sm", 1)[1]),
    )
    return m, marker_environment(profile)


def judge_file(
    path: Path, spec: str, m: Machine, env: dict[str, str]
) -> list[tuple[str, str, str, str]]:
    """(line, ours, pip, uv) for each torch line of the file that applies to the machine."""
    try:
        req = read_requirements([str(path)])
    except UsageError:
        return []  # pip refuses these files too (tests/data/pip-verdicts.json)
    lines = [
        e for e in req.entries if e.name == "torch" and (e.marker is None or e.marker.evaluate(env))
    ]
    if not lines:
        return []
    opts = [(e.option, e.value or "") for e in req.entries if e.option]
    pages = [p.group(1) for _o, v in opts if (p := _PAGE.search(v))]
    replaced = any(o in ("-i", "--index-url") for o, _v in opts)
    packages = (plan(path, spec) or {}).get("packages", [])
    pkg = next((p for p in packages if p["name"] == "torch"), None)
    out = []
    for e in lines:
        pip = pip_choice(e, pages, replaced, m)
        o = ours(pkg, e, m) if pkg else "wrong"
        if o == "silent" and judge(pip, _spec_of(e), m) == "wrong":
            o = "silent, cannot run"
        out.append((e.text, o, judge(pip, _spec_of(e), m), judge(uv_choice(e, m), _spec_of(e), m)))
    return out


def score(corpus: Path, verbose: bool) -> int:
    tallies: dict[str, dict[str, Counter[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = corpus_files(corpus, Path(tmp))
        for label, spec in MACHINES.items():
            m, env = machine_of(spec)
            t = tallies.setdefault(label, {k: Counter() for k in ("ours", "pip", "uv")})
            for name, path in files:
                for line, o, p, u in judge_file(path, spec, m, env):
                    for who, verdict in (("ours", o), ("pip", p), ("uv", u)):
                        t[who][verdict.split(",")[0]] += 1
                        t[who]["cannot run"] += verdict == "silent, cannot run"
                    if verbose:
                        print(f"{label} | {name}: {line.strip()!r}: ours {o}, pip {p}, uv {u}")
    _print(tallies)
    return 0


def _print(tallies: dict[str, dict[str, Counter[str]]]) -> None:
    print(f"{'machine':<36} {'who':<5} " + " ".join(f"{o:>10}" for o in COLUMNS))
    for label, t in tallies.items():
        for who in ("ours", "pip", "uv"):
            row = " ".join(f"{t[who][o]:>10}" for o in COLUMNS)
            print(f"{label:<36} {who:<5} {row}")
    print('"cannot run": of the silent lines, those where the installer\'s own choice cannot run')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests/data/requirements-corpus")
    ap.add_argument("--verbose", "-v", action="store_true", help="one line per judged line")
    args = ap.parse_args()
    return score(args.corpus, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
