"""Warnings a maintainer can act on, read from what they publish.

:func:`read_input` turns one file into :class:`LintInput` facts (I/O at the edge: a
wheel through :func:`resolver_hook.binaries.scan.scan_wheel`, an sdist's ``PKG-INFO`` /
``pyproject.toml`` / package files, a ``pyproject.toml``, a flavour manifest, or a saved
index page (``.html``: the wheel file names it links, read for their tags));
:func:`lint` checks the facts of every input together (pure), because "no aarch64
wheel" is a property of a release, not of one file. Each :class:`Finding` carries the
evidence it rests on and, where one helps, a hint.

The checks and the facts behind them (docs/facts.md sections 1 and 4):

* ``os-independent``: the classifier ``Operating System :: OS Independent`` on a
  project whose wheels carry platform tags (TileRT's did; users read it as "runs here").
* ``no-aarch64`` / ``no-windows``: Linux x86_64 wheels but none for aarch64 (GH200,
  GB200, GB10 and Jetson hosts are aarch64) or none for Windows.
* ``one-python``: all wheels are for one CPython minor and not ``abi3``.
* ``one-wheel``: given a single wheel, the three checks above would state what the
  project publishes from one file; instead this says what the file is for ("this wheel
  is for manylinux_2_28_x86_64 and CPython 3.12 only") and how to check the project
  (its wheels together, its manifest, or its saved index page). A manifest, a page or
  several wheels of one project get the project-wide checks.
* ``one-gpu-family``: the kernels run on one GPU generation only; the popular GPUs left
  out are named (``sm_100f`` does not run on GB10, RTX 50xx, H100).
* ``no-current-gpus``: no SASS for Hopper or newer and no PTX, so nothing runs on
  H100/H200 (9.0) or B200 (10.0), today's datacenter GPUs (faiss-gpu-cu12: sm_70 and
  sm_80 only).
* ``cuda13-driver``: every CUDA build needs runtime 13, hence an NVIDIA driver >= 580;
  machines with older drivers have no build.
* ``silent-placeholder``: a placeholder (name reservation) that installs without a
  word. Any placeholder *wheel* does: pip and uv prefer a wheel to an sdist and install
  it without running any of its code, so a message can come at import at the earliest
  (zero-version placeholder wheels such as ``nvidia-npp-cu13 0.0.0a0`` install silently
  even under ``--only-binary``). An sdist or project does when its build does not fail
  and its ``__init__.py`` does not raise (TileRT 0.0.0.dev0 shipped a 0-byte one).
* ``placeholder-backend``: a placeholder sdist whose build backend must be downloaded
  (``requires = ["hatchling"]``): offline or behind a private index the user sees only
  "No matching distribution found for hatchling", never the message.
* ``placeholder-dynamic``: a placeholder sdist whose metadata is not static
  (``Metadata-Version`` < 2.2 or ``Dynamic:`` fields): uv must build it just to resolve,
  so a lock fails even for platforms that would never install it.

What counts as a placeholder: trivial code (nothing but ``__init__.py`` files of a few
statements, or no code at all) AND either a version like ``0.0.0`` or ``0.0.1`` (any
pre/dev/post) or a summary that says placeholder, reserved or stub. Words alone never
decide: a real project whose description mentions placeholders has real code.
"""

from __future__ import annotations

import ast
import re
import tarfile
import zipfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.binaries.scan import (
    ZIP_ERRORS,
    ScanError,
    cuda_runtime_major,
    metadata_headers,
    scan_wheel,
)
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.input import InputError
from resolver_hook.ground.input import read_input as read_bytes
from resolver_hook.ground.toml import TomlError
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index import parse_page
from resolver_hook.limits import MAX_ARCHIVE_MEMBERS, MAX_PAGE_BYTES, parse_wheel_name
from resolver_hook.manifest import ManifestError, loads_manifest
from resolver_hook.portable.cuda import (
    GPU_NAMES,
    KernelTarget,
    describe_cc,
    min_driver_for_runtime,
    parse_target,
)

__all__ = ["Finding", "LintError", "LintInput", "WheelFacts", "lint", "lint_paths", "read_input"]

OS_INDEPENDENT = "Operating System :: OS Independent"

