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
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from packaging.utils import (
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.manifest.schema import is_loopback_host
from resolver_hook.manifest.write import WheelEntry
from resolver_hook.publish.locallabel import parse_local_label

__all__ = [
    "ImportResult",
    "Link",
    "check_url",
    "fetch_page",
    "import_manifest",
    "parse_links",
]

MAX_PAGE_BYTES = 32 << 20  # download.pytorch.org/whl/torch/ is ~1 MB
DEFAULT_TIMEOUT = 30.0
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One ``<a href>`` of an index page, resolved against the page URL."""

    url: str
    filename: str
    sha256: str | None
    yanked: bool


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag == "a":
            self.anchors.append(dict(attrs))


def parse_links(html: str, page_url: str) -> tuple[Link, ...]:
    """Every ``<a href>`` of ``html``, resolved against ``page_url`` (or ``<base href>``)."""
    parser = _Anchors()
    parser.feed(html)
    parser.close()
    base = urljoin(page_url, parser.base) if parser.base else page_url
    links = []
    for attrs in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url = urljoin(base, href)
        parts = urlsplit(url)
        sha256 = None
        for item in parts.fragment.split("&"):
            key, _, value = item.partition("=")
            if key == "sha256" and _SHA256.match(value.lower()):
                sha256 = value.lower()
        filename = unquote(parts.path.rsplit("/", 1)[-1])
        links.append(
            Link(
                url=urlunsplit(parts._replace(fragment="")),
                filename=filename,
                sha256=sha256,
                # PEP 592: data-yanked present (any value) means yanked.
                yanked="data-yanked" in attrs,
            )
        )
    return tuple(links)


def check_url(url: str, *, allow_insecure_loopback: bool) -> None:
    """Refuse anything but https (and http on loopback, when allowed)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        if allow_insecure_loopback:
            return
        raise UsageError(
            f"{url}: plain http", hint="add --allow-insecure-loopback for a local test index"
        )
    raise UsageError(
        f"{url}: only https URLs (or local files) can be imported",
        hint="http is allowed only on 127.0.0.1/localhost/::1 with --allow-insecure-loopback",
    )


class _PolicyRedirects(urllib.request.HTTPRedirectHandler):
    """Apply the same URL policy to every redirect target (no https -> http downgrade)."""

    def __init__(self, allow_insecure_loopback: bool) -> None:
        super().__init__()
        self.allow = allow_insecure_loopback

    # Signature fixed by urllib.request.HTTPRedirectHandler.
    def redirect_request(  # type: ignore[no-untyped-def]  # noqa: PLR0917
        self, req, fp, code, msg, headers, newurl
    ):
        check_url(newurl, allow_insecure_loopback=self.allow)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_page(
    location: str, *, allow_insecure_loopback: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> tuple[str, str]:
    """Return ``(html, page_url)`` for a URL or a local file path (or ``file:`` URL)."""
    scheme = urlsplit(location).scheme
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
    check_url(location, allow_insecure_loopback=allow_insecure_loopback)
    opener = urllib.request.build_opener(_PolicyRedirects(allow_insecure_loopback))
    request = urllib.request.Request(
        location, headers={"Accept": "text/html", "User-Agent": "resolver-hook"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read(MAX_PAGE_BYTES + 1)
            final_url = response.geturl()
            charset = response.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as exc:
        raise OperationalError(f"{location}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OperationalError(f"{location}: cannot fetch: {reason}") from None
    if len(raw) > MAX_PAGE_BYTES:
        raise OperationalError(f"{location}: larger than {MAX_PAGE_BYTES} bytes")
    return raw.decode(charset, "replace"), final_url


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
    allow_insecure_loopback: bool = False,
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
            continue
        try:
            name, version, _build, _tags = parse_wheel_filename(link.filename)
        except InvalidWheelFilename:
            notes.append(f"skipped {link.filename}: not a valid wheel file name")
            continue
        if wanted is not None and name != wanted:
            continue
        if link.yanked:
            notes.append(f"skipped {link.filename}: yanked (PEP 592)")
            continue
        try:
            if urlsplit(link.url).scheme != "file":
                check_url(link.url, allow_insecure_loopback=allow_insecure_loopback)
            elif not allow_file_links:
                raise UsageError(f"{link.url}: a file: link on a page that is not a local file")
        except UsageError as exc:
            notes.append(f"skipped {link.filename}: {exc.message}")
            continue
        if link.sha256 is None:
            notes.append(f"{link.filename}: no #sha256= on the page; entry has no hash")
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
