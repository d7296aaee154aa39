"""An application's GPU environment, declared: ``[tool.resolver-hook.env]`` in pyproject.toml.

What a hand-written "hardware to environment" mapper says in code, as data: the stack
of packages pinned together on every pass, the requirements file per machine class,
extras installed after it, optional accelerators, ``--no-deps`` packages, the CPU
policy, the Python version and the interpreter request per platform, and notes::

    [tool.resolver-hook.env]
    python = "3.12"
    cpu = "refuse"                 # or "allow": CPU-only machines refused unless --cpu
    stack = ["torch==2.13.0", "torchvision==0.28.0"]

    [[tool.resolver-hook.env.requirements]]
    when = { grace = true }        # first entry that matches wins; none: no file
    file = "dgx_requirements.txt"

    [[tool.resolver-hook.env.interpreter]]
    when = { os = "windows", arch = "aarch64" }
    arch = "x86_64"                # plan for an x64 interpreter under emulation
    request = "cpython-{python}-windows-x86_64-none"

    [[tool.resolver-hook.env.extras]]      # also optional, no-deps: {when, packages}
    packages = ["torchcodec==0.15.0"]

    [[tool.resolver-hook.env.notes]]
    when = { accelerator = "rocm" }
    text = "ROCm support is experimental."

A ``when`` table is a selector in the plan's own terms; every key must match, a list
means any of: ``os`` (linux, windows, macos), ``arch`` (x86_64, aarch64), ``accelerator``
(cuda, rocm, mps, cpu), ``gpu`` (a GPU family of any visible NVIDIA GPU:
:data:`GPU_FAMILIES`), ``grace`` (Linux aarch64 with an NVIDIA GPU that is not a
Jetson: Grace Hopper, Grace Blackwell, DGX Spark) and ``jetson`` (true/false).

:func:`parse_declaration` checks the whole table and raises one
:class:`~resolver_hook.manifest.ManifestError` naming every problem with its key path.
Pure except for checking that each requirements file exists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from resolver_hook.errors import UsageError
from resolver_hook.ground.input import read_text_input
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.host import HostProfile
from resolver_hook.manifest.tables import ManifestError, TableReader, kind_of

__all__ = [
    "GPU_FAMILIES",
    "Declaration",
    "Group",
    "Interpreter",
    "Note",
    "RequirementsChoice",
    "Selected",
    "Selector",
    "accelerator_of",
    "load_declaration",
    "parse_declaration",
]

# NVIDIA's architecture names by compute capability (docs/facts.md section 1, "GPU
# families"): what a selector's ``gpu`` names.
GPU_FAMILIES: Mapping[str, frozenset[tuple[int, int]]] = {
    "volta": frozenset({(7, 0), (7, 2)}),
    "turing": frozenset({(7, 5)}),
    "ampere": frozenset({(8, 0), (8, 6), (8, 7)}),
    "ada": frozenset({(8, 9)}),
    "hopper": frozenset({(9, 0)}),
    "blackwell": frozenset({(10, 0), (10, 1), (10, 3), (11, 0), (12, 0), (12, 1)}),
}
_OS = ("linux", "windows", "macos")
_ARCH = ("x86_64", "aarch64")
_ACCELERATORS = ("cuda", "rocm", "mps", "cpu")
_WORDS: Mapping[str, tuple[str, ...]] = {
    "os": _OS,
    "arch": _ARCH,
    "accelerator": _ACCELERATORS,
    "gpu": tuple(GPU_FAMILIES),
}
_FLAGS = ("grace", "jetson")
_TOP_KEYS = (
    "python",
    "cpu",
    "stack",
    "requirements",
    "interpreter",
    "extras",
    "optional",
    "no-deps",
    "notes",
)
_PYTHON = re.compile(r"3\.\d{1,2}")
MAX_ENTRIES = 256  # of each list: a declaration is written by hand


def accelerator_of(profile: HostProfile) -> str:
    """``cuda`` (a visible NVIDIA GPU), ``rocm``, ``mps`` or ``cpu``."""
    if profile.gpus:
        return "cuda"
    if profile.rocm is not None:
        return "rocm"
    if profile.mps:
        return "mps"
    return "cpu"


@valueclass
class Selector:
    """A ``when`` table: every given key must match the machine (a tuple: any of)."""

    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    flags: Mapping[str, bool] = field(default_factory=dict)

    def matches(self, profile: HostProfile) -> bool:
        have = {
            "os": {profile.os},
            "arch": {profile.arch},
            "accelerator": {accelerator_of(profile)},
            "gpu": {f for f, ccs in GPU_FAMILIES.items() if set(profile.gpu_ccs) & ccs},
        }
        if any(not have[k] & set(v) for k, v in self.words.items()):
            return False
        facts = {
            "jetson": profile.jetson,
            "grace": profile.os == "linux"
            and profile.arch == "aarch64"
            and bool(profile.gpus)
            and not profile.jetson,
        }
        return all(facts[k] == v for k, v in self.flags.items())

    def describe(self) -> str:
        parts = [f"{k} {' or '.join(v)}" for k, v in self.words.items()]
        parts += [("" if v else "not ") + k for k, v in self.flags.items()]
        return ", ".join(parts) or "any machine"


ANY = Selector()


@valueclass
class Selected:
    """An entry of the declaration for the machines ``when`` selects (every one: ANY)."""

    when: Selector = ANY


@valueclass
class Group(Selected):
    """Packages of one pass (extras, optional, no-deps)."""

    packages: tuple[str, ...] = ()


@valueclass
class RequirementsChoice(Selected):
    file: Path


@valueclass
class Interpreter(Selected):
    request: str  # uv's interpreter request; "{python}" is the declared version
    arch: str | None = None  # the interpreter's architecture, when not the machine's
    note: str = ""


@valueclass
class Note(Selected):
    text: str


@valueclass
class Declaration:
    """An application's environment, as declared. ``source`` names the file and table."""

    source: str
    root: Path  # the folder of the pyproject: requirements files are relative to it
    python: str | None = None
    cpu: str = "refuse"  # "refuse" (unless --cpu) or "allow"
    stack: tuple[str, ...] = ()
    requirements: tuple[RequirementsChoice, ...] = ()
    interpreter: tuple[Interpreter, ...] = ()
    extras: tuple[Group, ...] = ()
    optional: tuple[Group, ...] = ()
    no_deps: tuple[Group, ...] = ()
    notes: tuple[Note, ...] = ()


