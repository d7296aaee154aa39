"""How a plan gets its pages: the index client, with the shipped snapshot behind it.

:class:`FallbackSource` asks its primary source (an
:class:`~resolver_hook.index.IndexClient`; with ``--offline`` one that reads only its
page cache) for every page at once. A page it cannot give is served from the shipped
snapshot with one note naming the page, the failure and the snapshot's date; one the
snapshot lacks too is left out with a note (its flavours keep their page form).
:class:`SnapshotOnly` reads nothing but the snapshot (no client at all). Mirrors: the
client applies them to what it reads; snapshot pages get them here, so a plan pins the
mirror's URLs either way. A page read without core metadata (an index or a cached
copy that offers none) borrows the snapshot's for a file of the same URL and sha256:
the same bytes have the same metadata. A file a mirror lists with another sha256 than
the snapshot's for the same upstream file is left out with a note. Nothing here opens
a URL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from resolver_hook.index.fetch import redact
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.mirrors import Mirror, apply_mirrors, upstream_of
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import PageSource
from resolver_hook.inventory.snapshot import Snapshot, SnapshotSource

__all__ = ["FallbackSource", "SnapshotOnly"]


class SnapshotOnly:
    """The shipped snapshot alone; ``why`` starts its notes (``offline``)."""

    def __init__(
        self, snapshot: Snapshot, mirrors: Sequence[Mirror] = (), *, why: str = "offline"
    ) -> None:
        self._snap = SnapshotSource(snapshot)
        self._mirrors = tuple(mirrors)
        self._why = why
        self.snapshot = snapshot
        self.notes: list[str] = []
        self._upstream: dict[str, str] = {}  # a mirrored link URL -> the snapshot's

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
        if not self._mirrors:
            return page
        links = []
        for x in page.links:
            shown = apply_mirrors(x.url, self._mirrors)
            self._upstream[shown] = x.url
            links.append(dataclasses.replace(x, url=shown))
        return dataclasses.replace(
            page, url=apply_mirrors(page.url, self._mirrors), links=tuple(links)
        )

    def metadata(self, link: Link) -> Metadata:
        upstream = dataclasses.replace(link, url=self._upstream.get(link.url, link.url))
        return self._snap.metadata(upstream)

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


class FallbackSource(SnapshotOnly):
    """The primary source (the index client), the snapshot for pages that fail."""

    def __init__(
        self,
        primary: PageSource,
        snapshot: Snapshot,
        mirrors: Sequence[Mirror] = (),
        *,
        offline: bool = False,
    ) -> None:
        super().__init__(snapshot, mirrors)
        self._primary = primary
        self._offline = offline
        self._from_snapshot: set[str] = set()
        self._known: dict[str, Link] | None = None  # snapshot links with metadata, by URL
        self._hashes: dict[str, str] | None = None  # the snapshot's sha256 of each file URL

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        got = self._primary.pages(list(urls))
        out: dict[str, Page | Exception] = {}
        served: list[str] = []
        lacking: list[str] = []
        for url in urls:
            page = got.get(url, LookupError(f"{url}: no answer"))
            if isinstance(page, Page):
                out[url] = self._borrow(self._agreed(page))
                continue
            snap = self._snap.pages([url])[url]
            shown = redact(apply_mirrors(url, self._mirrors))
            if isinstance(snap, Page):
                out[url] = kept = self._keep(snap)
                self._from_snapshot.update(x.url for x in kept.links)
                served.append(shown if self._offline else f"{shown} ({_reason(page)})")
            else:
                out[url] = page
                lacking.append(shown if self._offline else f"{shown} ({_reason(page)})")
        if lacking:
            head = "offline: not in the page cache" if self._offline else "could not read"
            self._note(
                f"{head}: {', '.join(lacking)}; the shipped snapshot has no copy "
                f"({self.snapshot.date.isoformat()}): their flavours are planned from the "
                "manifests alone, without files or hashes"
            )
        if served:
            date = self.snapshot.date.isoformat()
            head = "offline, not in the page cache" if self._offline else "could not read"
            self._note(
                f"{head}: {', '.join(served)}: using the shipped snapshot of {date} "
                f"for {'it' if len(served) == 1 else 'them'}"
            )
        return out

    def _agreed(self, page: Page) -> Page:
        """``page`` without the files a mirror lists with another sha256 than the
        snapshot's for the same upstream file (the mirror does not serve the upstream's
        bytes): each left out, with a note."""
        if not self._mirrors:
            return page
        if self._hashes is None:
            self._hashes = {
                x.url: x.sha256 for p in self.snapshot.pages.values() for x in p.links if x.sha256
            }
        kept = []
        for x in page.links:
            upstream = upstream_of(x.url, self._mirrors)
            known = self._hashes.get(upstream) if upstream != x.url else None
            if known is not None and x.sha256 and x.sha256 != known:
                self._note(
                    f"{redact(page.url)} lists {x.filename} with sha256 {x.sha256}, the "
                    f"shipped snapshot of {self.snapshot.date.isoformat()} gives {known} "
                    f"for {upstream}: the mirror's file is not the upstream's; left out"
                )
                continue
            kept.append(x)
        return (
            page if len(kept) == len(page.links) else dataclasses.replace(page, links=tuple(kept))
        )

    def _borrow(self, page: Page) -> Page:
        """``page`` with the snapshot's core metadata on each link that has none and
        whose file (upstream URL and sha256) the snapshot has metadata for."""
        if not self.snapshot.metadata or all(x.core_metadata is not None for x in page.links):
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
            upstream = upstream_of(x.url, self._mirrors)
            known = self._known.get(upstream) if x.core_metadata is None else None
            if known is not None and x.sha256 and known.sha256 == x.sha256:
                self._upstream[x.url] = upstream
                self._from_snapshot.add(x.url)
                links.append(dataclasses.replace(x, core_metadata=known.core_metadata))
            else:
                links.append(x)
        return dataclasses.replace(page, links=tuple(links))

    def metadata(self, link: Link) -> Metadata:
        if link.url in self._from_snapshot:
            return super().metadata(link)
        found: Metadata = self._primary.metadata(link)
        return found


def _reason(exc: Exception) -> str:
    message = getattr(exc, "message", None)
    text = str(message or exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."
