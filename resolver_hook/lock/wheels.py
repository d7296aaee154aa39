"""The wheels a plan installs, each with its file URL and sha256.

A lock file names files, not requirements: PEP 751 wants a URL and a hash for every
wheel (docs/facts.md section 3). A plan knows them for manifest wheels with a
``sha256``; for the rest something must be read at lock time:

- a wheel flavour without ``sha256``: the file is downloaded and hashed;
- an index flavour (a find-links page plus ``version``): the page is read and the
  wheel of that version with the best tag for the target is taken, hashed from the
  page's ``#sha256=`` fragment or by downloading it;
- a flavour that is the plain build on the user's index: the same, on the project's
  page of ``--index-url`` (PEP 503 ``{index}/{name}/``).

Packages the plan passes through without a manifest (or builds from source) cannot be
locked here: resolver-hook does not resolve what it has no manifest for.

The reading goes through a :class:`Fetcher` so the rules stay testable;
:class:`NetFetcher` is the real one: the one index client (https only, loopback http
and ``file:`` only when asked, redirects under the same rule, bounded reads, the page
cache and the user's proxy, certificate and credential settings). The pages a plan
needs are read at once (concurrently) before they are used in plan order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import OperationalError, ResolverHookError, UsageError
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.index.client import IndexClient, PageResult
from resolver_hook.index.model import Link
from resolver_hook.limits import parse_wheel_name
from resolver_hook.manifest.urls import check_read_url

if TYPE_CHECKING:
    from resolver_hook.host import HostProfile
    from resolver_hook.resolve import PackagePlan, Plan
    from resolver_hook.settings import Settings

__all__ = [
    "DEFAULT_INDEX",
    "MAX_WHEEL_BYTES",
    "Fetcher",
    "LockedWheel",
    "NetFetcher",
    "best_link",
    "lock_wheels",
    "network_needs",
    "unlockable",
]

DEFAULT_INDEX = "https://pypi.org/simple/"
MAX_WHEEL_BYTES = 16 << 30  # the largest CUDA wheels are a few GB; a bound, not a guess


@valueclass
class LockedWheel:
    """One wheel to install: the file, its hash, and the page it was found on (if any)."""

    name: NormalizedName
    version: str
    url: str
    sha256: str
    index: str | None = None  # the page the wheel was listed on

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path.rsplit("/", 1)[-1])


class Fetcher(Protocol):
    """What locking reads from the network."""

    def links(self, page_url: str) -> tuple[Link, ...]: ...

    def prefetch(self, page_urls: Sequence[str]) -> None:
        """Read these pages now (at once), so that :meth:`links` finds them read."""

    def sha256(self, url: str) -> str: ...

    def check(self, url: str) -> None:
        """Raise when a URL read from a page may not go into a lock file."""

    def left_out(self, page_url: str) -> list[str]:
        """Why the URL policy left links of this page out (plain http, another scheme)."""


def _is_file(url: str) -> bool:
    return urlsplit(url).scheme == "file"


def _page_of(index_url: str, name: str) -> str:
    return index_url.rstrip("/") + f"/{name}/"


def _applies(p: PackagePlan) -> bool:
    """False when the user's marker leaves the package out on this target (the plan
    says so; a URL or path line's marker too, which a Requirement cannot parse)."""
    return p.cause != "marker"


def _wheel_url(p: PackagePlan) -> bool:
    return p.action == "rewrite" and p.wheel


def unlockable(plan: Plan) -> list[PackagePlan]:
    """Packages on this target that a lock file of wheels cannot hold (no manifest, build)."""
    return [
        p
        for p in plan.packages
        if _applies(p) and not (p.action == "rewrite" or (p.action == "pass" and p.entry_version))
    ]


def network_needs(plan: Plan, index_url: str) -> list[str]:
    """What locking this plan would read from the network, one line each (for --offline)."""
    out = []
    for p in plan.packages:
        if not _applies(p):
            continue
        if _wheel_url(p):
            if p.sha256 is None:
                out.append(f"{p.name}: {p.url} has no sha256 (the file must be hashed)")
        elif p.action == "rewrite" and p.find_links:
            out.append(f"{p.name}=={p.version}: known only as the page {p.find_links}")
        elif p.action == "pass" and p.entry_version:
            out.append(
                f"{p.name}=={p.entry_version}: known only as the page {_page_of(index_url, p.name)}"
            )
    return out


