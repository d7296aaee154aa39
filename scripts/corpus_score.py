"""How often each installer gets GPU packages right on real requirement files.

For four machine classes, every line of a GPU family (torch; torchvision/torchaudio;
xformers; flash-attn; bitsandbytes; onnxruntime-gpu; cupy; triton; the pyg companions;
jax; tensorflow; the nvidia-* runtime wheels) in the requirements corpus
(tests/data/requirements-corpus, with the layouts its includes need) is planned the way
a user would plan it, offline (``resolver-hook plan -r FILE --target SPEC --offline
--json``), and the outcome is judged against truth tables kept apart from the
manifests (scripts/data/torch_truth.toml and scripts/data/<family>_truth.toml, every
fact with its source):

- right: a build that runs on the machine (its CUDA runtime within the driver's major
  version, SASS for the GPU, or PTX where the family's build script embeds it, or a
  compiler that knows the GPU for triton), or a refusal where no build that satisfies
  the line runs; a torchvision/torchaudio build is judged as the torch build it is made
  for, and must be made for a torch release the file's own torch lines allow;
- unjudged: the plan names the fact it lacks, loudly;
- silent: handed to the installer unchanged, without a word;
- wrong: a build that cannot run there, or a refusal where one that runs exists;
- unknown: the truth table lacks a fact this line needs (counted, never guessed).

Beside it, by the same table: what plain pip would install (PyPI and the file's own
index lines, the highest version that matches, local labels included), and what uv's
``--torch-backend=auto`` would choose by its documented rule (one index per driver,
for the names its backend.rs reroutes: torch, torchvision, torchaudio; uv cannot be run
against that index here; the other families it takes from PyPI as pip does).
A family without a truth table, or a release its table has not read, is "unknown".

    python scripts/corpus_score.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from resolver_hook.cli import main as resolver_hook
from resolver_hook.errors import UsageError
from resolver_hook.ground.toml import loads as toml_loads
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
    for row in TRUTH.get("toolkit", []):
        # No list read, but the build's toolkit compiles no SASS for this GPU.
        in_row = row["cpu"] == m.cpu and runtime in SpecifierSet(row["runtimes"])
        if in_row and m.cc >= row["sass_below"]:
            return False
    return None


def exists(b: Build, m: Machine) -> bool:
    """Whether that build of that release is published for the machine's CPU and Python."""
    minor = _minor(b.version)
    if b.version not in SpecifierSet(TRUTH["python"][m.python]):
        return False
    if str(b.version) not in TRUTH["versions"]:
        return False
    if TRUTH["pypi"][m.cpu].get(minor) == b.label:
        return True
    top = TRUTH.get("pages_python_max", {}).get(minor)
    if top is not None and Version(m.python) > Version(top):
        return False  # the label pages of that release stop below this Python
    return b.label in TRUTH["labels"].get(minor, [])


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


