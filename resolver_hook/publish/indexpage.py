"""Turn the wheel links of an index or find-links page into manifest entries.

The page is read by the one index client (:mod:`resolver_hook.index`: the URL policy
on the page, its redirects and its links; bounded reads; HTML and JSON forms);
:func:`import_manifest` turns its links into manifest entries using the local version
label rules of :mod:`resolver_hook.binaries.locallabel` and the user's ``--cuda-map`` /
``--gpu`` tables.

Label rules (documented for users in ``resolver-hook manifest import --help``):

* ``cuda``: ``--cuda-map LABEL=SPEC`` for the wheel's whole local label wins; otherwise a
  ``cuNNN`` in the label gives ``>=MAJOR.0`` (a CUDA X.y build runs on drivers for X.0
  and newer; docs/facts.md section 1); otherwise no CUDA requirement.
* ``requires``: a ``torch...`` part of the label gives ``torch==...``.
* ``gpu``: ``--gpu LABEL=sm_80,sm_90`` for the wheel's whole local label, else
  ``--gpu *=...`` for every wheel; otherwise omitted (a page cannot say).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from packaging.utils import NormalizedName, canonicalize_name

from resolver_hook.binaries.locallabel import parse_local_label
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index.model import Link
from resolver_hook.limits import parse_wheel_name
from resolver_hook.manifest.urls import url_problem
from resolver_hook.manifest.write import WheelEntry

__all__ = ["ImportResult", "import_manifest"]


def _shown(text: str) -> str:
    """Page text for a note: as is when plain, else quoted (no terminal escapes)."""
    return text if text.isprintable() and len(text) <= 200 else repr(text[:200])


@valueclass
class ImportResult:
    """The manifest entries found on a page, and what was skipped and why."""

    name: NormalizedName
    wheels: tuple[WheelEntry, ...]
    notes: tuple[str, ...]


def import_manifest(
    links: tuple[Link, ...],
    *,
    package: str | None = None,
    cuda_map: Mapping[str, str] | None = None,
    gpu_map: Mapping[str, tuple[str, ...]] | None = None,
    allow_insecure: bool = False,
    allow_file_links: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Turn index links into manifest entries for one project.

    ``progress(links_done, links)`` is called as the links are read.

    ``file:`` links are taken only with ``allow_file_links`` (the page is a local file,
    so its relative links are local paths); a remote page cannot point at this machine.
    """
    cuda_map = cuda_map or {}
    gpu_map = gpu_map or {}
    notes: list[str] = []
    wanted = canonicalize_name(package) if package else None
    found: dict[NormalizedName, list[WheelEntry]] = {}
    for i, link in enumerate(links):
        if progress is not None:
            progress(i + 1, len(links))
        if not link.filename.endswith(".whl"):
            # "x.whl --index-url ...": not a wheel link, and worth a word that it was dropped.
            bad = url_problem(link.url, allow_insecure=True) if ".whl" in link.url else None
            if bad is not None:
                notes.append(f"skipped a link: {bad}")
            continue
        try:
            name, version, _build, _tags = parse_wheel_name(link.filename)
        except ValueError:  # InvalidWheelFilename, InvalidVersion
            notes.append(f"skipped {_shown(link.filename)}: not a valid wheel file name")
            continue
        if wanted is not None and name != wanted:
            continue
        if link.is_yanked:
            notes.append(f"skipped {_shown(link.filename)}: yanked (PEP 592)")
            continue
        # Every link passes the one URL policy; one that fails is never copied (an href
        # with spaces or "--index-url" text would become an option in a lock file).
        if link.url.lower().startswith("file:") and not allow_file_links:
            notes.append(
                f"skipped {_shown(link.filename)}: {_shown(link.url)}: a file: link on a page "
                "that is not a local file"
            )
            continue
        is_file = link.url.lower().startswith("file:")
        problem = url_problem(link.url, allow_insecure=allow_insecure or is_file)
        if problem is not None:
            notes.append(f"skipped {_shown(link.filename)}: {problem}")
            continue
        if link.sha256 is None:
            notes.append(f"{_shown(link.filename)}: no #sha256= on the page; entry has no hash")
        label = version.local or ""
        facts = parse_local_label(label) if label else None
        if facts is not None:
            notes.extend(facts.notes)
        cuda = cuda_map.get(label) if label in cuda_map else (
            facts.cuda_lower_bound if facts else None
        )  # fmt: skip
        gpu = gpu_map.get(label, gpu_map.get("*", ()))
        requires = (f"torch{facts.torch}",) if facts and facts.torch else ()
        found.setdefault(name, []).append(
            WheelEntry(url=link.url, sha256=link.sha256, cuda=cuda, gpu=gpu, requires=requires)
        )
    if not found:
        which = f" of {wanted}" if wanted else ""
        raise OperationalError(f"no wheels{which} on the page")
    if len(found) > 1:
        raise UsageError(
            f"the page lists wheels of several projects: {', '.join(sorted(found))}",
            hint="pick one with --package NAME",
        )
    [(name, wheels)] = found.items()
    return ImportResult(name=name, wheels=tuple(wheels), notes=tuple(notes))