def best_link(
    links: Sequence[Link],
    name: str,
    version: str,
    profile: HostProfile,
    versions: str | None = None,
) -> Link | None:
    """The page's wheel of ``name`` at ``version`` (or, for a version pattern, the
    newest that ``versions`` allows) with the best tag for the profile."""
    rank = {t: i for i, t in enumerate(profile.tags)}
    want = Version(version)
    pattern = SpecifierSet(versions) if versions else None
    best: tuple[Any, int, Link] | None = None
    for link in links:
        if link.is_yanked or not link.filename.endswith(".whl"):
            continue
        try:
            wname, wversion, _build, tags = parse_wheel_name(link.filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if wname != canonicalize_name(name):
            continue
        if pattern is not None:
            if not pattern.contains(wversion, prereleases=False):
                continue
        elif wversion != want:
            continue
        ranks = [rank[str(t)] for t in tags if str(t) in rank]
        if not ranks:
            continue
        key = (wversion, -min(ranks))  # the newest version, then the best tag
        if best is None or key > best[:2]:
            best = (*key, link)
    return best[2] if best else None


def _listed_on(p: PackagePlan, index_url: str) -> str | None:
    """The index page a file pin was read from, when the plan read it on the user's
    index (a build on the default index): the page a lock cites."""
    if p.flavour is None or getattr(p.flavour, "inventory", None) is None:
        return None
    return _page_of(index_url, p.distribution)


def _page_for(p: PackagePlan, index_url: str) -> tuple[NormalizedName, str] | None:
    """The distribution a page-read flavour locks and the page it is read from."""
    # A flavour that is another distribution (cupy as cupy-cuda12x) locks that one.
    name = p.distribution
    if p.action == "rewrite" and p.find_links and p.version:
        return name, p.find_links
    if (p.action == "pass" and p.entry_version) or (
        p.action == "rewrite" and p.installs and p.version
    ):
        return name, _page_of(index_url, name)
    return None


def lock_wheels(
    plan: Plan, fetcher: Fetcher, *, index_url: str = DEFAULT_INDEX
) -> tuple[LockedWheel, ...]:
    """The wheels the plan installs on its target, in plan order.

    Raises :class:`OperationalError` when a page has no wheel of the planned version for
    the target. Call :func:`unlockable` first: packages it lists are skipped here.
    """
    out: list[LockedWheel] = []
    # Every page the plan needs, read at once (concurrently), then used in plan order.
    fetcher.prefetch(
        [
            f[1]
            for p in plan.packages
            if _applies(p) and not _wheel_url(p) and (f := _page_for(p, index_url))
        ]
        + [
            page
            for p in plan.packages
            if _applies(p) and _wheel_url(p) and (page := _listed_on(p, index_url))
        ]
    )
    for p in plan.packages:
        if not _applies(p):
            continue
        if _wheel_url(p):
            assert p.url is not None
            assert p.version is not None
            sha = p.sha256 or fetcher.sha256(p.url)
            page = _listed_on(p, index_url)
            try:
                if page is not None and all(x.url != p.url for x in fetcher.links(page)):
                    page = None  # pinned from another page (a find-links page, a mirror)
            except ResolverHookError:
                page = None  # the citation only: the pin stands without it
            out.append(
                LockedWheel(name=p.name, version=p.version, url=p.url, sha256=sha, index=page)
            )
            continue
        found = _page_for(p, index_url)
        if found is None:
            continue
        name, page = found
        version = p.entry_version
        assert version is not None
        link = best_link(fetcher.links(page), name, version, plan.profile, p.versions)
        if link is None:
            want = f"{name}{p.versions}" if p.versions else f"{name}=={version}"
            refused = fetcher.left_out(page)
            if refused:  # the page's only such files: links the URL policy refuses
                raise UsageError(
                    f"{page} lists no wheel of {want} that may be locked: link left out: "
                    f"{refused[0]}"
                    + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else "")
                )
            raise OperationalError(
                f"{page} lists no wheel of {want} for {plan.profile.describe()}",
                hint="the page may have changed since the manifest was written",
            )
        fetcher.check(link.url)  # a page cannot point the lock at another scheme or host class
        sha = link.sha256 or fetcher.sha256(link.url)
        version = str(parse_wheel_name(link.filename)[1])
        out.append(LockedWheel(name=name, version=version, url=link.url, sha256=sha, index=page))
    return tuple(out)


@valueclass(kw_only=False, frozen=False)
class NetFetcher:
    """Reads pages and hashes files with the one index client (:mod:`resolver_hook.index`),
    under the command's settings (URL policy, timeout, the environment's proxies, certs
    and netrc, pip's ``--cert``/``--proxy``)."""

    settings: Settings
    max_bytes: int = MAX_WHEEL_BYTES
    client: IndexClient | None = None
    _read: dict[str, PageResult] = field(default_factory=dict)

    def _client(self) -> IndexClient:
        if self.client is None:
            s = self.settings
            self.client = IndexClient(allow_insecure=s.allow_insecure, timeout=s.timeout,
                                      env=s.env, given=s.indexes.given)  # fmt: skip
        return self.client

    def notes(self) -> list[str]:
        """What the index client noted (cache entries ignored, a netrc not read)."""
        return self.client.notes if self.client is not None else []

    def prefetch(self, page_urls: Sequence[str]) -> None:
        wanted = [u for u in dict.fromkeys(page_urls) if u not in self._read and not _is_file(u)]
        self._read.update(self._client().pages(wanted))

    def links(self, page_url: str) -> tuple[Link, ...]:
        if _is_file(page_url) and not self.settings.allow_insecure:
            raise UsageError(
                f"{page_url}: a file: page", hint="file: URLs need --allow-insecure-urls"
            )
        read = self._read.get(page_url)
        if read is None:
            return self._client().page(page_url).links
        if isinstance(read, Exception):
            raise read
        return read.links

    def left_out(self, page_url: str) -> list[str]:
        if self.client is None:
            return []
        shown = redact(page_url)
        return [problem for page, problem in self.client.left_out if page == shown]

    def check(self, url: str) -> None:
        if urlsplit(url).scheme == "file":
            if not self.settings.allow_insecure:
                raise UsageError(f"{url}: a file: URL", hint="it needs --allow-insecure-urls")
            return
        check_read_url(url, allow_insecure=self.settings.allow_insecure)

    def sha256(self, url: str) -> str:
        if urlsplit(url).scheme == "file" and not self.settings.allow_insecure:
            raise UsageError(f"{url}: a file: URL", hint="it needs --allow-insecure-urls")
        return self._client().sha256(url, max_bytes=self.max_bytes)
