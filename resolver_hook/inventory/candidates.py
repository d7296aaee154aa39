"""The files of an index page that belong to one flavour, as :class:`Candidate` values.

A flavour of a manifest names a page (``https://download.pytorch.org/whl/cu130/torch/``)
and either one release (``version = "2.13.0+cu130"``) or a pattern
(``versions = ">=0.3.35"``). :func:`candidates` reads the page's links and keeps the
wheels of the package (or of the distribution the flavour installs) that carry the
flavour's local label (``+cu130``; none when the flavour has none), one of its
platforms and one of its Pythons (as ``packaging.tags`` reads the tags: ``cp38-abi3``
installs on every CPython from 3.8, not on a free-threaded one; ``py3-none`` on any),
newest first. Yanked files (PEP 592) are skipped;
``requires-python`` is kept for the planner to check against the machine.

``Requires-Dist`` is not on the page: :func:`requires_dist` reads it from the PEP 658
metadata file (``<url>.metadata``) through the :class:`PageSource` (the index client,
which checks the file against the hash the page gives), only when asked.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence, Set
from itertools import compress, count
from operator import attrgetter
from typing import TYPE_CHECKING, Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.utils import (
    BuildTag,
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import ResolverHookError
from resolver_hook.ground.valueclass import from_columns, valueclass
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.model import Link, Page
from resolver_hook.limits import MAX_VERSION_LENGTH, check_version_text
from resolver_hook.manifest.model import IndexFlavour, requirement
from resolver_hook.portable.platforms import parse_platform

if TYPE_CHECKING:
    from resolver_hook.ground.contentcache import KeptAnswers

__all__ = [
    "Candidate",
    "MetadataError",
    "PageSource",
    "candidates",
    "distribution_of",
    "fits_python",
    "flavour_places",
    "narrow",
    "place_of",
    "python_of",
    "releases_by_label",
    "requires_dist",
]


class PageSource(Protocol):
    """Where pages come from: the index client (:class:`~resolver_hook.index.IndexClient`),
    the shipped snapshot, or both."""

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        """Each URL's page, or the exception that reading it ended in (never raised)."""
        ...

    def metadata(self, link: Link) -> Metadata:
        """The PEP 658 metadata of ``link``'s file; raises ``ResolverHookError`` (or
        ``LookupError``) when it cannot be had."""
        ...


class MetadataError(ValueError):
    """A metadata file that could not be read or used (its message says why)."""


@valueclass
class Candidate:
    """One wheel file of a page that a flavour may install."""

    name: NormalizedName
    version: Version
    filename: str
    url: str
    tags: frozenset[Tag]
    sha256: str | None
    requires_python: SpecifierSet | None
    link: Link
    page: Page

    @property
    def pythons(self) -> frozenset[str]:
        """The Python versions of its tags (``cp313`` -> 3.13, ABI ``cp313t`` -> 3.13t)."""
        return frozenset(p for t in self.tags if (p := python_of(t)) is not None)

    @property
    def platforms(self) -> frozenset[str]:
        return frozenset(t.platform for t in self.tags)

    @property
    def places(self) -> frozenset[tuple[str, str]]:
        """The (OS, arch) of its platforms (``manylinux_2_28_x86_64`` -> linux, x86_64)."""
        return _read_tags(self.tags)[0]


def python_of(tag: Tag) -> str | None:
    """``cp312`` -> ``3.12``; ``cp313t`` ABI -> ``3.13t``; ``py3`` and others: None."""
    return _python(tag.interpreter, tag.abi)


def _python(interp: str, abi: str) -> str | None:
    if not interp.startswith("cp") or not interp[2:].isdigit() or len(interp) < 4:
        return None
    digits = interp[2:]
    free = "t" if abi.startswith("cp") and abi.endswith("t") else ""
    return f"{digits[0]}.{digits[1:]}{free}"


