"""Read wheel links from a PEP 503 simple page or a find-links HTML page.

:func:`fetch_page` gets the page under the project's transport policy (https; http only
on loopback and only when asked; local files), :func:`parse_links` extracts the wheel
links with their ``#sha256=`` fragments, and :func:`import_manifest` turns them into
manifest entries using the local version label rules of :mod:`resolver_hook.publish.locallabel`
and the user's ``--cuda-map`` / ``--gpu`` tables.

Label rules (documented for users in ``resolver-hook manifest import --help``):

* ``cuda``: ``--cuda-map LABEL=SPEC`` for the wheel's whole local label wins; otherwise a
  ``cuNNN`` in the label gives ``>=MAJOR.0`` (a CUDA X.y build runs on drivers for X.0
  and newer; docs/facts.md section 1); otherwise no CUDA requirement.
* ``requires``: a ``torch...`` part of the label gives ``torch==...``.
* ``gpu``: ``--gpu LABEL=sm_80,sm_90`` for the wheel's whole local label, else
  ``--gpu *=...`` for every wheel; otherwise omitted (a page cannot say).

The page is read with the standard library's HTMLParser and urllib, not a scraping
library: one total deadline, a size and link cap, and the project's URL policy on
every link and redirect are simpler to hold in code this small.
"""

from __future__ import annotations

import http.client
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from packaging.utils import (
    NormalizedName,
    canonicalize_name,
)

from resolver_hook._patterns import is_sha256
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.limits import (
    MAX_PAGE_BYTES,
    MAX_PAGE_LINKS,
    MAX_PAGE_URL_BYTES,
    NETWORK_DEADLINE,
    parse_wheel_name,
)
from resolver_hook.manifest.urls import INSECURE_FLAG, url_problem
from resolver_hook.manifest.write import WheelEntry
from resolver_hook.publish.locallabel import parse_local_label

__all__ = [
    "ImportResult",
    "Link",
    "PolicyRedirects",
    "check_url",
    "fetch_page",
    "import_manifest",
    "parse_links",
]

DEFAULT_TIMEOUT = NETWORK_DEADLINE
_READ_CHUNK = 64 << 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One ``<a href>`` of an index page, resolved against the page URL."""

    url: str
    filename: str
    sha256: str | None
    yanked: bool


class _Anchors(HTMLParser):
    """Collects ``(href, data-yanked present)`` of each ``<a>``, at most MAX_PAGE_LINKS."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag == "a":
            found = dict(attrs)
            href = found.get("href")
            if href:
                if len(self.anchors) >= MAX_PAGE_LINKS:
                    raise OperationalError(f"the page has more than {MAX_PAGE_LINKS} links")
                self.anchors.append((href, "data-yanked" in found))


def _shown(text: str) -> str:
    """Page text for a note: as is when plain, else quoted (no terminal escapes)."""
    return text if text.isprintable() and len(text) <= 200 else repr(text[:200])


def parse_links(html: str, page_url: str) -> tuple[Link, ...]:
    """Every ``<a href>`` of ``html``, resolved against ``page_url`` (or ``<base href>``).

    Bounded: at most MAX_PAGE_LINKS links and MAX_PAGE_URL_BYTES of resolved URLs
    (OperationalError past either).
    """
    parser = _Anchors()
    parser.feed(html)  # at once: fed in pieces, an unclosed tag is rescanned per piece
    parser.close()
    try:
        base = urljoin(page_url, parser.base) if parser.base else page_url
    except ValueError:  # a <base href> that is not a URL: links resolve against the page
        base = page_url
    links = []
    total = 0
    for href, yanked in parser.anchors:
        try:
            url = urljoin(base, href)
            parts = urlsplit(url)
            _ = parts.port
        except ValueError:  # "https://[::1": kept as written, refused by the URL policy
            url, parts = href, None
        total += len(url)
        if total > MAX_PAGE_URL_BYTES:
            raise OperationalError(
                f"the page's links add up to more than {MAX_PAGE_URL_BYTES} bytes"
            )
        if parts is None:
            last = href.rsplit("/", 1)[-1]
            links.append(Link(url=href, filename=last, sha256=None, yanked=yanked))
            continue
        sha256 = None
        for item in parts.fragment.split("&"):
            key, _, value = item.partition("=")
            if key == "sha256" and is_sha256(value):
                sha256 = value.lower()
        filename = unquote(parts.path.rsplit("/", 1)[-1])
        links.append(
            Link(
                url=urlunsplit(parts._replace(fragment="")),
                filename=filename,
                sha256=sha256,
                # PEP 592: data-yanked present (any value) means yanked.
                yanked=yanked,
            )
        )
    return tuple(links)


def check_url(url: str, *, allow_insecure: bool, what: str = "page") -> None:
    """The one URL policy (:mod:`resolver_hook.manifest.urls`); UsageError when refused."""
    problem = url_problem(url, allow_insecure=allow_insecure)
    if problem is not None:
        hint = None
        if INSECURE_FLAG in problem:
            hint = f"add {INSECURE_FLAG} for a local test index"
        raise UsageError(f"{what}: {problem}", hint=hint)


