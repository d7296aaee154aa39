"""The planner: manifests with their index pages read, and plans, under one :class:`Settings`.

Built once per command from its settings (pip builds its ``PackageFinder`` from a search
scope and preferences the same way): the page client, the shipped snapshot behind it
and the mirrors all come from the one value, never from flags or the environment read
at the point of use.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from packaging.specifiers import SpecifierSet

from resolver_hook.ground.credentials import keep
from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.index import IndexClient
from resolver_hook.index.mirrors import upstream_of
from resolver_hook.index.userindex import file_index, no_index_line
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory.expand import DEFAULT_INDEX, mirrored, with_notes
from resolver_hook.inventory.kept import Kept, kept_expansion
from resolver_hook.inventory.snapshot import builtin_names, builtin_snapshot
from resolver_hook.inventory.sources import FallbackSource
from resolver_hook.limits import parse_wheel_name
from resolver_hook.resolve import resolve
from resolver_hook.settings import Settings

if TYPE_CHECKING:
    from types import TracebackType

    from resolver_hook.host import HostProfile
    from resolver_hook.index.metadata import Metadata
    from resolver_hook.index.model import Link, Page
    from resolver_hook.inventory import PageSource
    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.resolve import Plan
    from resolver_hook.resolve.model import PackagePlan

__all__ = ["Planner", "Watch", "no_index_note", "requirement_names"]


def no_index_note(where: str, pages: Iterable[str]) -> str:
    """The plan read none of the default index's ``pages``: the installer reads no index."""
    names = sorted({p.rstrip("/").rsplit("/", 1)[-1] for p in pages})
    what = f"page of {names[0]} was" if len(names) == 1 else f"pages of {', '.join(names)} were"
    return (
        f"{where}: the installer reads no index, so the default index's {what} not read "
        "and no file on it is pinned; such a build is left to the installer, which reads "
        "the --find-links pages only"
    )


class _NoIndex:
    """A page source that reads no page of the default index ``index`` (the installer
    reads none: ``--no-index``), the snapshot's copy neither; ``skipped``: those asked."""

    def __init__(self, source: PageSource, index: str) -> None:
        self._source = source
        self._prefix = index.rstrip("/") + "/"
        self.skipped: list[str] = []

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        mine = [u for u in urls if u.startswith(self._prefix)]
        self.skipped.extend(u for u in mine if u not in self.skipped)
        got = dict(self._source.pages([u for u in urls if u not in mine])) if urls else {}
        got.update({u: LookupError(f"{u}: the installer reads no index") for u in mine})
        return got

    def metadata(self, link: Link) -> Metadata:
        return self._source.metadata(link)


class Watch(Protocol):
    """What shows a wait for pages (the CLI's progress line): entered around the reads,
    told of each page read where it shows anything (``on``)."""

    on: bool

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def advance(self, detail: str = "") -> None: ...


def requirement_names(reqs: ReqFile) -> list[str]:
    """The names the requirements ask for (what a plan reads the pages of), a wheel URL's
    too: it is judged against the builds its manifest's pages list."""
    return [e.name for e in reqs.requirements if e.name]


def _fits(filename: str, p: PackagePlan, accepted: frozenset[str]) -> bool:
    """Whether ``filename`` is a wheel of ``p``'s release that a Python with the wheel
    tags ``accepted`` can take."""
    try:
        name, version, _build, tags = parse_wheel_name(filename)
    except ValueError:
        return False  # an sdist, or no wheel name: never the file of a wheel pin
    return (
        name == p.distribution
        and str(version) == p.version
        and any(str(t) in accepted for t in tags)
    )