@functools.lru_cache(maxsize=256)
def _python_pairs(pythons: frozenset[str]) -> frozenset[tuple[str, str]]:
    """The (interpreter, ABI) pairs of the wheel tags CPython ``pythons`` (``3.12``,
    ``3.13t``) accept, as ``packaging.tags`` lists them for a target (the calls of
    :func:`resolver_hook.host.profile.compute_tags`): ``cp312-cp312``, ``cp38-abi3``
    ... ``cp32-abi3`` (not on a free-threaded build), ``cp312-none``, ``py3-none``.
    Each Python's are listed once (flavours name a few Pythons in many sets), and kept
    in the user cache (:func:`_pairs_of`): those listed for the first time are written
    at once, here."""
    pairs = frozenset().union(*map(_pairs_of, pythons))
    _kept_pairs().keep()
    return pairs


@functools.lru_cache(maxsize=64)
def _pairs_of(python: str) -> frozenset[tuple[str, str]]:
    """:func:`_python_pairs` of one Python; empty for what is no CPython version.

    packaging's generators take ~0.07 ms a Python: ~0.8 ms of every plan of torch and
    its kin, whose flavours name ten. The pairs depend only on the Python's text and
    the code (the tool's and packaging's), so the user cache keeps them, each written
    as a tag writes its two fields (``cp312-abi3``), in one table for every Python met
    (``tags/pairs.json``)."""
    kept = _kept_pairs()
    rows = kept.get(python)
    if type(rows) is list and all(type(row) is str and row.count("-") == 1 for row in rows):
        return frozenset(map(_pair, rows))
    pairs = _listed_pairs(python)
    kept.add(python, sorted(f"{interpreter}-{abi}" for interpreter, abi in pairs))
    return pairs


def _pair(row: str) -> tuple[str, str]:
    interpreter, _, abi = row.partition("-")
    return interpreter, abi


def _listed_pairs(python: str) -> frozenset[tuple[str, str]]:
    """:func:`_pairs_of` as packaging's generators list them."""
    major, _, minor = python.removesuffix("t").partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return frozenset()  # not a CPython version: no tag names it
    version = (int(major), int(minor))
    abi = f"cp{major}{minor}{'t' if python.endswith('t') else ''}"
    tags = [
        *cpython_tags(version, abis=[abi], platforms=["any"]),
        *compatible_tags(version, interpreter=f"cp{major}{minor}", platforms=["any"]),
    ]
    return frozenset((t.interpreter, t.abi) for t in tags)


@functools.cache
def _kept_pairs() -> KeptAnswers:
    # Imported when pairs are asked: a plan that reads no page of files asks for none.
    from packaging import __version__ as packaging_version

    from resolver_hook.ground.contentcache import KeptAnswers

    return KeptAnswers("tags", "pairs", code=(packaging_version,))


def fits_python(pairs: Set[tuple[str, str]], pythons: frozenset[str]) -> bool:
    """Whether a wheel whose tags name these (interpreter, ABI) ``pairs`` installs on
    one of ``pythons`` (every Python when there are none), by ``packaging``'s tags."""
    return not pythons or not _python_pairs(pythons).isdisjoint(pairs)


def distribution_of(flavour: IndexFlavour) -> NormalizedName:
    """The distribution a flavour's files are named by (``cupy-cuda12x`` for cupy)."""
    if flavour.install is not None:
        return _installed(flavour.install)
    return flavour.name


@functools.lru_cache(maxsize=256)
def _installed(install: str) -> NormalizedName:
    """The distribution an ``install`` text names, parsed once per text (a plan asks it
    of the same few entries for every page lookup)."""
    return canonicalize_name(Requirement(install).name)


