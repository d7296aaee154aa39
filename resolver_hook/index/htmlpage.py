"""PEP 503 HTML pages (and find-links pages) -> :class:`~resolver_hook.index.model.Link` s.

What is read from each ``<a href>`` (docs/facts.md section 3):

- the URL, resolved against the page (or its first ``<base href>``), fragment removed;
- hashes from the fragment ``#NAME=HEX`` (PEP 503; ``&`` joins several), NAME a hashlib
  algorithm and HEX of its digest length; other fragment items are ignored;
- ``data-requires-python`` (PEP 503), HTML-unescaped by the parser;
- ``data-yanked`` (PEP 592): present means yanked, its value the reason;
- ``data-core-metadata`` (PEP 714), else ``data-dist-info-metadata`` (PEP 658): ``true``
  offers the ``<url>.metadata`` file without a hash, ``NAME=HEX`` with one; any other
  value is read as not offered (a hash we cannot check is no promise).

The page is parsed with the standard library's :class:`html.parser.HTMLParser`: a page
is a list of anchors, and a scraping library would add a dependency for nothing. The
parser's own failures (``AssertionError`` on a malformed ``<![...`` section in Python
3.10-3.12) become :class:`~resolver_hook.index.errors.PageError`; an unknown ``<![``
section is skipped to its ``>`` as browsers read it, so the links after it still count.

A page with a ``<form>`` and no link to a package file is no index page but a sign-in
page (a server that wants credentials answers 200 with one): a PageError, never an
empty project. A page with no form and no links is an empty project page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from resolver_hook.index.errors import PageError
from resolver_hook.index.model import Link
from resolver_hook.limits import MAX_PAGE_LINKS, MAX_PAGE_URL_BYTES

__all__ = ["parse_hash", "parse_html"]

_HEX = re.compile(r"[0-9a-fA-F]+")
# Hash names a page may use (PEP 503: "any hash algorithm hashlib supports"), with
# the length of their hex digests; shake_* have no fixed length and are left out.
_DIGEST_HEX = {
    name: hashlib.new(name).digest_size * 2
    for name in sorted(hashlib.algorithms_guaranteed)
    if not name.startswith("shake_")
}

Attrs = list[tuple[str, str | None]]
# What a link to a package file is named (wheels and sdists, old forms too): a page
# with a <form> and none of these is a sign-in page.
_FILES = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".egg")


def parse_hash(item: str) -> tuple[str, str] | None:
    """``("sha256", "ab..")`` for ``sha256=AB..`` of a known algorithm and length, else None."""
    name, sep, value = item.partition("=")
    name = name.strip().lower()
    if not sep or _DIGEST_HEX.get(name) != len(value) or not _HEX.fullmatch(value):
        return None
    return name, value.lower()


def _metadata_offer(found: Mapping[str, str | None]) -> Mapping[str, str] | None:
    # PEP 714: data-core-metadata is the name; data-dist-info-metadata the older one.
    for attr in ("data-core-metadata", "data-dist-info-metadata"):
        if attr in found:
            value = (found[attr] or "").strip()
            if value.lower() == "true":
                return {}
            pair = parse_hash(value)
            return dict([pair]) if pair else None
    return None


class _Anchors(HTMLParser):
    """Collects the attributes of each ``<a href>``, at most MAX_PAGE_LINKS."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[dict[str, str | None]] = []
        self.form = False

    def handle_starttag(self, tag: str, attrs: Attrs) -> None:
        if tag == "form":
            self.form = True
        elif tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag == "a":
            found = dict(attrs)
            if found.get("href"):
                if len(self.anchors) >= MAX_PAGE_LINKS:
                    raise PageError(f"the page has more than {MAX_PAGE_LINKS} links")
                self.anchors.append(found)

    # Signature fixed by _markupbase.ParserBase.
    def parse_marked_section(self, i: int, report: bool = True) -> int:
        """``<![CDATA[`` and the other marked sections as before; an unknown keyword
        (``<![OCTYPE html>``, which the base class asserts on) is skipped to its ``>``,
        as an HTML5 browser reads a bogus comment."""
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1


def _resolve(base: str, href: str) -> tuple[str, str, Mapping[str, str]]:
    """``(url without fragment, filename, hashes)``; a href urljoin cannot take is kept
    as written (the URL policy refuses it later, with its words)."""
    try:
        parts = urlsplit(urljoin(base, href))
        _ = parts.port
    except ValueError:  # "https://[::1"
        return href, href.rsplit("/", 1)[-1], {}
    hashes = dict(pair for item in parts.fragment.split("&") if (pair := parse_hash(item)))
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    return urlunsplit(parts._replace(fragment="")), filename, hashes


def parse_html(html: str, page_url: str) -> tuple[Link, ...]:
    """Every ``<a href>`` of ``html``, resolved against ``page_url`` (or ``<base href>``).

    Bounded: at most MAX_PAGE_LINKS links and MAX_PAGE_URL_BYTES of resolved URLs
    (PageError past either, or for a page the parser cannot read).
    """
    parser = _Anchors()
    try:
        parser.feed(html)  # at once: fed in pieces, an unclosed tag is rescanned per piece
        parser.close()
    except AssertionError as exc:  # html.parser's way of saying "malformed" (3.10-3.12)
        raise PageError(f"the page is not HTML the parser can read ({str(exc)[:80]})") from None
    try:
        base = urljoin(page_url, parser.base) if parser.base else page_url
    except ValueError:  # a <base href> that is not a URL: links resolve against the page
        base = page_url
    links = []
    total = 0
    for found in parser.anchors:
        href = found["href"] or ""
        url, filename, hashes = _resolve(base, href)
        total += len(url)
        if total > MAX_PAGE_URL_BYTES:
            raise PageError(f"the page's links add up to more than {MAX_PAGE_URL_BYTES} bytes")
        links.append(
            Link(
                url=url,
                filename=filename,
                hashes=hashes,
                requires_python=found.get("data-requires-python") or None,
                # PEP 592: data-yanked present (any value, none too) means yanked.
                yanked=(found["data-yanked"] or "") if "data-yanked" in found else None,
                core_metadata=_metadata_offer(found),
            )
        )
    if parser.form and not any(link.filename.lower().endswith(_FILES) for link in links):
        raise PageError(
            "not an index page: an HTML form and no package files (a sign-in page?)",
            hint="the server may want credentials (a netrc entry for its host, or "
            "user:password@ in the URL), or the URL is not the index's",
        )
    return tuple(links)
