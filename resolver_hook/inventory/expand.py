"""A manifest's index flavours turned into the exact files the planner may pin.

For each index flavour with a page (``url``; the plain build on the default index
reads ``<default index>/<name>/``), the page's files of that flavour
(:func:`~resolver_hook.inventory.candidates.candidates`) become
:class:`~resolver_hook.manifest.model.WheelFlavour` values carrying the flavour's
rules (CUDA floor, kernel list, runtime, couplings, evidence) and the file's facts
(URL, tags, sha256, ``requires-python``). The planner then takes the newest that fits
and pins it as ``name @ url#sha256=...``.

Which files a flavour's rules cover (docs/facts.md, "The inventory"):

- a pattern (``versions = ">=0.3.35"``): every release the page has in it;
- one release (``version = "2.13.0+cu130"``): that release, verified; and releases
  newer than the newest verified one of the same page, label and platform, with that
  entry's kernel list carried forward and marked (``assumed_from``), unless the entry
  says the list changed (``kernels_until = "2.16"``: releases from 2.16 on are not
  planned with it, and a note says so). Older releases no entry lists are left out.
  A carried-forward file whose kernels were read from the file itself
  (:mod:`resolver_hook.inventory.kernels`) is planned with that list instead,
  verified, the file's URL and the date read as its evidence.
- a release on the page of a pattern entry that no entry's rule covers (triton 3.2.0
  below ``versions = ">=3.6.0"``): an entry bounds its rule, not what is seen. The file
  is planned by its tags and requires-python alone, with none of the entry's rules and
  marked ``unjudged`` (ranked after every judged build; a note on an accelerated
  machine). Online and offline plan what the page lists.
- a carried-forward release of an entry with couplings takes its couplings from its
  own ``Requires-Dist`` (the entry's pins were for the verified release); when its
  metadata cannot be read it is left out, never paired by guess.

``Requires-Dist`` couplings: a requirement on another package that has a manifest
(tilert's ``torch>=2.11,<2.13``; torch 2.5.1's ``triton==3.1.0; platform_system ==
"Linux" ...``) joins the file's ``requires``, its marker evaluated by the planner
against the target, so the coupling search picks a build of the other package that
it accepts.
Metadata is read only for files whose tags the machine accepts (``wanted``), newest
first, at most :data:`~resolver_hook.limits.MAX_METADATA_READS` per plan.

A page the source could not give keeps its flavours as written (today's page form),
and so does a flavour the snapshot (partial by design) lists no file of, and the plain
build whose page lists its release as a source distribution only (natten on PyPI) or
answers that it does not exist (the installer reads the user's own index for it). A
page that does not exist (HTTP 404 or 410) lists nothing: the flavours found there
are not planned (no pin names a page that does not list it).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    NormalizedName,
    canonicalize_name,
    parse_sdist_filename,
)
from packaging.version import InvalidVersion, Version

from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import replace
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.mirrors import Mirror, apply_mirrors
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import (
    Candidate,
    MetadataError,
    PageSource,
    candidates,
    distribution_of,
    fits_python,
    flavour_places,
    narrow,
    place_of,
    releases_by_label,
    requires_dist,
)
from resolver_hook.limits import MAX_METADATA_READS
from resolver_hook.manifest.model import IndexFlavour, Manifest, Needs, WheelFlavour, requirement

if TYPE_CHECKING:
    from resolver_hook.ground.contentcache import KeptAnswers
    from resolver_hook.inventory.kernels import KernelRecords

__all__ = [
    "DEFAULT_INDEX",
    "Expansion",
    "carried_files",
    "covered_releases",
    "expand_manifests",
    "mirrored",
    "page_of",
    "pins_exactly",
    "with_notes",
]

# Metadata files read at once (each a small file; the index client bounds connections).
_METADATA_WORKERS = 8

# The plain build's page, where a flavour names none (PEP 503 project pages).
DEFAULT_INDEX = "https://pypi.org/simple"


class Expansion:
    """The manifests with files in place of pages, and what the planner should say.

    A plain class: made once per plan and read by the planner, never compared, copied or
    replaced: no generated method is needed.
    """

    __slots__ = ("manifests", "notes", "replaced", "touched")

    def __init__(
        self,
        manifests: Mapping[str, Manifest],
        replaced: Mapping[str, Manifest],
        mirrors: Sequence[Mirror] = (),
        *,
        notes: tuple[str, ...] = (),
        touched: frozenset[str] = frozenset(),  # the packages whose pages were asked for
    ) -> None:
        """``manifests`` (by canonical name) with those ``replaced`` by their files."""
        self.manifests: Mapping[str, Manifest] = _Overlay(manifests, replaced, mirrors)
        self.replaced = replaced
        self.notes = notes
        self.touched = touched


def pins_exactly(spec: SpecifierSet) -> bool:
    """Whether ``spec`` pins a version exactly, in pip's words for PEP 592: an ``===``
    or an ``==`` without a wildcard (pip's resolver, ``factory.py``, ``is_pinned``)."""
    return any(
        s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*")) for s in spec
    )


def page_of(f: IndexFlavour, default_index: str = DEFAULT_INDEX) -> str | None:
    """The page a flavour's files are listed on; None for a computed (template) page.
    A flavour installing another distribution or extras from the default index reads
    that distribution's page (``<default index>/onnxruntime-gpu/``): its files are
    pinned like any other, the requirement line naming the distribution."""
    if f.template is not None:
        return None
    if f.url is not None:
        return f.url
    return f"{default_index.rstrip('/')}/{distribution_of(f)}/"


def _closure(
    manifests: Mapping[str, Manifest], names: Iterable[str], default_index: str
) -> tuple[list[str], list[str]]:
    """(pages, package names) of ``names`` and what their manifests couple with; only
    those manifests are read (a lazy mapping reads no other)."""
    seen: dict[str, None] = {}
    todo = [canonicalize_name(n) for n in names]
    done: dict[str, None] = {}
    while todo:
        name = todo.pop(0)
        if name in done or name not in manifests:
            continue
        done[name] = None
        for f in manifests[name].indexes:
            page = page_of(f, default_index)
            if page is not None:
                seen.setdefault(page)
            todo.extend(canonicalize_name(r.name) for r in f.needs.requires)
        for w in manifests[name].wheels:
            todo.extend(canonicalize_name(r.name) for r in w.needs.requires)
    return list(seen), list(done)


class _Overlay(Mapping[str, Manifest]):
    """``base`` with some manifests replaced; reads no other manifest of ``base``.

    ``mirrors``: applied to the URLs a manifest names itself (its ``[[wheel]]`` files,
    the pages and templates of its index flavours left in page form), so that a plan
    points at the mirror whether or not the mirrored page could be read; the files
    read from pages carry the mirror's URLs already (the index client, the snapshot
    source) and are not mapped again."""

    def __init__(
        self,
        base: Mapping[str, Manifest],
        replaced: Mapping[str, Manifest],
        mirrors: Sequence[Mirror] = (),
    ) -> None:
        self._base, self._replaced = base, dict(replaced)
        self._mirrors = tuple(mirrors)
        self._mirrored: dict[str, Manifest] = {}

    def __getitem__(self, name: str) -> Manifest:
        hit = self._replaced.get(name)
        found = hit if hit is not None else self._base[name]
        if not self._mirrors:
            return found
        if name not in self._mirrored:
            self._mirrored[name] = _mirror(found, self._base[name], self._mirrors)
        return self._mirrored[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)

    def __contains__(self, name: object) -> bool:
        return name in self._base


def mirrored(
    manifests: Mapping[str, Manifest], mirrors: Sequence[Mirror]
) -> Mapping[str, Manifest]:
    """``manifests`` as given, their own URLs read through ``mirrors`` (no page is
    read: ``env``'s plans point at the mirror as every other plan does)."""
    return _Overlay(manifests, {}, mirrors) if mirrors else manifests


def _mirror(man: Manifest, written: Manifest, mirrors: Sequence[Mirror]) -> Manifest:
    """``man`` with the URLs its manifest (``written``) names read through ``mirrors``."""
    own = {id(w) for w in written.wheels}

    def url(u: str | None) -> str | None:
        return None if u is None else apply_mirrors(u, mirrors)

    wheels = tuple(
        replace(w, url=apply_mirrors(w.url, mirrors)) if id(w) in own else w for w in man.wheels
    )
    indexes = tuple(replace(f, url=url(f.url), template=url(f.template)) for f in man.indexes)
    return replace(man, wheels=wheels, indexes=indexes)


def expand_manifests(
    manifests: Mapping[str, Manifest],
    names: Iterable[str],
    source: PageSource,
    *,
    wanted: Callable[[frozenset[Tag]], bool] | None = None,
    default_index: str = DEFAULT_INDEX,
    kernels: KernelRecords | None = None,
    mirrors: Sequence[Mirror] = (),
    pinned: Mapping[str, SpecifierSet] | None = None,
) -> Expansion:
    """Read the pages of ``names`` (and what they couple with) from ``source`` and
    expand those manifests; the others are returned as they are, unread. ``mirrors``:
    those the source reads through, applied to the URLs the manifests name (see
    :class:`_Overlay`). A package a
    file's ``Requires-Dist`` brings in (tilert's torch) has its pages read in a second
    round, all at once. ``kernels``: the kernel lists read from files (None: the
    shipped records, read only when a carried-forward file is met). ``pinned``: the
    requirement specifiers by package name; a yanked file is planned only for one that
    pins its version exactly, as pip does (:func:`pins_exactly`)."""
    if all(canonicalize_name(k) == k for k in manifests):  # names only: nothing is read
        by_name: Mapping[str, Manifest] = manifests
    else:
        by_name = {canonicalize_name(k): v for k, v in manifests.items()}
    ctx = _Context(by_name, source, wanted, default_index, kernels)
    ctx.pinned = {canonicalize_name(k): v for k, v in (pinned or {}).items() if pins_exactly(v)}
    replaced: dict[str, Manifest] = {}
    pages: dict[str, Page] = {}
    asked: set[str] = set()
    touched: set[str] = set()
    todo = list(names)
    for _round in range(2):
        urls, closure = _closure(by_name, todo, default_index)
        urls = [u for u in urls if u not in asked]
        closure = [n for n in closure if n not in touched]
        if not closure:
            break
        got = source.pages(urls) if urls else {}
        asked.update(urls)
        pages.update({u: p for u, p in got.items() if isinstance(p, Page)})
        mine = {n: by_name[n] for n in closure}
        ctx.prefetch(mine, pages)
        for name, man in mine.items():
            own = {page_of(f, default_index) for f in man.indexes}
            if own & asked:
                touched.add(name)
            if own & set(pages):
                replaced[name] = ctx.expand(man, pages)
        todo = [
            r.name
            for name in closure
            if name in replaced
            # Files' Requires-Dist, and page-form releases' from the snapshot's rows.
            for r in (
                *(r for w in replaced[name].wheels for r in w.needs.requires),
                *(r for f in replaced[name].indexes for r in f.needs.requires),
            )
            if canonicalize_name(r.name) not in touched
        ]
        if not todo:
            break
    notes = []
    if ctx.failed:
        n = len(ctx.failed)
        notes.append(
            f"could not use the metadata of {n} file{'' if n == 1 else 's'} "
            f"({ctx.failed[0]}{'; ...' if n > 1 else ''}): "
            f"{'its' if n == 1 else 'their'} Requires-Dist is not used as couplings"
        )
    _kept_ranges().keep()  # the answers found anew on pages' rows (_rows_in_range)
    return Expansion(by_name, replaced, mirrors, notes=tuple(notes), touched=frozenset(touched))


def with_notes(done: Expansion, notes: Sequence[str]) -> Mapping[str, Manifest]:
    """The expanded manifests, ``notes`` (what the page source said) added to those of
    the packages whose pages were asked for."""
    if not notes:
        return done.manifests
    extra = {
        n: replace(done.manifests[n], notes=(*done.manifests[n].notes, *notes))
        for n in done.touched
    }
    return _Overlay(done.manifests, extra)


# The entry whose rules cover a file, and the release its kernels come from when
# carried forward (None: its own).
_Rule = tuple[IndexFlavour, Version | None]


class _Context:
    def __init__(
        self,
        manifests: Mapping[str, Manifest],
        source: PageSource,
        wanted: Callable[[frozenset[Tag]], bool] | None,
        default_index: str,
        kernels: KernelRecords | None = None,
    ) -> None:
        self.manifests = manifests
        self._kernels = kernels
        self.source = source
        self.wanted = wanted
        self.default_index = default_index
        self.reads = 0
        self._lock = threading.Lock()
        self._failed: list[str] = []  # metadata files that could not be used, and why
        self._candidates: dict[tuple[object, ...], tuple[Page, list[Candidate]]] = {}
        # What a flavour's files are read by (see candidates), by its identity.
        self._reads: dict[tuple[int, bool], tuple[IndexFlavour, tuple[object, ...]]] = {}
        self._requires: dict[str, tuple[Requirement, ...] | None] = {}
        self._runs: dict[int, tuple[list[Candidate], list[Sequence[Candidate]]]] = {}
        self._wanted: dict[int, tuple[frozenset[Tag], bool]] = {}
        self._ranges: dict[tuple[int, int], tuple[SpecifierSet, Version, bool]] = {}
        self._yanked: dict[tuple[int, int], tuple[IndexFlavour, Page, bool]] = {}
        # Requirements that pin a version exactly, by name; those of them no file
        # that is not yanked satisfies (their yanked files are planned: PEP 592).
        self.pinned: Mapping[str, SpecifierSet] = {}
        self._yanked_ok: dict[str, SpecifierSet] = {}
        self._sibling_cache: dict[
            tuple[int, str | None, str | None],
            tuple[Manifest, list[tuple[IndexFlavour, frozenset[tuple[str, str]] | None]]],
        ] = {}

    @property
    def failed(self) -> list[str]:
        return list(dict.fromkeys(self._failed))

    def page(self, f: IndexFlavour, pages: Mapping[str, Page]) -> Page | None:
        """``f``'s page among ``pages``; None for a computed page or one not read."""
        url = page_of(f, self.default_index)
        return pages.get(url) if url is not None else None

    def candidates(
        self,
        f: IndexFlavour,
        page: Page,
        *,
        anywhere: bool = False,
        head: bool = False,
        offered: bool = False,
    ) -> list[Candidate]:
        """:func:`candidates`, once per page and what it reads of a flavour (entries that
        differ only in their release or rules share one list; callers only read it).
        ``anywhere``: those of ``f`` on every platform and Python (:func:`_anywhere`),
        that flavour made only when its list is.

        An entry of one release (its own distribution) may ask for part of its list,
        each part the list with the other files left out, in its order: ``head``, its
        release and the newer ones (all that its rules cover, unless the release has
        only yanked files: see :meth:`_files`); ``offered``, the files that offer a
        metadata file (what :meth:`prefetch` reads). Its older files, most of a page,
        are then never parsed. Any other flavour gets its whole list (which holds the
        part).

        A page that lists no file (the snapshot's compact rows: most pages of a plan)
        has none for any flavour: nothing is looked up or made for it."""
        if not page.links:
            return []
        yanked = self._yanked_ok.get(f.name)
        reads = self._reads.get((id(f), anywhere))
        if reads is None or reads[0] is not f:
            reads = self._reads[id(f), anywhere] = (
                f,
                (
                    distribution_of(f),
                    f.version.local,
                    frozenset() if anywhere else frozenset(f.platforms),
                    frozenset() if anywhere else frozenset(f.python),
                ),
            )
        part = not anywhere and f.versions is None and f.install is None
        since = f.version if part and head else None
        offered = part and offered
        key = (id(page), *reads[1], str(yanked), None if since is None else str(since), offered)
        hit = self._candidates.get(key)
        if hit is None or hit[0] is not page:
            if anywhere and (f.platforms or f.python):
                f = _anywhere(f)
            if f.versions is not None and (f.platforms or f.python):
                # A range's files for every platform and Python are read anyway (the
                # releases no rule covers: _unbound); its platforms' are among them.
                found = narrow(f, self.candidates(f, page, anywhere=True))
            else:
                found = candidates(f, page, yanked=yanked, since=since, offered=offered)
            hit = (page, _with_any_platform(f, page, found))
            self._candidates[key] = hit
        return hit[1]

    def prefetch(self, manifests: Mapping[str, Manifest], pages: Mapping[str, Page]) -> None:
        """Read the metadata files the expansion will ask for, concurrently (each is one
        round trip; one after another they would add up on a cold cache); one after
        another from a source whose reads are all local (``local``: offline)."""
        wanted: dict[str, Candidate] = {}
        # A list of files is looked at once: the flavours of a page that differ only in
        # their release or rules share one (each held here, so its id stands for it).
        walked: dict[int, list[Candidate]] = {}
        for man in manifests.values():
            for f in man.indexes:
                page = self.page(f, pages)
                if page is None:
                    continue
                found = self.candidates(f, page, offered=True)
                if id(found) in walked:
                    continue
                walked[id(found)] = found
                for c in found:
                    if c.link.core_metadata is not None and self._wants(c.tags):
                        wanted.setdefault(c.url, c)
        todo = sorted(wanted.values(), key=lambda c: c.version, reverse=True)
        todo = todo[: MAX_METADATA_READS - self.reads]
        if not todo:
            return
        self.reads += len(todo)
        if getattr(self.source, "local", False):  # each a local file: no thread helps
            got = [self._read(c) for c in todo]
        else:
            # Imported here: a plan over local files (the page cache) starts no thread.
            from resolver_hook.ground.pool import map_threads

            got = map_threads(
                self._read, todo, workers=_METADATA_WORKERS, name="resolver-hook-meta"
            )
        for c, result in zip(todo, got, strict=True):
            self._requires[c.url] = result

    def _wants(self, tags: frozenset[Tag]) -> bool:
        """``wanted(tags)``, once per tag set (a page's files share a few dozen)."""
        if self.wanted is None:
            return True
        hit = self._wanted.get(id(tags))
        if hit is None or hit[0] is not tags:
            hit = self._wanted[id(tags)] = (tags, self.wanted(tags))
        return hit[1]

    def _read(self, c: Candidate) -> tuple[Requirement, ...] | None:
        try:
            return requires_dist(c, self.source)
        except MetadataError as exc:
            with self._lock:
                self._failed.append(str(exc))
            return None

    def expand(self, man: Manifest, pages: Mapping[str, Page]) -> Manifest:
        wheels: list[WheelFlavour] = []
        kept: list[IndexFlavour] = []
        notes: list[str] = []
        spec = self.pinned.get(man.name)
        if spec is not None and not self._listed(man, pages, spec):
            self._yanked_ok[man.name] = spec  # only yanked files satisfy the pin
        for f in man.indexes:
            page = self.page(f, pages)
            if page is None:
                kept.append(f)
                continue
            files = self._files(f, man, page, notes)
            if not files or (f.versions is None and all(w.version != f.version for w in files)):
                notes.extend(_yanked_note(f, page))
            wheels.extend(files)
            forms = release_versions(f, page, {w.version for w in files})
            kept.extend(self._release_form(f, v, page) for v in forms)
            if forms:
                continue  # the compact rows stand for the range's releases: no pattern
            if not files and f.passthrough and (page.absent or _has_sdist(f, page)):
                # The plain build as a source distribution only (natten on PyPI): the
                # installer builds it, as the page form says. Or not on the default
                # index at all: the installer reads the user's own index for it.
                kept.append(f)
            elif page.source == "snapshot":
                # The snapshot is partial: the page form stays for the Pythons it
                # lists no file of this release for.
                rest = _uncovered(f, files)
                if rest is not None:
                    kept.append(rest)
        wheels.extend(self._unbound(man, pages, wheels))
        read = [self.page(f, pages) for f in man.indexes]
        gone = [redact(p.url) for p in read if p is not None and p.absent]
        return replace(
            man,
            wheels=(*man.wheels, *wheels),
            indexes=tuple(kept),
            notes=(*man.notes, *dict.fromkeys(notes)),
            not_found=(*man.not_found, *dict.fromkeys(gone)),
        )

    def _listed(self, man: Manifest, pages: Mapping[str, Page], spec: SpecifierSet) -> bool:
        """Whether a page of ``man`` lists a file that is not yanked of a version
        ``spec`` contains (pip takes a yanked file only when none does)."""
        for f in man.indexes:
            page = self.page(f, pages)
            if page is not None and any(
                spec.contains(c.version, prereleases=True) for c in candidates(f, page)
            ):
                return True
        return False

    def _files(
        self, f: IndexFlavour, man: Manifest, page: Page, notes: list[str]
    ) -> list[WheelFlavour]:
        out = []
        # A file's rule is its release's (one release's, also by the places of the file's
        # tags): a page lists dozens of files of a release, sharing the version object,
        # for a few places, so each release and place is judged once (the versions are
        # held by the list: their ids stand).
        rules: dict[tuple[int, frozenset[tuple[str, str]]], _Rule | None] = {}
        # A page's files come release by release (newest first): a release that no rule
        # can cover, whatever its files' places (most of a page's history for an entry
        # of one release), is passed over at once, not file by file.
        # An entry of one release plans its release and the newer ones (the head of its
        # list), and older ones only where its release has only yanked files.
        head = f.versions is None and not self._yanked_only(f, page)
        runs = self._releases(self.candidates(f, page, head=head))
        if f.versions is not None and runs:
            # A range's rule is its releases alone (see _rule_for): those of the page in
            # it found in one filter, as packaging reads the range's bounds once for the
            # lot (contains() would for each release), and each of their files is its.
            inside = {
                id(v) for v in f.versions.filter([r[0].version for r in runs], prereleases=False)
            }
            runs = [r for r in runs if id(r[0].version) in inside]
        for run in runs:
            v = run[0].version
            if f.versions is None and self._passed_over(f, v, page):
                if v < f.version and not self._yanked_only(f, page):
                    break  # so is every older release, all of those that follow
                continue
            for c in run:
                if f.versions is not None:
                    rule: _Rule | None = (f, None)
                else:
                    key = (id(c.version), c.places)
                    if key in rules:
                        rule = rules[key]
                    else:
                        rule = rules[key] = self._rule_for(f, man, c, page, notes)
                if rule is None:
                    continue
                entry, assumed = rule
                requires = self._couplings(entry, c, assumed)
                if requires is None:
                    continue
                if c.link.is_yanked:
                    why = f": {c.link.yanked}" if c.link.yanked else ""
                    notes.append(
                        f"{man.display_name} {c.version} on {page.url} is yanked (PEP 592{why}): "
                        f"planned only because the requirement pins it exactly "
                        f"({man.display_name}{self.pinned[man.name]}), as pip does"
                    )
                record = self.kernels().get(c.sha256, c.filename) if assumed is not None else None
                if record is not None:  # read from the file itself: verified
                    needs = replace(
                        entry.needs, gpu=record.targets, evidence=record.url, checked=record.read
                    )
                    entry = replace(entry, needs=needs)
                    assumed = None
                out.append(_wheel(entry, c, requires, assumed, unjudged=entry.unjudged))
        return out

    def _unbound(
        self, man: Manifest, pages: Mapping[str, Page], files: Sequence[WheelFlavour]
    ) -> list[WheelFlavour]:
        """The releases a page of a ``versions`` entry lists that no entry's rule covers
        (below every floor): files judged by their tags and requires-python alone,
        marked ``unjudged`` (never hidden: online and offline plan what the page has)."""
        out: list[WheelFlavour] = []
        done: set[tuple[str, NormalizedName, str | None]] = set()
        made = {w.version for w in files}
        # Each entry's page, found once (every range below looks through them all).
        urls = [page_of(g, self.default_index) for g in man.indexes]
        for f, url in zip(man.indexes, urls, strict=True):
            page = pages.get(url) if url is not None else None
            if f.versions is None or page is None or not page.links:
                continue  # (a page of compact rows lists no file: none is left unbound)
            key = (page.url, distribution_of(f), f.version.local)
            if key in done:
                continue
            done.add(key)
            rules = [
                g
                for g, g_url in zip(man.indexes, urls, strict=True)
                if g_url == url and distribution_of(g) == key[1] and g.version.local == key[2]
            ]
            why = None
            # A release's files share its verdict (a page lists dozens per release).
            passed: dict[Version, bool] = {}
            # Every platform and Python: which fit is the planner's tag check.
            for c in self.candidates(f, page, anywhere=True):
                v = c.version
                hit = passed.get(v)
                if hit is None:
                    # A pre-release, one planned, or one a rule covers (and says where
                    # it runs): passed over.
                    hit = passed[v] = (
                        v.is_prerelease
                        or v.is_devrelease
                        or v in made
                        or any(
                            g.versions.contains(v, prereleases=True)
                            if g.versions is not None
                            else g.version == v
                            for g in rules
                        )
                    )
                if hit:
                    continue
                if why is None:
                    ranges = "; ".join(
                        f"{g.versions or g.version} ({man.display_name} {g.where})" for g in rules
                    )
                    why = (
                        "it is planned from its tags and Requires-Python only; its "
                        f"manifest's rules cover {ranges}: pin a release they cover"
                    )
                out.append(_wheel(f, c, (), None, unjudged=why))
        return out

    def kernels(self) -> KernelRecords:
        if self._kernels is None:
            # Only a carried-forward file asks: a plan of verified entries never imports it.
            from resolver_hook.inventory.kernels import builtin_kernels

            self._kernels = builtin_kernels()
        return self._kernels

    def _rule_for(
        self, f: IndexFlavour, man: Manifest, c: Candidate, page: Page, notes: list[str]
    ) -> _Rule | None:
        """Which entry's rules cover ``c`` (and the release its kernels come from when
        carried forward); None when none does. Read from ``c``'s version and places
        alone (see :meth:`_files`)."""
        if f.versions is not None:
            return (f, None) if self._in_range(f.versions, c.version) else None
        if self._passed_over(f, c.version, page):
            return None
        siblings = [g for g, places in self._siblings(f, man) if _covers(places, c)]
        if any(g.version == c.version for g in siblings):
            return (f, None) if f.version == c.version else None
        # An entry whose release the page lists only yanked files of (PEP 592) is
        # passed over, as pip passes over those files: the entry below it carries its
        # rules forward past it, and with none below, its own rules stand for the older
        # releases (what pip installs in its place).
        above = [g for g in siblings if g.version > c.version]
        if any(not self._yanked_only(g, page) for g in above):
            return None
        below = [g for g in siblings if g.version < c.version]
        owner = (
            max(below, key=lambda g: g.version)
            if below
            else min(above, key=lambda g: g.version, default=None)
        )
        if owner is not f:
            return None
        if (
            c.version > f.version
            and f.kernels_until is not None
            and c.version.release >= f.kernels_until.release
        ):
            if not self._pattern_covers(f, man, c.version):
                notes.append(
                    f"{man.display_name} {c.version} on {page.url} is not planned: its "
                    f"manifest says the kernel list of {f.version} changed at "
                    f"{f.kernels_until} ({f.needs.evidence or 'no evidence given'})"
                )
            return None
        return f, f.version

    def _releases(self, found: list[Candidate]) -> list[Sequence[Candidate]]:
        """``found`` cut into its runs of files of one release (one version object: the
        files of a release share it), in order; once per list (the flavours of a page
        share a few lists, each held here, so its id stands for it)."""
        hit = self._runs.get(id(found))
        if hit is None or hit[0] is not found:
            runs: list[Sequence[Candidate]] = []
            start = 0
            for i in range(1, len(found) + 1):
                if i == len(found) or found[i].version is not found[start].version:
                    runs.append(found[start:i])
                    start = i
            hit = self._runs[id(found)] = (found, runs)
        return hit[1]

    def _passed_over(self, f: IndexFlavour, v: Version, page: Page) -> bool:
        """Whether no file of release ``v`` is covered by the rules of ``f``, an entry of
        one release, whatever the file's places: a pre-release, or one older than its
        entry (covered by an entry of its own, or by none) unless the entry's own
        release has only yanked files on ``page``."""
        if v.is_prerelease or v.is_devrelease:
            return True
        return v < f.version and not self._yanked_only(f, page)

    @staticmethod
    def _pattern_covers(f: IndexFlavour, man: Manifest, v: Version) -> bool:
        """Whether an entry of a release range (``versions = ">=1.19,<1.27"``) on the
        same page plans release ``v``: a ``kernels_until`` of another entry is then no
        news to the user."""
        return any(
            isinstance(g, IndexFlavour)
            and g.versions is not None
            and g.url == f.url
            and g.install == f.install
            and g.versions.contains(v, prereleases=False)
            for g in man.flavours
        )

    def _in_range(self, versions: SpecifierSet, v: Version) -> bool:
        """``versions.contains(v)`` (no pre-releases), once per range and release: a
        page lists dozens of files of one release, sharing its version object (looked
        up by its identity, with no hash of the version computed)."""
        key = (id(versions), id(v))
        hit = self._ranges.get(key)
        if hit is None or hit[0] is not versions or hit[1] is not v:
            hit = (versions, v, versions.contains(v, prereleases=False))
            self._ranges[key] = hit
        return hit[2]

    def _yanked_only(self, g: IndexFlavour, page: Page) -> bool:
        """Whether ``page`` lists files of ``g``'s release for its platforms and
        Pythons, every one of them yanked."""
        key = (id(g), id(page))
        hit = self._yanked.get(key)
        if hit is None or hit[0] is not g or hit[1] is not page:
            listed = any(c.version == g.version for c in self.candidates(g, page, head=True))
            hit = (g, page, not listed and bool(_yanked_note(g, page)))
            self._yanked[key] = hit
        return hit[2]

    def _siblings(
        self, f: IndexFlavour, man: Manifest
    ) -> list[tuple[IndexFlavour, frozenset[tuple[str, str]] | None]]:
        """The entries of ``man`` without a version range on ``f``'s page with its local
        label, each with the places (OS, arch) of its platforms: the entries whose rules
        may cover a file of that page. The same for every file and for every entry of
        that page and label, so found once for them."""
        url, label = page_of(f, self.default_index), f.version.local
        key = (id(man), url, label)
        hit = self._sibling_cache.get(key)
        if hit is None or hit[0] is not man:
            found = [
                (g, flavour_places(g) or None)
                for g in man.indexes
                if g.versions is None
                and page_of(g, self.default_index) == url
                and g.version.local == label
            ]
            hit = (man, found)
            self._sibling_cache[key] = hit
        return hit[1]

    def _release_form(self, f: IndexFlavour, v: Version, page: Page) -> IndexFlavour:
        """Release ``v`` of range entry ``f`` in page form (:func:`release_versions`): one
        release, the range's rules, and the ``Requires-Dist`` couplings the snapshot's row
        gives for it (torch 2.5.1+cu124: ``triton==3.1.0; ...``), as a file's metadata
        gives them online: on packages with a manifest, other than its own. Made in one
        copy of the entry, its rules with the couplings added where there are any."""
        texts = dict(page.release_requires).get(str(v), ()) if page.release_requires else ()
        more = tuple(
            r
            for r in map(requirement, texts)
            if canonicalize_name(r.name) in self.manifests and canonicalize_name(r.name) != f.name
        )
        if not more:
            return replace(f, version=v, versions=None)
        needs = replace(f.needs, requires=(*f.needs.requires, *more))
        return replace(f, version=v, versions=None, needs=needs)

    def _couplings(
        self, entry: IndexFlavour, c: Candidate, assumed: Version | None
    ) -> tuple[Requirement, ...] | None:
        own = self._requires_dist(c)
        # Marked lines too (torch 2.5.1: triton==3.1.0 on Linux x86_64): the planner
        # evaluates each marker against the target, as for every coupling.
        from_meta = tuple(
            r
            for r in own or ()
            if canonicalize_name(r.name) in self.manifests
            and canonicalize_name(r.name) != entry.name
        )
        if assumed is not None and entry.needs.requires:
            if own is None:
                return None  # the entry's pins were for another release: no guess
            return from_meta
        # The entry's own when the file adds none (its rules then stand as they are).
        return (*entry.needs.requires, *from_meta) if from_meta else entry.needs.requires

    def _requires_dist(self, c: Candidate) -> tuple[Requirement, ...] | None:
        if c.url in self._requires:
            return self._requires[c.url]
        result: tuple[Requirement, ...] | None = None
        if (
            c.link.core_metadata is not None
            and self._wants(c.tags)
            and self.reads < MAX_METADATA_READS
        ):
            self.reads += 1
            result = self._read(c)
        self._requires[c.url] = result
        return result


class _NoPages:
    """A page source that has nothing (the pages are given)."""

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        return {u: LookupError(f"{u}: not given") for u in urls}

    def metadata(self, link: Link) -> Metadata:
        raise LookupError(f"{link.url}: no metadata")


def carried_files(
    manifests: Mapping[str, Manifest],
    pages: Mapping[str, Page],
    default_index: str = DEFAULT_INDEX,
) -> list[tuple[IndexFlavour, Candidate]]:
    """The files of ``pages`` the planner would plan with a kernel list carried forward
    from an older release (each with the entry it comes from), newest first per entry:
    what ``scripts/refresh_data.py`` reads to verify. Files a ``kernels_until`` rule
    keeps out are not among them."""
    from resolver_hook.inventory.kernels import KernelRecords

    ctx = _Context(manifests, _NoPages(), None, default_index, KernelRecords())
    out: dict[str, tuple[IndexFlavour, Candidate]] = {}
    notes: list[str] = []
    for man in manifests.values():
        for f in man.indexes:
            page = ctx.page(f, pages)
            if page is None:
                continue
            for c in ctx.candidates(f, page):
                rule = ctx._rule_for(f, man, c, page, notes)
                if rule is not None and rule[1] is not None:
                    out.setdefault(c.url, (rule[0], c))
    return list(out.values())


def release_versions(f: IndexFlavour, page: Page, have: Set[Version]) -> list[Version]:
    """A range entry's releases that ``page`` is known to list without their files (the
    snapshot's compact rows: ``2.7.1+cu128``) and that are not in ``have``: each is
    planned in page form, one release with the range's rules, as ``torch==2.7.1+cu128``
    from the page, never with a file name (:meth:`_Context._release_form`)."""
    if f.versions is None or not page.releases:
        return []
    found = _rows_in_range(f.versions, f.version.local, page.releases)
    if have:  # (each release hashed only where some may be left out)
        found = [v for v in found if v not in have]
    return found


def _rows_in_range(
    versions: SpecifierSet, label: str | None, rows: tuple[str, ...]
) -> list[Version]:
    """The releases of ``rows`` with the local ``label`` that ``versions`` contains (no
    pre-releases), in their order.

    packaging reads a range's bounds for it, and each release's sort key: ~1 ms of the
    ~160 ranges a plan of torch and its kin meets on the snapshot's rows, in every
    plan. The answer depends only on the range's text, the label, the rows and the code
    (the tool's and packaging's), so the user cache keeps it, the releases' texts, in
    one table for every range met (``snapshots/ranges.json``), the answers found anew
    written when the expansion is done (:func:`expand_manifests`)."""
    kept = _kept_ranges()
    # (A version's text holds no space: the label, the range and the rows stay apart.)
    question = f"{label or ''} {versions} {' '.join(rows)}"
    texts = kept.get(question)
    if type(texts) is list:
        try:
            return [_release(text) for text in texts]
        except (InvalidVersion, TypeError):  # not an answer of ours: found again
            pass
    mine = releases_by_label(rows).get(label, ())
    # One filter of the label's releases: packaging parses each bound once for the
    # lot, where contains() would parse them again for every release.
    found = list(versions.filter(mine, prereleases=False))
    kept.add(question, [str(v) for v in found])
    return found


@functools.lru_cache(maxsize=1024)
def _release(text: str) -> Version:
    """A kept release's version, parsed once per text (callers only read it)."""
    return Version(text)


@functools.cache
def _kept_ranges() -> KeptAnswers:
    # Imported when a range meets rows: a plan of pages with files alone asks none.
    from packaging import __version__ as packaging_version

    from resolver_hook.ground.contentcache import KeptAnswers

    return KeptAnswers("snapshots", "ranges", code=(packaging_version,))


def covered_releases(
    manifests: Mapping[str, Manifest],
    rows: Iterable[tuple[str, str]],
    default_index: str = DEFAULT_INDEX,
) -> set[tuple[str, str]]:
    """The (page, release) ``rows`` that some range entry of ``manifests`` on that
    page, with that release's local label, covers: the compact rows a snapshot keeps."""
    ranges: dict[str, list[IndexFlavour]] = {}
    for man in manifests.values():
        for f in man.indexes:
            url = page_of(f, default_index)
            if url is not None and f.versions is not None:
                ranges.setdefault(url, []).append(f)
    out = set()
    for url, text in rows:
        v = Version(text)
        for f in ranges.get(url, ()):
            covers = f.versions is not None and f.versions.contains(v, prereleases=False)
            if covers and v.local == f.version.local:
                out.add((url, text))
    return out


def _of_release(f: IndexFlavour, v: Version) -> bool:
    """Whether ``v`` is ``f``'s release, or one of its range (no pre-releases)."""
    return f.versions.contains(v, prereleases=False) if f.versions is not None else v == f.version


def _has_sdist(f: IndexFlavour, page: Page) -> bool:
    """Whether ``page`` lists a source distribution (not yanked) of ``f``'s release."""
    name = distribution_of(f)
    for link in page.links:
        if link.is_yanked or not link.filename.endswith((".tar.gz", ".zip")):
            continue
        try:
            sname, version = parse_sdist_filename(link.filename)
        except InvalidSdistFilename:
            continue
        if sname == name and _of_release(f, version):
            return True
    return False


def _yanked_note(f: IndexFlavour, page: Page) -> list[str]:
    """A flavour whose files on ``page`` are all yanked (PEP 592) is planned with none:
    the note that says so, where the plan, ``-v`` and ``explain`` would otherwise not
    mention it at all. Empty when the page has no yanked file of it."""
    gone = [x for x in page.links if x.is_yanked]
    if not gone:
        return []
    listed = replace(page, links=tuple(replace(x, yanked=None) for x in gone))
    mine = [c for c in candidates(f, listed) if _of_release(f, c.version)]
    if not mine:
        return []
    said = {x.url: x.yanked for x in gone}
    reasons = sorted({why for c in mine if (why := said.get(c.url))})
    why = f": {'; '.join(reasons)}" if reasons else ""
    n = len(mine)
    return [
        f"{f.describe()}: not planned: {'its only file' if n == 1 else f'all {n} of its files'} "
        f"on {page.url} {'is' if n == 1 else 'are'} yanked (PEP 592{why})"
    ]


def _anywhere(f: IndexFlavour) -> IndexFlavour:
    """``f`` on every platform and Python (the files of its page it may be about)."""
    return replace(f, platforms=(), python=())


def _with_any_platform(f: IndexFlavour, page: Page, found: list[Candidate]) -> list[Candidate]:
    """``found``, and for a flavour that installs extras or another distribution on
    some platforms only (``jax[cuda13]`` on Linux: its plugins have no other wheels),
    the page's files for any platform (``jax-0.12.0-py3-none-any.whl``) with their
    tags narrowed to the flavour's platforms: the file installs everywhere, the
    flavour's rules hold only there. Newest first, as :func:`candidates` orders."""
    if f.install is None or not f.platforms:
        return found
    plats = [x for pl in f.platforms for x in pl.split(".")]
    extra = [
        replace(c, tags=frozenset(Tag(t.interpreter, t.abi, p) for t in c.tags for p in plats))
        for c in candidates(replace(f, platforms=()), page)
        if all(t.platform == "any" for t in c.tags)
    ]
    if not extra:
        return found
    out = [*found, *extra]
    out.sort(key=lambda c: c.filename)
    out.sort(key=lambda c: c.version, reverse=True)
    return out


def _uncovered(f: IndexFlavour, files: Sequence[WheelFlavour]) -> IndexFlavour | None:
    """``f`` limited to the Pythons that ``files`` (of its release) do not cover on
    every one of its platforms; None when they cover all. For a pattern installing
    another distribution or extras (``onnxruntime-gpu>=1.27``) its release is the
    newest the snapshot lists (it keeps a pattern's newest releases), not the floor:
    otherwise the floor's page form would stand beside the pinned files."""
    release = f.version
    if f.install is not None and f.versions is not None and files:
        release = max(w.version for w in files)
    mine = [w for w in files if w.version == release]
    if not mine:
        return f
    if not f.python:
        return None  # every Python: the files found stand for the release
    places = flavour_places(f) or {place_of(t.platform) for w in mine for t in w.tags}
    rest = tuple(
        p
        for p in f.python
        if not all(
            any(
                fits_python({(t.interpreter, t.abi) for t in w.tags}, frozenset((p,)))
                for w in mine
                if any(place_of(t.platform) == place for t in w.tags)
            )
            for place in places
        )
    )
    return replace(f, python=rest) if rest else None


def _covers(places: frozenset[tuple[str, str]] | None, c: Candidate) -> bool:
    return places is None or not places.isdisjoint(c.places)


# The rules of a file no rule covers: none (a value: one object serves every such file).
_NO_RULES = Needs()


def _wheel(
    f: IndexFlavour,
    c: Candidate,
    requires: Sequence[Requirement],
    assumed: Version | None,
    *,
    unjudged: str | None = None,
) -> WheelFlavour:
    # A file no rule covers takes none of the entry's rules (its CUDA floor, kernels); a
    # file of an entry that is itself unjudged keeps them.
    needs = _NO_RULES if unjudged is not None and unjudged != f.unjudged else f.needs
    # Each requirement once (a requirement hashes by its text: only where two may repeat).
    once = tuple(requires) if len(requires) < 2 else tuple(dict.fromkeys(requires))
    own = needs.requires
    if once is not own and (
        len(once) != len(own) or any(a is not b for a, b in zip(once, own, strict=True))
    ):
        needs = replace(needs, requires=once)  # not the entry's own objects
    return WheelFlavour(
        url=c.url,
        filename=c.filename,
        name=NormalizedName(f.name),
        version=c.version,
        tags=c.tags,
        sha256=c.sha256,
        needs=needs,
        unjudged=unjudged,
        preference=f.preference,
        where=f"{f.where} {c.filename}",
        cxx11abi=f.cxx11abi,
        requires_python=c.requires_python,
        assumed_from=assumed,
        inventory=c.page.source,
        inventory_date=c.page.fetched,
        install=f.install,
    )