def candidates(
    flavour: IndexFlavour,
    page: Page,
    *,
    yanked: SpecifierSet | None = None,
    since: Version | None = None,
    offered: bool = False,
) -> list[Candidate]:
    """The page's wheels of ``flavour``'s distribution with its local label, platforms
    and Pythons, yanked ones left out (but those of a version ``yanked`` contains: an
    exact pin, PEP 592), newest first (then by filename, for a stable order). Every
    version is kept: which of them a flavour's rules cover is for
    :mod:`resolver_hook.inventory.expand` to say.

    ``since``: only the files of that release and newer ones (the head of the list);
    ``offered``: only those whose link offers a metadata file (PEP 658). Either is the
    list with the other files left out, in its order, those files never parsed (a
    page's history is most of its files: an entry of one release reads its head)."""
    if not page.links:
        return []  # no file (a page of the snapshot's compact rows)
    files = _page_files(page)
    if offered and not files.offers_metadata:
        return []  # no file has a metadata file to read
    name = distribution_of(flavour)
    label = flavour.version.local
    places = flavour_places(flavour)
    # The (interpreter, ABI) pairs the flavour's Pythons accept; None: every Python.
    allowed = _python_pairs(frozenset(flavour.python)) if flavour.python else None
    mine: Sequence[int]
    if places or allowed is not None:
        # Only the wheels of tag sets that fit the flavour's platforms and Pythons are
        # looked at (most of a page's older releases do not), in page order.
        mine = files.fitting(places, allowed)
        if since is not None:
            mine = files.since(since, mine)
    else:  # every platform and Python: every wheel, no tag set judged
        mine = files.wheels()
        if since is not None:
            mine = files.since(since, mine)
    links = page.links
    if yanked is None:  # a yanked file is planned only for an exact pin: not parsed
        mine = [i for i in mine if links[i].yanked is None]
    if offered:
        mine = [i for i in mine if links[i].core_metadata is not None]
    # (None: no wheel's name.)
    out = [c for c, local in filter(None, files.files(mine)) if c.name == name and local == label]
    if yanked is not None:  # of the yanked files, those of a version the pin contains
        out = [c for c in out if c.link.yanked is None or yanked.contains(c.version, True)]
    out.sort(key=_FILENAME)
    # Newest first, by the ranks of the page's versions (:meth:`_PageFiles._rank`: each
    # release compared once for all the page's flavours, not each file for each); the
    # sort is stable, equal releases keep the filename order.
    keys = list(map(files.ranks.__getitem__, map(id, map(_VERSION, out))))
    return [out[i] for i in sorted(range(len(out)), key=keys.__getitem__, reverse=True)]


_Fields = tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]
_Pairs = frozenset[tuple[str, str]]
# A wheel of a page as :func:`candidates` reads it: the candidate and its local label.
_File = tuple[Candidate, str | None]