@dataclass(frozen=True)
class Family:
    """How one family's builds are found and judged. The torch family keeps the
    functions above; torchvision/torchaudio map each release to the torch release it
    is built against; the others read their own table (``_table_family``)."""

    name: str
    names: tuple[str, ...]  # canonical package names; a name ending in "*" is a prefix
    versions: list[str]  # every release, newest first
    exists: Any  # (Build, Machine) -> bool | None
    runs: Any  # (Build, Machine) -> bool | None
    pypi_label: Any  # (Version, Machine) -> str | None: PyPI's own build's label
    labels: list[str]  # the other indexes' labels
    uv_backend: bool  # uv's --torch-backend reroutes it (backend.rs applies_to)
    # The file's own torch pins (torchvision/torchaudio): a build made for a torch
    # release outside them cannot be installed beside that torch.
    pin: list[SpecifierSet] = field(default_factory=list)
    but: tuple[str, ...] = ()  # names another family of the same table judges

    def covers(self, name: str) -> bool:
        if name in self.but:
            return False
        return any(name == n or (n.endswith("*") and name.startswith(n[:-1])) for n in self.names)

    def candidates(self, spec: SpecifierSet, m: Machine, labels: list[str | None]) -> list[Build]:
        found: list[tuple[Version, Build]] = []
        for text in self.versions:
            v = Version(text)
            for label in labels:
                b = self.pypi_build(v, m) if label is None else Build(v, label)
                if b is None or self.exists(b, m) is False:
                    continue
                local = label is not None and _LOCAL.fullmatch(label)
                full = Version(f"{v}+{label}") if local else v
                if spec.contains(full, prereleases=False):
                    found.append((full, b))
        found.sort(key=lambda x: x[0], reverse=True)
        return [b for _full, b in found]

    def pypi_build(self, v: Version, m: Machine) -> Build | None:
        label = self.pypi_label(v, m)
        return Build(v, label) if label else None

    def judge(self, choice: Build | str | None, spec: SpecifierSet, m: Machine) -> str:
        if isinstance(choice, str):
            return choice
        if choice is not None:
            there = self.exists(choice, m)
            if there is False and self.name != "torch":
                return "wrong"  # not published for this machine, or not beside its torch
            ok = self.runs(choice, m) if there is not None else None
            return "unknown" if ok is None else "right" if ok else "wrong"
        every = self.candidates(spec, m, [None, *self.labels])
        if not every and self.name != "torch" and not self._known(spec):
            return "unknown"  # releases (or labels) the table has not read
        verdicts = [self.runs(b, m) if self.exists(b, m) else None for b in every]
        if any(verdicts):
            return "wrong"  # a refusal where something runs
        return "unknown" if None in verdicts else "right"

    def _known(self, spec: SpecifierSet) -> bool:
        """Whether the line names a release (and label) the table lists at all."""
        for text in self.versions:
            v = Version(text)
            full = [v] + [Version(f"{v}+{x}") for x in self.labels if _LOCAL.fullmatch(x)]
            if any(spec.contains(f, prereleases=False) for f in full):
                return True
        return False

    def pip_choice(
        self, e: ReqEntry, pages: list[str], replaced: bool, m: Machine
    ) -> Build | str | None:
        if e.url:
            return self.url_build(e.url, m)
        if self.uv_backend and any(p not in self.labels for p in pages):
            return "unknown"  # a page (ROCm, CPU) whose releases the torch table does not list
        if not self.versions:
            return "unknown"
        if replaced and any(p not in self.labels for p in pages):
            return "unknown"  # only a page whose files the table has not read
        labels: list[str | None] = [] if replaced else [None]
        labels += [p for p in pages if p in self.labels]
        return next(iter(self.candidates(_spec_of(e), m, labels)), None)

    def uv_choice(
        self, e: ReqEntry, pages: list[str], replaced: bool, m: Machine
    ) -> Build | str | None:
        if e.url:
            return self.url_build(e.url, m)
        if not self.uv_backend:
            return self.pip_choice(e, pages, replaced, m)  # uv takes it as pip does
        label = TRUTH["uv"][str(m.cuda.major)]
        return next(iter(self.candidates(_spec_of(e), m, [label])), None)

    def url_build(self, url: str, m: Machine) -> Build | None:
        b = _url_build(url)
        if b is None or self.name == "torch":
            return b
        page = _PAGE.search(url)
        label = page.group(1) if page else b.label or self.pypi_label(b.version, m)
        return Build(b.version, label or "")

    def ours(self, pkg: dict[str, Any], e: ReqEntry, m: Machine, by_pip: str) -> str:
        """Our verdict on the plan's entry ``pkg`` for line ``e``; ``by_pip``: pip's, for
        a line the plan judged and left to the installer (what pip installs is ours)."""
        action, cause = pkg["action"], pkg.get("cause")
        if cause == "unjudged" or action == "unjudged":
            return "unjudged"
        if action == "pass" and cause == "fit":
            # Judged, not silent: the plan said the installer's own build fits here
            # ("the plain build from your index fits"), so that build is the choice.
            return by_pip
        if self.name == "torch":
            if action == "rewrite" and isinstance(pkg.get("version"), str):
                v = Version(str(pkg["version"]))
                return self.judge(Build(Version(v.public), v.local or ""), _spec_of(e), m)
            return self.judge(None, _spec_of(e), m) if action == "error" else "silent"
        if action == "rewrite" and isinstance(pkg.get("version"), str):
            url = str(pkg.get("url") or "")
            b = self.url_build(url, m) if _url_build(url) else None  # a wheel's own URL
            if b is None:  # a page: the version's label, else the page's, else PyPI's
                v, page = Version(str(pkg["version"])), _PAGE.search(url)
                label = v.local or (page.group(1) if page else None)
                b = Build(Version(v.public), label or self.pypi_label(Version(v.public), m) or "")
            return self.judge(b, _spec_of(e), m)
        if action == "pass" and cause == "as-written" and e.url:
            return self.judge(self.url_build(e.url, m), _spec_of(e), m)
        if action in ("error", "build"):
            return self.judge(None, _spec_of(e), m)
        return "silent"


