"""What an index page says, as values: a :class:`Page` of :class:`Link` s.

One model for both page forms (docs/facts.md section 3): PEP 503 HTML (``<a href>``
with ``#sha256=`` fragments, ``data-requires-python``, ``data-yanked``,
``data-dist-info-metadata`` / ``data-core-metadata``) and PEP 691 JSON (``files`` with
``hashes``, ``requires-python``, ``yanked``, ``core-metadata``). Parsers fill these;
the planner, the lock writer and ``manifest import`` read them. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from resolver_hook.ground.valueclass import field, valueclass

__all__ = ["JSON_TYPE", "Link", "Page", "Source"]

# PEP 691's media type of a JSON page (HTML pages are text/html or PEP 691's +html).
JSON_TYPE = "application/vnd.pypi.simple.v1+json"

# Where a page's content came from: read now, a cached copy (fresh or revalidated),
# or the shipped snapshot (offline, or the fetch failed).
Source = Literal["network", "cache", "snapshot"]


@valueclass
class Link:
    """One file of an index page, its URL resolved against the page and without fragment."""

    url: str
    filename: str
    # Hash name -> lower-case hex digest, from the fragment (HTML) or ``hashes`` (JSON).
    hashes: Mapping[str, str] = field(default_factory=dict)
    # PEP 503 ``data-requires-python`` / PEP 691 ``requires-python``, unescaped; None if absent.
    requires_python: str | None = None
    # PEP 592: None when not yanked; the reason ("" when none was given) when yanked.
    yanked: str | None = None
    # PEP 658/714: None when the page offers no metadata file; else the hashes of the
    # ``<url>.metadata`` file (empty when offered without a hash).
    core_metadata: Mapping[str, str] | None = None

    @property
    def sha256(self) -> str | None:
        return self.hashes.get("sha256")

    @property
    def is_yanked(self) -> bool:
        return self.yanked is not None


@valueclass
class Page:
    """An index page as read: its final URL (after redirects), its links, and their source."""

    url: str
    links: tuple[Link, ...]
    source: Source = "network"
    # When the content was read from the server (ISO 8601, UTC); for a snapshot, its date.
    fetched: str | None = None
    # Releases a cited source says the page lists, whose files are not known (the
    # snapshot's compact form: ``2.7.1+cu128``); a network page has none.
    releases: tuple[str, ...] = ()
    # The server answered that there is no such page (HTTP 404 or 410): no links.
    absent: bool = False
    # The ``Requires-Dist`` lines a cited source gives for such a release (torch
    # 2.5.1's ``triton==3.1.0; ...``), by release: its couplings hold in page form too.
    release_requires: tuple[tuple[str, tuple[str, ...]], ...] = ()