class _PageFiles:
    """A page's wheels: grouped by what their names' tag fields say (a page's names
    share a few dozen tag sets, so a flavour tests each tag set once instead of each
    name), and each one parsed into its :class:`Candidate` when first asked for (every
    flavour of the page asks for the same files; a candidate is a value of its link and
    page alone, so one object serves them all).

    A name is cut into its fields (:func:`_cut`) only when its file is asked for: a
    flavour of some platforms and Pythons finds the names of the tag sets that fit it
    by the text after their versions (:meth:`groups`), and of these reads the versions
    it takes (:meth:`since`); the names of a PyPI page's other platforms, Pythons and
    releases (most of its thousands) are never cut. One of every platform and Python
    asks for every name."""

    __slots__ = (
        "_fits",
        "_groups",
        "_newer",
        "_offers",
        "_ranked",
        "_versions",
        "bounded",
        "cuts",
        "names",
        "page",
        "parsed",
        "ranks",
    )

    def __init__(self, page: Page) -> None:
        self.page = page
        # The names of the page's links, by position.
        self.names = list(map(_FILENAME, page.links))
        # Whether every name of the page is within the version bounds, checked for all
        # the names at once (else name by name, when each is read).
        self.bounded = _bounded(self.names)
        # The names cut into their fields so far, by position (None: no wheel's name,
        # or past the bounds).
        self.cuts: dict[int, list[str] | None] = {}
        # The version fields of the names read so far, by position (see since).
        self._versions: dict[int, str] = {}
        # The names grouped by what their tag fields say (see groups); then, by the
        # places and (interpreter, ABI) pairs a flavour accepts, the positions of the
        # wheels that fit (a page's flavours accept a few).
        self._groups: tuple[list[str | None], dict[_Fields, list[str]]] | None = None
        self._fits: dict[tuple[_Pairs, _Pairs | None], tuple[int, ...]] = {}
        self.parsed: dict[int, _File | None] = {}
        # The rank of each version object of the files parsed (by its identity; the
        # objects are held, so their ids stand), oldest lowest (see _rank).
        self.ranks: dict[int, int] = {}
        self._ranked: list[Version] = []
        self._offers: bool | None = None
        # Whether each version text is of a release or newer, by the release (see since).
        self._newer: dict[str, dict[str, bool]] = {}

    def cut(self, indices: Sequence[int]) -> list[list[str] | None]:
        """The names of the wheels at ``indices`` cut into their fields (:func:`_cut`),
        each cut once."""
        cuts = self.cuts
        names = self.names
        for i in indices:
            if i not in cuts:
                cuts[i] = _cut(names[i], bounded=self.bounded)
        return list(map(cuts.__getitem__, indices))

    def fitting(self, places: _Pairs, allowed: _Pairs | None) -> tuple[int, ...]:
        """The positions of the wheels whose tag fields fit the places (OS, arch) and
        the (interpreter, ABI) pairs a flavour accepts (:func:`_fields_fit`; None: every
        Python), in page order; found once per places and pairs. A name that is no
        wheel's name, or past the bounds, is never one."""
        found = self._fits.get((places, allowed))
        if found is None:
            rests, groups = self.groups()
            fit = {
                rest
                for tags, members in groups.items()
                if _fields_fit(tags, places, allowed)
                for rest in members
            }
            found = self._fits[places, allowed] = tuple(
                compress(count(), map(fit.__contains__, rests))
            )
        return found

    def groups(self) -> tuple[list[str | None], dict[_Fields, list[str]]]:
        """Each name's text after its name and version fields (None: past the bounds),
        and these texts grouped by what their tag fields say (:func:`_tail`,
        :func:`_tag_set`; those of no wheel's name in none), each text read once: made
        when a flavour of some platforms or Pythons first asks (one of any takes every
        wheel).

        Of a wheel's name, that text is its build tag (if any), its three tag fields and
        ``.whl`` (``packaging``'s parser reads no dash in the name or the version
        field): a page's names share a few dozen, and only these are read further."""
        if self._groups is None:
            names = self.names
            rests: list[str | None] = [name.split("-", 2)[-1] for name in names]
            if not self.bounded:  # a name past the bounds has no tag set to read
                rests = [
                    None if check_version_text(name) is not None else rest
                    for name, rest in zip(names, rests, strict=True)
                ]
            by_tail: dict[str, list[str]] = {}
            for rest in dict.fromkeys(rests):
                if rest is not None and (tail := _tail(rest)) is not None:
                    by_tail.setdefault(tail, []).append(rest)
            groups: dict[_Fields, list[str]] = {}
            for tail, members in by_tail.items():
                groups.setdefault(_tag_set(*tail.lower().split("-")), []).extend(members)
            self._groups = rests, groups
        return self._groups

    def since(self, release: Version, indices: Sequence[int]) -> list[int]:
        """Those of the wheels at ``indices`` of ``release`` or a newer one, in their
        order, by their version fields as the parse reads them (a name whose version
        does not parse is no candidate either way); each version text judged once per
        release asked for (the entries of one release on a page share it)."""
        newer = self._newer.setdefault(str(release), {})
        versions = self._versions
        names = self.names
        for i in indices:  # a wheel's name: its version is its second field
            if i not in versions:
                versions[i] = names[i].split("-", 2)[1]
        texts = list(map(versions.__getitem__, indices))
        for t in set(texts).difference(newer):
            newer[t] = (v := _version_field(t)) is not None and v >= release
        return list(compress(indices, map(newer.__getitem__, texts)))

    @property
    def offers_metadata(self) -> bool:
        """Whether a link of the page offers a metadata file (PEP 658): most pages read
        from a cache offer none, and then no file of theirs has one to read."""
        if self._offers is None:
            links = self.page.links
            self._offers = list(map(_CORE_METADATA, links)).count(None) < len(links)
        return self._offers

    def wheels(self) -> list[int]:
        """The positions of the page's wheels (wheel names within the bounds), in page
        order: every name ending ``.whl`` cut."""
        named = [i for i, name in enumerate(self.names) if name.endswith(".whl")]
        return [i for i, cut in zip(named, self.cut(named), strict=True) if cut is not None]

    def files(self, indices: Sequence[int]) -> list[_File | None]:
        """The candidates of the links at ``indices`` and their local labels (None: no
        wheel's name), in that order. Those not asked for before are made at once, a
        column per field (:func:`from_columns`): a flavour asks for dozens."""
        parsed = self.parsed
        todo = [i for i in indices if i not in parsed]
        if todo:
            self._parse(todo)
        return list(map(parsed.__getitem__, indices))

    def _parse(self, todo: list[int]) -> None:
        page = self.page
        links = list(map(page.links.__getitem__, todo))
        filenames = list(map(_FILENAME, links))
        found = [None if cut is None else _cut_fields(cut) for cut in self.cut(todo)]
        rows = [k for k, x in enumerate(found) if x is not None]
        if len(rows) < len(todo):
            for k, x in enumerate(found):
                if x is None:
                    self.parsed[todo[k]] = None
            links = [links[k] for k in rows]
            filenames = [filenames[k] for k in rows]
            todo = [todo[k] for k in rows]
            found = [found[k] for k in rows]
        fields = [x for x in found if x is not None]
        versions = [x[1] for x in fields]
        tags = [x[2] for x in fields]
        made = from_columns(
            Candidate,
            {
                "name": [x[0] for x in fields],
                "version": versions,
                "filename": filenames,
                "url": list(map(_URL, links)),
                "tags": tags,
                "sha256": [x.hashes.get("sha256") for x in links],
                "requires_python": list(map(_specifier, map(_REQUIRES_PYTHON, links))),
                "link": links,
                "page": [page] * len(links),
            },
        )
        # A page's files share a few dozen versions: each one's label read once.
        labels: dict[int, str | None] = {}
        for v in versions:
            if id(v) not in labels:
                labels[id(v)] = v.local
        self._rank([v for v in versions if id(v) not in self.ranks])
        self.parsed.update(
            zip(
                todo,
                [(c, labels[id(v)]) for c, v in zip(made, versions, strict=True)],
                strict=True,
            )
        )

    def _rank(self, fresh: list[Version]) -> None:
        """Rank the versions parsed so far with ``fresh`` ones (objects not ranked
        yet) among them: their order, equal versions ranked alike (one rank for two
        objects of one version). Once per parse that brings new versions, not once per
        flavour: a flavour orders its files by these ranks (only their order within a
        list is read, which new versions do not change)."""
        if not fresh:
            return
        self._ranked.extend({id(v): v for v in fresh}.values())
        rank = {v: i for i, v in enumerate(sorted(self._ranked))}
        self.ranks = {id(v): rank[v] for v in self._ranked}