_MAX_TEXT = 16 << 20  # PKG-INFO, METADATA, pyproject.toml
_MAX_INIT = 1 << 20  # an __init__.py past this is not a placeholder's
_SMALL_INIT_STATEMENTS = 5
# GPUs worth naming when left out: CUDA 13 dropped offline compilation below CC 7.5
# (docs/facts.md section 1), so older ones are not a maintainer's action item.
_OLDEST_NAMED = (7, 5)
_BINARY_SUFFIXES = (".so", ".pyd", ".dll", ".dylib")
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh")
# Base versions 0, 0.0, 0.0.0, ... and 0.0.1, 0.0.0.1, ... (pre/dev/post stripped first).
_ZERO_VERSION = re.compile(r"^0(\.0)*$|^0(\.0)+\.1$")
_PLACEHOLDER_WORDS = re.compile(r"\b(placeholder|reserved|reserves|reserving|reservation|stub)\b")
_ROOT_FILES_NOT_CODE = ("setup.py", "noxfile.py", "conftest.py")
_NOT_SOURCE_DIRS = ("build", "dist", "node_modules", "venv", "__pycache__")


class LintError(UsageError):
    """An input that cannot be read as a wheel, sdist, pyproject.toml or manifest."""


@valueclass
class Finding:
    """One warning: on which input, what, the evidence, and what to do. A ``caveat``
    (what the input cannot tell, such as one wheel of a release) is printed as a note
    and is not a finding against the input: it does not make ``lint`` fail."""

    file: str
    code: str
    message: str
    evidence: tuple[str, ...]
    hint: str | None = None
    caveat: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "code": self.code,
            "message": self.message,
            "evidence": list(self.evidence),
            "hint": self.hint,
        }

    def line(self) -> str:
        """``warning: FILE: what (evidence; evidence)`` (``note:`` for a caveat)."""
        why = f" ({'; '.join(self.evidence)})" if self.evidence else ""
        return f"{'note' if self.caveat else 'warning'}: {self.file}: {self.message}{why}"


@valueclass
class WheelFacts:
    """One built (or listed) wheel: what it is for, read from its name and binaries."""

    filename: str
    interpreters: tuple[str, ...]  # cp312, py3, ...
    abis: tuple[str, ...]  # cp312, abi3, none
    platforms: tuple[str, ...]  # manylinux_2_28_x86_64, win_amd64, any
    gpu: tuple[KernelTarget, ...] = ()
    cuda_runtime: int | None = None
    cuda_evidence: str = ""  # "tilert/libk.so links libcudart.so.13"


@valueclass
class _Package:
    """What a placeholder check needs of a wheel's or sdist's package files."""

    # (path, text) of every __init__.py and every top-level module (``mod1.py`` beside
    # the packages, or in ``src/``): a placeholder may be one small module, no package.
    init_files: tuple[tuple[str, str], ...] = ()
    other_modules: int = 0  # package submodules (.py/.pyi), C/C++/CUDA sources
    binaries: int = 0

    @property
    def trivial(self) -> bool:
        """Nothing beyond ``__init__.py`` files and top-level modules of a few statements
        in all, or no code at all."""
        if self.other_modules or self.binaries:
            return False
        counts = [_statements(t) for _, t in self.init_files]
        if any(c is None for c in counts):
            return False
        return sum(c for c in counts if c is not None) <= _SMALL_INIT_STATEMENTS


@valueclass
class LintInput:
    """The facts of one input file."""

    path: str
    kind: str  # wheel, sdist, pyproject, manifest, page
    name: str
    version: str | None = None
    summary: str = ""
    classifiers: tuple[str, ...] = ()
    wheels: tuple[WheelFacts, ...] = ()
    package: _Package | None = None
    build_requires: tuple[str, ...] | None = None  # [build-system] requires; None = absent
    build_fails: bool = False  # setup.py or the in-tree backend exits on purpose
    static_metadata: bool | None = None  # None: unknown (no PKG-INFO)
    metadata_evidence: str = ""
    has_native_code: str | None = None  # evidence: a binary or C/CUDA source in the tree


# --- reading inputs ---------------------------------------------------------------------


def _wheel_facts(filename: str, tags: Collection[Tag], **more: Any) -> WheelFacts:
    return WheelFacts(
        filename=filename,
        interpreters=tuple(sorted({t.interpreter for t in tags})),
        abis=tuple(sorted({t.abi for t in tags})),
        platforms=tuple(sorted({t.platform for t in tags})),
        **more,
    )


def _package_of(files: Iterable[tuple[str, int, Any]]) -> _Package:
    """``files``: (path, size, reader) of the package files; reader() -> bytes."""
    inits: list[tuple[str, str]] = []
    others = binaries = 0
    for path, size, reader in files:
        pure = PurePosixPath(path)
        name = pure.name
        top_level = pure.parent.as_posix() in (".", "src") and name.endswith((".py", ".pyi"))
        if name == "__init__.py" or top_level:
            text = reader().decode("utf-8", "replace") if size <= _MAX_INIT else "x = 1\n" * 99
            inits.append((path, text))
        elif name.endswith((".py", ".pyi", *_SOURCE_SUFFIXES)):
            others += 1
        elif name.endswith(_BINARY_SUFFIXES) or ".so." in name:
            binaries += 1
    return _Package(init_files=tuple(inits), other_modules=others, binaries=binaries)