def _strings(p: TableReader, value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        p.bad(path, f"expected a list of strings, got {kind_of(value)}")
        return ()
    if len(value) > MAX_ENTRIES:
        p.bad(path, f"more than {MAX_ENTRIES} entries")
        return ()
    return tuple(value)


def _requirements(p: TableReader, value: object, path: str) -> tuple[str, ...]:
    out = []
    for i, text in enumerate(_strings(p, value, path)):
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            p.bad(f"{path}[{i}]", f"not a requirement: {exc}")
        else:
            out.append(text)
    return tuple(out)


def _selector(p: TableReader, value: object, path: str) -> Selector:
    if not isinstance(value, dict):
        p.bad(path, f"expected a table, got {kind_of(value)}")
        return ANY
    words: dict[str, tuple[str, ...]] = {}
    flags: dict[str, bool] = {}
    for key, given in value.items():
        if key in _FLAGS:
            if isinstance(given, bool):
                flags[key] = given
            else:
                p.bad(f"{path}.{key}", f"expected true or false, got {kind_of(given)}")
        elif key in _WORDS:
            items = [given] if isinstance(given, str) else given
            if (
                not isinstance(items, list)
                or not items
                or not all(isinstance(x, str) for x in items)
            ):
                p.bad(f"{path}.{key}", "expected a word or a list of words")
                continue
            known = _WORDS[key]
            bad = [x for x in items if x not in known]
            for x in bad:
                what = "GPU family" if key == "gpu" else key
                p.bad(f"{path}.{key}", f"unknown {what} {x!r} (known: {', '.join(known)})")
            if not bad:
                words[key] = tuple(items)
        else:
            p.unknown(path, key, (*_WORDS, *_FLAGS))
    return Selector(words=words, flags=flags)


def _tables(p: TableReader, value: object, path: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        p.bad(path, "expected an array of tables ([[...]])")
        return []
    if len(value) > MAX_ENTRIES:
        p.bad(path, f"more than {MAX_ENTRIES} entries")
        return []
    return [(f"{path}[{i}]", t) for i, t in enumerate(value)]


def _entries(
    p: TableReader, value: object, path: str, keys: Sequence[str], required: str
) -> list[tuple[str, Selector, dict[str, Any]]]:
    out = []
    for where, table in _tables(p, value, path):
        p.keys(table, ("when", *keys), where)
        if required not in table:
            p.bad(f"{where}.{required}", "missing")
            continue
        when = _selector(p, table["when"], f"{where}.when") if "when" in table else ANY
        out.append((where, when, table))
    return out


def _text(p: TableReader, value: object, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        p.bad(path, f"expected a non-empty string, got {kind_of(value)}")
        return ""
    return value


def parse_declaration(table: object, *, source: str, root: Path) -> Declaration:
    """The declaration in ``table`` (``[tool.resolver-hook.env]``); ManifestError listing
    every problem, each with its key path."""
    p = TableReader(source)
    if not isinstance(table, dict):
        raise ManifestError([f"{source}: expected a table, got {kind_of(table)}"])
    p.keys(table, _TOP_KEYS, "")
    python = table.get("python")
    if python is not None and not (isinstance(python, str) and _PYTHON.fullmatch(python)):
        p.bad("python", f'expected a version such as "3.12", got {python!r}')
        python = None
    cpu = table.get("cpu", "refuse")
    if cpu not in ("refuse", "allow"):
        p.bad("cpu", f'expected "refuse" or "allow", got {cpu!r}')
        cpu = "refuse"
    stack = _requirements(p, table.get("stack", []), "stack")
    requirements = []
    for where, when, t in _entries(
        p, table.get("requirements", []), "requirements", ["file"], "file"
    ):
        name = _text(p, t["file"], f"{where}.file")
        if name:
            path = root / name
            if not path.is_file():
                p.bad(f"{where}.file", f"{path}: no such file")
            requirements.append(RequirementsChoice(when=when, file=path))
    interpreters = []
    for where, when, t in _entries(
        p, table.get("interpreter", []), "interpreter", ["request", "arch", "note"], "request"
    ):
        request = _text(p, t["request"], f"{where}.request")
        arch = t.get("arch")
        if arch is not None and arch not in _ARCH:
            p.bad(f"{where}.arch", f"expected one of {', '.join(_ARCH)}, got {arch!r}")
            arch = None
        note = _text(p, t["note"], f"{where}.note") if "note" in t else ""
        if "{python}" in request and python is None:
            p.bad(f"{where}.request", "names {python} but python is not declared")
        interpreters.append(Interpreter(when=when, request=request, arch=arch, note=note))
    groups: dict[str, tuple[Group, ...]] = {}
    for key in ("extras", "optional", "no-deps"):
        groups[key] = tuple(
            Group(when=when, packages=_requirements(p, t["packages"], f"{where}.packages"))
            for where, when, t in _entries(p, table.get(key, []), key, ["packages"], "packages")
        )
    notes = [
        Note(when=when, text=_text(p, t["text"], f"{where}.text"))
        for where, when, t in _entries(p, table.get("notes", []), "notes", ["text"], "text")
    ]
    if table.get("stack") in (None, []):
        p.bad("stack", "missing or empty: name the packages the environment is built around")
    if p.found:
        raise ManifestError(p.problems, where=source)
    return Declaration(
        source=source,
        root=root,
        python=python,
        cpu=cpu,
        stack=stack,
        requirements=tuple(requirements),
        interpreter=tuple(interpreters),
        extras=groups["extras"],
        optional=groups["optional"],
        no_deps=groups["no-deps"],
        notes=tuple(notes),
    )


def load_declaration(path: Path) -> Declaration:
    """The declaration in ``path`` (a pyproject.toml, or the folder holding one)."""
    pyproject = path / "pyproject.toml" if path.is_dir() else path
    try:
        data = toml_loads(read_text_input(pyproject))
    except TomlError as exc:
        raise UsageError(f"{pyproject}: not TOML: {exc}") from None
    tool = data.get("tool")
    ours = tool.get("resolver-hook") if isinstance(tool, dict) else None
    table = ours.get("env") if isinstance(ours, dict) else None
    if table is None:
        raise UsageError(
            f"{pyproject}: no [tool.resolver-hook.env] table",
            hint="declare the environment there (README: 'From a hand-written mapper to "
            "a declaration'), or try 'resolver-hook env plan --example'",
        )
    return parse_declaration(
        table, source=f"{pyproject} [tool.resolver-hook.env]", root=pyproject.parent
    )