_FILENAME = attrgetter("filename")
_URL = attrgetter("url")
_VERSION = attrgetter("version")
_REQUIRES_PYTHON = attrgetter("requires_python")
_CORE_METADATA = attrgetter("core_metadata")


# The files of the pages read, by the identity of the page: every flavour of a page
# asks (see _PageFiles).
_PAGES: dict[int, _PageFiles] = {}
_PAGES_KEPT = 64


def _page_files(page: Page) -> _PageFiles:
    hit = _PAGES.get(id(page))
    if hit is not None and hit.page is page:
        return hit
    if len(_PAGES) >= _PAGES_KEPT:
        _PAGES.clear()
    made = _PAGES[id(page)] = _PageFiles(page)
    return made


def _bounded(names: list[str]) -> bool:
    """Whether all ``names`` are within the version bounds, checked at once (a newline
    is no digit: no number runs from one name into the next)."""
    return (
        max(map(len, names), default=0) <= MAX_VERSION_LENGTH
        and check_version_text("\n".join(names), max_length=None) is None
    )


def _tail(rest: str) -> str | None:
    """The text of the three tag fields of a name whose text after its version field
    is ``rest`` (:meth:`_PageFiles.groups`), as :func:`_cut` cuts it; None when it is no
    wheel's name (not ``.whl``, or not 4 or 5 dashes in all: 2 or 3 in ``rest``)."""
    dashes = rest.count("-")
    if dashes not in (2, 3) or not rest.endswith(".whl"):
        return None
    return rest[:-4].split("-", dashes - 2)[-1]


