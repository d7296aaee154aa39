"""Wheel variants (PEP 825 draft) in and out of flavour manifests.

Implemented revision: PEP 825 as changed on 10-Aug-2026 (python/peps commit
8605833b97fc60f3f11c8d8fb7160a34eb095247): variant metadata format 0.1.1, schema URL
:data:`SCHEMA_URL`; ``variants`` maps label -> namespace -> feature -> values (a feature's
values are ORed, features are ANDed); ``default-priorities.namespace`` is required and
not empty; the index publishes ``{name}-{version}-variants.json`` beside the wheels;
``*.dist-info/variant.json`` holds one label. See docs/facts.md section 2.

In: :func:`import_variant_links` reads the variant wheels of an index page and their
``-variants.json`` files into manifest entries. NVIDIA's properties become the manifest's
own needs (``cuda_version_lower_bound`` -> ``cuda = ">=X"``, ``cuda_version_upper_bound``
-> ``"<Y"``, ``sm_arch`` ``XY_real`` / ``XY_virtual`` -> ``gpu`` ``sm_XY`` / ``compute_XY``),
so the resolver checks them against every GPU of the machine (NVIDIA's provider looks
only at the highest compute capability). Properties of other namespaces are kept as
``properties`` and reported; the resolver never chooses a wheel that needs them.

Out: :func:`export_variants` writes the index-level file per version and the
``variant.json`` per label for the wheels of a manifest; wheels are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.cache import load_json
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import parse_wheel_name
from resolver_hook.manifest.variantname import NULL_LABEL, VARIANT_LABEL, split_variant_label
from resolver_hook.manifest.write import WheelEntry
from resolver_hook.portable.cuda import parse_target

if TYPE_CHECKING:
    from resolver_hook.index.model import Link
    from resolver_hook.manifest.model import Manifest, WheelFlavour

__all__ = [
    "PEP825_COMMIT",
    "SCHEMA_URL",
    "VariantExport",
    "VariantImport",
    "export_variants",
    "import_variant_links",
    "nvidia_needs",
    "parse_variants_json",
    "scan_properties",
    "variant_properties",
    "variants_json_filename",
]

SCHEMA_URL = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
PEP825_COMMIT = "8605833b97fc60f3f11c8d8fb7160a34eb095247"
MAX_JSON_BYTES = 8 << 20
_NAME = re.compile(r"^[a-z0-9_]+$")
_VALUE = re.compile(r"^[a-z0-9_.]+$")
_SCHEMA_VERSION = re.compile(r"/v(\d+)\.(\d+)\.(\d+)\.json$")

Properties = dict[str, dict[str, tuple[str, ...]]]  # namespace -> feature -> values


def variants_json_filename(name: str, version: str | Version) -> str:
    """``{name}-{version}-variants.json``, both normalized as in wheel filenames."""
    dist = re.sub(r"[-_.]+", "_", str(canonicalize_name(str(name))))
    return f"{dist}-{Version(str(version))}-variants.json"


def parse_variants_json(data: Any, source: str) -> dict[str, Properties]:
    """The variants (label -> properties) of a ``variant.json`` or
    ``{name}-{version}-variants.json``, its structure validated (format 0.1.1); every
    problem in one :class:`UsageError`."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise UsageError(f"{source}: expected a JSON object at the top")
    schema = data.get("$schema")
    m = _SCHEMA_VERSION.search(schema) if isinstance(schema, str) else None
    if m is None:
        problems.append(f"$schema: {schema!r} names no format version")
    elif m.group(1) != "0":
        # PEP 825: tools MUST reject a major version they do not support.
        problems.append(f"$schema: format {m.group(1)}.{m.group(2)}.{m.group(3)} is not supported")
    prio = data.get("default-priorities")
    namespaces: tuple[str, ...] = ()
    if not isinstance(prio, Mapping) or not isinstance(prio.get("namespace"), list):
        problems.append("default-priorities.namespace: missing (a list of namespaces)")
    else:
        namespaces = tuple(str(x) for x in prio["namespace"])
        if not namespaces or any(not _NAME.match(x) for x in namespaces):
            problems.append("default-priorities.namespace: must be non-empty [a-z0-9_] names")
    variants: dict[str, Properties] = {}
    raw = data.get("variants")
    if not isinstance(raw, Mapping):
        problems.append("variants: missing (an object of label -> properties)")
        raw = {}
    for label, nss in raw.items():
        where = f"variants.{label}"
        if not isinstance(label, str) or not VARIANT_LABEL.fullmatch(label):
            problems.append(f"{where}: not a variant label ([0-9a-z_.]+)")
            continue
        if not isinstance(nss, Mapping):
            problems.append(f"{where}: expected an object")
            continue
        props: Properties = {}
        for ns, features in nss.items():
            if not isinstance(ns, str) or not _NAME.match(ns) or not isinstance(features, Mapping):
                problems.append(f"{where}.{ns}: expected a namespace object")
                continue
            if ns not in namespaces:
                problems.append(f"{where}.{ns}: not in default-priorities.namespace")
            for feature, values in features.items():
                ok = (
                    isinstance(feature, str)
                    and _NAME.match(feature)
                    and isinstance(values, list)
                    and values
                    and all(isinstance(v, str) and _VALUE.match(v) for v in values)
                )
                if not ok:
                    problems.append(f"{where}.{ns}.{feature}: expected a list of values")
                    continue
                props.setdefault(ns, {})[feature] = tuple(sorted(set(values)))
        if label == NULL_LABEL and props:
            problems.append(f"{where}: the null variant has no properties")
        variants[label] = props
    if problems:
        raise UsageError(f"{source}: " + "; ".join(problems))
    return variants


