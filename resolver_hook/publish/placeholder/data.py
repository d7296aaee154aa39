"""From a flavour manifest to the placeholder's data: validated, plain, JSON-able.

Everything the generated project says about the real package comes from this one
mapping, written into the project as ``_placeholder_data.json`` and read back as
data at run time: nothing from a manifest is ever pasted into code.
"""

from __future__ import annotations

import keyword
import re
import sys
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import UsageError
from resolver_hook.ground.patterns import SHA256, is_project_name
from resolver_hook.limits import check_version_text
from resolver_hook.manifest.urls import url_problem

if TYPE_CHECKING:
    from resolver_hook.manifest import Flavour, Manifest

__all__ = [
    "DATA_SCHEMA",
    "DEFAULT_VERSION",
    "check_import_name",
    "check_url",
    "import_name",
    "placeholder_data",
    "retired_data",
]

DATA_SCHEMA = 1
DEFAULT_VERSION = "0.0.0.dev0"

# A placeholder's URLs are printed in README tables, metadata headers and commands to
# paste: ASCII only, on top of the one URL policy (resolver_hook/manifest/urls.py).
_ASCII_URL = re.compile(r"[\x21-\x7e]+")


def _needs(flavour: Flavour) -> dict[str, Any]:
    """What a flavour needs beyond its tags, as strings the runtime parses itself."""
    return {
        "cuda": str(flavour.needs.cuda) if flavour.needs.cuda is not None else None,
        "rocm": str(flavour.needs.rocm) if flavour.needs.rocm is not None else None,
        "gpu": [str(t) for t in sorted(flavour.needs.gpu)],
        "requires": [str(r) for r in flavour.needs.requires],
    }


def check_url(url: object, key: str) -> str:
    """``url`` when the one URL policy allows it (loopback http too: placeholder tests
    serve one) and it is plain ASCII; UsageError naming ``key`` otherwise."""
    problem = (
        f"expected a URL string, got {type(url).__name__}"
        if not isinstance(url, str)
        else url_problem(url, allow_insecure=True)
    )
    if problem is None and isinstance(url, str) and url.lower().startswith("file:"):
        problem = f"{url!r} is a file: URL; a placeholder is published, so it needs https"
    if problem is None and isinstance(url, str) and not _ASCII_URL.fullmatch(url):
        problem = f"{url!r} is not plain ASCII"
    if problem is not None:
        raise UsageError(
            f"{key}: {problem}",
            hint="percent-encode spaces, quotes and other special characters",
        )
    assert isinstance(url, str)
    return url


def import_name(name: str) -> str:
    """The import package of a canonical project name: ``flash-attn`` -> ``flash_attn``."""
    return name.replace("-", "_")


def check_import_name(name: str, given: str | None = None, *, label: str | None = None) -> str:
    """The import package of the placeholder for project ``name``: ``given`` (from
    ``--import-name``) or the name with ``-`` as ``_``.

    UsageError (exit 2) when it is not a Python identifier (``3d-tools``), is a keyword,
    or shadows a standard-library module (``json``, ``typing``): a placeholder installed
    under such a name would break ``import json`` for every program in the environment.
    """
    candidate = import_name(name) if given is None else given
    where = "--import-name" if given is not None else (label or f"package.name {name!r}")
    hint = None if given is not None else "give the import name with --import-name NAME"
    if not candidate.isidentifier() or not candidate.isascii() or keyword.iskeyword(candidate):
        raise UsageError(
            f"{where}: import name {candidate!r} is not a valid Python identifier", hint=hint
        )
    if candidate in sys.stdlib_module_names:
        raise UsageError(
            f"{where}: import name {candidate!r} would shadow the standard library module "
            f"{candidate!r}",
            hint=hint,
        )
    return candidate


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not is_project_name(name):
        raise UsageError(
            f"package.name: {name!r} is not a valid project name",
            hint="letters, digits and single '-' between them",
        )
    if canonicalize_name(name) != name:
        raise UsageError(
            f"package.name: {name!r} is not normalised (expected {canonicalize_name(name)!r})"
        )
    return name


def _check_version(version: str) -> str:
    too_big = check_version_text(version)
    if too_big is not None:
        raise UsageError(f"--version: {version[:40]!r}... is not a PEP 440 version ({too_big})")
    try:
        parsed = Version(version)
    except InvalidVersion:
        raise UsageError(f"--version: {version!r} is not a PEP 440 version") from None
    if parsed.local is not None:
        raise UsageError(f"--version: {version!r} has a local label, which PyPI refuses")
    return str(parsed)


