"""The index client: every page, metadata file and hashed file goes through here.

:class:`IndexClient` puts the parts together: mirrors (:mod:`~resolver_hook.index.mirrors`)
applied to every URL, the URL policy and the user's network settings
(:mod:`~resolver_hook.index.fetch`), the page cache (:mod:`~resolver_hook.index.cache`),
the two page forms (:mod:`~resolver_hook.index.htmlpage`, PEP 503;
:mod:`~resolver_hook.index.jsonpage`, PEP 691, asked for by ``Accept`` with HTML as the
fallback) and core metadata files (:mod:`~resolver_hook.index.metadata`).

The API the planner, the lock writer and ``manifest import`` use::

    client = IndexClient(allow_insecure=..., offline=..., refresh=..., mirrors=...)
    client.page(url)          # -> Page, or raises PageError / UsageError (URL policy)
    client.pages(urls)        # -> {url: Page | ResolverHookError}, the network concurrently
    client.metadata(link)     # -> Metadata of a link whose page offers it (PEP 658)
    client.metadata_file(link)  # -> its bytes, hash-checked
    client.download(url, path, max_bytes=...)  # -> the file written, its sha256
    client.notes              # what a person should hear (cache entries ignored, ...)

Caching: a page read within ``PAGE_FRESH_SECONDS`` is used as is; an older one is
revalidated (``If-None-Match`` / ``If-Modified-Since``; a 304 keeps it); ``refresh``
revalidates every page now; ``offline`` never opens a connection and serves what the
cache holds, any age, or a PageError saying the page is not cached. Local files
(``file:``) are never cached. Metadata files are cached by URL and used without asking
again when the page gave their hash (the hash is checked on every read).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from resolver_hook.errors import ResolverHookError, UsageError
from resolver_hook.ground import cache as _cache
from resolver_hook.ground.credentials import keep
from resolver_hook.ground.credentials import kept as kept_credentials
from resolver_hook.ground.record import NOWHERE, Recorder, sha256_hex
from resolver_hook.ground.userinfo import has_credentials, redact
from resolver_hook.ground.valueclass import replace
from resolver_hook.index.cache import CacheEntry, PageCache, links_from_json, links_to_json
from resolver_hook.index.errors import PageError, TooLarge
from resolver_hook.index.metadata import HashMismatch, Metadata, check_hashes, parse_metadata
from resolver_hook.index.mirrors import Mirror, apply_mirrors
from resolver_hook.index.model import JSON_TYPE, Link, Page, Source
from resolver_hook.limits import (
    MAX_CONCURRENT_PAGES,
    MAX_METADATA_BYTES,
    MAX_PAGES_PER_CALL,
    NETWORK_DEADLINE,
    PAGE_FRESH_SECONDS,
)
from resolver_hook.manifest.urls import check_read_url, each_url_problem

if TYPE_CHECKING:
    from pathlib import Path  # ~1 ms to import: the page cache's folder is joined as text

    # The network's module is imported when the network (or a local file) is read: a
    # plan the page cache answers never loads it.
    from resolver_hook.index.fetch import Response, Transport
    from resolver_hook.index.pipconfig import Given

# The cause of a page whose server gave no complete answer within the deadline
# (resolver_hook.index.fetch says it so).
STALLED = "no answer in time"
__all__ = [
    "ACCEPT",
    "IndexClient",
    "PageResult",
    "is_local",
    "parse_page",
]

# PEP 691's content negotiation, as pip asks: JSON first, HTML as the fallback.
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html; q=0.2, text/html; q=0.01"
# Media types an index (or find-links) page is served as, and any text/* (a saved page on
# a plain file server); anything else (an image, a wheel, application/json) is not a page.
_PAGE_TYPES = frozenset(
    {JSON_TYPE, "application/vnd.pypi.simple.v1+html", "text/html", "application/xhtml+xml"}
)

PageResult = Page | ResolverHookError


#: The answers that say a page does not exist, kept in the page cache as such.
_ABSENT = {404: "Not Found", 410: "Gone"}


def is_local(location: str) -> bool:
    """A path or ``file:`` URL (a Windows drive path too), not a network URL."""
    from urllib.parse import urlsplit  # (with ipaddress, ~2 ms): not on a plan's path

    try:
        scheme = urlsplit(location).scheme
    except ValueError:
        return False
    return scheme in ("", "file") or (len(scheme) == 1 and location[1:3] in (":\\", ":/"))


def _is_file_url(url: str) -> bool:
    """Whether ``url``'s scheme is ``file``. A URL that starts as an index's does (a
    plan asks for dozens of pages, each first parsed here; ~3 us each) has another."""
    if url.startswith(("https://", "http://")):
        return False
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).scheme.lower() == "file"
    except ValueError:  # "https://[::1": the URL policy says what is wrong with it
        return False


def parse_page(text: str, url: str, content_type: str = "") -> tuple[Link, ...]:
    """The links of a page: PEP 691 JSON when served (or saved) as such, else HTML."""
    # The parsers (html.parser) load when a page is read, not from the page cache.
    from resolver_hook.index.htmlpage import parse_html
    from resolver_hook.index.jsonpage import parse_json

    if content_type == JSON_TYPE or (not content_type and text.lstrip()[:1] == "{"):
        return parse_json(text, url)
    return parse_html(text, url)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


class IndexClient:
    """One client per command: its settings, its cache, its notes."""

    def __init__(
        self,
        *,
        allow_insecure: bool = False,
        offline: bool = False,
        refresh: bool = False,
        mirrors: Iterable[Mirror] = (),
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        timeout: float = NETWORK_DEADLINE,
        env: Mapping[str, str] | None = None,
        given: Given | None = None,
        max_workers: int = MAX_CONCURRENT_PAGES,
        record: Recorder = NOWHERE,
    ) -> None:
        environ = os.environ if env is None else env
        # Where what was read is declared (the plan store's inputs): the cache files and
        # local pages by digest, a cached page's freshness; a network read refuses it.
        self.record = record
        self.allow_insecure = allow_insecure
        self.offline = offline
        self.refresh = refresh
        self.mirrors = tuple(mirrors)
        self.max_workers = max(1, min(max_workers, MAX_CONCURRENT_PAGES))
        self._network = (timeout, environ, given)  # the transport's, when one is made
        self._transport: Transport | None = None
        folder = cache_dir
        if folder is None and cache:
            base = _cache.cache_dir(environ)
            folder = os.path.join(base, "index") if base else None
        self.cache = PageCache(folder, record=record) if cache and folder is not None else None
        self._notes: list[str] = []
        # (page, problem) of every link the URL policy left out, for callers that must
        # act on one (the data refresh asks a person).
        self.left_out: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        # Told the URL of each page once it is read or has failed (from the reading
        # thread): a command's progress line counts them.
        self.on_read: Callable[[str], None] | None = None
        # Hosts that gave a page no complete answer within the deadline: a later page of
        # theirs in this run is not asked for (a hung host costs one deadline, not one
        # for each round of pages a plan reads).
        self._stalled: set[str] = set()

    @property
    def transport(self) -> Transport:
        """What reads the network, with the user's settings: made when first used (a
        network read, or credentials given in a URL to say a word about), once for
        every reading thread."""
        with self._lock:
            if self._transport is None:
                from resolver_hook.index.fetch import Transport

                timeout, env, given = self._network
                self._transport = Transport(
                    allow_insecure=self.allow_insecure, timeout=timeout, env=env, given=given
                )
            return self._transport

    @property
    def notes(self) -> list[str]:
        """Notes of this client so far (cache entries ignored, a netrc not read, ...)."""
        with self._lock:
            # The transport's too, where one was made (it has none before it is used).
            theirs = self._transport.notes if self._transport is not None else []
            return [*self._notes, *(n for n in theirs if n not in self._notes)]

    def _note(self, text: str | None) -> None:
        if text:
            with self._lock:
                if text not in self._notes:
                    self._notes.append(text)

    def url_of(self, url: str) -> str:
        """The URL the client reads for ``url``: credentials kept aside, mirrors applied."""
        target = apply_mirrors(keep(url), self.mirrors)
        if kept_credentials(target) is not None:  # the transport has a word to say on them
            self.transport.say_given(target)
        return target

    # --- pages -----------------------------------------------------------------------

    def page(self, url: str, *, base_url: str | None = None, local: bool = False) -> Page:
        """The page at ``url`` (links resolved against ``base_url`` when given).

        ``local``: a path or ``file:`` URL the user named themselves is read without
        ``--allow-insecure-urls`` (never cached); otherwise ``file:`` needs it.
        """
        got = self._at_hand(url, base_url, local)
        return got if isinstance(got, Page) else got()

    def _at_hand(self, url: str, base_url: str | None, local: bool) -> Page | Callable[[], Page]:
        """The page at ``url`` where no server need be asked: a local file, or the page
        cache's copy served as it is (:meth:`_as_is`); else the call that asks the
        server (:meth:`_asked`), which :meth:`pages` makes on a thread of its pool where
        there are several."""
        if local and is_local(url):
            raw, uri = self._read_local(url)
            text = raw.decode("utf-8", "replace")
            links = self._checked(parse_page(text, base_url or uri), uri, allow_insecure=True)
            return Page(url=uri, links=links)
        target = self.url_of(url)
        if _is_file_url(target):
            check_read_url(target, allow_insecure=self.allow_insecure)
            raw, uri = self._read_local(target)
            text = raw.decode("utf-8", "replace")
            return Page(url=uri, links=self._checked(parse_page(text, base_url or uri), uri))
        check_read_url(target, allow_insecure=self.allow_insecure)
        key = f"page\n{target}"
        now = time.time()
        entry, note, kept = self._cached(key, base_url, now)
        self._note(note)
        if self.offline:
            return self._offline_page(key, entry, target, base_url, kept)
        if entry is not None and entry.status in _ABSENT:
            entry = None  # online, a page once absent is asked for again
        if entry is not None and self._as_is(entry, now):
            self.record.fresh_until(entry.fetched + PAGE_FRESH_SECONDS)
            return self._from_entry(key, entry, base_url, "cache", kept)
        return lambda: self._asked(target, key, entry, base_url, now)

    def _asked(
        self, target: str, key: str, entry: CacheEntry | None, base_url: str | None, now: float
    ) -> Page:
        """The page at ``target`` read from its server; ``entry``: the page cache's copy,
        revalidated (kept where the server answers 304)."""
        self.record.refuse(f"{redact(target)}: read from the network")
        conditional = {}
        if entry is not None and entry.etag:
            conditional["If-None-Match"] = entry.etag
        if entry is not None and entry.last_modified:
            conditional["If-Modified-Since"] = entry.last_modified
        host = _host_of(target)
        if host in self._stalled:
            raise PageError(
                f"{redact(target)}: not asked: {host} gave an earlier page no complete "
                f"answer within {self.transport.timeout:g} s",
                hint="the server is slow or stalled; try again or raise --timeout",
                cause=STALLED,
            )
        try:
            response = self.transport.get(target, accept=ACCEPT, headers=conditional)
        except PageError as exc:
            if exc.cause == STALLED:
                with self._lock:
                    self._stalled.add(host)
            for status in _ABSENT:
                if exc.cause == f"HTTP {status}":  # kept, so an offline plan answers the same
                    self._store(key, CacheEntry(url=target, body=b"", fetched=now, status=status))
            raise
        if response.status == 304:
            if entry is None:
                # A broken proxy or server: nothing was asked that 304 could answer.
                raise PageError(
                    f"{redact(target)}: answered 304 Not Modified to a plain request",
                    cause="304 Not Modified to a plain request",
                )
            entry = replace(
                entry,
                etag=response.etag or entry.etag,
                last_modified=response.last_modified or entry.last_modified,
                fetched=now,
            )
            self._store(key, entry)
            return self._from_entry(key, entry, base_url, "cache")
        if has_credentials(response.text()):
            # A page that writes credentials into its links is read, never kept.
            self._note(f"{redact(response.url)}: not cached: its links carry credentials")
            links = self._checked(self._parse(response, base_url), response.url)
            return Page(url=response.url, links=links, source="network", fetched=_iso(now))
        links = self._links(key, response, base_url)
        fields = ("url", "body", "content_type", "charset", "etag", "last_modified")
        self._store(key, CacheEntry(**{f: getattr(response, f) for f in fields}, fetched=now))
        return Page(url=response.url, links=links, source="network", fetched=_iso(now))

    def _cached(
        self, key: str, base_url: str | None, now: float
    ) -> tuple[CacheEntry | None, str | None, tuple[Link, ...] | None]:
        """The page cache's entry for ``key`` and its note; where the entry is served as
        it is (:meth:`_as_is`) and links read from its body are kept beside it, those
        links too, and the entry is then its header alone: the body (a PyPI page is
        ~400 kB) is not read or hashed just to be told it is the one they were read
        from, when its header names its sha256 (and the links file is checked against
        its own). Else the entry whole, its body checked against its hash."""
        if self.cache is None:
            return None, None, None
        if base_url is None:  # links are kept for a page read against its own URL
            head, note = self.cache.get(key, whole=False)
            if head is None:
                return None, note, None
            if self._as_is(head, now):
                # The links file's note, if any, is said when the page is parsed again.
                kept, _ = self._kept(self.cache, key, head.sha256 or "")
                if kept is not None:
                    return head, None, kept
        entry, note = self.cache.get(key)
        return entry, note, None

    def _as_is(self, entry: CacheEntry, now: float) -> bool:
        """Whether a cached page is served without asking its server: offline, any; else
        a page fresh enough (not a record of one that was absent), unless refreshing."""
        return self.offline or (
            entry.status not in _ABSENT
            and not self.refresh
            and 0 <= now - entry.fetched < PAGE_FRESH_SECONDS
        )

    def _offline_page(
        self,
        key: str,
        entry: CacheEntry | None,
        target: str,
        base_url: str | None,
        kept: tuple[Link, ...] | None = None,
    ) -> Page:
        """The page cache's answer for ``target``, the network never asked."""
        if entry is None:
            raise PageError(
                f"{redact(target)}: not in the page cache, and --offline reads no network",
                hint="run once without --offline to fill the cache",
            )
        if entry.status in _ABSENT:
            # The last answer: no such page. Offline, that answer stands.
            raise PageError(
                f"{redact(target)}: HTTP {entry.status} {_ABSENT[entry.status]} when last "
                f"read ({_iso(entry.fetched)}), and --offline reads no network",
                cause=f"HTTP {entry.status}",
            )
        return self._from_entry(key, entry, base_url, "cache", kept)

    def _store(self, key: str, entry: CacheEntry) -> None:
        if self.cache is not None:
            self.cache.put(key, entry)

    def _checked(
        self, links: tuple[Link, ...], page: str, *, allow_insecure: bool | None = None
    ) -> tuple[Link, ...]:
        """``links`` as the tool may use them: credentials a page wrote into a link
        split off (kept for its host), mirrors applied, and the one URL policy on
        each (a plain-http link to another host, say, is left out with a note: it is
        never pinned, hashed or locked)."""
        insecure = self.allow_insecure if allow_insecure is None else allow_insecure
        out: list[Link] = []
        refused: list[str] = []
        urls = [link.url for link in links]
        # Only a URL with an "@" can carry credentials (keep() gives any other back as
        # it is): the page's thousands of URLs are searched for one in one go.
        same = "@" not in "".join(urls)
        if not same:
            urls = [keep(url) for url in urls]
        if self.mirrors:
            urls = [apply_mirrors(url, self.mirrors) for url in urls]
            same = False
        problems = each_url_problem(urls, allow_insecure=insecure)
        if same and problems.count(None) == len(problems):
            return links  # every link as it came (a page's links, as a rule)
        for link, url, problem in zip(links, urls, problems, strict=True):
            if problem is not None:
                refused.append(problem)
                continue
            out.append(link if url == link.url else replace(link, url=url))
        if refused:
            with self._lock:
                self.left_out.extend((redact(page), p) for p in refused)
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            self._note(f"skipped a link of {redact(page)}: {refused[0]}{more}")
        return tuple(out)

    def _parse(self, response: Response, base_url: str | None) -> tuple[Link, ...]:
        kind = response.content_type
        if kind and kind not in _PAGE_TYPES and not kind.startswith("text/"):
            raise PageError(
                f"{redact(response.url)}: not an index page (served as {kind[:60]})",
                hint="give the URL of a PEP 503/691 project page or a find-links page",
            )
        try:
            return parse_page(response.text(), base_url or response.url, kind)
        except PageError as exc:
            raise PageError(f"{redact(response.url)}: {exc.message}", hint=exc.hint) from None

    def _links(
        self, key: str, response: Response, base_url: str | None, body_sha: str | None = None
    ) -> tuple[Link, ...]:
        """The page's links (mirrors applied), from the links kept beside a cached page
        when they were read from this very body, else parsed (and kept). ``body_sha``:
        the body's sha256 where the page cache has checked it already."""
        if base_url is not None or self.cache is None:
            return self._checked(self._parse(response, base_url), response.url)
        if body_sha is None:
            body_sha = sha256_hex(response.body)
        links, note = self._kept(self.cache, key, body_sha)
        self._note(note)
        if links is None:
            links = self._parse(response, None)
            data = links_to_json(links, body_sha)
            links_key = "links" + key.removeprefix("page")
            self.cache.put(links_key, CacheEntry(url=response.url, body=data, fetched=time.time()))
        return self._checked(links, response.url)

    @staticmethod
    def _kept(
        cache: PageCache, key: str, body_sha: str
    ) -> tuple[tuple[Link, ...] | None, str | None]:
        """The links kept beside the page of ``key`` when they were read from the body
        of sha256 ``body_sha`` (else None), and the page cache's note on their file."""
        kept, note = cache.get("links" + key.removeprefix("page"))
        return (links_from_json(kept.body, body_sha) if kept is not None else None), note

    def _from_entry(
        self,
        key: str,
        entry: CacheEntry,
        base_url: str | None,
        source: Source,
        kept: tuple[Link, ...] | None = None,
    ) -> Page:
        """The page of a cached ``entry``; ``kept``: its links, kept beside it (the
        entry may then be its header alone)."""
        if kept is not None:
            links = self._checked(kept, entry.url)
        else:
            from resolver_hook.index.fetch import Response  # a page without its links kept

            response = Response(
                url=entry.url,
                status=200,
                body=entry.body,
                content_type=entry.content_type,
                charset=entry.charset,
            )
            links = self._links(key, response, base_url, entry.sha256)
        return Page(url=entry.url, links=links, source=source, fetched=_iso(entry.fetched))

    def pages(self, urls: Iterable[str]) -> dict[str, PageResult]:
        """Each page of ``urls`` (in their order); a page that fails is its error value,
        never an exception here. Those at hand (:meth:`_at_hand`: the page cache's, and
        offline every one) are read one after another on this thread, where a thread
        only slows them (its start, and the lock the reads then wait on); those a
        server is asked for, concurrently by a bounded pool of threads."""
        wanted = list(dict.fromkeys(urls))
        if len(wanted) > MAX_PAGES_PER_CALL:
            raise UsageError(f"more than {MAX_PAGES_PER_CALL} pages asked for at once")
        got: dict[str, PageResult] = {}
        asks: dict[str, Callable[[], Page]] = {}
        for url in wanted:
            near: PageResult | Callable[[], Page]
            try:
                near = self._at_hand(url, None, False)
            except ResolverHookError as exc:
                near = exc
            if isinstance(near, Page | ResolverHookError):
                got[url] = near
                if self.on_read is not None:
                    self.on_read(url)
            else:
                asks[url] = near

        def ask(url: str) -> PageResult:
            try:
                return asks[url]()
            except ResolverHookError as exc:
                return exc
            finally:
                if self.on_read is not None:
                    self.on_read(url)

        if len(asks) <= 1:
            got.update((url, ask(url)) for url in asks)
        else:
            # Imported here: a plan the page cache answers starts no thread.
            from resolver_hook.ground.pool import map_threads

            read = map_threads(ask, list(asks), workers=self.max_workers, name="resolver-hook-page")
            got.update(zip(asks, read, strict=True))
        return {url: got[url] for url in wanted}

    # --- files -----------------------------------------------------------------------

    def fetch(self, url: str, *, max_bytes: int, local: bool = False) -> bytes:
        """The bytes of one small file (a ``variants.json``), under the same rules; not
        cached. ``local`` as for :meth:`page`."""
        target = url if local and is_local(url) else self.url_of(url)
        if is_local(target):
            if not local:
                check_read_url(target, allow_insecure=self.allow_insecure)
            return self._read_local(target)[0]
        if self.offline:
            raise PageError(f"{redact(target)}: --offline reads no network")
        self.record.refuse(f"{redact(target)}: read from the network")
        return self.transport.get(target, accept="*/*", max_bytes=max_bytes).body

    def metadata(self, link: Link) -> Metadata:
        """The core metadata of ``link``'s file, from ``<url>.metadata`` (PEP 658/714)."""
        return parse_metadata(self.metadata_file(link), redact(self.url_of(link.url + ".metadata")))

    def metadata_file(self, link: Link) -> bytes:
        """The bytes of ``link``'s ``.metadata`` file, checked against the hashes its page
        gives (:class:`~resolver_hook.index.metadata.HashMismatch` when they differ);
        PageError when the page offers none or it cannot be read."""
        if link.core_metadata is None:
            raise PageError(f"{redact(link.url)}: the page offers no metadata file for it")
        target = self.url_of(link.url + ".metadata")
        shown = redact(target)
        check_read_url(target, allow_insecure=self.allow_insecure)
        if is_local(target):
            data = self._read_local(target)[0]
            check_hashes(data, link.core_metadata, shown)
            return data
        key = f"metadata\n{target}"
        entry, note = self.cache.get(key) if self.cache else (None, None)
        self._note(note)
        # A metadata file with a hash never changes: no need to ask the server again.
        if entry is not None and (
            self.offline
            or (link.core_metadata and not self.refresh)
            or (not self.refresh and 0 <= time.time() - entry.fetched < PAGE_FRESH_SECONDS)
        ):
            if not (self.offline or link.core_metadata):
                self.record.fresh_until(entry.fetched + PAGE_FRESH_SECONDS)
            try:
                check_hashes(entry.body, link.core_metadata, shown)
                return entry.body
            except HashMismatch:
                if self.offline:
                    raise
                self._note(f"cached {shown} ignored: not the file its page gives now")
        if self.offline:
            raise PageError(
                f"{shown}: not in the page cache, and --offline reads no network",
                hint="run once without --offline to fill the cache",
            )
        self.record.refuse(f"{shown}: read from the network")
        response = self.transport.get(target, accept="*/*", max_bytes=MAX_METADATA_BYTES)
        check_hashes(response.body, link.core_metadata, shown)
        self._store(key, CacheEntry(url=response.url, body=response.body, fetched=time.time()))
        return response.body

    def sha256(self, url: str, *, max_bytes: int) -> str:
        """The sha256 of the file at ``url``, streamed (nothing of it kept)."""
        import hashlib  # OpenSSL's, for a whole file: not loaded by a plan that reads pages

        digest = hashlib.sha256()
        self._stream(url, digest.update, max_bytes=max_bytes, doing="cannot download to hash it")
        return digest.hexdigest()

    def download(self, url: str, dest: Path, *, max_bytes: int) -> str:
        """Write the file at ``url`` to ``dest`` (a path in the caller's private folder)
        and return its sha256; :class:`~resolver_hook.index.errors.TooLarge` past
        ``max_bytes``. The caller compares the digest with its page's before using it."""
        import hashlib  # as in sha256()

        digest = hashlib.sha256()
        with dest.open("wb") as out:

            def sink(chunk: bytes) -> None:
                digest.update(chunk)
                out.write(chunk)

            self._stream(url, sink, max_bytes=max_bytes, doing="cannot download")
        return digest.hexdigest()

    def _stream(
        self, url: str, sink: Callable[[bytes], None], *, max_bytes: int, doing: str
    ) -> None:
        target = self.url_of(url)
        self.record.refuse(f"{redact(target)}: streamed")
        if _is_file_url(target):
            from pathlib import Path  # a file: URL (a local test index): rare
            from urllib.parse import unquote, urlsplit

            check_read_url(target, allow_insecure=self.allow_insecure)
            size = 0
            try:
                with Path(unquote(urlsplit(target).path)).open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        size += len(chunk)
                        if size > max_bytes:
                            raise TooLarge(target, max_bytes)
                        sink(chunk)
            except OSError as exc:
                raise PageError(f"{target}: cannot read: {exc.strerror or exc}") from None
            return
        if self.offline:
            raise PageError(f"{redact(target)}: --offline reads no network: {doing}")
        self.transport.stream(target, sink, max_bytes=max_bytes, doing=doing)

    def _read_local(self, location: str) -> tuple[bytes, str]:
        """:func:`~resolver_hook.index.fetch.read_local`, the file declared."""
        from resolver_hook.index.fetch import read_local

        raw, uri = read_local(location)
        if _is_file_url(location):
            from urllib.parse import unquote, urlsplit

            location = unquote(urlsplit(location).path)
        self.record.file(location, raw)
        return raw, uri


def _host_of(url: str) -> str:
    """``host[:port]`` of ``url``, without credentials."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host
