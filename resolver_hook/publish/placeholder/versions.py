"""Choose a placeholder's version against what the target index already holds.

pip and uv pick, among the files of a project that fit the machine, the highest version;
for one version a fitting wheel before the sdist; and pre-releases (dev releases are
pre-releases) only when the request asks for one or when no final release fits
(docs/facts.md section 4, "Which file an installer takes"). So a placeholder sdist wins
exactly where no real build fits when its version is

* a dev release, ``0.0.N.dev0``: any final release with a file that fits comes first;
* above every placeholder-looking release already there (a release of ``0.0.*`` that is
  a dev release, or all zeros): otherwise an older silent wheel is taken instead;
* below the first real release: otherwise uv reads the real wheels' metadata (and
  downloads their dependencies) before it reaches the placeholder, and the placeholder
  would shadow real builds of that version.

A version that is already on the index is refused before any upload (an index takes a
file name once, even after it is deleted). Placeholder-looking *wheels* are named: a
wheel is installed without running any of its code, so it is silent, and it still wins
for ``--only-binary :all:`` (uv: ``--no-build``), for ``NAME==ITS_VERSION`` and for uv's
``--resolution lowest``; the fix is to yank (PEP 592) or delete it.

The page is read through the one index client (:mod:`resolver_hook.index`: its
transport, URL policy and page parsers), never from its cache: the choice must see
what is on the index now. Its PEP 792 project status (HTML ``<meta
name="pypi:project-status">``, JSON ``project-status``) is read here: an archived or
quarantined project takes no uploads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser
from typing import TYPE_CHECKING

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
)
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.cache import json_loads
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index import IndexClient, PageError, parse_page
from resolver_hook.index.client import ACCEPT
from resolver_hook.index.model import JSON_TYPE
from resolver_hook.limits import (
    MAX_VERSION_DIGITS,
    NETWORK_DEADLINE,
    check_version_text,
    parse_wheel_name,
)
from resolver_hook.publish.placeholder.data import DEFAULT_VERSION

if TYPE_CHECKING:
    from resolver_hook.index import Link

__all__ = [
    "PYPI_SIMPLE",
    "IndexFile",
    "VersionChoice",
    "choose_from_index",
    "choose_version",
    "index_files",
    "is_placeholder_version",
    "project_page_url",
    "project_status",
]

PYPI_SIMPLE = "https://pypi.org/simple/"

# PEP 792 statuses under which the index refuses new uploads.
_NO_UPLOADS = ("archived", "quarantined")
# What a project page is served as (PEP 503 HTML, PEP 691's HTML and JSON forms), and
# the markup any HTML page has (an empty project page too: <html>, <body>, <a>, <meta>).
_PAGE_TYPES = ("text/html", "application/vnd.pypi.simple.v1+html", JSON_TYPE)
_HTML_MARKUP = re.compile(r"<\s*(?:!doctype\s+html|html|head|body|a|meta)\b", re.IGNORECASE)


@valueclass
class IndexFile:
    """One file of the project on the index."""

    filename: str
    version: Version
    wheel: bool
    yanked: bool


@valueclass
class VersionChoice:
    """The version to build, why, and what on the index needs the maintainer's attention."""

    version: str
    why: str
    warnings: tuple[str, ...] = ()


def is_placeholder_version(version: Version) -> bool:
    """A release that looks like a name reservation: ``0.0.*`` dev releases and all-zero
    releases (``0``, ``0.0.0``, ``0.0.0a0``): what placeholders and stubs are given."""
    release = (*version.release, 0, 0, 0)
    if not any(version.release):
        return True
    return release[:2] == (0, 0) and version.is_devrelease


def project_page_url(index_url: str, name: str) -> str:
    """The PEP 503 project page of ``name`` under ``index_url``: ``<index>/<normalized>/``."""
    return f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"


def index_files(links: Sequence[Link], name: str) -> tuple[IndexFile, ...]:
    """The files of project ``name`` among ``links`` (others, and unreadable names, left out)."""
    wanted = canonicalize_name(name)
    files = []
    for link in links:
        try:
            if link.filename.endswith(".whl"):
                found, version, _build, _tags = parse_wheel_name(link.filename)
                wheel = True
            else:
                found, version = parse_sdist_filename(link.filename)
                wheel = False
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if found == wanted:
            files.append(
                IndexFile(
                    filename=link.filename, version=version, wheel=wheel, yanked=link.is_yanked
                )
            )
    return tuple(files)


