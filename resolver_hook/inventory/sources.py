"""How a plan gets its pages: the index client, with the shipped snapshot behind it.

:class:`FallbackSource` asks its primary source (an
:class:`~resolver_hook.index.IndexClient`; with ``--offline`` one that reads only its
page cache) for every page at once. A page it cannot give is served from the shipped
snapshot; one the snapshot lacks too is left out (its flavours keep their page form).
A page the server answered is the page: one it says does not exist (HTTP 404 or 410; a
mirror that serves some of the upstream's pages) lists no file, and the snapshot's rows
for it are not used, so no pin names a page that does not list it; offline, the page
cache's record of that answer counts the same.
The pages that failed make one note per host and cause: a first line that sums them up
(``download.pytorch.org unreachable (name not resolved): 5 pages; 1 from the snapshot of
2026-12-02, 4 planned from the rules alone``; one page is named there:
``127.0.0.1 could not be read (304 Not Modified to a plain request): URL; planned from
the rules alone``), then one indented line per page with its failure (shown under
``-v`` and kept whole in ``--json``).
:class:`SnapshotOnly` reads nothing but the snapshot (no client at all). Mirrors: the
client applies them to what it reads; snapshot pages get them here, so a plan pins the
mirror's URLs either way. A page read without core metadata (an index or a cached
copy that offers none) borrows the snapshot's for a file of the same URL and sha256:
the same bytes have the same metadata. A file a mirror lists with another sha256 than
the snapshot records for that file (the same name on the same upstream page, or the
same upstream URL) refuses the plan (:class:`~resolver_hook.errors.OperationalError`):
the mirror does not serve the upstream's bytes; with ``--trust-mirror-hashes`` the
mirror's file is kept, and a note says so. Nothing here opens a URL.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from resolver_hook.errors import OperationalError
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import replace, valueclass
from resolver_hook.index.errors import UNREACHABLE
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.mirrors import Mirror, apply_mirrors, upstream_of
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import PageSource
from resolver_hook.inventory.snapshot import Snapshot, SnapshotSource
from resolver_hook.manifest.urls import usual_host

__all__ = ["TRUST_FLAG", "FallbackSource", "SnapshotOnly"]

#: The flag that pins a mirror's file whose sha256 is not the snapshot's for it.
TRUST_FLAG = "--trust-mirror-hashes"

#: The causes that mean the server answered and the page does not exist there.
ABSENT = frozenset({"HTTP 404", "HTTP 410"})


class SnapshotOnly:
    """The shipped snapshot alone; ``why`` starts its notes (``offline``)."""

    def __init__(
        self,
        snapshot: Snapshot | Callable[[], Snapshot],
        mirrors: Sequence[Mirror] = (),
        *,
        why: str = "offline",
    ) -> None:
        self._snapshot = snapshot
        self._mirrors = tuple(mirrors)
        self._why = why
        self._notes: list[str] = []
        self._upstream: dict[str, str] = {}  # a mirrored link URL -> the snapshot's
        # Every page and metadata file is a local read (the snapshot; offline, the page
        # cache too): read one after another, as a thread only slows a local read.
        self.local = True

    @functools.cached_property
    def snapshot(self) -> Snapshot:
        """The snapshot, read when first needed (given as a function): a plan whose
        pages are all read, with their metadata, needs none (~8 ms to read and check)."""
        given = self._snapshot
        return given() if callable(given) else given

    @functools.cached_property
    def _snap(self) -> SnapshotSource:
        return SnapshotSource(self.snapshot)

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        out: dict[str, Page | Exception] = {}
        missing = []
        for url, page in self._snap.pages(urls).items():
            if isinstance(page, Page):
                out[url] = self._keep(page)
            else:
                out[url] = page
                missing.append(redact(url))
        if len(missing) < len(out):
            self._note(
                f"{self._why}: files and hashes from the shipped snapshot of "
                f"{self.snapshot.date.isoformat()}; releases since then are not seen"
            )
        if missing:
            self._note(
                f"{self._why}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                "in the shipped snapshot: planned from the manifests alone, without files or hashes"
            )
        return out

    def _keep(self, page: Page) -> Page:
        """The snapshot's ``page`` as read through the mirrors. A file of a mirrored page
        on a host no mirror covers (PyTorch's pages list files on download-r2) is not
        pinned: that URL goes past the mirror, where an air-gapped machine cannot
        follow. Its release stays known, planned in page form on the mirror's page."""
        if not self._mirrors:
            return page
        url = apply_mirrors(page.url, self._mirrors)
        links, past = [], []
        for x in page.links:
            shown = apply_mirrors(x.url, self._mirrors)
            if shown == x.url and url != page.url:
                past.append(x)
                continue
            self._upstream[shown] = x.url
            links.append(replace(x, url=shown))
        releases = page.releases
        if past:
            hosts = sorted({_host(x.url) for x in past})
            self._note(
                f"the shipped snapshot's files of {redact(url)} are on {', '.join(hosts)}, "
                "which no mirror covers: not pinned there; the releases they show are "
                "planned in page form on the mirror"
            )
            releases = tuple(dict.fromkeys([*releases, *filter(None, map(_version, past))]))
        return replace(page, url=url, links=tuple(links), releases=releases)

    def metadata(self, link: Link) -> Metadata:
        upstream = replace(link, url=self._upstream.get(link.url, link.url))
        return self._snap.metadata(upstream)

    @property
    def notes(self) -> list[str]:
        """What reading showed, for a person (see the module docstring)."""
        return list(self._notes)

    def _note(self, text: str) -> None:
        if text not in self._notes:
            self._notes.append(text)


@valueclass
class _Unread:
    """A page the primary source could not give: as shown, why, and what served it."""

    asked: str  # the page's URL as the manifest gives it
    url: str
    why: str
    cause: str
    from_snapshot: bool
    absent: bool = False  # the server said the page does not exist: nothing planned


class FallbackSource(SnapshotOnly):
    """The primary source (the index client), the snapshot for pages that fail."""

    def __init__(
        self,
        primary: PageSource,
        snapshot: Snapshot | Callable[[], Snapshot],
        mirrors: Sequence[Mirror] = (),
        *,
        offline: bool = False,
        trust_mirror_hashes: bool = False,
        names: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__(snapshot, mirrors)
        self._primary = primary
        # Whether the snapshot's text holds a URL's start (builtin_names), asked before
        # the snapshot is read for a page's files without core metadata; None: read it.
        self._names = names
        self._offline = offline
        self.local = offline
        self._trust = trust_mirror_hashes
        self._from_snapshot: set[str] = set()
        self._known: dict[str, Link] | None = None  # snapshot links with metadata, by URL
        # Each failed page once, in the order met (a dict: a plan asks for dozens of
        # pages, each a lookup here, not a scan of those before it).
        self._unread: dict[_Unread, None] = {}
        self._hashes: dict[str, str] | None = None  # the snapshot's sha256 of each file URL

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        got = self._primary.pages(list(urls))
        out: dict[str, Page | Exception] = {}
        for url in urls:
            page = got.get(url, LookupError(f"{url}: no answer"))
            if isinstance(page, Page):
                out[url] = self._borrow(self._agreed(page, url))
                continue
            cause = getattr(page, "cause", "")
            shown = redact(apply_mirrors(url, self._mirrors))
            if cause in ABSENT:
                # Answered, and not there (now, or offline when last read): that answer
                # outranks the snapshot.
                out[url] = Page(url=apply_mirrors(url, self._mirrors), links=(), absent=True)
                unread = _Unread(
                    asked=url, url=shown, why=_reason(page), cause=cause,
                    from_snapshot=False, absent=True,
                )  # fmt: skip
                self._unread[unread] = None
                continue
            snap = self._snap.pages([url])[url]
            if isinstance(snap, Page):
                out[url] = kept = self._keep(snap)
                self._from_snapshot.update(x.url for x in kept.links)
            else:
                out[url] = page
            unread = _Unread(
                asked=url,
                url=shown,
                why=_reason(page),
                cause=cause,
                from_snapshot=isinstance(snap, Page),
            )
            self._unread[unread] = None
        return out

    @property
    def notes(self) -> list[str]:
        return [*self._notes, *self._unread_notes()]

    @property
    def unread(self) -> dict[str, str]:
        """Each page that failed when read (its URL as asked, and as mirrored), and why
        in a few words:
        ``download.pytorch.org unreachable (name not resolved)``. Offline, none: a page
        left unread is not one that cannot be read."""
        out: dict[str, str] = {}
        for x in [] if self._offline else self._unread:
            host = _host(x.url)
            if x.cause in UNREACHABLE:
                why = f"{host} unreachable ({x.cause})"
            else:
                why = f"{host} could not be read ({x.cause or x.why})"
            # A plan names the page as asked, or through its mirror: both are keys.
            out[x.asked] = out[apply_mirrors(x.asked, self._mirrors)] = why
        return out

    def _unread_notes(self) -> list[str]:
        """One note per host and cause (see the module docstring)."""
        groups: dict[tuple[str, str], list[_Unread]] = {}
        for x in self._unread:
            host = _host(x.url)
            offline = self._offline and not x.absent
            groups.setdefault((host, "" if offline else x.cause), []).append(x)
        if not groups:
            return []
        date = self.snapshot.date.isoformat()
        out = []
        for (host, cause), pages in groups.items():
            if self._offline and cause not in ABSENT:
                head = f"offline: {host} not in the page cache"
            elif cause in UNREACHABLE:
                head = f"{host} unreachable ({cause})"
            elif cause in ABSENT and self._offline:
                head = f"offline: {host} had no such page when last read ({cause})"
            elif cause in ABSENT:
                head = f"{host} has no such page ({cause})"
            else:
                head = f"{host} could not be read ({cause or 'see each page'})"
            served = sum(x.from_snapshot for x in pages)
            gone = sum(x.absent for x in pages)
            n = len(pages)
            if n == 1:  # the page itself, named
                (x,) = pages
                if x.absent:
                    used = "no build planned from it"
                elif x.from_snapshot:
                    used = f"planned from the snapshot of {date}"
                else:
                    used = "planned from the rules alone"
                lines = [f"{head}: {x.url}; {used}"]
            else:
                parts = []
                if served:
                    parts.append(f"{served} from the snapshot of {date}")
                if n > served + gone:
                    parts.append(f"{n - served - gone} planned from the rules alone")
                if gone:  # a cause of its own (HTTP 404): every page of the group
                    parts.append("no build planned from them")
                lines = [f"{head}: {n} pages; {', '.join(parts)}"]
            for x in pages:
                said = x.why if x.why.startswith(x.url) else f"{x.url}: {x.why}"
                if x.absent:
                    lines.append(f"  {said} (no build planned from it)")
                    continue
                used = f"the snapshot of {date}" if x.from_snapshot else "the rules alone"
                lines.append(f"  {said} (planned from {used})")
            out.append("\n".join(lines))
        return out

    def _agreed(self, page: Page, asked: str) -> Page:
        """``page`` (read through a mirror for ``asked``, the upstream page) checked
        against the snapshot: a file it lists with another sha256 than the snapshot
        records for that file (the same name on the same upstream page, or the same
        upstream URL) is refused (the mirror does not serve the upstream's bytes), or
        with ``trust_mirror_hashes`` kept, with a note; a file it lists with no sha256
        gets the snapshot's, with a note."""
        if not self._mirrors or apply_mirrors(asked, self._mirrors) == asked:
            return page
        if self._hashes is None:
            self._hashes = {
                x.url: x.sha256 for p in self.snapshot.pages.values() for x in p.links if x.sha256
            }
        recorded = self.snapshot.pages.get(asked)
        by_name = {x.filename: x for x in recorded.links if x.sha256} if recorded else {}
        date = self.snapshot.date.isoformat()
        links, unhashed = [], 0
        for x in page.links:
            same = by_name.get(x.filename)
            if same is not None:
                known, where = same.sha256, f"that file on {asked}"
            else:
                upstream = upstream_of(x.url, self._mirrors)
                known = self._hashes.get(upstream) if upstream != x.url else None
                where = upstream
            if known is not None and not x.sha256:
                # A mirror that lists no hash (a proxy that drops the fragment): the
                # upstream's, so the installer checks the mirror serves those bytes.
                links.append(replace(x, hashes={**x.hashes, "sha256": known}))
                unhashed += 1
                continue
            links.append(x)
            if known is None or not x.sha256 or x.sha256 == known:
                continue
            said = (
                f"{redact(page.url)} lists {x.filename} with sha256 {x.sha256}; the shipped "
                f"snapshot of {date} records {known} for {where}"
            )
            if not self._trust:
                raise OperationalError(
                    f"{said}: the mirror does not serve the upstream's file",
                    hint=f"fix the mirror, or give {TRUST_FLAG} to pin the mirror's file "
                    "with the mirror's sha256",
                )
            self._note(f"{said}: pinned with the mirror's sha256 ({TRUST_FLAG})")
        if not unhashed:
            return page
        files = "1 file" if unhashed == 1 else f"{unhashed} files"
        self._note(
            f"{redact(page.url)} lists {files} with no sha256 that the shipped snapshot of "
            f"{date} records on {asked}: pinned with the snapshot's sha256, which the "
            "installer checks"
        )
        return replace(page, links=tuple(links))

    def _borrow(self, page: Page) -> Page:
        """``page`` with the snapshot's core metadata on each link that has none and
        whose file (upstream URL and sha256) the snapshot has metadata for."""
        lacking = [x for x in page.links if x.core_metadata is None]
        if not lacking or not self._may_know(lacking) or not self.snapshot.metadata:
            return page
        if self._known is None:
            self._known = {
                x.url: x
                for p in self.snapshot.pages.values()
                for x in p.links
                if x.url in self.snapshot.metadata and x.core_metadata is not None
            }
        links = []
        for x in page.links:
            if x.core_metadata is not None:
                links.append(x)
                continue
            upstream = upstream_of(x.url, self._mirrors) if self._mirrors else x.url
            known = self._known.get(upstream)
            if known is not None and x.sha256 and known.sha256 == x.sha256:
                self._upstream[x.url] = upstream
                self._from_snapshot.add(x.url)
                links.append(replace(x, core_metadata=known.core_metadata))
            else:
                links.append(x)
        return replace(page, links=tuple(links))

    def _may_know(self, links: Sequence[Link]) -> bool:
        """False when the snapshot lists none of ``links`` (upstream): its text holds
        none of their starts (scheme and host: an index the snapshot never read, a
        local one), so it is not read for them. Asked for a few hosts at most (each
        question reads its whole text)."""
        if self._names is None or "snapshot" in self.__dict__:  # read already
            return True
        starts = {
            _start(upstream_of(x.url, self._mirrors) if self._mirrors else x.url) for x in links
        }
        return len(starts) > _STARTS_ASKED or any(map(self._names, starts))

    def metadata(self, link: Link) -> Metadata:
        if link.url in self._from_snapshot:
            return super().metadata(link)
        found: Metadata = self._primary.metadata(link)
        return found


# How many hosts of a page's files are looked for in the snapshot's text before it is
# read: past that, reading it once is quicker than looking (a hostile page may list
# files on thousands of hosts).
_STARTS_ASKED = 8


def _start(url: str) -> str:
    """``scheme://host/`` as ``url`` writes it; the whole of a URL with no path."""
    at = url.find("://")
    end = url.find("/", at + 3) if at >= 0 else -1
    return url if end < 0 else url[: end + 1]


def _reason(exc: Exception) -> str:
    message = getattr(exc, "message", None)
    text = str(message or exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def _version(link: Link) -> str | None:
    """The version in a wheel's file name (``2.13.0+cu130``), or None."""
    try:
        return str(parse_wheel_filename(link.filename)[1])
    except InvalidWheelFilename:
        return None


def _host(url: str) -> str:
    """The host ``url`` names (else ``url``), for a note: the usual https link's read as
    text (:func:`~resolver_hook.manifest.urls.usual_host`), any other by urlsplit."""
    found = usual_host(url)
    if found is not None:
        return found.lower()
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or url