def nvidia_needs(props: Properties) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    """``(cuda specifier, gpu targets, other properties)`` from a variant's properties.

    Several values of one feature are ORed (PEP 825): the lowest lower bound and the
    highest upper bound hold; every ``sm_arch`` value is one kernel target.
    """

    nv = props.get("nvidia", {})
    specs = []
    lower = [Version(v) for v in nv.get("cuda_version_lower_bound", ()) if _is_version(v)]
    upper = [Version(v) for v in nv.get("cuda_version_upper_bound", ()) if _is_version(v)]
    if lower:
        specs.append(f">={min(lower)}")
    if upper:
        specs.append(f"<{max(upper)}")
    gpu = []
    others = []
    for v in nv.get("sm_arch", ()):
        try:
            gpu.append(str(parse_target(v)))
        except ValueError:
            others.append(f"nvidia :: sm_arch :: {v}")
    known = {"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"}
    for ns, features in props.items():
        for f, values in features.items():
            if ns != "nvidia" or f not in known:
                others += [f"{ns} :: {f} :: {v}" for v in values]
    return (",".join(specs) or None), tuple(sorted(set(gpu))), tuple(sorted(others))


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@valueclass
class VariantImport:
    name: NormalizedName | None
    wheels: tuple[WheelEntry, ...]
    notes: tuple[str, ...]


def import_variant_links(
    links: Sequence[Link],
    fetch: Callable[[str], bytes],
    *,
    package: str | None = None,
) -> VariantImport:
    """Manifest entries for the variant wheels among ``links``.

    ``fetch`` reads a ``-variants.json`` URL (bounded; the caller applies the URL policy).
    A version whose file is missing, or a label it does not list, is skipped with a note
    (PEP 825: such wheels are incompatible).
    """
    wanted = canonicalize_name(package) if package else None
    notes: list[str] = []
    by_version: dict[tuple[NormalizedName, Version], list[tuple[Link, str]]] = {}
    for link in links:
        plain, label = split_variant_label(link.filename)
        if label is None or link.is_yanked:
            continue
        try:
            name, version, _build, _tags = parse_wheel_name(plain)
        except (InvalidWheelFilename, InvalidVersion):
            notes.append(f"skipped {link.filename}: not a valid variant wheel filename")
            continue
        if wanted is not None and name != wanted:
            continue
        by_version.setdefault((name, version), []).append((link, label))
    json_links = {link.filename.lower(): link for link in links}
    wheels: list[WheelEntry] = []
    names = {n for n, _ in by_version}
    for (name, version), items in by_version.items():
        filename = variants_json_filename(name, version)
        jl = json_links.get(filename.lower())
        if jl is None:
            notes.append(
                f"{name} {version}: no {filename} on the page; its "
                f"{len(items)} variant wheel(s) are skipped"
            )
            continue
        raw = fetch(jl.url)
        try:
            data = load_json(raw, limit=MAX_JSON_BYTES)
        except ValueError as exc:  # too large: the server's fault; not JSON: the page's
            kind = OperationalError if len(raw) > MAX_JSON_BYTES else UsageError
            raise kind(f"{jl.url}: {exc}") from None
        variants = parse_variants_json(data, jl.url)
        for link, label in items:
            props = variants.get(label)
            if props is None:
                notes.append(f"skipped {link.filename}: label {label!r} is not in {filename}")
                continue
            cuda, gpu, others = nvidia_needs(props)
            if others:
                notes.append(
                    f"{link.filename}: kept {', '.join(others)} (not checked: resolver-hook "
                    "never chooses this wheel)"
                )
            if link.sha256 is None:
                notes.append(f"{link.filename}: no #sha256= on the page; entry has no hash")
            wheels.append(
                WheelEntry(url=link.url, sha256=link.sha256, cuda=cuda, gpu=gpu, properties=others)
            )
    if len(names) > 1:
        raise UsageError(
            f"the page lists variant wheels of several projects: {', '.join(sorted(names))}",
            hint="pick one with --package NAME",
        )
    return VariantImport(
        name=next(iter(names)) if names else None, wheels=tuple(wheels), notes=tuple(notes)
    )


# --- out -------------------------------------------------------------------------------


def _cuda_properties(w: WheelFlavour) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for spec in w.needs.cuda or SpecifierSet():
        if spec.operator == ">=":
            out.setdefault("cuda_version_lower_bound", []).append(spec.version)
        elif spec.operator == "<":
            out.setdefault("cuda_version_upper_bound", []).append(spec.version)
        else:
            raise UsageError(
                f"{w.where or w.filename}: cuda {w.needs.cuda} cannot be written as variant "
                "properties (only >= and < bounds)"
            )
    return out