def _read_wheel(path: Path) -> LintInput:
    try:
        report = scan_wheel(path)
    except ScanError as exc:
        raise LintError(exc.message) from None
    try:
        with zipfile.ZipFile(path) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            meta = next(
                (i for i in infos if re.fullmatch(r"[^/]+\.dist-info/METADATA", i.filename)), None
            )
            headers = None
            if meta is not None:
                with zf.open(meta) as handle:  # bounded: never more than _MAX_TEXT
                    headers = metadata_headers(handle.read(_MAX_TEXT))
            package = _package_of(
                (i.filename, i.file_size, lambda i=i: zf.read(i))
                for i in infos
                if not re.match(r"[^/]+\.(dist-info|data)/", i.filename)
            )
    except ZIP_ERRORS as exc:
        raise LintError(f"{path.name}: cannot read the wheel: {exc}") from None
    runtime_libs = [
        f"{o.path} links {lib}"
        for o in report.objects
        for lib in o.needed
        if o.cuda_runtime is not None and cuda_runtime_major(lib) == o.cuda_runtime
    ]
    isas = [o.ptx_isa for o in report.objects if o.ptx_isa is not None]
    if not runtime_libs and isas and report.cuda:
        runtime_libs = ["PTX ISA {}.{}, no CUDA runtime linked".format(*max(isas))]
    facts = _wheel_facts(
        report.filename,
        [Tag(*tag.split("-")) for tag in report.tags],
        gpu=tuple(parse_target(t) for t in report.gpu),
        # report.cuda already merges NEEDED, the PTX ISA and the version label.
        cuda_runtime=_runtime_major(SpecifierSet(report.cuda)) if report.cuda else None,
        cuda_evidence=runtime_libs[0] if runtime_libs else "",
    )
    return LintInput(
        path=str(path),
        kind="wheel",
        name=report.name,
        version=report.version,
        summary=str(headers.get("Summary", "")) if headers else "",
        classifiers=tuple(str(c) for c in headers.get_all("Classifier") or ()) if headers else (),
        wheels=(facts,),
        package=package,
    )


def _parse_python(text: str) -> ast.Module | None:
    """The module's syntax tree; None when it does not parse or is too deep to parse.

    CPython's parser raises MemoryError ("too complex") or RecursionError on a 200k
    character expression, ValueError on NUL bytes: all mean "not code we can read".
    """
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _string_list(value: object, where: str) -> tuple[str, ...]:
    """A TOML array of strings, or LintError naming the key (a string is not a list)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        kind = type(value).__name__
        raise LintError(f"{where}: expected an array of strings, got {kind}: {value!r:.60}")
    return tuple(value)


def _table(doc: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, Mapping):
        raise LintError(f"{where}: [{key}] must be a table, got {type(value).__name__}")
    return value


def _build_system(
    doc: Mapping[str, Any], where: str
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """``(requires or None, backend-path)`` of a pyproject's [build-system], types checked."""
    build = _table(doc, "build-system", where)
    requires = (
        _string_list(build["requires"], f"{where}: build-system.requires")
        if "requires" in build
        else None
    )
    backend = build.get("build-backend")
    if backend is not None and not isinstance(backend, str):
        raise LintError(f"{where}: build-system.build-backend: expected a string")
    paths = _string_list(build.get("backend-path", []), f"{where}: build-system.backend-path")
    return requires, paths


def _project_name(project: Mapping[str, Any], where: str, default: str) -> str:
    name = project.get("name", default)
    if not isinstance(name, str):
        raise LintError(f"{where}: project.name: expected a string, got {type(name).__name__}")
    return name


def _backend_raises(text: str) -> bool:
    """Whether build code exits on purpose: ``raise``/``SystemExit``/``sys.exit`` anywhere."""
    tree = _parse_python(text)
    if tree is None:
        return False
    return any(isinstance(node, ast.Raise) or _exits(node) for node in ast.walk(tree))