@valueclass
class Planner:
    """Reads pages and makes plans with ``settings``. ``today`` (the caller's clock) lets
    a plan note built-in data checked long ago. ``read_pages=False``: manifests are
    planned as given (``env create``'s passes). ``watch``: what shows a long wait for
    the pages (a fresh one per :meth:`pages`). ``record``: where the page cache
    declares what it served (:mod:`resolver_hook.ground.record`)."""

    settings: Settings
    today: datetime.date | None = None
    read_pages: bool = True
    watch: Callable[[], Watch] | None = None
    record: Recorder = NOWHERE

    def pages(
        self,
        manifests: Mapping[str, Manifest],
        names: Iterable[str] | None = None,
        profile: HostProfile | None = None,
        *,
        unread: dict[str, str] | None = None,
        pinned: Mapping[str, SpecifierSet] | None = None,
    ) -> Mapping[str, Manifest]:
        """``manifests`` with the index flavours of ``names`` (every manifest when None)
        and of what they couple with replaced by the files their pages list (the
        inventory), read through the index client; the shipped snapshot serves a page
        the client cannot give (offline: one not in its page cache). A flavour on the
        default index is read from the user's (``settings.indexes.default``), its credentials
        kept for its host. What the reading
        showed is in the manifests' ``notes``; ``unread``, when given, gets each page that
        could not be read (its URL, and why in a few words). ``pinned``: the
        requirements' specifiers by name (a yanked file is planned for an exact pin
        only, as pip does). ``read_pages=False``: ``manifests``, their own URLs through
        the mirrors. An expansion kept in the user cache for the same question is made
        again from it where no file it read has changed (:mod:`resolver_hook.inventory.kept`)."""
        if not self.read_pages:
            return mirrored(manifests, self.settings.mirrors)
        s = self.settings
        tags = list(profile.tags) if profile is not None and profile.tags else None
        chosen = list(manifests) if names is None else list(names)
        user = s.indexes.default
        index = keep(user.url) if user is not None else DEFAULT_INDEX
        read = functools.partial(
            self._read, manifests=manifests, chosen=chosen, tags=tags, index=index, pinned=pinned
        )
        done, notes, missed = kept_expansion(
            manifests,
            chosen,
            pinned=pinned,
            tags=tags,
            settings={
                "index": index,
                "no_index": s.indexes.no_index,
                "offline": s.offline,
                "refresh": s.refresh,
                "mirrors": [repr(m) for m in s.mirrors],
                "trust_mirror_hashes": s.trust_mirror_hashes,
                "allow_insecure": s.allow_insecure,
            },
            mirrors=s.mirrors,
            env=s.env,
            record=self.record,
            make=read,
        )
        if unread is not None:
            unread.update(missed)
        return with_notes(done, [*done.notes, *notes])

    def _read(
        self,
        record: Recorder,
        *,
        manifests: Mapping[str, Manifest],
        chosen: list[str],
        tags: list[str] | None,
        index: str,
        pinned: Mapping[str, SpecifierSet] | None,
    ) -> Kept:
        """The expansion of ``chosen`` read through the index client (its reads declared
        to ``record``), the notes the reading added, and the pages it could not read."""
        s = self.settings
        client = IndexClient(
            allow_insecure=s.allow_insecure,
            offline=s.offline,
            refresh=s.refresh,
            mirrors=s.mirrors,
            timeout=s.timeout,
            env=s.env,
            given=s.indexes.given,
            record=record,
        )
        source = FallbackSource(
            client,
            builtin_snapshot,
            s.mirrors,
            offline=s.offline,
            trust_mirror_hashes=s.trust_mirror_hashes,
            names=builtin_names,
        )
        wanted = None
        if tags is not None:
            accepted = frozenset(tags)

            def wanted(found: frozenset[object]) -> bool:  # a file's tags
                return any(str(t) in accepted for t in found)

        skipped = _NoIndex(source, index) if s.indexes.no_index else None
        expand = functools.partial(
            expand_manifests,
            manifests,
            chosen,
            skipped or source,
            wanted=wanted,
            default_index=index,
            mirrors=s.mirrors,
            pinned=pinned,
        )
        if self.watch is None:
            done = expand()
        else:
            with (waiting := self.watch()):
                if waiting.on:  # it shows (a terminal): the host of the last page read
                    from urllib.parse import urlsplit  # (with ipaddress, ~2 ms)

                    client.on_read = lambda url: waiting.advance(
                        f"done (last: {urlsplit(url).hostname})"
                    )
                done = expand()
        notes = [*source.notes, *client.notes]
        if skipped is not None and skipped.skipped:
            notes.append(no_index_note(s.indexes.no_index or "", skipped.skipped))
        return done, notes, source.unread

    def pages_for(
        self,
        manifests: Mapping[str, Manifest],
        reqs: ReqFile,
        profile: HostProfile | None = None,
    ) -> Mapping[str, Manifest]:
        """:meth:`pages` of the names ``reqs`` asks for, with their specifiers, the
        default index read as the installer reads it with ``reqs``' own option lines
        (:meth:`for_lines`)."""
        pinned: dict[str, SpecifierSet] = {}
        for e in reqs.requirements:
            if e.name and e.requirement is not None and e.requirement.url is None:
                pinned[e.name] = pinned.get(e.name, SpecifierSet()) & e.requirement.specifier
        planner = self.for_lines(reqs)
        return planner.pages(manifests, requirement_names(reqs), profile, pinned=pinned)

    def for_lines(self, reqs: ReqFile) -> Planner:
        """This planner with the index settings of ``reqs``' option lines read in: an
        ``-i URL`` line names the default index as the installer weighs it
        (:func:`~resolver_hook.index.userindex.file_index`)."""
        indexes = self.settings.indexes
        default = file_index(indexes.default, reqs.options, indexes.installer)
        told = indexes.no_index or no_index_line(reqs.options)
        if (default, told) == (indexes.default, indexes.no_index):
            return self
        settings = replace(self.settings, indexes=replace(indexes, default=default, no_index=told))
        return replace(self, settings=settings)

    def mirror_hashes(self, plan: Plan, profile: HostProfile) -> tuple[Plan, list[str]]:
        """``read_pages=False`` (env's passes): ``plan`` with each release it pins from a
        mirrored page hash-pinned where the shipped snapshot records that release's files
        on the upstream page: the sha256 of each one this machine's Python can take,
        as ``--hash`` options on its constraint line, so the installer refuses a file
        the mirror swapped (the same check ``read_pages`` makes of the mirror's page).
        What was pinned, in words, beside it."""
        mirrors = self.settings.mirrors
        if self.read_pages or not mirrors or not profile.tags:
            return plan, []
        snapshot = builtin_snapshot()
        accepted = frozenset(profile.tags)
        hashed: dict[str, str] = {}
        said = []
        for p in plan.packages:
            if p.action != "rewrite" or p.wheel or not p.constraint or not p.find_links:
                continue
            if p.versions is not None or p.version is None or "==" not in p.constraint:
                continue
            upstream = upstream_of(p.find_links, mirrors)
            page = snapshot.pages.get(upstream) if upstream != p.find_links else None
            if page is None:
                continue
            digests = sorted(
                {x.sha256 for x in page.links if x.sha256 and _fits(x.filename, p, accepted)}
            )
            if not digests:
                continue
            hashed[p.constraint] = p.constraint + "".join(f" --hash=sha256:{h}" for h in digests)
            said.append(
                f"{p.name} {p.version}: the shipped snapshot of {snapshot.date} records "
                f"{len(digests)} file(s) of it for this machine on {upstream}: pinned with "
                "their sha256, which the installer checks against the mirror's file"
            )
        if not hashed:
            return plan, []
        packages = tuple(
            replace(p, constraint=hashed[p.constraint]) if p.constraint in hashed else p
            for p in plan.packages
        )
        constraints = tuple(hashed.get(c, c) for c in plan.constraints)
        return replace(plan, packages=packages, constraints=constraints), said

    def plan(
        self,
        reqs: ReqFile | Iterable[str],
        manifests: Mapping[str, Manifest],
        profile: HostProfile,
    ) -> Plan:
        """The plan of ``reqs`` for ``profile``."""
        return resolve(reqs, manifests, profile, today=self.today)
