"""Flavour manifests: the frozen types and the validation of a parsed TOML mapping.

A manifest says which builds ("flavours") of one package exist and what each needs.
Two kinds of flavour:

- :class:`WheelFlavour`: one built wheel at a URL; its version and tags come from
  the wheel filename.
- :class:`IndexFlavour`: a version served from a per-package find-links page
  (``https://download.pytorch.org/whl/cu130/torch/``), pinned with its local label
  (``2.13.0+cu130``). Without ``url`` it is the package's ordinary build on the
  user's own index (PyPI): resolving to it leaves the requirement alone.

What a flavour needs: ``cuda`` (PEP 440 specifier on the driver's CUDA version;
absent = no NVIDIA driver needed), ``gpu`` (kernel targets inside; absent = runs
without a GPU), ``rocm`` (specifier on the ROCm version; absent = no ROCm needed),
``l4t`` (a Jetson build: specifier on the Jetson's L4T release, ``">=36,<37"`` for
JetPack 6; absent = not a Jetson build), ``requires`` (couplings with other packages
of the same plan). ``properties`` in the PEP 817 vocabulary
(``nvidia :: cuda_version_lower_bound :: 13.0``, ``nvidia :: sm_arch :: 100_real``)
may stand in for ``cuda``/``gpu``. A ``[[wheel]]`` may add ``cuda_floors``, a driver
floor per kernel target (``{ sm_89 = ">=12.0", compute_89 = ">=12.9" }``: SASS needs its
runtime's driver, PTX also its ISA's): the resolver then takes, for each GPU of the
machine, the lowest floor among the targets that run on it, and ``cuda`` (required
beside it, the highest floor) is what resolvers that do not know ``cuda_floors`` use.

Where a fact comes from: ``evidence`` (an https URL of the build script, release
page or index page that shows the entry's tags, CUDA floor and kernel list) and
``checked`` (the date someone last compared the entry with it, ``"YYYY-MM-DD"``).
Optional in user manifests; every built-in entry carries both. ``cuda_runtime``
(``"13.2"``) is the CUDA runtime a build was made with, when it differs from the
floor of ``cuda`` (a cu132 build runs on a CUDA 13.0 driver): the resolver uses it
to choose between CUDA builds (docs/facts.md section 1).

A ``[build]`` table says that building the package from its sdist is a supported
fallback: when no flavour fits a machine, the resolver passes the requirement to the
installer to build (action ``build``) instead of refusing. ``[build] needs`` lists
what such a build needs (``"nvcc>=12.8"``, ``"cmake>=3.26"``, ``"ninja"``, ``"cxx"``,
or a library such as ``"z3"``), checked before the installer runs
(:func:`resolver_hook.build.preflight.preflight`). No ``[build]`` table: no fallback.

A ``[[matrix]]`` table is a template that expands into ``[[wheel]]`` entries (see
:func:`_expand_matrix`). Validation is pure and collects every problem of a
document before raising one :class:`ManifestError`.
"""

from __future__ import annotations

import datetime
import itertools
import math
import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from resolver_hook._credentials import keep
from resolver_hook._patterns import is_project_name, is_sha256
from resolver_hook.errors import UsageError
from resolver_hook.limits import (
    MAX_MATRIX_EXCLUDES,
    MAX_MATRIX_WHEELS,
    MAX_URL_LENGTH,
    check_version_text,
)
from resolver_hook.manifest.urls import is_loopback_host, url_filename, url_problem
from resolver_hook.manifest.variantname import split_variant_label
from resolver_hook.portable.cuda import KernelTarget, parse_target

__all__ = [
    "PACKAGE_FACTS",
    "SCHEMA",
    "TEMPLATE_FACTS",
    "Flavour",
    "IndexFlavour",
    "Manifest",
    "ManifestError",
    "WheelFlavour",
    "check_template",
    "fill_template",
    "is_loopback_host",
    "no_version_between",
    "parse_manifest",
    "url_filename",
]

SCHEMA = 1

_TOP_KEYS = ("schema", "package", "wheel", "index", "matrix", "build")
_PACKAGE_KEYS = ("name", "homepage", "downloads", "description", "twins")
_NEEDS_KEYS = ("cuda", "gpu", "rocm", "l4t", "properties", "requires")
_ABOUT_KEYS = ("cuda_runtime", "evidence", "checked")
_FACT_KEYS = ("cxx11abi",)  # facts of a build other flavours' templates may use
_WHEEL_KEYS = ("url", "sha256", *_NEEDS_KEYS, "cuda_floors", *_ABOUT_KEYS, *_FACT_KEYS)
_FLAVOUR_FORM_KEYS = (
    "install",
    "versions",
    "label",
    "local_labels",
    "kernels_until",
    "preference",
)
_INDEX_KEYS = (
    "url",
    "version",
    "platforms",
    "python",
    *_NEEDS_KEYS,
    *_ABOUT_KEYS,
    *_FACT_KEYS,
    *_FLAVOUR_FORM_KEYS,
)
_MATRIX_KEYS = ("url", "sha256", "axes", "exclude", *_NEEDS_KEYS, *_ABOUT_KEYS)
_BUILD_KEYS = ("needs",)
_AXIS_ATTRS = ("cuda", "gpu", "rocm", "l4t", "properties", "requires", *_ABOUT_KEYS, *_FACT_KEYS)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PROPERTY = re.compile(r"^\s*([a-z0-9_]+)\s*::\s*([a-z0-9_]+)\s*::\s*([a-z0-9_.]+)\s*$")


_V = TypeVar("_V")


class ManifestError(UsageError):
    """A manifest is malformed. ``problems`` lists each one as ``source: key.path: what``;
    ``where`` names what holds them all (an app-env declaration's table, say)."""

    def __init__(
        self, problems: Sequence[str], *, hint: str | None = None, where: str = "manifests"
    ) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{len(self.problems)} problems in {where}:\n" + "\n".join(
                f"  {p}" for p in self.problems
            )
        super().__init__(message, hint=hint)


