"""The validation of a parsed manifest mapping into :class:`~.model.Manifest`.

Validation is pure and collects every problem of a document before raising one
:class:`~.tables.ManifestError`.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Any, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.patterns import is_project_name, is_sha256
from resolver_hook.ground.valueclass import replace
from resolver_hook.limits import check_version_text
from resolver_hook.manifest.model import SCHEMA, IndexFlavour, Manifest, WheelFlavour
from resolver_hook.manifest.needs import (
    _ABOUT_KEYS,
    _FACT_KEYS,
    _NEEDS_KEYS,
    _read_cuda_floors,
    _read_needs,
)
from resolver_hook.manifest.tables import ManifestError, TableReader, _join, kind_of
from resolver_hook.manifest.templates import _TEMPLATE_PART, check_template
from resolver_hook.manifest.urls import url_filename
from resolver_hook.manifest.variantname import split_variant_label

__all__ = ["parse_manifest"]

_TOP_KEYS = ("schema", "package", "wheel", "index", "matrix", "build")
_PACKAGE_KEYS = ("name", "homepage", "downloads", "description", "twins", "pins_only")
_WHEEL_KEYS = ("url", "sha256", *_NEEDS_KEYS, "cuda_floors", *_ABOUT_KEYS, *_FACT_KEYS)
_FLAVOUR_FORM_KEYS = (
    "install",
    "versions",
    "label",
    "local_labels",
    "kernels_until",
    "preference",
    "unjudged",
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
# The keys of an entry, to see in one step that it has no unknown one (most have none).
_WHEEL_KEY_SET = frozenset(_WHEEL_KEYS)
_INDEX_KEY_SET = frozenset(_INDEX_KEYS)
_BUILD_KEYS = ("needs",)
_LISTS = {
    "platforms": (re.compile(r"[a-z0-9_.]+"), "{!r} is not a wheel platform tag"),
    # "3.13t": free-threaded CPython
    "python": (
        re.compile(r"\d+\.\d+t?"),
        "{!r} is not a Python version like 3.12 (3.13t: free-threaded)",
    ),
}
_LOCAL_LABEL = re.compile(r"[a-z0-9]+(?:[._][a-z0-9]+)*")


def _split_hash_fragment(c: TableReader, url: str, path: str) -> tuple[str, str | None] | None:
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


def _read_wheel(c: TableReader, t: Mapping[str, Any], path: str, name: str) -> WheelFlavour | None:
    if not _WHEEL_KEY_SET.issuperset(t):
        c.keys(t, _WHEEL_KEYS, path)
    url = c.url_string(t, path, required=True)
    sha = c.string(t, "sha256", path)
    if sha is not None and not is_sha256(sha):
        c.bad(_join(path, "sha256"), f"{sha!r} is not 64 hex digits")
        sha = None
    filename = url_filename(url) if url is not None else ""
    plain, label = split_variant_label(filename)
    needs, others = _read_needs(c, t, path, name, variant=label is not None)
    floors = _read_cuda_floors(c, t, path, needs)
    cxx11abi = c.boolean(t, "cxx11abi", path)
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
        needs=needs,
        cuda_floors=floors,
        where=path,
        variant=label,
        other_properties=others,
        cxx11abi=cxx11abi,
    )


def _read_index(c: TableReader, t: Mapping[str, Any], path: str, name: str) -> IndexFlavour | None:
    if not _INDEX_KEY_SET.issuperset(t):
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
        version = _read_version(c, t, path)
    platforms = _read_list(c, t, "platforms", path)
    python = _read_list(c, t, "python", path)
    needs, _ = _read_needs(c, t, path, name)
    # Keys most entries leave out are looked for here, not in a reader each.
    install = _read_install(c, t, path, name) if "install" in t else None
    cxx11abi = c.boolean(t, "cxx11abi", path) if "cxx11abi" in t else None
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
    labels = (c.strings(t, "local_labels", path) or ()) if "local_labels" in t else ()
    if labels and coupled is None:
        c.bad(
            _join(path, "local_labels"),
            "only for a url template over another package's build ({torch.local})",
        )
    for i, label in enumerate(labels):
        if not _LOCAL_LABEL.fullmatch(label):
            c.bad(f"{_join(path, 'local_labels')}[{i}]", f"{label!r} is not a local label")
    kernels_until = (
        _read_kernels_until(c, t, path, version, versions) if "kernels_until" in t else None
    )
    preference = _read_preference(c, t, path) if "preference" in t else None
    unjudged = c.string(t, "unjudged", path) if "unjudged" in t else None
    if unjudged is not None and (not unjudged.strip() or needs.gpu):
        c.bad(
            _join(path, "unjudged"),
            "names the fact no source gave (a non-empty text), on an entry without 'gpu'",
        )
    if version is None or not url_ok:
        return None
    return IndexFlavour(
        url=None if template is not None else url,
        name=NormalizedName(name),
        version=version,
        platforms=tuple(platforms),
        python=tuple(python),
        needs=needs,
        where=path,
        cxx11abi=cxx11abi,
        install=install,
        versions=versions,
        template=template,
        coupled=coupled,
        local_labels=tuple(labels),
        kernels_until=kernels_until,
        preference=preference,
        unjudged=unjudged or None,
    )


def _read_list(c: TableReader, t: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    """``platforms`` or ``python``: strings that each match the key's pattern; a list
    the document repeats (an entry per release) is checked once, and is one tuple."""
    items = c.strings(t, key, path) or ()
    known = c.valid.get((key, items))
    if known is not None:
        return cast(tuple[str, ...], known)
    pattern, what = _LISTS[key]
    bad = [(i, item) for i, item in enumerate(items) if not pattern.fullmatch(item)]
    for i, item in bad:
        c.bad(f"{_join(path, key)}[{i}]", what.format(item))
    if not bad:
        c.valid[key, items] = items
    return items


def _read_version(c: TableReader, t: Mapping[str, Any], path: str) -> Version | None:
    """``version``: one release (one object per text: a release has an entry per
    platform or Python)."""
    text = c.string(t, "version", path, required=True)
    if text is None:
        return None
    known = c.valid.get(("version", text))
    if known is not None:
        return cast(Version, known)
    too_big = check_version_text(text)
    try:
        if too_big is not None:
            raise InvalidVersion(too_big)
        version = Version(text)
    except InvalidVersion:
        shown = text if too_big is None else text[:40] + "..."
        c.bad(
            _join(path, "version"),
            f"{shown!r} is not a PEP 440 version" + (f" ({too_big})" if too_big else ""),
        )
        return None
    c.valid["version", text] = version
    return version


def _read_preference(c: TableReader, t: Mapping[str, Any], path: str) -> int | None:
    """``preference = 0``: an integer from 0 (first) to 9."""
    if "preference" not in t:
        return None
    value = t["preference"]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
        c.bad(_join(path, "preference"), f"expected an integer from 0 to 9, got {value!r}")
        return None
    return value


def _read_kernels_until(
    c: TableReader,
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
    c: TableReader, t: Mapping[str, Any], path: str, floor: Version | None
) -> Version | None:
    """``label = "cu128"`` beside ``versions``: the range's builds are the releases of
    the page that carry that local label (``2.7.1+cu128``), so the floor carries it
    too and the page's files are matched by it. Without ``versions`` the label is part
    of ``version`` itself."""
    text = c.string(t, "label", path)
    if text is None or floor is None:
        return floor
    if not _LOCAL_LABEL.fullmatch(text):
        c.bad(_join(path, "label"), f"{text!r} is not a local label such as 'cu128'")
        return floor
    # One object per range and label; the floor with that local label, which
    # ``Version(f"{floor.public}+{text}")`` would parse again (the label is valid).
    key = (t["versions"], text)
    known = c.valid.get(("labelled", key))
    if known is not None:
        return cast(Version, known)
    version = c.valid["labelled", key] = floor.__replace__(local=text)
    return version


def _read_versions(
    c: TableReader, t: Mapping[str, Any], path: str
) -> tuple[SpecifierSet | None, Version | None]:
    """``versions = ">=0.3.35"``: every release the page serves from a floor on; the
    floor is the release the evidence shows, so a pattern needs one (>=, ~= or ==)."""
    text = c.string(t, "versions", path, required=True)
    if text is None:
        return None, None
    known = c.valid.get(("versions", text))
    if known is not None:
        return cast(tuple[SpecifierSet, Version], known)
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
    c.valid["versions", text] = (spec, floor)
    return spec, floor


def _spec_floor(spec: SpecifierSet) -> Version | None:
    floors = []
    for s in spec:
        if s.operator in (">=", "~=", "==") and "*" not in s.version:
            try:
                floors.append(Version(s.version))
            except InvalidVersion:
                continue
    return max(floors) if floors else None


def _read_install(c: TableReader, t: Mapping[str, Any], path: str, name: str) -> str | None:
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


def parse_manifest(  # noqa: PLR0915 - every section checked in one place
    data: Mapping[str, Any],
    *,
    source: str = "manifest",
    allow_insecure: bool = False,
) -> Manifest:
    """Validate a parsed manifest mapping; ManifestError lists every problem at once."""
    c = TableReader(source, allow_insecure)
    if not isinstance(data, Mapping):
        raise ManifestError([f"{source}: expected a table at the top, got {kind_of(data)}"])
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
    pins_only = False
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
        pins_only = c.boolean(pkg, "pins_only", "package") is True
    wheels: list[WheelFlavour] = []
    indexes: list[IndexFlavour] = []
    if name:
        for i, t in enumerate(c.tables(data, "wheel")):
            w = _read_wheel(c, t, f"wheel[{i}]", name)
            if w is not None:
                wheels.append(w)
        for i, t in enumerate(c.tables(data, "matrix")):
            # Imported where a manifest has a matrix (none of the built-in ones does).
            from resolver_hook.manifest.matrix import _expand_matrix

            for where, entry in _expand_matrix(c, t, f"matrix[{i}]"):
                w = _read_wheel(c, entry, where, name)
                if w is not None:
                    wheels.append(w)
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
        pins_only=pins_only,
    )


def _read_twins(c: TableReader, pkg: Mapping[str, Any], name: str) -> tuple[NormalizedName, ...]:
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


def _qualify_siblings(c: TableReader, indexes: list[IndexFlavour]) -> list[IndexFlavour]:
    """Entries with the same page and version must differ in platform or Python (one
    release whose kernel lists differ per platform); they are told apart by platform."""
    groups: dict[tuple[str | None, str | None, Version, tuple[str, ...]], list[IndexFlavour]] = {}

    def key(f: IndexFlavour) -> tuple[str | None, str | None, Version, tuple[str, ...]]:
        # Another distribution (install) is another source; so is a page computed from
        # another coupled build.
        coupling = tuple(sorted(map(str, f.needs.requires))) if f.template else ()
        return (f.url or f.template, f.install, f.version, coupling)

    # Each entry's group and its place there: the entries after it in its group are
    # those after that place, in the manifest's order.
    places = []
    for f in indexes:
        group = groups.setdefault(key(f), [])
        places.append((group, len(group)))
        group.append(f)
    out = []
    for f, (group, n) in zip(indexes, places, strict=True):
        if len(group) == 1:
            out.append(f)
            continue
        for g in group[n + 1 :]:
            same_plat = not f.platforms or not g.platforms or set(f.platforms) & set(g.platforms)
            same_py = not f.python or not g.python or set(f.python) & set(g.python)
            if same_plat and same_py:
                c.bad(
                    g.where,
                    f"the same version {f.version} from the same page as {f.where}, for "
                    "the same platform and Python: which one holds is ambiguous",
                )
        out.append(replace(f, qualifier=", ".join(f.platforms)) if f.platforms else f)
    return out


def _check_build_need(c: TableReader, need: str, path: str) -> None:
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