def variant_properties(w: WheelFlavour) -> Properties:
    """The PEP 825 properties of a manifest wheel (NVIDIA needs plus kept properties)."""
    nv: dict[str, list[str]] = _cuda_properties(w)
    if w.needs.gpu:
        nv["sm_arch"] = [t.pep817 for t in w.needs.gpu]
    props: Properties = {}
    if nv:
        props["nvidia"] = {f: tuple(sorted(set(v))) for f, v in nv.items()}
    for text in w.other_properties:
        ns, f, v = (x.strip() for x in text.split("::"))
        current = props.setdefault(ns, {}).get(f, ())
        props[ns][f] = tuple(sorted({*current, v}))
    return props


def _derived_label(w: WheelFlavour, props: Properties) -> str:
    if not props:
        return NULL_LABEL
    parts = []
    nv = props.get("nvidia", {})
    for v in nv.get("cuda_version_lower_bound", ()):
        parts.append("cu" + v.replace(".", ""))
    for v in nv.get("sm_arch", ()):
        arch, _, kind = v.partition("_")
        parts.append(("sm" if kind == "real" else "ptx") + arch)
    for ns, fs in props.items():
        if ns != "nvidia":
            parts += [f"{ns}_{v}" for vs in fs.values() for v in vs]
    return re.sub(r"[^0-9a-z_.]+", "_", "_".join(parts).lower()) or (w.version.local or "v")


@valueclass
class VariantExport:
    """What ``manifest export --variants`` writes: files by name, and the labels used."""

    index_files: dict[str, dict[str, Any]]  # {name}-{version}-variants.json -> document
    wheel_files: dict[str, dict[str, Any]]  # {name}-{version}-{label}.variant.json -> document
    filenames: dict[str, str]  # manifest wheel filename -> its variant filename
    notes: tuple[str, ...]


def _document(namespaces: Sequence[str], variants: Mapping[str, Properties]) -> dict[str, Any]:
    return {
        "$schema": SCHEMA_URL,
        "default-priorities": {"namespace": list(namespaces)},
        "variants": {
            label: {
                ns: {f: list(vs) for f, vs in sorted(fs.items())} for ns, fs in sorted(p.items())
            }
            for label, p in sorted(variants.items())
        },
    }


def export_variants(manifest: Manifest) -> VariantExport:
    """The index-level file per version and the ``variant.json`` per label."""
    notes: list[str] = []
    per_version: dict[Version, dict[str, Properties]] = {}
    filenames: dict[str, str] = {}
    for w in manifest.wheels:
        props = variant_properties(w)
        for t in w.needs.gpu:
            if t.suffix:
                notes.append(
                    f"{w.filename}: {t} written as {t.pep817}: NVIDIA's provider has no a/f "
                    "spellings, so installers using it will not match this value"
                )
        label = w.variant or _derived_label(w, props)
        labels = per_version.setdefault(w.version, {})
        if label in labels and labels[label] != props:
            raise UsageError(
                f"{w.where or w.filename}: label {label!r} already names other properties "
                f"for {manifest.name} {w.version} (PEP 825: one label, one property set)"
            )
        labels[label] = props
        renamed = w.filename[: -len(".whl")] + f"-{label}.whl"
        filenames[w.filename] = w.filename if w.variant else renamed
    if not manifest.wheels:
        raise UsageError(f"{manifest.source}: no [[wheel]] entries to describe as variants")
    index_files: dict[str, dict[str, Any]] = {}
    wheel_files: dict[str, dict[str, Any]] = {}
    for version, labels in per_version.items():
        used = sorted({ns for p in labels.values() for ns in p}, key=lambda n: (n != "nvidia", n))
        # PEP 825: the list MUST NOT be empty; a release of null variants only names nvidia.
        namespaces = used or ["nvidia"]
        index_files[variants_json_filename(manifest.name, version)] = _document(namespaces, labels)
        dist = variants_json_filename(manifest.name, version)[: -len("-variants.json")]
        for label, props in labels.items():
            wheel_files[f"{dist}-{label}.variant.json"] = _document(namespaces, {label: props})
    return VariantExport(
        index_files=index_files,
        wheel_files=wheel_files,
        filenames=filenames,
        notes=tuple(dict.fromkeys(notes)),
    )


def scan_properties(cuda: str | None, gpu: Sequence[str]) -> list[str]:
    """A scanned wheel's needs as PEP 825 properties (what ``scan`` prints)."""

    out = []
    for spec in SpecifierSet(cuda or ""):
        if spec.operator in (">=", "~=", "=="):
            out.append(f"nvidia :: cuda_version_lower_bound :: {spec.version.replace('.*', '')}")
        elif spec.operator == "<":
            out.append(f"nvidia :: cuda_version_upper_bound :: {spec.version}")
    out += [f"nvidia :: sm_arch :: {parse_target(t).pep817}" for t in gpu]
    return out