# --- the value objects ------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFlavour:
    """One built wheel of a package, at a URL."""

    url: str
    filename: str
    name: NormalizedName
    version: Version
    tags: frozenset[Tag]
    sha256: str | None = None
    cuda: SpecifierSet | None = None
    rocm: SpecifierSet | None = None
    # A Jetson build: a specifier on the L4T release (">=36,<37" is JetPack 6). Such a
    # flavour fits only Jetsons whose L4T release satisfies it (docs/facts.md 1.2).
    l4t: SpecifierSet | None = None
    gpu: tuple[KernelTarget, ...] = ()
    requires: tuple[Requirement, ...] = ()
    cuda_runtime: Version | None = None  # the CUDA runtime it was built with ("13.2")
    # Driver floor per kernel target, each target in ``gpu`` (see the module docstring);
    # () = ``cuda`` holds for every GPU.
    cuda_floors: tuple[tuple[KernelTarget, SpecifierSet], ...] = ()
    evidence: str | None = None  # https URL of the page that shows its facts
    checked: datetime.date | None = None  # when the entry was last compared with it
    where: str = ""  # key path in its manifest, e.g. "wheel[3]" or "matrix[0]"
    # PEP 825 variant wheel: its label, and properties of namespaces other than nvidia
    # (kept, never checked: the resolver does not choose a wheel that needs them).
    variant: str | None = None
    other_properties: tuple[str, ...] = ()
    # Built with the C++11 ABI (torch._C._GLIBCXX_USE_CXX11_ABI); None: not known.
    # Only templates of other packages read it ({cxx11abi}).
    cxx11abi: bool | None = None
    # Read from an index page (resolver_hook.inventory), not written in a manifest:
    # the page's ``requires-python``; the verified release whose kernel list this newer
    # release is assumed to share (None: its own entry, verified); where the file was
    # seen ("network", "cache", "snapshot") and when.
    requires_python: SpecifierSet | None = None
    assumed_from: Version | None = None
    inventory: str | None = None
    inventory_date: str | None = None
    # A file of another distribution or with extras, read from the page of an index
    # flavour's ``install`` ("onnxruntime-gpu", "jax[cuda13]"): the requirement line
    # names that. None: the package itself.
    install: str | None = None
    # A release the page lists that no entry's rule covers (below every ``versions``
    # floor): the range the rules do cover, said when it is chosen on an accelerated
    # machine; it is judged by its tags and requires-python only. None: a rule covers it.
    unjudged: str | None = None
    preference: int | None = None  # the entry's (see IndexFlavour.preference)

    kind = "wheel"

    @property
    def python_versions(self) -> tuple[str, ...]:
        """Python versions named by the tags (``cp312`` -> ``3.12``, ABI cp313t -> ``3.13t``)."""
        return _python_versions(
            t.interpreter + ("t" if t.abi.startswith("cp") and t.abi.endswith("t") else "")
            for t in self.tags
        )

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(sorted({t.platform for t in self.tags}))

    @property
    def properties(self) -> tuple[str, ...]:
        return _properties(self.cuda, self.gpu)

    def describe(self) -> str:
        """``tilert 0.1.5.post2 cp312 manylinux_2_28_x86_64``; ``onnxruntime as
        onnxruntime-gpu 1.31.1 ...`` for a file of another distribution."""
        interp = ".".join(sorted({t.interpreter for t in self.tags}))
        label = f" variant {self.variant}" if self.variant else ""
        name = f"{self.name} as {self.install}" if self.install else self.name
        return f"{name} {self.version} {interp} {'.'.join(self.platforms)}{label}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "wheel",
            "url": self.url,
            "filename": self.filename,
            "version": str(self.version),
            "tags": sorted(str(t) for t in self.tags),
            "sha256": self.sha256,
            **_needs_dict(self),
            "cuda_floors": {str(t): str(spec) for t, spec in self.cuda_floors},
            "variant": self.variant,
            "other_properties": list(self.other_properties),
            "cxx11abi": self.cxx11abi,
            "requires_python": str(self.requires_python) if self.requires_python else None,
            "assumed_from": str(self.assumed_from) if self.assumed_from else None,
            "inventory": self.inventory,
            "inventory_date": self.inventory_date,
            "install": self.install,
            "unjudged": self.unjudged,
            "preference": self.preference,
        }

    @property
    def assumed(self) -> str | None:
        """``kernels assumed from 2.13.0, checked 2026-11-30`` for a carried-forward
        release; None for a verified one."""
        if self.assumed_from is None:
            return None
        checked = f", checked {self.checked.isoformat()}" if self.checked else ""
        return f"kernels assumed from {self.assumed_from}{checked}"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFlavour:
    """A version served from a per-package find-links page, or (no url) the plain index."""

    url: str | None
    name: NormalizedName
    version: Version
    platforms: tuple[str, ...] = ()  # () = every platform
    python: tuple[str, ...] = ()  # ("3.12", "3.13t", ...); () = every Python
    cuda: SpecifierSet | None = None
    rocm: SpecifierSet | None = None
    l4t: SpecifierSet | None = None  # a Jetson build (see WheelFlavour.l4t)
    gpu: tuple[KernelTarget, ...] = ()
    requires: tuple[Requirement, ...] = ()
    cuda_runtime: Version | None = None
    evidence: str | None = None
    checked: datetime.date | None = None
    where: str = ""
    # Set by parse_manifest when another entry has the same page and version (one
    # release, per-platform kernel lists): the platforms, to tell the two apart.
    qualifier: str = ""
    cxx11abi: bool | None = None  # see WheelFlavour.cxx11abi
    # The flavour installs another distribution and/or extras ("cupy-cuda12x",
    # "jax[cuda12]"): the requirement line is rewritten to it (a constraints file cannot
    # say that). None: the package itself.
    install: str | None = None
    # A version pattern ("any release >= 0.3.35 on this page") instead of one version;
    # ``version`` is then its floor, the release the evidence shows.
    versions: SpecifierSet | None = None
    # A page computed from the build chosen for another package: ``template`` holds
    # {placeholders} (see TEMPLATE_FACTS), ``coupled`` names that package, and
    # ``local_labels`` (when given) the local labels of its builds the page exists for.
    template: str | None = None
    coupled: NormalizedName | None = None
    local_labels: tuple[str, ...] = ()
    # ``kernels_until = "2.16"``: a rule says this entry's kernel list does not hold from
    # that release on (CUDA 13 dropped pre-Turing), so newer releases on the page are
    # not planned with it. None: newer releases carry the list forward, marked.
    kernels_until: Version | None = None
    # ``preference = 1``: the manifest's order among builds that fit, lower first (among
    # distributions, a distribution's best entry; within one version, the entry's own).
    # None: 0 for the package's own distribution, 1 for another (a community build).
    preference: int | None = None

    kind = "index"

    @property
    def passthrough(self) -> bool:
        """True for the plain build on the user's own index: nothing to rewrite."""
        return self.url is None and self.template is None and self.install is None

    @property
    def python_versions(self) -> tuple[str, ...]:
        return self.python

    @property
    def properties(self) -> tuple[str, ...]:
        return _properties(self.cuda, self.gpu)

    def describe(self) -> str:
        """``torch 2.13.0+cu130 (download.pytorch.org/whl/cu130/torch/)``; a range:
        ``torch <2.9,>=2.7 +cu128 (...)``."""
        version = str(self.versions) if self.versions is not None else str(self.version)
        if self.versions is not None and self.version.local:
            version = f"{version} +{self.version.local}"
        what = f"{self.name} {version}"
        if self.install is not None:
            what = f"{self.name} as {self.install} {version}"
        page = self.url or self.template
        if page is None:
            return f"{what} (default index)"
        where = page.split("://", 1)[-1]
        if self.qualifier:
            where = f"{where} for {self.qualifier}"
        return f"{what} ({where})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "index",
            "url": self.url,
            "version": str(self.version),
            "platforms": list(self.platforms),
            "python": list(self.python),
            **_needs_dict(self),
            "install": self.install,
            "versions": str(self.versions) if self.versions is not None else None,
            "template": self.template,
            "coupled": self.coupled,
            "local_labels": list(self.local_labels),
            "cxx11abi": self.cxx11abi,
            "kernels_until": str(self.kernels_until) if self.kernels_until else None,
            "preference": self.preference,
        }