def _exits(node: ast.AST) -> bool:
    """Whether ``node`` calls ``exit``, ``sys.exit`` or ``os._exit``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in (
        "exit",
        "_exit",
    )


def _read_sdist(path: Path) -> LintInput:
    try:
        # Sdists are gzip-compressed tar files (PyPA "Source distribution format").
        with tarfile.open(path, "r:gz") as tar:
            members: list[tarfile.TarInfo] = []
            for member in tar:
                members.append(member)
                if len(members) > MAX_ARCHIVE_MEMBERS:
                    raise LintError(f"{path.name}: more than {MAX_ARCHIVE_MEMBERS} members")
            files = {m.name: m for m in members if m.isfile()}
            roots = {n.split("/", 1)[0] for n in files}
            if len(roots) != 1:
                raise LintError(
                    f"{path.name}: not an sdist: expected one top folder, found {len(roots)}"
                )
            (root,) = roots

            def read(name: str, limit: int = _MAX_TEXT) -> bytes:
                handle = tar.extractfile(files[name])
                return handle.read(limit) if handle is not None else b""

            pkg_info = f"{root}/PKG-INFO"
            if pkg_info not in files:
                raise LintError(f"{path.name}: not an sdist: no {root}/PKG-INFO")
            headers = metadata_headers(read(pkg_info))
            where = f"{path.name}: pyproject.toml"
            pyproject: dict[str, Any] = {}
            if f"{root}/pyproject.toml" in files:
                pyproject = _parse_toml(read(f"{root}/pyproject.toml"), where)
            requires, backend_path = _build_system(pyproject, where)
            _project_name(_table(pyproject, "project", where), where, "")
            backend_dirs = tuple(f"{root}/{d.strip('/')}/" for d in backend_path)
            build_code = [
                n
                for n in files
                if n == f"{root}/setup.py" or (n.startswith(backend_dirs) and n.endswith(".py"))
            ]
            build_fails = any(
                _backend_raises(read(n).decode("utf-8", "replace")) for n in build_code
            )
            skip = (*backend_dirs, f"{root}/tests/", f"{root}/docs/")
            skip += tuple(f"{root}/{n}" for n in _ROOT_FILES_NOT_CODE)
            package = _package_of(
                (n.split("/", 1)[1], m.size, lambda n=n: read(n, _MAX_INIT))
                for n, m in files.items()
                if n.count("/") >= 1 and not n.startswith(skip)
            )
            native = next(
                (n for n in files if n.endswith(_BINARY_SUFFIXES + _SOURCE_SUFFIXES)), None
            )
    except (OSError, tarfile.TarError, EOFError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise LintError(f"{path.name}: cannot read the sdist: {first}") from None
    meta_version = str(headers.get("Metadata-Version", "1.0"))
    dynamic = [str(d) for d in headers.get_all("Dynamic") or ()]
    try:
        static = Version(meta_version[:64]) >= Version("2.2") and not dynamic
    except ValueError:  # InvalidVersion, or a number past Python's int digit limit
        static = False
    if dynamic:
        evidence = f"PKG-INFO Dynamic: {', '.join(dynamic)}"
    else:
        evidence = f"PKG-INFO Metadata-Version {meta_version}"
    return LintInput(
        path=str(path),
        kind="sdist",
        name=str(canonicalize_name(str(headers.get("Name", root.rsplit("-", 1)[0])))),
        version=str(headers.get("Version", "")) or None,
        summary=str(headers.get("Summary", "")),
        classifiers=tuple(str(c) for c in headers.get_all("Classifier") or ()),
        package=package,
        # No [build-system]: pip and uv fall back to setuptools, downloaded (PEP 517).
        build_requires=tuple(map(str, requires))
        if requires is not None
        else ("setuptools (the default when there is no [build-system])",),
        build_fails=build_fails,
        static_metadata=static,
        metadata_evidence=evidence,
        has_native_code=native.split("/", 1)[1] if native else None,
    )


def _parse_toml(raw: bytes, where: str) -> dict[str, Any]:
    try:
        return toml_loads(raw.decode("utf-8"))
    except (TomlError, UnicodeDecodeError) as exc:
        raise LintError(f"{where}: not valid TOML: {exc}") from None


# Entries a walk below a pyproject.toml looks at, at most.
_MAX_TREE_ENTRIES = 20_000


def _walk_tree(folder: Path, keep: Callable[[Path, Path], bool]) -> Iterator[Path]:
    """The entries below ``folder`` that are not folders walked into (bounded walk).

    Hidden entries and build output are left out, then those ``keep(here, entry)``
    refuses; folders (not symlinks to them) are walked into, everything else is yielded.
    """
    seen = 0
    stack = [folder]
    while stack and seen < _MAX_TREE_ENTRIES:
        here = stack.pop()
        try:
            entries = sorted(here.iterdir())
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.name.startswith(".") or entry.name in _NOT_SOURCE_DIRS:
                continue
            if not keep(here, entry):
                continue
            if entry.is_dir() and not entry.is_symlink():
                stack.append(entry)
            else:
                yield entry


def _native_in_tree(folder: Path) -> str | None:
    """A binary or C/C++/CUDA source near a pyproject.toml (bounded walk)."""
    for entry in _walk_tree(folder, lambda here, entry: True):
        if entry.name.endswith(_BINARY_SUFFIXES + _SOURCE_SUFFIXES):
            return str(entry.relative_to(folder))
    return None


def _package_in_tree(folder: Path, skip: Sequence[str] = ()) -> _Package:
    """The code files below a pyproject.toml (bounded walk; tests, docs, build output,
    hidden folders and the in-tree build backend ``skip`` are left out)."""
    skipped = {(folder / s).resolve() for s in skip}

    def keep(here: Path, entry: Path) -> bool:
        if here == folder and entry.name in (*_ROOT_FILES_NOT_CODE, "tests", "docs"):
            return False
        return not (entry.is_symlink() or entry.resolve() in skipped)

    files: list[tuple[str, int, Any]] = []
    for entry in _walk_tree(folder, keep):
        if entry.is_file():
            rel = entry.relative_to(folder).as_posix()
            files.append((rel, entry.stat().st_size, lambda e=entry: e.read_bytes()))
    return _package_of(files)


def _read_toml(path: Path) -> LintInput:
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_TEXT + 1)
    except OSError as exc:
        raise LintError(f"{path}: cannot read: {exc.strerror or exc}") from None
    doc = _parse_toml(raw, str(path))
    if "project" in doc or "build-system" in doc:
        project = _table(doc, "project", str(path))
        requires, backend_path = _build_system(doc, str(path))
        dynamic = list(_string_list(project.get("dynamic", []), f"{path}: project.dynamic"))
        return LintInput(
            path=str(path),
            kind="pyproject",
            name=str(canonicalize_name(_project_name(project, str(path), path.parent.name))),
            version=str(project["version"]) if "version" in project else None,
            summary=str(project.get("description", "")),
            classifiers=tuple(map(str, project.get("classifiers", []))),
            build_requires=tuple(map(str, requires)) if requires is not None else None,
            static_metadata=not dynamic,
            metadata_evidence=f"[project] dynamic = {dynamic}",
            has_native_code=_native_in_tree(path.parent),
            package=_package_in_tree(path.parent, list(backend_path)),
        )
    if "package" in doc and "schema" in doc:
        return _from_manifest(raw.decode("utf-8"), path)
    raise LintError(
        f"{path}: neither a pyproject.toml ([project]) nor a flavour manifest (schema, [package])"
    )


def _runtime_major(spec: SpecifierSet | None) -> int | None:
    """13 for ``>=13.0`` (the lower bound's major)."""
    if spec is None:
        return None
    majors = []
    for s in spec:
        if s.operator in (">=", "==", "~=", ">"):
            try:
                majors.append(Version(s.version.rstrip(".*")).major)
            except InvalidVersion:
                continue
    return max(majors) if majors else None


def _from_manifest(text: str, path: Path) -> LintInput:
    try:
        manifest = loads_manifest(text, source=str(path), allow_insecure=True)
    except ManifestError as exc:
        raise LintError(exc.message) from None
    wheels = []
    for w in manifest.wheels:
        major = _runtime_major(w.needs.cuda)
        wheels.append(
            _wheel_facts(
                w.filename,
                w.tags,
                gpu=tuple(w.needs.gpu),
                cuda_runtime=major,
                cuda_evidence=f"{w.filename}: cuda = '{w.needs.cuda}'" if major else "",
            )
        )
    for i, x in enumerate(manifest.indexes):
        major = _runtime_major(x.needs.cuda)
        label = f"index[{i}] {x.version}"
        pythons = tuple(f"cp{v.replace('.', '')}" for v in x.python) or ("py3",)
        wheels.append(
            WheelFacts(
                filename=label,
                interpreters=pythons,
                abis=("none",),
                platforms=tuple(x.platforms) or ("any",),
                gpu=tuple(x.needs.gpu),
                cuda_runtime=major,
                cuda_evidence=f"{label}: cuda = '{x.needs.cuda}'" if major else "",
            )
        )
    return LintInput(
        path=str(path),
        kind="manifest",
        name=manifest.name,
        summary=manifest.description or "",
        wheels=tuple(wheels),
    )


def _read_page(path: Path) -> LintInput:
    """A saved simple-index or find-links page: the project's wheels, by file name."""
    try:
        html = read_bytes(path, limit=MAX_PAGE_BYTES).decode("utf-8", "replace")
        links = parse_page(html, path.resolve().as_uri())
    except (InputError, OperationalError) as exc:
        raise LintError(f"{path}: {exc.message}") from None
    wheels: dict[str, list[WheelFacts]] = {}
    for link in links:
        try:
            dist, _version, _build, tags = parse_wheel_name(link.filename)
        except ValueError:
            continue  # an sdist, a signature, another link
        wheels.setdefault(str(canonicalize_name(dist)), []).append(
            _wheel_facts(link.filename, tags)
        )
    if len(wheels) != 1:
        found = ", ".join(sorted(wheels)) or "none"
        raise LintError(f"{path}: a page of one project's wheels expected; projects: {found}")
    ((name, facts),) = wheels.items()
    return LintInput(path=str(path), kind="page", name=name, wheels=tuple(facts))


def read_input(path: str | Path) -> LintInput:
    """Read one wheel, sdist, pyproject.toml, manifest or saved index page. Raises
    :class:`LintError`."""
    p = Path(path)
    if not p.is_file():
        raise LintError(f"{p}: no such file")
    name = p.name.lower()
    if name.endswith(".whl"):
        return _read_wheel(p)
    if name.endswith((".html", ".htm")):
        return _read_page(p)
    if name.endswith((".tar.gz", ".tgz")):
        return _read_sdist(p)
    if name.endswith(".toml"):
        return _read_toml(p)
    raise LintError(
        f"{p}: not a wheel (.whl), sdist (.tar.gz), pyproject.toml, manifest (.toml) or "
        "saved index page (.html)"
    )


# --- the checks (pure) ------------------------------------------------------------------


def _statements(text: str) -> int | None:
    """Statements in a module besides its docstring; None when it does not parse."""
    tree = _parse_python(text)
    if tree is None:
        return None
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return len(body)


def _raises_on_import(text: str) -> bool:
    """A ``raise`` (or ``sys.exit``) that runs when the module is imported: at module
    level or inside top-level ``if``/``try``/``with``, not inside functions or classes."""
    tree = _parse_python(text)
    if tree is None:
        return True  # a SyntaxError is loud too
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Expr) and _exits(node.value):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, name, []) or [])
    return False