_LOCAL = re.compile(r"cu\d+|cpu|rocm[\d.]+")


def _torch_family() -> Family:
    return Family(
        name="torch",
        names=("torch",),
        versions=TRUTH["versions"],
        exists=exists,
        runs=runs,
        pypi_label=lambda v, m: TRUTH["pypi"][m.cpu].get(_minor(v)),
        labels=_all_labels(),
        uv_backend=True,
    )


def _domain_family(table: dict[str, Any], package: str) -> Family:
    """torchvision/torchaudio: each release is built against one torch release (its
    Requires-Dist), on the same indexes, with the same kernel lists."""
    releases = table["built_against"].get(package, {})
    couple = {Version(k): Version(v) for k, v in releases.items()}
    requires = table.get("requires_dist", {}).get(package, {})

    def torch_build(b: Build) -> Build | None:
        t = couple.get(Version(b.version.public))
        return None if t is None else Build(t, b.label)

    def beside(v: Version) -> bool:
        """Whether some torch release meets both the file's pins and the release's own
        Requires-Dist (torch==X, or a range where the table lists one)."""
        needs = SpecifierSet(requires.get(str(v), f"=={couple[v]}"))
        pins = [needs, *fam.pin]
        return any(all(Version(t) in p for p in pins) for t in TRUTH["versions"])

    def ex(b: Build, m: Machine) -> bool | None:
        t = torch_build(b)
        if t is None:
            return None
        return exists(t, m) and beside(Version(b.version.public))

    def rn(b: Build, m: Machine) -> bool | None:
        t = torch_build(b)
        return None if t is None else runs(t, m)

    def pypi(v: Version, m: Machine) -> str | None:
        t = couple.get(v)
        return None if t is None else TRUTH["pypi"][m.cpu].get(_minor(t))

    fam = Family(
        name=table["family"],
        names=(package,),
        versions=sorted(releases, key=Version, reverse=True),
        exists=ex,
        runs=rn,
        pypi_label=pypi,
        labels=_all_labels(),
        uv_backend=True,
    )
    return fam


def _row_for(table: dict[str, Any], b: Build, m: Machine) -> dict[str, Any] | None:
    rows: list[dict[str, Any]] = table.get("builds", [])
    for row in rows:
        if b.version not in SpecifierSet(row["releases"]) or m.cpu not in row["cpu"]:
            continue
        if m.python not in SpecifierSet(row.get("python", "")):
            continue
        label = row.get("index", "pypi")
        if label == b.label or (label.endswith("*") and b.label.startswith(label[:-1])):
            return row
    return None


def _package_families(table: dict[str, Any], pattern: tuple[str, ...]) -> list[Family]:
    """A table whose rows name their ``package`` (the nvidia-* wheels, each with its own
    releases): one family per package, its releases ``versions.<name>``, its files read
    ``read.<name>`` (both CPUs), and one for the family's other names (all unknown)."""
    out = []
    for name in table["packages"]:
        rows = [r for r in table["builds"] if r["package"] == name]
        read = table.get("read", {}).get(name)
        sub = {
            "family": table["family"],
            "packages": [name],
            "versions": table["versions"].get(name, []),
            "builds": rows,
            "read": {"x86_64": read, "aarch64": read} if read else {},
        }
        out.append(_table_family(sub))
    rest = _table_family({"family": table["family"], "packages": list(pattern)})
    return [*out, dataclasses.replace(rest, but=tuple(table["packages"]))]