def _cut(filename: str, *, bounded: bool) -> list[str] | None:
    """A ``.whl`` name cut as ``packaging``'s parser cuts it: its name, version, build
    tag (if any) and the text of its three tag fields; None when it is no wheel's name
    or past the version bounds (``bounded``: known to be within them)."""
    stem = filename[:-4]
    dashes = stem.count("-")
    if dashes not in (4, 5) or not (bounded or check_version_text(filename) is None):
        return None
    return stem.split("-", dashes - 2)


def narrow(flavour: IndexFlavour, every: Sequence[Candidate]) -> list[Candidate]:
    """:func:`candidates` of ``flavour`` taken from ``every``, its page's candidates for
    every platform and Python (the same distribution and local label): the same list,
    as these checks on the parsed tags are what :func:`candidates` checks on the names'
    tag fields (:func:`_fields_fit`)."""
    if not every or (not flavour.platforms and not flavour.python):
        return list(every)
    places = flavour_places(flavour)
    allowed = _python_pairs(frozenset(flavour.python)) if flavour.python else None
    # One verdict per tag set (the candidates of a page share a few dozen objects).
    fits: dict[int, bool] = {}
    out = []
    for c in every:
        ok = fits.get(id(c.tags))
        if ok is None:
            tag_places, pairs = _read_tags(c.tags)
            ok = fits[id(c.tags)] = not (places and tag_places.isdisjoint(places)) and (
                allowed is None or not allowed.isdisjoint(pairs)
            )
        if ok:
            out.append(c)
    return out


def _fields_fit(
    fields: _Fields,
    places: Set[tuple[str, str]],
    allowed: frozenset[tuple[str, str]] | None,
) -> bool:
    """Whether the tags of a wheel name fit the places (OS, arch) and the (interpreter,
    ABI) pairs a flavour accepts, read from the name's last three fields as
    ``packaging``'s parser reads them (lower-cased, dotted sets: its tags are these
    fields' every combination), so a name that does not fit is never parsed."""
    plats, pairs = fields
    # The flavour's platforms name an OS and architecture (the planner checks the exact
    # tags, glibc included, against the machine).
    if places and plats.isdisjoint(places):
        return False
    # abi3 from cp38 on 3.12, py3-none anywhere: packaging's tags decide (and then
    # requires-python, checked by the planner).
    return allowed is None or not allowed.isdisjoint(pairs)


@functools.lru_cache(maxsize=4096)
def _tag_set(
    interps: str, abis: str, plats: str
) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """The places (OS, arch) and (interpreter, ABI) pairs of a wheel name's tag fields,
    lower-cased (a compressed set gives every combination, as ``packaging`` reads it);
    cached, as a page's names share a few dozen tag sets."""
    return (
        frozenset(place_of(p) for p in plats.split(".")),
        frozenset((i, a) for i in interps.split(".") for a in abis.split(".")),
    )


@functools.lru_cache(maxsize=4096)
def _read_tags(
    tags: frozenset[Tag],
) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """The places (OS, arch) and (interpreter, ABI) pairs of a tag set; cached, as the
    names of a page share a few dozen tag sets (the same objects: see :func:`_cut_fields`)."""
    return (
        frozenset(place_of(t.platform) for t in tags),
        frozenset((t.interpreter, t.abi) for t in tags),
    )


def _cut_fields(cut: list[str]) -> tuple[NormalizedName, Version, frozenset[Tag]] | None:
    """The name, version and tags of a wheel name cut into its fields (:func:`_cut`).

    ``packaging`` reads each field of a wheel name on its own (name, version, build
    tag, tag set); the names of a page share a few versions and tag sets, so each field
    is parsed once, by ``packaging``'s own parser of it (or in a name of that field and
    fixed valid others): the same values and the same refusals as parsing the whole
    name."""
    if len(cut) == 4 and not _build_field(cut[2]):
        return None  # a bad build tag (its value is not used)
    name = _name_field(cut[0])
    version = _version_field(cut[1])
    tags = _tags_field(cut[-1])
    if name is None or version is None or tags is None:
        return None
    return name, version, tags


# Each field of a wheel name read once per text, cached by the field's own text (a
# page's names share a few names, versions and tag sets: a hit is one lookup of that
# text, no name is made to look it up).