def placeholder_data(
    manifest: Manifest, version: str = DEFAULT_VERSION, *, import_as: str | None = None
) -> dict[str, Any]:
    """The placeholder data of ``manifest``.

    Raises UsageError naming the bad field. Flavours are listed newest version first,
    in manifest order within a version. ``import_as``: the import name (``--import-name``).
    """
    name = _check_name(manifest.name)
    package = check_import_name(name, import_as)
    flavours: list[tuple[Version, dict[str, Any]]] = []
    for i, w in enumerate(manifest.wheels):
        sha = w.sha256
        if sha is not None and (not SHA256.fullmatch(sha) or sha != sha.lower()):
            raise UsageError(f"wheel[{i}].sha256: {sha!r} is not 64 lower-case hex digits")
        if canonicalize_name(w.name) != name:
            raise UsageError(
                f"wheel[{i}].url: {w.filename!r} names project {w.name!r}, not {name!r}"
            )
        flavours.append(
            (
                w.version,
                {
                    "kind": "wheel",
                    "url": check_url(w.url, f"wheel[{i}].url"),
                    "filename": w.filename,
                    "version": str(w.version),
                    "sha256": sha,
                    "tags": sorted([t.interpreter, t.abi, t.platform] for t in w.tags),
                    **_needs(w),
                },
            )
        )
    for i, x in enumerate(manifest.indexes):
        flavours.append(
            (
                x.version,
                {
                    "kind": "index",
                    # No URL: the plain build on the user's own index (PyPI itself).
                    "url": check_url(x.url, f"index[{i}].url") if x.url is not None else None,
                    "version": str(x.version),
                    # Another distribution or extras (cupy-cuda12x, jax[cuda12]), a
                    # version pattern (">=0.3.35"), a page computed from the coupled
                    # build (PyG's page per torch build): said as they are.
                    "install": x.install,
                    "spec": str(x.versions) if x.versions is not None else None,
                    "template": (
                        check_url(x.template, f"index[{i}].url") if x.template is not None else None
                    ),
                    "platforms": list(x.platforms),
                    "python": list(x.python),
                    **_needs(x),
                },
            )
        )
    # Newest first; sort stability keeps manifest order within a version.
    flavours.sort(key=lambda item: item[0], reverse=True)
    homepage = manifest.homepage
    downloads = manifest.downloads
    if not homepage and not downloads:
        raise UsageError(
            "package.downloads: missing; a placeholder must say where the real downloads are",
            hint="set package.downloads (or package.homepage)",
        )
    return {
        "schema": DATA_SCHEMA,
        "kind": "flavours",
        "name": name,
        "import_name": package,
        "display_name": manifest.display_name or name,
        "description": manifest.description,
        "version": _check_version(version),
        "homepage": check_url(homepage, "package.homepage") if homepage else None,
        "downloads": check_url(downloads, "package.downloads") if downloads else None,
        "flavours": [f for _, f in flavours],
    }


def retired_data(
    name: str,
    replacement: str,
    version: str = DEFAULT_VERSION,
    *,
    import_as: str | None = None,
    homepage: str | None = None,
    where: str = "--retired-name",
) -> dict[str, Any]:
    """The data of a placeholder for a retired or renamed name (``sklearn`` ->
    ``scikit-learn``): its build and import fail always, naming the replacement.

    ``where`` names the input in errors (``--retired-name`` or a TOML file's key).
    """
    # A replacement is a bare project name (PEP 508 "Name"): it goes into pip and uv
    # command lines, so nothing that a shell would read (brackets, spaces, quotes) passes.
    if not is_project_name(name):
        raise UsageError(f"{where}: {name!r} is not a valid project name")
    canonical = str(canonicalize_name(name))
    if not is_project_name(replacement):
        raise UsageError(
            f"replacement: {replacement!r} is not a valid project name",
            hint="a bare project name such as scikit-learn, without version or extras",
        )
    if canonicalize_name(replacement) == canonical:
        raise UsageError(f"replacement: {replacement!r} is the retired name itself")
    return {
        "schema": DATA_SCHEMA,
        "kind": "retired",
        "name": canonical,
        "import_name": check_import_name(canonical, import_as, label=f"{where} {name!r}"),
        "display_name": canonical,
        "description": None,
        "version": _check_version(version),
        "replacement": replacement,
        "homepage": check_url(homepage, "homepage") if homepage else None,
        "downloads": None,
        "flavours": [],
    }