Flavour = WheelFlavour | IndexFlavour


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """Every known flavour of one package, and where people get the real downloads."""

    name: NormalizedName
    display_name: str
    homepage: str | None = None
    downloads: str | None = None
    description: str | None = None
    wheels: tuple[WheelFlavour, ...] = ()
    indexes: tuple[IndexFlavour, ...] = ()
    buildable: bool = False  # a [build] table: an sdist build is a supported fallback
    build_needs: tuple[str, ...] = ()  # [build] needs, e.g. ("nvcc>=12.8", "z3")
    source: str = "built-in"
    replaced: tuple[str, ...] = field(default=())  # sources this one overrides
    # What reading its pages showed that a plan should say (a release not planned
    # because a rule says its kernel list changed); set by resolver_hook.inventory.
    notes: tuple[str, ...] = ()
    # ``[package] twins``: other distributions that install the same import package
    # (onnxruntime-gpu for onnxruntime): two of them in one environment overwrite each
    # other's files (resolver_hook.manifest.twins).
    twins: tuple[NormalizedName, ...] = ()

    @property
    def flavours(self) -> tuple[Flavour, ...]:
        return (*self.wheels, *self.indexes)

    def to_dict(self) -> dict[str, Any]:
        """Every field, from the dataclass fields (no hand-written list to drift)."""
        from resolver_hook._plain import plain

        data: dict[str, Any] = plain(self)
        return data


def _python_versions(interpreters: Any) -> tuple[str, ...]:
    out = set()
    for interp in interpreters:
        m = re.fullmatch(r"(?:cp|py|pp)(\d)(\d+)(t?)", interp)
        if m:
            out.add(f"{m.group(1)}.{m.group(2)}{m.group(3)}")
    return tuple(sorted(out, key=python_sort_key))


def python_sort_key(version: str) -> tuple[int, ...]:
    """``3.13t`` sorts after ``3.13``: ``(3, 13, 1)``."""
    major, _, minor = version.rstrip("t").partition(".")
    return (int(major), int(minor or 0), int(version.endswith("t")))


def _properties(cuda: SpecifierSet | None, gpu: tuple[KernelTarget, ...]) -> tuple[str, ...]:
    """The PEP 817 spelling of the NVIDIA needs (docs/facts.md section 2)."""
    props = []
    for spec in cuda or ():
        if spec.operator in (">=", "~=", "=="):
            props.append(f"nvidia :: cuda_version_lower_bound :: {spec.version}")
        elif spec.operator == "<":
            props.append(f"nvidia :: cuda_version_upper_bound :: {spec.version}")
    props += [f"nvidia :: sm_arch :: {t.pep817}" for t in gpu]
    return tuple(props)


def _needs_dict(f: WheelFlavour | IndexFlavour) -> dict[str, Any]:
    return {
        "cuda": str(f.cuda) if f.cuda is not None else None,
        "rocm": str(f.rocm) if f.rocm is not None else None,
        "l4t": str(f.l4t) if f.l4t is not None else None,
        "gpu": [str(t) for t in f.gpu],
        "requires": [str(r) for r in f.requires],
        "cuda_runtime": str(f.cuda_runtime) if f.cuda_runtime is not None else None,
        "evidence": f.evidence,
        "checked": f.checked.isoformat() if f.checked is not None else None,
    }


# --- validation -------------------------------------------------------------------


