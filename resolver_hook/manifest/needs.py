"""What a flavour needs (``cuda``, ``rocm``, ``gfx``, ``l4t``, ``gpu``, ``properties``,
``requires``, ``cuda_floors``) and where that fact comes from (``cuda_runtime``,
``evidence``, ``checked``), read from one table of a manifest.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.patterns import GFX_NAME
from resolver_hook.limits import check_version_text
from resolver_hook.manifest.model import Needs, no_version_between, requirement
from resolver_hook.manifest.tables import TableReader, _join, kind_of
from resolver_hook.manifest.urls import url_problem
from resolver_hook.portable.cuda import KernelTarget, parse_target

__all__: list[str] = []

_NEEDS_KEYS = ("cuda", "gpu", "cpu", "arch_max", "rocm", "gfx", "l4t", "properties", "requires")
_ABOUT_KEYS = ("cuda_runtime", "evidence", "checked")
_FACT_KEYS = ("cxx11abi",)  # facts of a build other flavours' templates may use

# Patterns kept as text, compiled when first used (re's cache), as _DATE and _ARCH: a
# plan's manifests use them little or not at all.
_PROPERTY = r"^\s*([a-z0-9_]+)\s*::\s*([a-z0-9_]+)\s*::\s*([a-z0-9_.]+)\s*$"


_DATE = r"^\d{4}-\d{2}-\d{2}$"  # as _PROPERTY
_RUNTIME = r"^\d+\.\d+$"  # as _PROPERTY


def _read_about(
    c: TableReader, t: Mapping[str, Any], path: str, *, has_cuda: bool
) -> tuple[Version | None, str | None, datetime.date | None]:
    """``cuda_runtime``, ``evidence`` and ``checked``: what a build was made with and
    where its facts come from."""
    cuda_runtime = evidence = checked = None
    runtime = c.string(t, "cuda_runtime", path)
    if runtime is not None:
        if not re.match(_RUNTIME, runtime):
            c.bad(_join(path, "cuda_runtime"), f"{runtime!r} is not a CUDA version like '13.2'")
        elif not has_cuda:
            c.bad(
                _join(path, "cuda_runtime"),
                "needs 'cuda' too (the driver's CUDA version the build runs on)",
            )
        else:  # one object per text: a release has an entry per platform or Python
            known = c.valid.get(("cuda_runtime", runtime))
            if known is None:
                known = c.valid["cuda_runtime", runtime] = Version(runtime)
            cuda_runtime = cast(Version, known)
    url = c.string(t, "evidence", path)
    if url is not None and c.valid.get(("evidence", url)) is not None:
        evidence = url  # entries of one release share their page
    elif url is not None:
        problem = url_problem(url)
        if problem:
            c.bad(_join(path, "evidence"), problem)
        else:
            evidence = c.valid["evidence", url] = url
    if "checked" in t:
        value = t["checked"]
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            checked = value
        elif isinstance(value, str) and (known := c.valid.get(("checked", value))) is not None:
            checked = cast(datetime.date, known)  # one object per date: entries share few
        elif isinstance(value, str) and re.match(_DATE, value):
            try:
                checked = c.valid["checked", value] = datetime.date.fromisoformat(value)
            except ValueError:
                c.bad(_join(path, "checked"), f"{value!r} is not a real date")
        else:
            c.bad(_join(path, "checked"), f"{value!r} is not a date like '2026-11-30'")
    return cuda_runtime, evidence, checked


def _specifier(c: TableReader, text: str, path: str, if_empty: str) -> SpecifierSet | None:
    """A non-empty PEP 440 specifier (shared), or None with the problem said at ``path``."""
    known = c.valid.get(("specifier", text))
    if known is not None:
        return cast(SpecifierSet, known)
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
    spec = c.shared(spec)
    c.valid["specifier", text] = spec
    return spec


def _read_needs(
    c: TableReader, t: Mapping[str, Any], path: str, name: str, *, variant: bool = False
) -> tuple[Needs, tuple[str, ...]]:
    """The table's needs, and (``variant``) its properties of other namespaces."""
    specs: dict[str, SpecifierSet | None] = {}
    for key in ("cuda", "rocm", "l4t"):
        text = c.string(t, key, path) if key in t else None
        if text is not None:
            specs[key] = _specifier(
                c, text, _join(path, key), "leave the key out when no driver is needed"
            )
    kernels = _read_gpu(c, c.strings(t, "gpu", path) or (), path)
    # Keys most entries leave out are looked for here, not in a reader each.
    gfx_names = c.strings(t, "gfx", path) if "gfx" in t else None
    gfx = (
        ()
        if gfx_names is None
        else _read_gfx(c, gfx_names, _join(path, "gfx"), has_rocm="rocm" in t)
    )
    props = c.strings(t, "properties", path) if "properties" in t else None
    others: tuple[str, ...] = ()
    if props is not None:
        gpu = list(kernels)
        cuda, others = _read_properties(
            c, props, path, gpu, has_cuda="cuda" in t, has_gpu="gpu" in t, variant=variant
        )
        if cuda is not None:
            specs["cuda"] = cuda
        kernels = c.shared(tuple(dict.fromkeys(gpu)))
    cpu = c.boolean(t, "cpu", path) if "cpu" in t else None
    if cpu is not None and not kernels:
        c.bad(_join(path, "cpu"), "needs 'gpu' too (a build without kernels runs anywhere)")
    arch_max = _read_arch_max(c, t, path) if "arch_max" in t else None
    requires = _read_requires(c, t, path, name)
    cuda = specs.get("cuda")
    runtime, evidence, checked = _read_about(c, t, path, has_cuda=cuda is not None)
    needs = Needs(
        cuda=cuda,
        rocm=specs.get("rocm"),
        gfx=gfx,
        l4t=specs.get("l4t"),
        gpu=kernels,
        cpu=bool(cpu and kernels),
        arch_max=arch_max,
        requires=requires,
        cuda_runtime=runtime,
        evidence=evidence,
        checked=checked,
    )
    return needs, others