def _next_placeholder(top: Version, first_real: Version | None) -> Version | None:
    """The lowest free placeholder version above ``top`` and below ``first_real``."""
    micro = (*top.release, 0, 0, 0)[2]
    candidates = [Version(f"0.0.{micro + 1}.dev0")]
    if top.dev is not None:  # no room below the real release: bump the dev number instead
        candidates.append(Version(f"{str(top).rsplit('.dev', 1)[0]}.dev{top.dev + 1}"))
    for candidate in candidates:
        if check_version_text(str(candidate)) is not None:
            continue  # past the bounds on a version (limits.py): not one to publish
        if candidate > top and (first_real is None or candidate < first_real):
            return candidate
    return None


def choose_version(
    files: Sequence[IndexFile], *, name: str, where: str, requested: str | None = None
) -> VersionChoice:
    """The placeholder version for project ``name`` given the ``files`` at ``where``.

    With ``requested`` (``--version``), that version, refused when it is already there,
    would lose to a placeholder already there, or would reach a real release.
    """
    existing = {f.version for f in files}
    placeholders = sorted(v for v in existing if is_placeholder_version(v))
    real = sorted(v for v in existing if not is_placeholder_version(v))
    top = placeholders[-1] if placeholders else None
    first_real = real[0] if real else None
    automatic = _next_placeholder(top, first_real) if top is not None else Version(DEFAULT_VERSION)
    warnings = [_silent_wheel(f, name) for f in files if _is_silent_wheel(f)]
    if real:
        everywhere = sorted(
            f.filename
            for f in files
            if f.version in real and f.wheel and not f.yanked and _fits_everywhere(f)
        )
        if everywhere:
            warnings.append(
                f"{everywhere[0]} is a wheel for every machine: where it is allowed, pip and "
                "uv take it, so the placeholder fires only for requests it does not satisfy"
            )
    bounds = []
    if top is not None:
        bounds.append(f"above {top} (the highest placeholder-looking release there)")
    if first_real is not None:
        bounds.append(f"below {first_real} (the first real release)")
    if requested is None:
        if automatic is None:
            below = f" and below the real release {first_real}" if first_real else ""
            raise OperationalError(
                f"{where}: no placeholder version is free above {top}{below} within the "
                f"bounds on a version (numbers of at most {MAX_VERSION_DIGITS} digits)",
                hint="yank or delete the placeholder-looking releases, or give --version V",
            )
        chosen = automatic
    else:
        try:
            chosen = Version(requested)
        except InvalidVersion:
            raise UsageError(f"--version: {requested!r} is not a PEP 440 version") from None
        better = f"; leave --version out to take {automatic}" if automatic is not None else ""
        if chosen in existing:
            raise UsageError(
                f"--version {chosen}: {name} {chosen} is already on {where}; an index takes "
                "each file name once (even after a delete), so its upload would be refused",
                hint=f"give a version that is not there yet{better}",
            )
        if top is not None and chosen <= top:
            raise UsageError(
                f"--version {chosen}: {name} {top} is already on {where} and is higher: pip "
                "and uv would take it instead of the placeholder",
                hint=f"give a version above {top}{better}",
            )
        if first_real is not None and chosen >= first_real:
            raise UsageError(
                f"--version {chosen}: not below {first_real}, the first real release on "
                f"{where}: the placeholder would compete with real builds",
                hint=f"give a version below {first_real}{better}",
            )
    why = f"{name} {chosen}: " + (
        " and ".join(bounds) if bounds else f"no release of {name} on {where} yet"
    )
    why += (
        "; a dev release, so pip and uv take it only where no release that fits was found"
        if chosen.is_prerelease
        else ""
    )
    return VersionChoice(version=str(chosen), why=why, warnings=tuple(warnings))


def _is_silent_wheel(f: IndexFile) -> bool:
    return f.wheel and not f.yanked and is_placeholder_version(f.version)


def _fits_everywhere(f: IndexFile) -> bool:
    _name, _version, _build, tags = parse_wheel_name(f.filename)
    return any(t.abi == "none" and t.platform == "any" for t in tags)


def _silent_wheel(f: IndexFile, name: str) -> str:
    return (
        f"{f.filename} is a placeholder-looking wheel: pip and uv install a wheel without "
        "running any of its code, so it installs silently, and it still wins over the "
        f"placeholder for --only-binary :all: (uv: --no-build), for {name}=={f.version} and "
        "for uv's --resolution lowest; yank it (PEP 592) or delete it on the index"
    )