class _Checker:
    """Collects problems as ``source: path: what`` while reading one document."""

    def __init__(self, source: str, allow_insecure: bool) -> None:
        self.source = source
        self.allow_insecure = allow_insecure
        self.problems: list[str] = []
        self._shared: dict[object, object] = {}

    def shared(self, value: _V) -> _V:
        """One object for equal values (tag sets, specifiers, kernel lists) of a document.

        A manifest of 100,000 wheels has a handful of distinct tag sets: sharing them
        keeps memory, and the garbage collector's work, proportional to what differs.
        """
        return cast(_V, self._shared.setdefault(value, value))

    def bad(self, path: str, what: str) -> None:
        self.problems.append(f"{self.source}: {path}: {what}" if path else f"{self.source}: {what}")

    def keys(self, table: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
        for key in table:
            if key in allowed:
                continue
            import difflib  # an unknown key only: every plan loads this module

            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(allowed)})"
            self.bad(_join(path, str(key)), f"unknown key{hint}")

    def table(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.bad(path, f"expected a table, got {_kind(value)}")
        return None

    def tables(self, doc: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
        value = doc.get(key, [])
        if isinstance(value, Mapping):
            value = [value]  # [wheel] written once instead of [[wheel]]
        if not isinstance(value, list):
            self.bad(key, f"expected an array of tables ([[{key}]]), got {_kind(value)}")
            return []
        out = []
        for i, item in enumerate(value):
            t = self.table(item, f"{key}[{i}]")
            if t is not None:
                out.append(t)
        return out

    def string(
        self, table: Mapping[str, Any], key: str, path: str, *, required: bool = False
    ) -> str | None:
        if key not in table:
            if required:
                self.bad(_join(path, key), "missing")
            return None
        value = table[key]
        if not isinstance(value, str):
            self.bad(_join(path, key), f"expected a string, got {_kind(value)}")
            return None
        if required and not value.strip():
            self.bad(_join(path, key), "empty")
            return None
        return value

    def strings(self, table: Mapping[str, Any], key: str, path: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.bad(_join(path, key), f"expected a list of strings, got {_kind(value)}")
            return None
        ok = True
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.bad(f"{_join(path, key)}[{i}]", f"expected a string, got {_kind(item)}")
                ok = False
        return tuple(value) if ok else None

    def url_string(self, t: Mapping[str, Any], path: str, *, required: bool = False) -> str | None:
        """``t["url"]`` without its credentials: they are kept for the index client,
        which alone sends them (resolver_hook._credentials); nothing the manifest's
        flavours print, lock or cache holds them."""
        url = self.string(t, "url", path, required=required)
        return None if url is None else keep(url)

    def url(self, url: str, path: str) -> bool:
        problem = url_problem(url, allow_insecure=self.allow_insecure)
        if problem:
            self.bad(path, problem)
            return False
        return True


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


# What a flavour needs and where that fact comes from, field for field the same in both
# flavour classes and in the validator's _Needs (one list, not five copies).
NEEDS_FIELDS = ("cuda", "rocm", "l4t", "gpu", "requires", "cuda_runtime", "evidence", "checked")


def needs_of(source: Any) -> dict[str, Any]:
    """The :data:`NEEDS_FIELDS` of a flavour (or of the validator's needs), as keywords."""
    return {name: getattr(source, name) for name in NEEDS_FIELDS}


@dataclass(slots=True)
class _Needs:
    cuda: SpecifierSet | None = None
    rocm: SpecifierSet | None = None
    l4t: SpecifierSet | None = None
    gpu: tuple[KernelTarget, ...] = ()
    requires: tuple[Requirement, ...] = ()
    cuda_runtime: Version | None = None
    evidence: str | None = None
    checked: datetime.date | None = None
    other_properties: tuple[str, ...] = ()


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RUNTIME = re.compile(r"^\d+\.\d+$")


def _read_about(c: _Checker, t: Mapping[str, Any], path: str, needs: _Needs) -> None:
    """``cuda_runtime``, ``evidence`` and ``checked``: what a build was made with and
    where its facts come from."""
    runtime = c.string(t, "cuda_runtime", path)
    if runtime is not None:
        if not _RUNTIME.match(runtime):
            c.bad(_join(path, "cuda_runtime"), f"{runtime!r} is not a CUDA version like '13.2'")
        elif needs.cuda is None:
            c.bad(
                _join(path, "cuda_runtime"),
                "needs 'cuda' too (the driver's CUDA version the build runs on)",
            )
        else:
            needs.cuda_runtime = Version(runtime)
    evidence = c.string(t, "evidence", path)
    if evidence is not None:
        problem = url_problem(evidence)
        if problem:
            c.bad(_join(path, "evidence"), problem)
        else:
            needs.evidence = evidence
    if "checked" in t:
        value = t["checked"]
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            needs.checked = value
        elif isinstance(value, str) and _DATE.match(value):
            try:
                needs.checked = datetime.date.fromisoformat(value)
            except ValueError:
                c.bad(_join(path, "checked"), f"{value!r} is not a real date")
        else:
            c.bad(_join(path, "checked"), f"{value!r} is not a date like '2026-11-30'")


def _specifier(c: _Checker, text: str, path: str, if_empty: str) -> SpecifierSet | None:
    """A non-empty PEP 440 specifier (shared), or None with the problem said at ``path``."""
    too_big = check_version_text(text)
    if too_big is not None:
        c.bad(path, f"{text[:40]!r}... is not a version specifier ({too_big})")
        return None
    try:
        spec = SpecifierSet(text)
    except InvalidSpecifier:
        c.bad(path, f"{text!r} is not a version specifier such as '>=13.0'")
        return None
    if not str(spec):
        c.bad(path, f"empty specifier ({if_empty})")
        return None
    empty = no_version_between(spec)
    if empty is not None:
        c.bad(path, f"{text!r} matches no version: {empty}")
        return None
    return c.shared(spec)


def _read_needs(
    c: _Checker, t: Mapping[str, Any], path: str, name: str, *, variant: bool = False
) -> _Needs:
    needs = _Needs()
    for key in ("cuda", "rocm", "l4t"):
        text = c.string(t, key, path)
        if text is None:
            continue
        spec = _specifier(c, text, _join(path, key), "leave the key out when no driver is needed")
        if spec is not None:
            setattr(needs, key, spec)
    gpu: list[KernelTarget] = []
    for i, text in enumerate(c.strings(t, "gpu", path) or ()):
        try:
            gpu.append(parse_target(text))
        except ValueError as exc:
            c.bad(f"{_join(path, 'gpu')}[{i}]", str(exc))
    props = c.strings(t, "properties", path)
    if props is not None:
        _read_properties(
            c, props, path, needs, gpu, has_cuda="cuda" in t, has_gpu="gpu" in t, variant=variant
        )
    needs.gpu = c.shared(tuple(dict.fromkeys(gpu)))
    reqs = []
    for i, text in enumerate(c.strings(t, "requires", path) or ()):
        rpath = f"{_join(path, 'requires')}[{i}]"
        too_big = check_version_text(text)
        if too_big is not None:
            c.bad(rpath, f"{text[:40]!r}... is not a requirement ({too_big})")
            continue
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            c.bad(rpath, f"{text!r} is not a requirement: {exc}")
            continue
        if req.url:
            c.bad(rpath, f"{text!r}: a coupling is a version specifier, not a URL")
            continue
        if canonicalize_name(req.name) == name:
            c.bad(rpath, f"{text!r}: a package cannot be coupled with itself")
            continue
        reqs.append(req)
    needs.requires = tuple(reqs)
    _read_about(c, t, path, needs)
    return needs


def _read_properties(
    c: _Checker,
    props: Sequence[str],
    path: str,
    needs: _Needs,
    gpu: list[KernelTarget],
    *,
    has_cuda: bool,
    has_gpu: bool,
    variant: bool = False,
) -> None:
    """PEP 817 ``namespace :: feature :: value`` properties (docs/facts.md section 2).

    A variant wheel (PEP 825) may carry properties of other namespaces: they are kept
    in ``other_properties``; elsewhere only ``nvidia`` is understood.
    """
    lower: list[str] = []
    upper: list[str] = []
    others: list[str] = []
    for i, text in enumerate(props):
        ppath = f"{_join(path, 'properties')}[{i}]"
        m = _PROPERTY.match(text)
        if not m:
            c.bad(ppath, f"{text!r} is not 'namespace :: feature :: value'")
            continue
        ns, feature, value = m.groups()
        if ns != "nvidia" and variant:
            others.append(f"{ns} :: {feature} :: {value}")
        elif ns != "nvidia":
            c.bad(ppath, f"{text!r}: namespace {ns!r} is not understood (only 'nvidia')")
        elif feature == "sm_arch":
            if has_gpu:
                c.bad(ppath, "gives kernel targets twice: use 'gpu' or sm_arch properties")
                continue
            try:
                gpu.append(parse_target(value))
            except ValueError as exc:
                c.bad(ppath, str(exc))
        elif feature in ("cuda_version_lower_bound", "cuda_version_upper_bound"):
            if has_cuda:
                c.bad(ppath, "gives the CUDA range twice: use 'cuda' or cuda_version properties")
                continue
            try:
                if check_version_text(value) is not None:
                    raise InvalidVersion(value)
                Version(value)
            except InvalidVersion:
                c.bad(ppath, f"{value!r} is not a version")
                continue
            (lower if feature.endswith("lower_bound") else upper).append(value)
        elif variant:
            others.append(f"{ns} :: {feature} :: {value}")
        else:
            c.bad(
                ppath,
                f"{text!r}: feature {feature!r} is not understood "
                "(sm_arch, cuda_version_lower_bound, cuda_version_upper_bound)",
            )
    specs = [f">={v}" for v in lower] + [f"<{v}" for v in upper]
    if specs:
        needs.cuda = SpecifierSet(",".join(specs))
    needs.other_properties = tuple(dict.fromkeys(others))


def _split_hash_fragment(c: _Checker, url: str, path: str) -> tuple[str, str | None] | None:
    """``(url without its #sha256=, that sha256)``; None (problem noted) for a bad hash.

    pip takes a ``#sha256=`` fragment as the hash to check, so the URL must not carry
    one that differs from the manifest's ``sha256``: the fragment is taken out here and
    the one hash goes back on when a lock line is written.
    """
    parts = urllib.parse.urlsplit(url)
    if not parts.fragment:
        return url, None
    kept: list[str] = []
    found: str | None = None
    for item in parts.fragment.split("&"):
        key, sep, value = item.partition("=")
        if key.lower() == "sha256" and sep:
            if not is_sha256(value) or (found is not None and found != value.lower()):
                c.bad(path, f"#sha256={value!r} in the URL is not one 64-hex-digit hash")
                return None
            found = value.lower()
        else:
            kept.append(item)
    bare = urllib.parse.urlunsplit(parts._replace(fragment="&".join(kept)))
    return bare, found


def _read_cuda_floors(
    c: _Checker, t: Mapping[str, Any], path: str, needs: _Needs
) -> tuple[tuple[KernelTarget, SpecifierSet], ...]:
    """``cuda_floors``: a table of kernel target -> specifier, each target one of ``gpu``,
    and ``cuda`` beside it (the floor for resolvers that do not read this table)."""
    if "cuda_floors" not in t:
        return ()
    fpath = _join(path, "cuda_floors")
    table = c.table(t["cuda_floors"], fpath)
    if table is None:
        return ()
    if needs.cuda is None:
        c.bad(fpath, "needs 'cuda' too (the floor for resolvers that do not read cuda_floors)")
    floors: list[tuple[KernelTarget, SpecifierSet]] = []
    for key, value in table.items():
        kpath = _join(fpath, str(key))
        try:
            target = parse_target(str(key))
        except ValueError as exc:
            c.bad(kpath, str(exc))
            continue
        if target not in needs.gpu:
            c.bad(kpath, f"{target} is not in gpu (a floor is for a kernel the wheel carries)")
            continue
        if not isinstance(value, str):
            c.bad(kpath, f"expected a string, got {_kind(value)}")
            continue
        spec = _specifier(c, value, kpath, "leave the target out to use cuda")
        if spec is not None:
            floors.append((target, spec))
    return tuple(floors)


def _read_wheel(
    c: _Checker, t: Mapping[str, Any], path: str, name: str, allowed: Sequence[str] = _WHEEL_KEYS
) -> WheelFlavour | None:
    c.keys(t, allowed, path)
    url = c.url_string(t, path, required=True)
    sha = c.string(t, "sha256", path)
    if sha is not None and not is_sha256(sha):
        c.bad(_join(path, "sha256"), f"{sha!r} is not 64 hex digits")
        sha = None
    filename = url_filename(url) if url is not None else ""
    plain, label = split_variant_label(filename)
    needs = _read_needs(c, t, path, name, variant=label is not None)
    floors = _read_cuda_floors(c, t, path, needs)
    cxx11abi = _read_cxx11abi(c, t, path)
    if url is None or not c.url(url, _join(path, "url")):
        return None
    split = _split_hash_fragment(c, url, _join(path, "url"))
    if split is None:
        return None
    url, fragment_sha = split
    if fragment_sha is not None:
        if sha is not None and sha.lower() != fragment_sha:
            c.bad(
                _join(path, "url"),
                f"#sha256={fragment_sha} in the URL differs from sha256 = {sha!r}: "
                "give the hash once, in sha256",
            )
            return None
        if "sha256" in t and sha is None:
            return None  # the sha256 key itself is wrong (already said)
        sha = fragment_sha
    filename = url_filename(url)
    plain, label = split_variant_label(filename)
    too_big = check_version_text(filename)
    if too_big is not None:
        c.bad(_join(path, "url"), f"{filename[:80]!r} is not a wheel filename ({too_big})")
        return None
    try:
        wname, version, _build, tags = parse_wheel_filename(plain)
    except ValueError as exc:  # InvalidWheelFilename, InvalidVersion
        c.bad(_join(path, "url"), f"{filename!r} is not a wheel filename ({exc})")
        return None
    if wname != name:
        # pip 26.3 crashes on a URL whose wheel names another project (docs/facts.md section 3).
        c.bad(_join(path, "url"), f"wheel {filename!r} is for project {wname!r}, not {name!r}")
        return None
    return WheelFlavour(
        url=url,
        filename=filename,
        name=wname,
        version=version,
        tags=c.shared(frozenset(tags)),
        sha256=sha.lower() if sha else None,
        **needs_of(needs),
        cuda_floors=floors,
        where=path,
        variant=label,
        other_properties=needs.other_properties,
        cxx11abi=cxx11abi,
    )


def _read_index(c: _Checker, t: Mapping[str, Any], path: str, name: str) -> IndexFlavour | None:
    c.keys(t, _INDEX_KEYS, path)
    url = c.url_string(t, path)
    template = url if url is not None and _TEMPLATE_PART.search(url) else None
    version = None
    versions = None
    if "label" in t and "versions" not in t:
        c.bad(_join(path, "label"), "only beside 'versions' (one release: '2.7.1+cu128')")
    if "version" in t and "versions" in t:
        c.bad(_join(path, "versions"), "give 'version' (one release) or 'versions', not both")
    elif "versions" in t:
        versions, version = _read_versions(c, t, path)
        version = _with_label(c, t, path, version)
    else:
        version_text = c.string(t, "version", path, required=True)
        if version_text is not None:
            too_big = check_version_text(version_text)
            try:
                if too_big is not None:
                    raise InvalidVersion(too_big)
                version = Version(version_text)
            except InvalidVersion:
                shown = version_text if too_big is None else version_text[:40] + "..."
                c.bad(
                    _join(path, "version"),
                    f"{shown!r} is not a PEP 440 version" + (f" ({too_big})" if too_big else ""),
                )
    platforms = c.strings(t, "platforms", path) or ()
    for i, p in enumerate(platforms):
        if not re.fullmatch(r"[a-z0-9_.]+", p):
            c.bad(f"{_join(path, 'platforms')}[{i}]", f"{p!r} is not a wheel platform tag")
    python = c.strings(t, "python", path) or ()
    for i, p in enumerate(python):
        if not re.fullmatch(r"\d+\.\d+t?", p):  # "3.13t": free-threaded CPython
            c.bad(
                f"{_join(path, 'python')}[{i}]",
                f"{p!r} is not a Python version like 3.12 (3.13t: free-threaded)",
            )
    needs = _read_needs(c, t, path, name)
    install = _read_install(c, t, path, name)
    cxx11abi = _read_cxx11abi(c, t, path)
    coupled: NormalizedName | None = None
    if template is not None:
        problems, coupled = check_template(
            template, [r.name for r in needs.requires], allow_insecure=c.allow_insecure
        )
        for problem in problems:
            c.bad(_join(path, "url"), problem)
        url_ok = not problems
    else:
        url_ok = url is None or c.url(url, _join(path, "url"))
    labels = c.strings(t, "local_labels", path) or ()
    if labels and coupled is None:
        c.bad(
            _join(path, "local_labels"),
            "only for a url template over another package's build ({torch.local})",
        )
    for i, label in enumerate(labels):
        if not re.fullmatch(r"[a-z0-9]+(?:[._][a-z0-9]+)*", label):
            c.bad(f"{_join(path, 'local_labels')}[{i}]", f"{label!r} is not a local label")
    kernels_until = _read_kernels_until(c, t, path, version, versions)
    preference = _read_preference(c, t, path)
    if version is None or not url_ok:
        return None
    return IndexFlavour(
        url=None if template is not None else url,
        name=NormalizedName(name),
        version=version,
        platforms=tuple(platforms),
        python=tuple(python),
        **needs_of(needs),
        where=path,
        cxx11abi=cxx11abi,
        install=install,
        versions=versions,
        template=template,
        coupled=coupled,
        local_labels=tuple(labels),
        kernels_until=kernels_until,
        preference=preference,
    )


def _read_preference(c: _Checker, t: Mapping[str, Any], path: str) -> int | None:
    """``preference = 0``: an integer from 0 (first) to 9."""
    if "preference" not in t:
        return None
    value = t["preference"]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
        c.bad(_join(path, "preference"), f"expected an integer from 0 to 9, got {value!r}")
        return None
    return value


def _read_kernels_until(
    c: _Checker,
    t: Mapping[str, Any],
    path: str,
    version: Version | None,
    versions: SpecifierSet | None,
) -> Version | None:
    """``kernels_until = "2.16"``: a public release after the entry's own, on an entry
    for one release (a pattern states its range itself)."""
    text = c.string(t, "kernels_until", path)
    if text is None:
        return None
    kpath = _join(path, "kernels_until")
    if versions is not None:
        c.bad(kpath, "only for an entry of one release ('version'); a pattern bounds itself")
        return None
    try:
        until = Version(text) if check_version_text(text) is None else None
    except InvalidVersion:
        until = None
    if until is None or until.local is not None:
        c.bad(kpath, f"{text[:40]!r} is not a public version such as '2.16'")
        return None
    if version is not None and until.release <= version.release:
        c.bad(kpath, f"{text!r} is not after the entry's release {version.public}")
        return None
    return until


def _with_label(
    c: _Checker, t: Mapping[str, Any], path: str, floor: Version | None
) -> Version | None:
    """``label = "cu128"`` beside ``versions``: the range's builds are the releases of
    the page that carry that local label (``2.7.1+cu128``), so the floor carries it
    too and the page's files are matched by it. Without ``versions`` the label is part
    of ``version`` itself."""
    text = c.string(t, "label", path)
    if text is None or floor is None:
        return floor
    if not re.fullmatch(r"[a-z0-9]+(?:[._][a-z0-9]+)*", text):
        c.bad(_join(path, "label"), f"{text!r} is not a local label such as 'cu128'")
        return floor
    return Version(f"{floor.public}+{text}")


def _read_versions(
    c: _Checker, t: Mapping[str, Any], path: str
) -> tuple[SpecifierSet | None, Version | None]:
    """``versions = ">=0.3.35"``: every release the page serves from a floor on; the
    floor is the release the evidence shows, so a pattern needs one (>=, ~= or ==)."""
    text = c.string(t, "versions", path, required=True)
    if text is None:
        return None, None
    try:
        spec = SpecifierSet(text)
    except InvalidSpecifier:
        c.bad(_join(path, "versions"), f"{text!r} is not a version specifier such as '>=0.3.35'")
        return None, None
    floor = _spec_floor(spec)
    if floor is None:
        c.bad(
            _join(path, "versions"),
            f"{text!r} has no floor: start from the release the evidence shows ('>=0.3.35')",
        )
        return None, None
    return spec, floor


def no_version_between(spec: SpecifierSet) -> str | None:
    """Why no version can meet ``spec`` (``>=13.0,<12.0``), in words; None when one can.

    Bounds from ``>``, ``>=``, ``<``, ``<=``, ``==`` and ``~=`` without wildcards; ``!=``
    and wildcards are left out, so an answer of None may still be an empty range.
    """
    low: tuple[Version, bool, str] | None = None  # (version, inclusive, as written)
    high: tuple[Version, bool, str] | None = None
    for s in spec:
        if "*" in s.version or s.operator in ("!=", "==="):
            continue
        try:
            v = Version(s.version)
        except InvalidVersion:
            continue
        lows: list[tuple[Version, bool]] = []
        highs: list[tuple[Version, bool]] = []
        if s.operator in (">=", "==", "~="):
            lows.append((v, True))
        if s.operator == ">":
            lows.append((v, False))
        if s.operator in ("<=", "=="):
            highs.append((v, True))
        if s.operator == "<":
            highs.append((v, False))
        if s.operator == "~=" and len(v.release) > 1:
            highs.append((Version(".".join(map(str, [*v.release[:-2], v.release[-2] + 1]))), False))
        for bound, inclusive in lows:
            if low is None or bound > low[0] or (bound == low[0] and not inclusive):
                low = (bound, inclusive, str(s))
        for bound, inclusive in highs:
            if high is None or bound < high[0] or (bound == high[0] and not inclusive):
                high = (bound, inclusive, str(s))
    if low is None or high is None:
        return None
    if low[0] > high[0] or (low[0] == high[0] and not (low[1] and high[1])):
        return f"{low[2]} and {high[2]} leave nothing between them"
    return None


def _spec_floor(spec: SpecifierSet) -> Version | None:
    floors = []
    for s in spec:
        if s.operator in (">=", "~=", "==") and "*" not in s.version:
            try:
                floors.append(Version(s.version))
            except InvalidVersion:
                continue
    return max(floors) if floors else None


def _read_install(c: _Checker, t: Mapping[str, Any], path: str, name: str) -> str | None:
    """``install = "cupy-cuda12x"`` or ``"jax[cuda12]"``: a name and extras, nothing else."""
    text = c.string(t, "install", path)
    if text is None:
        return None
    ipath = _join(path, "install")
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        c.bad(ipath, f"{text!r} is not a distribution name with extras: {exc}")
        return None
    if req.url or req.marker is not None or str(req.specifier):
        c.bad(
            ipath,
            f"{text!r}: give a distribution name and extras only (the version comes from "
            "'version' or 'versions')",
        )
        return None
    if canonicalize_name(req.name) == name and not req.extras:
        c.bad(ipath, f"{text!r} is the package itself: leave 'install' out")
        return None
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}"


def _read_cxx11abi(c: _Checker, t: Mapping[str, Any], path: str) -> bool | None:
    if "cxx11abi" not in t:
        return None
    value = t["cxx11abi"]
    if not isinstance(value, bool):
        c.bad(_join(path, "cxx11abi"), f"expected true or false, got {_kind(value)}")
        return None
    return value


#: Facts of the build chosen for the coupled package a page template may use:
#: ``{torch.version}`` (its public version, ``2.12.0``), ``{torch.local}`` (its local
#: label, ``cu130``), ``{torch.minor}`` (``2.12``); and without a package name, of the
#: same coupled build: ``{cuda}`` (``cu130``, from its CUDA runtime), ``{cuda_major}``
#: (``13``), ``{cxx11abi}`` (``TRUE``/``FALSE``); of the target: ``{py}`` (``cp312``)
#: and ``{platform}`` (``linux_x86_64``, ``win_amd64``, ``macosx_11_0_arm64``).
PACKAGE_FACTS = ("version", "local", "minor")
TEMPLATE_FACTS = ("cuda", "cuda_major", "cxx11abi", "py", "platform")
_COUPLED_FACTS = ("cuda", "cuda_major", "cxx11abi")
_TEMPLATE_PART = re.compile(r"\{([^{}]*)\}")
_SAMPLE = {
    "version": "1.0.0",
    "local": "cu130",
    "minor": "1.0",
    "cuda": "cu130",
    "cuda_major": "13",
    "cxx11abi": "TRUE",
    "py": "cp312",
    "platform": "linux_x86_64",
}


def check_template(
    template: str, requires: Sequence[str], *, allow_insecure: bool = False
) -> tuple[list[str], NormalizedName | None]:
    """The problems of a page template, and the package whose build it reads.

    Placeholders name facts (:data:`TEMPLATE_FACTS`, ``{pkg.fact}`` with
    :data:`PACKAGE_FACTS`); the package must be one the entry couples with
    (``requires``), and one only. ``{cuda}``, ``{cuda_major}`` and ``{cxx11abi}`` read
    that package's build, or the only package in ``requires``. The template filled
    with sample values must be a URL the URL policy accepts (https).
    """
    problems: list[str] = []
    coupled = {canonicalize_name(r) for r in requires}
    named: set[NormalizedName] = set()
    needs_coupled = False
    samples: dict[str, str] = {}
    for part in _TEMPLATE_PART.findall(template):
        pkg, dot, fact = part.rpartition(".")
        if dot:
            if fact not in PACKAGE_FACTS or not re.fullmatch(r"[A-Za-z0-9._-]+", pkg):
                problems.append(
                    f"unknown placeholder {{{part}}} (a package's facts: "
                    f"{', '.join('{pkg.' + f + '}' for f in PACKAGE_FACTS)})"
                )
                continue
            key = canonicalize_name(pkg)
            if key not in coupled:
                problems.append(
                    f"placeholder {{{part}}} reads {pkg}'s build, but the entry does not "
                    f"couple with {pkg} (add it to 'requires')"
                )
                continue
            named.add(key)
        elif part not in TEMPLATE_FACTS:
            problems.append(
                f"unknown placeholder {{{part}}} (known: "
                f"{', '.join('{' + f + '}' for f in TEMPLATE_FACTS)}, "
                f"{', '.join('{pkg.' + f + '}' for f in PACKAGE_FACTS)})"
            )
            continue
        elif part in _COUPLED_FACTS:
            needs_coupled = True
        samples[part] = _SAMPLE[fact or part]
    if len(named) > 1:
        problems.append(f"reads the builds of {', '.join(sorted(named))}: one package only")
    head, sep, rest = template.partition("://")
    if "{" in head or "{" in (rest.split("/", 1)[0] if sep else head):
        # The host is checked once, here: the values never choose where a page lives.
        problems.append(f"{template!r}: placeholders belong in the path, not the scheme or host")
    package = next(iter(named), None)
    if package is None and needs_coupled:
        if len(coupled) == 1:
            package = next(iter(coupled))
        else:
            problems.append(
                "{cuda}, {cuda_major} and {cxx11abi} read the coupled package's build: "
                "couple with exactly one package ('requires')"
            )
    if not problems:
        problem = url_problem(fill_template(template, samples), allow_insecure=allow_insecure)
        if problem:
            problems.append(f"the template {template!r} does not make an https URL: {problem}")
    return problems, package


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """The template with each ``{placeholder}`` replaced by its value (left when absent)."""
    return _TEMPLATE_PART.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _substitute(text: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _expand_matrix(  # noqa: PLR0915 - one pass over the template
    c: _Checker,
    t: Mapping[str, Any],
    path: str,
    name: str,
) -> Iterator[WheelFlavour]:
    """Expand a ``[[matrix]]`` template into wheel flavours.

    ``url`` (and ``requires``) hold ``{placeholders}``; ``[matrix.axes]`` gives each
    placeholder a list of values. A value is a string, or a table with ``value``,
    optional flavour needs (``cuda``, ``rocm``, ``gpu``, ``properties``, ``requires``:
    they apply to the wheels of that value) and any other keys as extra template
    variables (e.g. a release tag that differs per platform). ``exclude`` lists
    partial combinations to leave out. Every combination becomes one wheel.
    """
    c.keys(t, _MATRIX_KEYS, path)
    url = c.url_string(t, path, required=True)
    axes_t = t.get("axes")
    if axes_t is None:
        c.bad(_join(path, "axes"), "missing (a table of placeholder = [values])")
        return
    axes = c.table(axes_t, _join(path, "axes"))
    if axes is None or url is None:
        return
    axis_values: list[list[tuple[str, dict[str, str], Mapping[str, Any]]]] = []
    names = list(axes)
    ok = True
    for axis in names:
        apath = f"{path}.axes.{axis}"
        values = axes[axis]
        if not isinstance(values, list) or not values:
            c.bad(apath, f"expected a non-empty array of values, got {_kind(values)}")
            ok = False
            continue
        items: list[tuple[str, dict[str, str], Mapping[str, Any]]] = []
        for i, v in enumerate(values):
            if isinstance(v, str):
                items.append((v, {axis: v}, {}))
            elif isinstance(v, Mapping):
                value = v.get("value")
                if not isinstance(value, str):
                    c.bad(f"{apath}[{i}].value", "missing (each table value needs 'value')")
                    ok = False
                    continue
                extra = {k: x for k, x in v.items() if k != "value" and k not in _AXIS_ATTRS}
                avars = {axis: value}
                for k, x in extra.items():
                    if not isinstance(x, str):
                        c.bad(
                            f"{apath}[{i}].{k}",
                            f"a template variable must be a string, got {_kind(x)}",
                        )
                        ok = False
                    else:
                        avars[k] = x
                items.append((value, avars, {k: x for k, x in v.items() if k in _AXIS_ATTRS}))
            else:
                c.bad(f"{apath}[{i}]", f"expected a string or a table, got {_kind(v)}")
                ok = False
        axis_values.append(items)
    excludes = []
    for i, ex in enumerate(t.get("exclude", []) if isinstance(t.get("exclude", []), list) else []):
        ext = c.table(ex, f"{path}.exclude[{i}]")
        if ext is not None:
            for k in ext:
                if k not in names:
                    c.bad(f"{path}.exclude[{i}].{k}", f"not an axis (axes: {', '.join(names)})")
            excludes.append(ext)
    if not isinstance(t.get("exclude", []), list):
        c.bad(f"{path}.exclude", "expected an array of tables")
    if not ok:
        return
    if not _matrix_within_bounds(c, t, path, url, axis_values, excludes=len(excludes)):
        return
    all_vars = set(names) | {k for items in axis_values for _, tv, _ in items for k in tv}
    for placeholder in _PLACEHOLDER.findall(url):
        if placeholder not in all_vars:
            c.bad(_join(path, "url"), f"placeholder {{{placeholder}}} has no axis or variable")
            return
    base = {k: v for k, v in t.items() if k in _AXIS_ATTRS}
    for combo in itertools.product(*axis_values):
        chosen = dict(zip(names, (v for v, _, _ in combo), strict=True))
        if any(all(chosen.get(k) == x for k, x in ex.items()) for ex in excludes):
            continue
        tvars: dict[str, str] = {}
        for _, tv, _ in combo:
            tvars.update(tv)
        entry: dict[str, Any] = {"url": _substitute(url, tvars)}
        if "sha256" in t:
            entry["sha256"] = t["sha256"]
        # evidence, checked and cuda_runtime: the matrix's, unless an axis value gives one.
        # Needs: axis values override the matrix-wide 'cuda'/'rocm', add to the lists.
        for key in _AXIS_ATTRS:
            parts = [base] + [attrs for _, _, attrs in combo]
            for p in parts:
                if key not in p:
                    continue
                v = p[key]
                if key in ("cuda", "rocm", "l4t"):
                    entry[key] = _substitute(v, tvars) if isinstance(v, str) else v
                elif isinstance(v, list):
                    entry.setdefault(key, [])
                    entry[key] = entry[key] + [
                        _substitute(x, tvars) if isinstance(x, str) else x for x in v
                    ]
                else:
                    entry[key] = v
        label = ", ".join(f"{k}={v}" for k, v in chosen.items())
        w = _read_wheel(c, entry, f"{path}({label})", name, allowed=_WHEEL_KEYS)
        if w is not None:
            yield w


def _matrix_within_bounds(
    c: _Checker,
    t: Mapping[str, Any],
    path: str,
    url: str,
    axis_values: Sequence[Sequence[tuple[str, dict[str, str], Mapping[str, Any]]]],
    *,
    excludes: int,
) -> bool:
    """Refuse, before expanding, a matrix whose expansion would be too much work.

    A 1 KB matrix can stand for millions of wheels (40 values on 4 axes), URLs of
    megabytes ({a}{a}{a}... with long values) or millions of needs to parse (a long
    ``requires`` list copied into every wheel): all are bounded by MAX_MATRIX_WHEELS.
    """
    count = math.prod(len(items) for items in axis_values)
    if count > MAX_MATRIX_WHEELS:
        sizes = " x ".join(str(len(items)) for items in axis_values)
        c.bad(
            _join(path, "axes"),
            f"expands into {sizes} = {count} wheels, more than the {MAX_MATRIX_WHEELS} allowed",
        )
        return False
    if excludes > MAX_MATRIX_EXCLUDES:
        c.bad(f"{path}.exclude", f"{excludes} entries, more than the {MAX_MATRIX_EXCLUDES} allowed")
        return False
    longest: dict[str, int] = {}
    for items in axis_values:
        for _, tvars, _ in items:
            for k, v in tvars.items():
                longest[k] = max(longest.get(k, 0), len(v))
    url_bound = len(url) + sum(longest.get(p, 0) for p in _PLACEHOLDER.findall(url))
    if url_bound > MAX_URL_LENGTH:
        c.bad(_join(path, "url"), f"expands into URLs longer than {MAX_URL_LENGTH} characters")
        return False

    def needs(attrs: Mapping[str, Any]) -> int:
        return sum(
            len(v) if isinstance(v, list) else 1 for k, v in attrs.items() if k in _AXIS_ATTRS
        )

    per_wheel = 1 + needs(t) + sum(max(needs(a) for _, _, a in items) for items in axis_values)
    if count * per_wheel > MAX_MATRIX_WHEELS * 10:
        c.bad(
            _join(path, "axes"),
            f"expands into {count} wheels of {per_wheel} entries each, more than the "
            f"{MAX_MATRIX_WHEELS * 10} allowed in all",
        )
        return False
    return True


def parse_manifest(  # noqa: PLR0915 - every section checked in one place
    data: Mapping[str, Any],
    *,
    source: str = "manifest",
    allow_insecure: bool = False,
) -> Manifest:
    """Validate a parsed manifest mapping; ManifestError lists every problem at once."""
    c = _Checker(source, allow_insecure)
    if not isinstance(data, Mapping):
        raise ManifestError([f"{source}: expected a table at the top, got {_kind(data)}"])
    c.keys(data, _TOP_KEYS, "")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA or isinstance(schema, bool):
        c.bad("schema", f"{schema!r} is not a schema this tool reads (it reads {SCHEMA})")
    pkg = c.table(data.get("package"), "package") if "package" in data else None
    if "package" not in data:
        c.bad("package", "missing ([package] with name = ...)")
    name = display = ""
    homepage = downloads = description = None
    twins: tuple[NormalizedName, ...] = ()
    if pkg is not None:
        c.keys(pkg, _PACKAGE_KEYS, "package")
        display = c.string(pkg, "name", "package", required=True) or ""
        if display and not is_project_name(display):
            c.bad("package.name", f"{display!r} is not a valid project name")
            display = ""
        name = canonicalize_name(display) if display else ""
        for key in ("homepage", "downloads"):
            value = c.string(pkg, key, "package")
            if value is not None and c.url(value, f"package.{key}"):
                if key == "homepage":
                    homepage = value
                else:
                    downloads = value
        description = c.string(pkg, "description", "package")
        twins = _read_twins(c, pkg, name)
    wheels: list[WheelFlavour] = []
    indexes: list[IndexFlavour] = []
    if name:
        for i, t in enumerate(c.tables(data, "wheel")):
            w = _read_wheel(c, t, f"wheel[{i}]", name)
            if w is not None:
                wheels.append(w)
        for i, t in enumerate(c.tables(data, "matrix")):
            wheels.extend(_expand_matrix(c, t, f"matrix[{i}]", name))
        for i, t in enumerate(c.tables(data, "index")):
            f = _read_index(c, t, f"index[{i}]", name)
            if f is not None:
                indexes.append(f)
        indexes = _qualify_siblings(c, indexes)
        if not c.problems and not wheels and not indexes and "build" not in data:
            # Only a [build] table: a package published as an sdist alone (action build).
            c.bad("", "no flavours: add [[wheel]], [[matrix]] or [[index]] tables, or [build]")
        seen: dict[str, str] = {}
        for w in wheels:
            if w.url in seen:
                c.bad(_join(w.where, "url"), f"the same wheel URL as {seen[w.url]}")
            seen[w.url] = w.where
    build_needs: tuple[str, ...] = ()
    buildable = "build" in data
    if buildable:
        bt = c.table(data["build"], "build")
        if bt is not None:
            c.keys(bt, _BUILD_KEYS, "build")
            build_needs = c.strings(bt, "needs", "build") or ()
            for i, need in enumerate(build_needs):
                _check_build_need(c, need, f"build.needs[{i}]")
    if c.problems:
        raise ManifestError(c.problems)
    return Manifest(
        name=NormalizedName(name),
        display_name=display,
        homepage=homepage,
        downloads=downloads,
        description=description,
        wheels=tuple(wheels),
        indexes=tuple(indexes),
        buildable=buildable,
        build_needs=build_needs,
        source=source,
        twins=twins,
    )


def _read_twins(c: _Checker, pkg: Mapping[str, Any], name: str) -> tuple[NormalizedName, ...]:
    """``twins = ["onnxruntime-gpu"]``: project names, not the package itself."""
    out: list[NormalizedName] = []
    for i, text in enumerate(c.strings(pkg, "twins", "package") or ()):
        path = f"package.twins[{i}]"
        if not is_project_name(text):
            c.bad(path, f"{text!r} is not a valid project name")
        elif canonicalize_name(text) == name:
            c.bad(path, f"{text!r} is the package itself: list the other distributions")
        else:
            out.append(canonicalize_name(text))
    return tuple(dict.fromkeys(out))


def _qualify_siblings(c: _Checker, indexes: list[IndexFlavour]) -> list[IndexFlavour]:
    """Entries with the same page and version must differ in platform or Python (one
    release whose kernel lists differ per platform); they are told apart by platform."""
    groups: dict[tuple[str | None, str | None, Version, tuple[str, ...]], list[IndexFlavour]] = {}

    def key(f: IndexFlavour) -> tuple[str | None, str | None, Version, tuple[str, ...]]:
        # Another distribution (install) is another source; so is a page computed from
        # another coupled build.
        coupling = tuple(sorted(map(str, f.requires))) if f.template else ()
        return (f.url or f.template, f.install, f.version, coupling)

    for f in indexes:
        groups.setdefault(key(f), []).append(f)
    out = []
    for i, f in enumerate(indexes):
        # By identity: ``in`` would compare every field of two entries (never equal:
        # each has its own ``where``).
        siblings = {id(g) for g in groups[key(f)] if g is not f}
        for g in indexes[i + 1 :]:
            if id(g) not in siblings:
                continue
            same_plat = not f.platforms or not g.platforms or set(f.platforms) & set(g.platforms)
            same_py = not f.python or not g.python or set(f.python) & set(g.python)
            if same_plat and same_py:
                c.bad(
                    g.where,
                    f"the same version {f.version} from the same page as {f.where}, for "
                    "the same platform and Python: which one holds is ambiguous",
                )
        qualify = bool(siblings and f.platforms)
        out.append(replace(f, qualifier=", ".join(f.platforms)) if qualify else f)
    return out


def _check_build_need(c: _Checker, need: str, path: str) -> None:
    """A build need is a name and an optional version specifier: ``nvcc>=12.8``, ``z3``."""
    try:
        req = Requirement(need)
    except InvalidRequirement as exc:
        c.bad(
            path,
            f"{need!r} is not a build need such as 'nvcc>=12.8' or 'z3': "
            f"{str(exc).splitlines()[0]}",
        )
        return
    if req.url or req.marker is not None or req.extras:
        c.bad(
            path,
            f"{need!r}: a build need is a name and a version specifier only "
            "(no URL, extras or marker)",
        )