@functools.lru_cache(maxsize=4096)
def _name_field(text: str) -> NormalizedName | None:
    found = _field(f"{text}-0-py3-none-any.whl")
    return None if found is None else found[0]


@functools.lru_cache(maxsize=4096)
def _version_field(text: str) -> Version | None:
    # ``packaging``'s parser reads the version field with ``Version`` alone (and the
    # whole name is within the version bounds): called here directly, not through a
    # made name whose other fields it would parse too.
    try:
        return Version(text)
    except InvalidVersion:
        return None


@functools.lru_cache(maxsize=4096)
def _build_field(text: str) -> bool:
    return _field(f"x-0-{text}-py3-none-any.whl") is not None


@functools.lru_cache(maxsize=4096)
def _tags_field(text: str) -> frozenset[Tag] | None:
    # Read by ``parse_tag`` alone, as the parser reads it (the text is the name's last
    # three fields), not through a made name. A bad field is an ``InvalidTag`` (a
    # ValueError: packaging 26.3 on; earlier ones read any three fields).
    try:
        return parse_tag(text)
    except ValueError:
        return None


def _field(
    filename: str,
) -> tuple[NormalizedName, Version, BuildTag, frozenset[Tag]] | None:
    """:func:`~resolver_hook.limits.parse_wheel_name` of a name made to read one field;
    None when refused. Its two steps called here, as that function calls them, without
    its in-function import (a few microseconds each of some 350 fields a plan reads)."""
    if check_version_text(filename) is not None:
        return None
    try:
        return parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None


@functools.lru_cache(maxsize=1024)
def place_of(platform: str) -> tuple[str, str]:
    """The (OS, arch) of a platform (``manylinux_2_28_x86_64`` -> linux, x86_64)."""
    p = parse_platform(platform)
    return p["os"], p["arch"]


def flavour_places(flavour: IndexFlavour) -> frozenset[tuple[str, str]]:
    """The places (OS, arch) of a flavour's platforms; empty: it names none (any)."""
    return _places(flavour.platforms)


@functools.lru_cache(maxsize=256)
def _places(platforms: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """:func:`flavour_places` of a platform list, read once per list (a manifest's
    entries name a few lists, each asked for by every lookup of their files)."""
    return frozenset(place_of(x) for pl in platforms for x in pl.split("."))


@functools.lru_cache(maxsize=1024)
def _specifier(text: str | None) -> SpecifierSet | None:
    """``requires-python`` as a specifier set; cached, as a page's files share a few
    (the set is only read, never changed)."""
    if not text:
        return None
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None  # a page's bad requires-python is ignored, as pip ignores it


def requires_dist(candidate: Candidate, source: PageSource) -> tuple[Requirement, ...] | None:
    """The ``Requires-Dist`` of a candidate from its PEP 658 metadata file; None when the
    page offers none or the snapshot has none. A file that cannot be read or does not
    match the hash its page gives raises :class:`MetadataError` (one note, nothing used)."""
    if candidate.link.core_metadata is None:
        return None
    try:
        found = source.metadata(candidate.link)
    except LookupError:
        return None
    except ResolverHookError as exc:
        raise MetadataError(exc.message) from None
    return parse_requires_dist(found.requires_dist)


def parse_requires_dist(values: Sequence[str]) -> tuple[Requirement, ...]:
    """``Requires-Dist`` values as requirements (bad ones skipped)."""
    out = []
    for value in values:
        try:
            out.append(requirement(value))
        except InvalidRequirement:
            continue
    return tuple(out)


@functools.lru_cache(maxsize=256)
def releases_by_label(texts: tuple[str, ...]) -> Mapping[str | None, tuple[Version, ...]]:
    """A page's compact rows (:attr:`~resolver_hook.index.model.Page.releases`) parsed
    once, by local label (page order kept within each): a range looks only at its own
    label's releases, not at the whole history of the page for every range; the
    snapshot's loader checks its rows with it, so the planner finds them parsed
    (callers only read it)."""
    out: dict[str | None, list[Version]] = {}
    for v in map(Version, texts):
        out.setdefault(v.local, []).append(v)
    return {label: tuple(vs) for label, vs in out.items()}