def _read_gpu(c: TableReader, names: tuple[str, ...], path: str) -> tuple[KernelTarget, ...]:
    """``gpu``: the kernel targets, each once, in the order written; one tuple per list
    (a manifest repeats its kernel lists on an entry per release, Python and page)."""
    known = c.valid.get(("gpu", names))
    if known is not None:
        return cast(tuple[KernelTarget, ...], known)
    gpu: list[KernelTarget] = []
    ok = True
    for i, text in enumerate(names):
        target = c.valid.get(("gpu", text))
        if target is None:
            try:
                target = c.valid["gpu", text] = parse_target(text)
            except ValueError as exc:
                c.bad(f"{_join(path, 'gpu')}[{i}]", str(exc))
                ok = False
                continue
        gpu.append(cast(KernelTarget, target))
    kernels = c.shared(tuple(dict.fromkeys(gpu)))
    if ok:
        c.valid["gpu", names] = kernels
    return kernels


def _read_requires(
    c: TableReader, t: Mapping[str, Any], path: str, name: str
) -> tuple[Requirement, ...]:
    """``requires``: couplings with other packages of the plan, version specifiers (one
    object per text, one tuple per list: a manifest repeats its couplings on many
    entries)."""
    texts = c.strings(t, "requires", path)
    if not texts:
        return ()
    kind = f"requirement of {name}"
    known = c.valid.get((kind, texts))
    if known is not None:
        return cast(tuple[Requirement, ...], known)
    before = len(c.found)
    reqs = []
    for i, text in enumerate(texts):
        known = c.valid.get((kind, text))
        if known is not None:
            reqs.append(cast(Requirement, known))
            continue
        rpath = f"{_join(path, 'requires')}[{i}]"
        too_big = check_version_text(text)
        if too_big is not None:
            c.bad(rpath, f"{text[:40]!r}... is not a requirement ({too_big})")
            continue
        try:
            req = requirement(text)
        except InvalidRequirement as exc:
            c.bad(rpath, f"{text!r} is not a requirement: {exc}")
            continue
        if req.url:
            c.bad(rpath, f"{text!r}: a coupling is a version specifier, not a URL")
            continue
        if canonicalize_name(req.name) == name:
            c.bad(rpath, f"{text!r}: a package cannot be coupled with itself")
            continue
        c.valid[kind, text] = req
        reqs.append(req)
    out = tuple(reqs)
    if len(c.found) == before:
        c.valid[kind, texts] = out
    return out


_ARCH = r"^(\d{1,3})\.(\d)$"  # as _PROPERTY


def _read_arch_max(c: TableReader, t: Mapping[str, Any], path: str) -> tuple[int, int] | None:
    """``arch_max = "9.0"``: the newest compute capability the build's compiler knows
    (triton compiles its kernels on the machine): a newer GPU is refused."""
    text = c.string(t, "arch_max", path)
    if text is None:
        return None
    m = re.match(_ARCH, text)
    if m is None:
        c.bad(_join(path, "arch_max"), f"{text!r} is not a compute capability like '9.0'")
        return None
    return int(m.group(1)), int(m.group(2))


def _read_gfx(
    c: TableReader, names: Sequence[str], path: str, *, has_rocm: bool
) -> tuple[str, ...]:
    """``gfx``: the AMD GPUs a ROCm build carries code for (its PYTORCH_ROCM_ARCH), each
    a name as ``detect`` gives it (``gfx942``); only beside ``rocm``."""
    if not has_rocm:
        c.bad(path, "needs 'rocm' too (the GPUs of a ROCm build)")
    if not names:
        c.bad(path, "empty list (leave the key out when the build runs on every AMD GPU)")
    out = []
    for i, name in enumerate(names):
        if re.fullmatch(GFX_NAME, name) is None:
            c.bad(f"{path}[{i}]", f"{name!r} is not an AMD GPU name like 'gfx942'")
        else:
            out.append(name)
    return c.shared(tuple(dict.fromkeys(out)))


def _read_properties(
    c: TableReader,
    props: Sequence[str],
    path: str,
    gpu: list[KernelTarget],
    *,
    has_cuda: bool,
    has_gpu: bool,
    variant: bool = False,
) -> tuple[SpecifierSet | None, tuple[str, ...]]:
    """PEP 817 ``namespace :: feature :: value`` properties (docs/facts.md section 2).

    A variant wheel (PEP 825) may carry properties of other namespaces: they are kept
    in ``other_properties``; elsewhere only ``nvidia`` is understood. Returns the CUDA
    range the properties give (None: none) and those other properties; kernel targets
    go to ``gpu``.
    """
    lower: list[str] = []
    upper: list[str] = []
    others: list[str] = []
    for i, text in enumerate(props):
        ppath = f"{_join(path, 'properties')}[{i}]"
        m = re.match(_PROPERTY, text)
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
    return SpecifierSet(",".join(specs)) if specs else None, tuple(dict.fromkeys(others))


def _read_cuda_floors(
    c: TableReader, t: Mapping[str, Any], path: str, needs: Needs
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
            c.bad(kpath, f"expected a string, got {kind_of(value)}")
            continue
        spec = _specifier(c, value, kpath, "leave the target out to use cuda")
        if spec is not None:
            floors.append((target, spec))
    return tuple(floors)