def _placeholder_signals(item: LintInput) -> list[str]:
    """Why ``item`` looks like a placeholder; empty when it does not.

    Trivial code AND (a zero-style version OR placeholder words in the summary): words
    or a version alone never decide, so a real project that mentions placeholders, or
    a real 0.0.1 release, is not one.
    """
    pkg = item.package
    if pkg is None or not pkg.trivial:
        return []
    signals = []
    if item.version:
        try:
            if _ZERO_VERSION.match(Version(item.version).base_version):
                signals.append(f"version {item.version}")
        except InvalidVersion:
            pass
    word = _PLACEHOLDER_WORDS.search(item.summary.lower())
    if word:
        signals.append(f"its summary says {word.group(1)}")
    if not signals:
        return []
    if pkg.init_files:
        signals.append("the package is only " + ", ".join(p for p, _ in pkg.init_files))
    else:
        signals.append("it has no code")
    return signals


def _init_words(pkg: _Package) -> str:
    words = []
    for path, text in pkg.init_files[:3]:
        size = len(text.encode())
        words.append(f"{path} is {size} bytes" + ("" if size else " (empty)"))
    return ", ".join(words) or "no __init__.py at all"


def _check_placeholder(item: LintInput) -> list[Finding]:
    signals = _placeholder_signals(item)
    if not signals or item.kind not in ("wheel", "sdist", "pyproject"):
        return []
    out = []
    pkg = item.package
    loud_import = pkg is not None and any(_raises_on_import(t) for _, t in pkg.init_files)
    why = "looks like a placeholder: " + ", ".join(signals)
    if item.kind == "wheel" and pkg is not None:
        # pip and uv prefer a wheel and install it without running any of its code.
        out.append(
            Finding(
                file=item.path,
                code="silent-placeholder",
                message="placeholder wheel installs silently: pip and uv prefer a wheel to "
                "the sdist and install it without running any code"
                + (
                    ", so the message comes only at import"
                    if loud_import
                    else "; it imports without a message too"
                ),
                evidence=(why, _init_words(pkg)),
                hint="do not publish a placeholder wheel; publish only a placeholder sdist "
                "that fails at install: resolver-hook placeholder build MANIFEST",
            )
        )
    elif pkg is not None and not loud_import and not item.build_fails:
        out.append(
            Finding(
                file=item.path,
                code="silent-placeholder",
                message="placeholder builds, installs and imports without a message; users get "
                "ModuleNotFoundError for its submodules and think their install is broken",
                evidence=(why, _init_words(pkg)),
                hint="generate one that fails at install and at import: resolver-hook placeholder "
                "build MANIFEST",
            )
        )
    if item.kind in ("sdist", "pyproject") and item.build_requires:
        out.append(
            Finding(
                file=item.path,
                code="placeholder-backend",
                message="placeholder's build backend is downloaded first: offline or behind a "
                "private index users see only 'No matching distribution found', never "
                "your message",
                evidence=(why, f"[build-system] requires = {list(item.build_requires)}"),
                hint="ship the backend in the sdist: requires = [], backend-path = [...] "
                "(resolver-hook placeholder build does)",
            )
        )
    if item.kind in ("sdist", "pyproject") and item.static_metadata is False:
        out.append(
            Finding(
                file=item.path,
                code="placeholder-dynamic",
                message="placeholder's metadata is not static: uv must build it to resolve, so "
                "locking fails even for platforms that never install it",
                evidence=(why, item.metadata_evidence),
                hint="static metadata: Metadata-Version >= 2.2 with no Dynamic field (PEP 643)",
            )
        )
    return out