class _StatusMeta(HTMLParser):
    """``<meta name="pypi:project-status" content=...>`` and its ``-reason`` twin."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta":
            return
        values = dict(attrs)
        key, content = (values.get("name") or "").lower(), values.get("content")
        if key in ("pypi:project-status", "pypi:project-status-reason") and content is not None:
            self.found.setdefault(key, content)


def project_status(text: str, content_type: str = "") -> tuple[str, str | None]:
    """The page's PEP 792 project status and reason; ``active`` when none is given.

    A PEP 691 JSON page (served as such, or text that starts with ``{``) has them as
    ``project-status: {status, reason}``; an HTML page as ``<meta>`` tags.
    """
    status: object = None
    reason: object = None
    if content_type.endswith("+json") or (not content_type and text.lstrip()[:1] == "{"):
        try:
            doc = json_loads(text)
        except ValueError:
            doc = None  # the page parser words what is wrong with it
        marker = doc.get("project-status") if isinstance(doc, dict) else None
        if isinstance(marker, dict):
            status, reason = marker.get("status"), marker.get("reason")
    else:
        parser = _StatusMeta()
        parser.feed(text)
        parser.close()
        status = parser.found.get("pypi:project-status")
        reason = parser.found.get("pypi:project-status-reason")
    shown = status.strip().lower() if isinstance(status, str) else ""
    return shown or "active", reason if isinstance(reason, str) else None


def _not_a_page(content_type: str, text: str) -> str | None:
    """Why an answer is no project page, in words; None when it is one (a JSON page
    without ``files`` is refused by its parser, in its words)."""
    if content_type and content_type not in _PAGE_TYPES:
        return f"it is {content_type}"
    if content_type == JSON_TYPE or (not content_type and text.lstrip()[:1] == "{"):
        return None
    if _HTML_MARKUP.search(text) is None:
        return "it holds no HTML"
    return None


def choose_from_index(
    name: str,
    index_url: str,
    *,
    requested: str | None = None,
    allow_insecure: bool = False,
    timeout: float = NETWORK_DEADLINE,
) -> VersionChoice:
    """Read ``name``'s page on ``index_url`` and choose (or check) the placeholder version.

    A project the index does not know (HTTP 404) has no files yet. An archived or
    quarantined project (PEP 792) is refused: the index takes no uploads for it.
    """

    page = project_page_url(index_url, name)
    shown = redact(page)  # the page in words: without the credentials its URL may carry
    client = IndexClient(allow_insecure=allow_insecure, cache=False, timeout=timeout)
    try:
        response = client.transport.get(client.url_of(page), accept=ACCEPT)
        text = response.text()
        refused = _not_a_page(response.content_type, text)
        if refused is not None:
            # A 200 that is no project page (a rate-limit JSON, a text, an image) says
            # nothing about which versions exist: never "no release yet".
            raise OperationalError(
                f"{shown}: the index answered with no project page ({refused}: "
                f"{text.strip()[:60]!r}); no version was chosen and nothing was built",
                hint="the index may be rate-limiting or failing: try again later, or give "
                "--version V without --index-url to build without reading it",
            )
    except PageError as exc:
        # The transport words an HTTP error "URL: HTTP 404 Not Found": a name the index
        # does not know yet has no files.
        if ": HTTP 404 " not in exc.message:
            raise PageError(
                exc.message, hint="give --version V to build without reading the index"
            ) from None
        return choose_version((), name=name, where=shown, requested=requested)
    try:
        links = parse_page(text, response.url, response.content_type)
    except PageError as exc:
        # A page the parser refuses (a sign-in page: a form and no package files) is no
        # project page either: named as the index client names it, with its hint.
        raise PageError(
            f"{shown}: {exc.message}; no version was chosen and nothing was built",
            hint=exc.hint or "give --version V to build without reading the index",
        ) from None
    status, reason = project_status(text, response.content_type)
    if status in _NO_UPLOADS:
        because = f" ({reason})" if reason else ""
        raise OperationalError(
            f"{shown}: the index marks {name} {status}{because} (PEP 792): it takes no "
            "uploads, so a placeholder cannot be published there",
            hint="an archived name already tells installers it is done; unarchive it first "
            "only if a placeholder should speak for it",
        )
    choice = choose_version(index_files(links, name), name=name, where=shown, requested=requested)
    if status == "deprecated":
        note = f"the index marks {name} deprecated (PEP 792); installers may warn about it"
        choice = VersionChoice(
            version=choice.version, why=choice.why, warnings=(*choice.warnings, note)
        )
    return choice
