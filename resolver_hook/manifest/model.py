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
``gfx`` (beside ``rocm``: the AMD GPUs the build carries code for, ``["gfx90a",
"gfx942"]``, its PYTORCH_ROCM_ARCH; absent = not known, every AMD GPU),
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
(:func:`resolver_hook.toolchain.preflight.preflight`). No ``[build]`` table: no fallback.

A ``[[matrix]]`` table is a template that expands into ``[[wheel]]`` entries
(:mod:`resolver_hook.manifest.matrix`); :mod:`resolver_hook.manifest.validate` reads a
parsed mapping into these types.
"""

from __future__ import annotations

import datetime
import functools
import re
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import NormalizedName
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.portable.cuda import KernelTarget

__all__ = [
    "SCHEMA",
    "Flavour",
    "IndexFlavour",
    "Manifest",
    "Needs",
    "WheelFlavour",
    "no_version_between",
    "python_sort_key",
    "requirement",
]

SCHEMA = 1


# --- the value objects ------------------------------------------------------------


@valueclass
class Needs:
    """What a flavour needs (see the module docstring) and where that fact comes from:
    one value, composed into both flavour kinds and written as their own keys."""

    cuda: SpecifierSet | None = None
    rocm: SpecifierSet | None = None
    # The AMD GPUs a ROCm build carries code for ("gfx942"); () = not known (any).
    gfx: tuple[str, ...] = ()
    # A Jetson build: a specifier on the L4T release (">=36,<37" is JetPack 6). Such a
    # flavour fits only Jetsons whose L4T release satisfies it (docs/facts.md 1.2).
    l4t: SpecifierSet | None = None
    gpu: tuple[KernelTarget, ...] = ()
    # Runs without a GPU too (bitsandbytes' CPU library): ``gpu`` is then held only on a
    # machine with an NVIDIA driver; without one the build is not refused for its kernels.
    cpu: bool = False
    # The newest compute capability its compiler knows, (9, 0): a build that compiles
    # its kernels on the machine (triton) runs on no newer GPU. None: not bounded.
    arch_max: tuple[int, int] | None = None
    requires: tuple[Requirement, ...] = ()  # couplings with other packages of the plan
    cuda_runtime: Version | None = None  # the CUDA runtime it was built with ("13.2")
    evidence: str | None = None  # https URL of the page that shows its facts
    checked: datetime.date | None = None  # when the entry was last compared with it


# The flavours' ``needs`` are written as their own keys, not as a "needs" object
# (resolver_hook.ground.plain).
_INLINE = {"json": "inline"}


@valueclass
class WheelFlavour:
    """One built wheel of a package, at a URL."""

    url: str
    filename: str
    name: NormalizedName
    version: Version
    tags: frozenset[Tag]
    sha256: str | None = None
    needs: Needs = field(default=Needs(), metadata=_INLINE)
    # Driver floor per kernel target, each target in ``gpu`` (see the module docstring);
    # () = ``cuda`` holds for every GPU.
    cuda_floors: tuple[tuple[KernelTarget, SpecifierSet], ...] = ()
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

    def describe(self) -> str:
        """``tilert 0.1.5.post2 cp312 manylinux_2_28_x86_64``; ``onnxruntime as
        onnxruntime-gpu 1.31.1 ...`` for a file of another distribution."""
        interp = ".".join(sorted({t.interpreter for t in self.tags}))
        label = f" variant {self.variant}" if self.variant else ""
        name = f"{self.name} as {self.install}" if self.install else self.name
        return f"{name} {self.version} {interp} {'.'.join(self.platforms)}{label}"

    @property
    def assumed(self) -> str | None:
        """``kernels assumed from 2.13.0, checked 2026-11-30`` for a carried-forward
        release; None for a verified one."""
        if self.assumed_from is None:
            return None
        when = self.needs.checked
        checked = f", checked {when.isoformat()}" if when else ""
        return f"kernels assumed from {self.assumed_from}{checked}"


@valueclass
class IndexFlavour:
    """A version served from a per-package find-links page, or (no url) the plain index."""

    url: str | None
    name: NormalizedName
    version: Version
    platforms: tuple[str, ...] = ()  # () = every platform
    python: tuple[str, ...] = ()  # ("3.12", "3.13t", ...); () = every Python
    needs: Needs = field(default=Needs(), metadata=_INLINE)
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
    # ``unjudged = "..."``: builds a source shows exist, with a fact of them no source
    # gave (their kernel list): a build the entry matches is planned UNJUDGED, never
    # judged to run nor refused. None: the entry's rules are the builds' facts.
    unjudged: str | None = None

    kind = "index"

    @property
    def passthrough(self) -> bool:
        """True for the plain build on the user's own index: nothing to rewrite."""
        return self.url is None and self.template is None and self.install is None

    @property
    def python_versions(self) -> tuple[str, ...]:
        return self.python

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


Flavour = WheelFlavour | IndexFlavour


@valueclass
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
    # Judges only a requirement pinned to one release (``==X``): a manifest made from a
    # table of the releases read (resolver_hook.manifest.nvidialibs) cannot rank the
    # releases it does not list, so any other line of the name is said UNJUDGED.
    pins_only: bool = False
    # Pages of its index flavours whose server has no such page (HTTP 404 or 410),
    # credentials shown as ****: a manifest that knows no versions says why.
    not_found: tuple[str, ...] = field(default=(), metadata={"json": False})

    @property
    def flavours(self) -> tuple[Flavour, ...]:
        return (*self.wheels, *self.indexes)

    def to_dict(self) -> dict[str, Any]:
        """Every field, from the class's fields (no hand-written list to drift)."""
        from resolver_hook.ground.plain import plain

        data: dict[str, Any] = plain(self)
        return data


@functools.lru_cache(maxsize=1024)
def requirement(text: str) -> Requirement:
    """``Requirement(text)``, parsed once in a process (a bad text raises each time;
    callers only read it): the manifests of torchvision, torchaudio and xformers couple
    with the same torch releases (``torch==2.14.0``), the metadata files of a package's
    builds and the snapshot's release rows repeat a few dozen lines, and packaging's
    parser takes ~25 us a line."""
    return Requirement(text)


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