def _table_family(table: dict[str, Any]) -> Family:
    """A family with its own table: ``[[builds]]`` rows (releases, index, cpu, python,
    runtime, and sm/ptx for kernels compiled ahead, arch_min/arch_max for kernels
    compiled on the machine, or ``device_code = false`` for files without GPU code) and
    ``read`` (per CPU, the releases whose files were read: a build not in a row there
    does not exist; outside it, the table cannot say)."""

    def ex(b: Build, m: Machine) -> bool | None:
        if _row_for(table, b, m) is not None:
            return True
        reads = table.get("read", {})  # PyPI's files read, per CPU (and Python)
        read = reads.get(f"{m.cpu}-py{m.python}", reads.get(m.cpu))
        if b.label == "pypi" and read is not None and b.version in SpecifierSet(read):
            return False
        return None

    def rn(b: Build, m: Machine) -> bool | None:
        row = _row_for(table, b, m)
        if row is None:
            return None
        if row.get("gpu") is False:
            return False  # a CPU-only build on a GPU machine
        if "runtime" not in row:
            return None
        if Version(row["runtime"]).major > m.cuda.major:
            return False
        if "arch_max" in row:  # compiled for the GPU when it runs (triton): a range
            return bool(row["arch_min"] <= m.cc <= row["arch_max"])
        if row.get("device_code") is False:  # no GPU code in the files: any GPU runs it
            return True
        if "sm" not in row and "ptx" not in row:
            return None
        sass = any(s // 10 == m.cc // 10 and s <= m.cc for s in row.get("sm", []))
        return sass or ("ptx" in row and row["ptx"] <= m.cc)

    labels = sorted({r.get("index", "pypi") for r in table.get("builds", [])} - {"pypi"})
    return Family(
        name=table["family"],
        names=tuple(table["packages"]),
        versions=table.get("versions", []),
        exists=ex,
        runs=rn,
        pypi_label=lambda v, m: "pypi",
        labels=[x for x in labels if not x.endswith("*")],
        uv_backend=False,
    )


# The families judged, most-pinned first; one without a table has every line unknown.
FAMILY_NAMES = {
    "torch": ("torch",),
    "torchvision/torchaudio": ("torchvision", "torchaudio"),
    "xformers": ("xformers",),
    "flash-attn": ("flash-attn",),
    "bitsandbytes": ("bitsandbytes",),
    "onnxruntime-gpu": ("onnxruntime-gpu",),
    "cupy": ("cupy-cuda*",),
    "triton": ("triton",),
    "pyg": ("torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib"),
    "jax": ("jax-cuda*", "jaxlib"),
    "tensorflow": ("tensorflow", "tensorflow-gpu"),
    "nvidia-*": ("nvidia-*",),
}


def families() -> list[Family]:
    tables: dict[str, dict[str, Any]] = {}
    for f in sorted((ROOT / "scripts/data").glob("*_truth.toml")):
        t = toml_loads(f.read_text())
        if "family" in t:
            tables[t["family"]] = t
    out = []
    for name, names in FAMILY_NAMES.items():
        if name == "torch":
            out.append(_torch_family())
        elif name in tables and "built_against" in tables[name]:
            out += [_domain_family(tables[name], p) for p in names]
        elif name in tables and any("package" in r for r in tables[name].get("builds", [])):
            out += _package_families(tables[name], names)
        elif name in tables:
            out.append(_table_family(tables[name]))
        else:
            out.append(_table_family({"family": name, "packages": list(names)}))
    return out


def _is_line_of(f: Family, e: ReqEntry) -> bool:
    if e.name is None:
        return False
    name = canonicalize_name(e.name)
    if f.name == "jax" and name == "jax" and e.requirement is not None:
        return any(x.startswith("cuda") for x in e.requirement.extras)  # jax[cuda12] ...
    if f.name == "tensorflow" and name == "tensorflow" and e.requirement is not None:
        return True
    if f.name == "nvidia-*":
        return f.covers(name) and re.search(r"-cu\d+$", name) is not None
    return f.covers(name)


def _public(spec: SpecifierSet) -> SpecifierSet:
    """The specifier without local labels (torch==2.0.1+cu118 pins release 2.0.1)."""
    return SpecifierSet(",".join(f"{x.operator}{x.version.split('+')[0]}" for x in spec))


def judge_file(
    path: Path, spec: str, m: Machine, env: dict[str, str], fams: list[Family]
) -> list[tuple[str, str, str, str, str]]:
    """(family, line, ours, pip, uv) for each GPU line of the file that applies here."""
    try:
        req = read_requirements([str(path)])
    except UsageError:
        return []  # pip refuses these files too (tests/data/pip-verdicts.json)
    todo = [
        (f, e)
        for f in fams
        for e in req.entries
        if _is_line_of(f, e) and (e.marker is None or e.marker.evaluate(env))
    ]
    if not todo:
        return []
    opts = [(e.option, e.value or "") for e in req.entries if e.option]
    pages = [p.group(1) for _o, v in opts if (p := _PAGE.search(v))]
    replaced = any(o in ("-i", "--index-url") for o, _v in opts)
    packages = (plan(path, spec) or {}).get("packages", [])
    torch_pins = [_spec_of(e) for f, e in todo if f.name == "torch"]
    for f in fams:
        f.pin[:] = [_public(p) for p in torch_pins] if f.name == "torchvision/torchaudio" else []
    out = []
    for f, e in todo:
        name = canonicalize_name(e.name or "")
        pkg = next((p for p in packages if p["name"] == name), None)
        spec_ = _spec_of(e)
        by_pip = f.judge(f.pip_choice(e, pages, replaced, m), spec_, m)
        o = f.ours(pkg, e, m, by_pip) if pkg else "wrong"
        if o == "silent" and by_pip == "wrong":
            o = "silent, cannot run"
        u = f.judge(f.uv_choice(e, pages, replaced, m), spec_, m)
        out.append((f.name, e.text, o, by_pip, u))
    return out


Tally = dict[str, dict[str, dict[str, Counter[str]]]]  # machine -> family -> who -> outcome


def score(corpus: Path, verbose: bool) -> int:
    fams = families()
    tallies: Tally = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = corpus_files(corpus, Path(tmp))
        for label, spec in MACHINES.items():
            m, env = machine_of(spec)
            t = tallies.setdefault(label, {})
            for name, path in files:
                for fam, line, o, p, u in judge_file(path, spec, m, env, fams):
                    per = t.setdefault(fam, {k: Counter() for k in ("ours", "pip", "uv")})
                    for who, verdict in (("ours", o), ("pip", p), ("uv", u)):
                        per[who][verdict.split(",")[0]] += 1
                        per[who]["cannot run"] += verdict == "silent, cannot run"
                    if verbose:
                        print(
                            f"{label} | {fam} | {name}: {line.strip()!r}: ours {o}, pip {p}, uv {u}"
                        )
    _print(tallies, list(dict.fromkeys(f.name for f in fams)))
    return 0


def _print(tallies: Tally, order: list[str]) -> None:
    head = f"{'machine':<36} {'family':<22} {'who':<5} "
    print(head + " ".join(f"{o:>10}" for o in COLUMNS))
    for label, t in tallies.items():
        total = {k: Counter[str]() for k in ("ours", "pip", "uv")}
        for fam in [f for f in order if f in t]:
            for who in ("ours", "pip", "uv"):
                total[who].update(t[fam][who])
                row = " ".join(f"{t[fam][who][o]:>10}" for o in COLUMNS)
                print(f"{label:<36} {fam:<22} {who:<5} {row}")
        for who in ("ours", "pip", "uv"):
            row = " ".join(f"{total[who][o]:>10}" for o in COLUMNS)
            print(f"{label:<36} {'all':<22} {who:<5} {row}")
    print()
    print("ours, right of judged lines (right + unjudged + silent + wrong), all families:")
    for label, t in tallies.items():
        c: Counter[str] = Counter()
        for per in t.values():
            c.update(per["ours"])
        judged = sum(c[o] for o in ("right", "unjudged", "silent", "wrong"))
        pct = f"{100 * c['right'] / judged:.0f}%" if judged else "-"
        print(f"  {label:<36} {c['right']} of {judged} ({pct}); {c['unknown']} unknown")
    print('"cannot run": of the silent lines, those where the installer\'s own choice cannot run')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests/data/requirements-corpus")
    ap.add_argument("--verbose", "-v", action="store_true", help="one line per judged line")
    args = ap.parse_args()
    return score(args.corpus, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