class PolicyRedirects(urllib.request.HTTPRedirectHandler):
    """Apply the same URL policy to every redirect target (no https -> http downgrade).

    ``what`` names the refused target in the error (index pages say ``redirect``).
    """

    def __init__(self, allow_insecure: bool, *, what: str = "redirect") -> None:
        super().__init__()
        self.allow = allow_insecure
        self.what = what

    # Signature fixed by urllib.request.HTTPRedirectHandler.
    def redirect_request(  # type: ignore[no-untyped-def]  # noqa: PLR0917
        self, req, fp, code, msg, headers, newurl
    ):
        try:
            check_url(newurl, allow_insecure=self.allow, what=self.what)
        except UsageError:
            fp.close()  # urllib closes it only after a redirect it follows
            raise
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_page(
    location: str, *, allow_insecure: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> tuple[str, str]:
    """Return ``(html, page_url)`` for a URL or a local file path (or ``file:`` URL).

    ``timeout`` is one total deadline for the page (connecting, redirects, every byte),
    not a limit per read: a server trickling a byte a second still ends at ``timeout``.
    """
    try:
        scheme = urlsplit(location).scheme
    except ValueError as exc:
        raise UsageError(f"{location!r} is not a URL ({exc})") from None
    if scheme in ("", "file") or (len(scheme) == 1 and location[1:3] in (":\\", ":/")):
        path = Path(unquote(urlsplit(location).path) if scheme == "file" else location)
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_PAGE_BYTES + 1)
        except OSError as exc:
            raise OperationalError(f"{location}: cannot read: {exc.strerror or exc}") from None
        if len(raw) > MAX_PAGE_BYTES:
            raise OperationalError(f"{location}: larger than {MAX_PAGE_BYTES} bytes")
        return raw.decode("utf-8", "replace"), path.resolve().as_uri()
    check_url(location, allow_insecure=allow_insecure)
    raw, final_url, charset = _fetch_within(location, allow_insecure, timeout)
    try:
        return raw.decode(charset, "replace"), final_url
    except (LookupError, UnicodeError):
        # An unknown label, or a codec that is not a text encoding (hex, idna): read as
        # UTF-8, as browsers fall back.
        return raw.decode("utf-8", "replace"), final_url


def _fetch_within(location: str, allow_insecure: bool, timeout: float) -> tuple[bytes, str, str]:
    """Download in a worker thread; give up when ``timeout`` seconds have passed in all.

    A socket timeout bounds one read only, and http.client reads headers a line at a
    time: only a deadline kept outside the download bounds the whole of it.
    """
    deadline = time.monotonic() + timeout
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["page"] = _download(location, allow_insecure, timeout, deadline)
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="resolver-hook-fetch", daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if worker.is_alive():
        # The daemon worker stops at its own deadline check or socket timeout.
        raise OperationalError(
            f"{location}: no complete answer within {timeout:g} s",
            hint="the server is slow or stalled; try again or raise --timeout",
        )
    error = outcome.get("error")
    if isinstance(error, BaseException):
        raise error
    page = outcome["page"]
    assert isinstance(page, tuple)
    return page


def _download(
    location: str, allow_insecure: bool, timeout: float, deadline: float
) -> tuple[bytes, str, str]:
    opener = urllib.request.build_opener(PolicyRedirects(allow_insecure))
    request = urllib.request.Request(
        location, headers={"Accept": "text/html", "User-Agent": "resolver-hook"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            final_url = response.geturl()
            charset = response.headers.get_content_charset() or "utf-8"
            declared = response.headers.get("Content-Length")
            chunks: list[bytes] = []
            got = 0
            while True:
                if time.monotonic() > deadline:
                    raise OperationalError(f"{location}: no complete answer within {timeout:g} s")
                chunk = response.read1(_READ_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
                if got > MAX_PAGE_BYTES:
                    raise OperationalError(f"{location}: larger than {MAX_PAGE_BYTES} bytes")
    except urllib.error.HTTPError as exc:
        exc.close()
        raise OperationalError(f"{location}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OperationalError(f"{location}: cannot fetch: {reason}") from None
    except http.client.HTTPException as exc:  # BadStatusLine, IncompleteRead, InvalidURL...
        raise OperationalError(
            f"{location}: not a valid HTTP answer ({type(exc).__name__}: {str(exc)[:80]})"
        ) from None
    if declared is not None and declared.strip().isdigit() and got < int(declared.strip()[:20]):
        raise OperationalError(
            f"{location}: the page ended after {got} of its {declared.strip()} bytes "
            "(connection cut); nothing written"
        )
    return b"".join(chunks), final_url, charset


@dataclass(frozen=True, slots=True, kw_only=True)
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
        if link.yanked:
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