def _check_os_independent(item: LintInput, release: Sequence[WheelFacts]) -> list[Finding]:
    if OS_INDEPENDENT not in item.classifiers:
        return []
    plats = sorted({p for w in release for p in w.platforms if p != "any"})
    if plats:
        evidence = f"wheels are tagged {', '.join(plats)}"
    elif item.has_native_code:
        evidence = f"the tree has native code ({item.has_native_code})"
    else:
        return []
    return [
        Finding(
            file=item.path,
            code="os-independent",
            message=f"classifier '{OS_INDEPENDENT}' but the builds are platform-specific",
            evidence=(f"Classifier: {OS_INDEPENDENT}", evidence),
            hint="list the systems the wheels are for, e.g. 'Operating System :: POSIX :: Linux'",
        )
    ]


def _plat_words(plats: Iterable[str]) -> str:
    return ", ".join(sorted(set(plats)))


def _check_one_wheel(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    """What a single wheel is for, in place of the project-wide platform checks."""
    (wheel,) = release
    plats = [p for p in wheel.platforms if p != "any"]
    cpython = sorted(i for i in wheel.interpreters if re.fullmatch(r"cp3\d+", i))
    limits = []
    if plats:
        limits.append(_plat_words(plats))
    if len(cpython) == 1 and "abi3" not in wheel.abis and set(wheel.interpreters) == {cpython[0]}:
        limits.append(f"CPython 3.{cpython[0][3:]}")
    if not limits:
        return []
    return [
        Finding(
            file=label,
            code="one-wheel",
            message=f"this wheel is for {' and '.join(limits)} only; one file cannot tell "
            "which other platforms or Pythons the project publishes",
            evidence=(f"wheel tags: {wheel.filename}",),
            hint="lint the release's wheels together, its flavour manifest, or its saved "
            "index page (.html) to check the project (aarch64, Windows, several Pythons)",
            caveat=True,
        )
    ]


def _check_platforms(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    plats = {p for w in release for p in w.platforms}
    linux_x86 = {p for p in plats if p.startswith(("manylinux", "linux")) and p.endswith("x86_64")}
    if not linux_x86:
        return []
    out = []
    gpu = any(w.gpu or w.cuda_runtime for w in release)
    if not any(p.endswith(("aarch64", "arm64")) for p in plats):
        who = (
            "GH200, GB200, GB10 (DGX Spark) and Jetson machines are aarch64"
            if gpu
            else "ARM servers and Graviton/Ampere machines are aarch64"
        )
        out.append(
            Finding(
                file=label,
                code="no-aarch64",
                message="no aarch64 wheel",
                evidence=(f"wheels are for {_plat_words(plats)}", who),
                hint="build manylinux_2_28_aarch64 wheels too (cibuildwheel on an ARM runner)",
            )
        )
    if not any(p.startswith("win") for p in plats):
        out.append(
            Finding(
                file=label,
                code="no-windows",
                message="no Windows wheel",
                evidence=(f"wheels are for {_plat_words(plats)}",),
                hint="build win_amd64 wheels, or say in the README that Windows is not supported",
            )
        )
    return out


def _check_gpu_family(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    targets = sorted({t for w in release for t in w.gpu})
    if not targets:
        return []
    covered = {cc for cc in GPU_NAMES if any(t.runs_on(cc) for t in targets)}
    majors = {cc[0] for cc in covered}
    if len(majors) > 1:
        return []
    left_out = [
        describe_cc(cc)
        for cc in sorted(GPU_NAMES, reverse=True)
        if cc not in covered and cc >= _OLDEST_NAMED
    ]
    family = f"sm_{min(majors)}x" if majors else "no GPU anyone names"
    names = ", ".join(str(t) for t in targets)
    whose = "this wheel's GPU kernels" if single else "GPU kernels"
    return [
        Finding(
            file=label,
            code="one-gpu-family",
            message=f"{whose} cover one family only ({family}); left out: {', '.join(left_out)}",
            evidence=(f"kernels {names}",),
            hint="add targets for the GPUs users have, e.g. -gencode arch=compute_120,code=sm_120 "
            "(RTX 50xx, GB10) and -gencode arch=compute_90,code=sm_90 (H100); a PTX "
            "target (code=compute_XY) reaches newer GPUs by JIT",
        )
    ]


# Today's datacenter GPUs: H100/H200 (9.0) and B200/GB200 (10.0) (docs/facts.md 1.9).
_CURRENT_DATACENTER = ((9, 0), (10, 0))


def _check_current_gpus(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    targets = sorted({t for w in release for t in w.gpu})
    if not targets or any(t.runs_on(cc) for t in targets for cc in _CURRENT_DATACENTER):
        return []
    whose = "this wheel has" if single else "the builds have"
    return [
        Finding(
            file=label,
            code="no-current-gpus",
            message=f"{whose} no kernels for Hopper or newer, and no PTX: nothing runs on "
            f"{describe_cc((9, 0))} or {describe_cc((10, 0))}",
            evidence=(f"kernels {', '.join(str(t) for t in targets)}",),
            hint="add -gencode arch=compute_90,code=sm_90 (and a PTX target, "
            "code=compute_90, which newer GPUs JIT-compile)",
        )
    ]


def _check_cuda13(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    majors = {w.cuda_runtime for w in release if w.cuda_runtime is not None}
    if not majors or min(majors) < 13:
        return []
    driver = min_driver_for_runtime(min(majors)) or "580"
    older = min_driver_for_runtime(12)
    evidence = next((w.cuda_evidence for w in release if w.cuda_evidence), "")
    which, fate = (
        ("this wheel needs", "cannot use it")
        if single
        else ("every CUDA build needs", "have no build")
    )
    return [
        Finding(
            file=label,
            code="cuda13-driver",
            message=f"{which} runtime {min(majors)}, so an NVIDIA driver >= "
            f"{driver}; machines whose driver is older (CUDA 12 drivers, {older} up "
            f"to {driver}, common on clusters and cloud images) {fate}",
            evidence=tuple(e for e in (evidence,) if e),
            hint=f"also publish a CUDA 12 build (runs on drivers >= {older}), or state the "
            f"driver >= {driver} requirement in the README",
        )
    ]


def _check_python(label: str, release: Sequence[WheelFacts], single: bool) -> list[Finding]:
    if not release or any("abi3" in w.abis for w in release):
        return []
    interps = {i for w in release for i in w.interpreters}
    cpython = {i for i in interps if re.fullmatch(r"cp3\d+", i)}
    if len(cpython) != 1 or interps - cpython:
        return []
    (only,) = cpython
    version = f"3.{only[3:]}"
    return [
        Finding(
            file=label,
            code="one-python",
            message=f"wheels for CPython {version} only; every other Python finds no build",
            evidence=(f"interpreter tags: {only}",),
            hint="build one wheel per supported CPython (cibuildwheel), or abi3 if the "
            "extension can use the limited API",
        )
    ]


def _group_label(name: str, items: Sequence[LintInput]) -> str:
    """What the project-wide findings are on: the one input of builds, else the project."""
    wheels = [
        i for i in items if i.kind in ("wheel", "manifest", "page") and not _placeholder_signals(i)
    ]
    if len(wheels) == 1:
        return wheels[0].path
    return f"{name} ({len(wheels)} inputs)"


def lint(inputs: Sequence[LintInput]) -> list[Finding]:
    """Every finding for ``inputs``; inputs of one project are judged together."""
    groups: dict[str, list[LintInput]] = {}
    for item in inputs:
        groups.setdefault(item.name, []).append(item)
    findings: list[Finding] = []
    for name, items in groups.items():
        # A placeholder is not a build: it neither adds platforms nor needs classifiers.
        builds = [i for i in items if not _placeholder_signals(i)]
        release = [w for i in builds for w in i.wheels]
        for item in items:
            if item in builds:
                findings += _check_os_independent(item, release)
            findings += _check_placeholder(item)
        label = _group_label(name, items)
        # One wheel file speaks of itself; the project's wheels or manifest of the project.
        kinds = [i.kind for i in items]
        single = len(release) == 1 and kinds.count("wheel") == 1
        single = single and not {"manifest", "page"} & set(kinds)
        scoped = (_check_one_wheel,) if single else (_check_platforms, _check_python)
        for check in (*scoped, _check_gpu_family, _check_current_gpus, _check_cuda13):
            findings += check(label, release, single)
    return findings


def lint_paths(paths: Sequence[str | Path]) -> tuple[list[Finding], list[LintError]]:
    """Read and lint ``paths``; unreadable ones come back as errors, the rest are linted."""
    inputs: list[LintInput] = []
    errors: list[LintError] = []
    for path in paths:
        try:
            inputs.append(read_input(path))
        except LintError as exc:
            errors.append(exc)
    return lint(inputs), errors
