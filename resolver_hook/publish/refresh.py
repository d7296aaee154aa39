"""Keeping the built-in data current: the logic of ``scripts/refresh_data.py``.

The one maintainer tool in this package that reads the network, through the project's
one index client (:class:`~resolver_hook.index.IndexClient`: its URL policy, mirrors,
bounds and credentials). It:

1. reads every page the manifests' index flavours name (:func:`read_pages`); a page
   that cannot be read is reported and nothing of it is dropped;
2. compares the wheel links some flavour could plan
   (:func:`relevant_links`) with the cited link table
   (``scripts/data/snapshot_links.toml``, the snapshot's offline source of truth): a
   new file becomes a new row citing its page and the date read; a file no longer
   listed, or listed with another sha256 now, is reported for review and left as it
   is (:func:`compare`);
3. reads the core metadata of every file the snapshot keeps that has none recorded
   (:func:`read_metadata`): the PEP 658 ``.metadata`` file where the page offers one,
   checked against the hash the page gives; else the wheel's own ``METADATA`` member,
   the wheel downloaded (bounded) and checked against its page's sha256 first. What
   the planner uses of it (:func:`core_text`) becomes a ``[[metadata]]`` row of the
   table citing what was read, its sha256 and the date;
4. renders the snapshot from the table (:func:`render_snapshot`, which
   ``scripts/make_snapshot.py`` uses too, so ``--check`` there keeps holding): each
   file with a metadata row carries it, so an offline plan takes couplings from its
   ``Requires-Dist`` as an online one does;
5. downloads each file the planner would plan with a kernel list carried forward
   (:func:`~resolver_hook.inventory.expand.carried_files`) and no record yet, checks
   its sha256 against its page's before anything reads it, scans it
   (:func:`resolver_hook.binaries.scan.scan_wheel`) and records the kernel list
   (:mod:`resolver_hook.inventory.kernels`); a list that differs from one already
   recorded for the same release, label and platform is reported, not recorded
   (:func:`scan_carried`).

It never changes a manifest: where a scan contradicts the list an entry carries
forward, the record is the file's fact and the report says the entry may want a
``kernels_until`` or an entry of its own.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.binaries.scan import ZIP_ERRORS, ScanError, metadata_headers, scan_wheel
from resolver_hook.errors import ResolverHookError
from resolver_hook.ground.valueclass import field, replace, valueclass
from resolver_hook.index.client import IndexClient
from resolver_hook.index.errors import PageError, TooLarge
from resolver_hook.index.fetch import redact
from resolver_hook.index.metadata import HashMismatch, parse_metadata
from resolver_hook.index.mirrors import upstream_of
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import Candidate, candidates
from resolver_hook.inventory.expand import carried_files, covered_releases, page_of
from resolver_hook.inventory.kernels import KernelRecord, KernelRecords, release_key
from resolver_hook.inventory.snapshot import dump_snapshot, link_table
from resolver_hook.limits import MAX_METADATA_BYTES, SNAPSHOT_RELEASES
from resolver_hook.manifest.model import IndexFlavour, Manifest
from resolver_hook.manifest.urls import url_problem

__all__ = [
    "MetaRow",
    "ReleaseRow",
    "Report",
    "Row",
    "compare",
    "core_text",
    "metadata_toml",
    "new_releases",
    "read_metadata",
    "read_pages",
    "releases_toml",
    "render_snapshot",
    "rows_toml",
    "scan_carried",
]


@valueclass
class Row:
    """One row of the cited link table: a file as a public source lists it."""

    page: str
    url: str
    filename: str
    sha256: str
    evidence: str
    read: str
    requires_python: str | None = None

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> Row:
        rp = t.get("requires_python")
        return cls(
            page=t["page"],
            url=t["url"],
            filename=t["filename"],
            sha256=t["sha256"],
            evidence=t["evidence"],
            read=t["read"],
            requires_python=rp if isinstance(rp, str) else None,
        )

    def link(self) -> Link:
        return Link(
            url=self.url,
            filename=self.filename,
            hashes={"sha256": self.sha256},
            requires_python=self.requires_python,
        )


@valueclass
class MetaRow:
    """One ``[[metadata]]`` row of the table: what the planner uses of a file's core
    metadata (``text``), the file it was read from (``source``: the ``.metadata`` file,
    or the wheel itself), that file's sha256 and the date read."""

    file: str  # the wheel's URL (a ``[[link]]`` row's ``url``)
    source: str
    sha256: str  # of the core metadata file as read (the wheel's METADATA member)
    read: str
    text: str

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> MetaRow:
        return cls(
            file=t["file"], source=t["source"], sha256=t["sha256"], read=t["read"], text=t["text"]
        )


@valueclass
class ReleaseRow:
    """One ``[[release]]`` row of the table: a release a public source says a page
    lists (``2.7.1+cu128`` on the cu128 page), its files not known: planned offline in
    page form, never with a file name."""

    page: str
    version: str
    evidence: str
    read: str
    # The release's ``Requires-Dist`` lines on packages with a manifest, and where they
    # were read: its couplings, which hold offline in page form as online.
    requires: tuple[str, ...] = ()
    requires_evidence: str | None = None

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> ReleaseRow:
        return cls(
            page=t["page"],
            version=t["version"],
            evidence=t["evidence"],
            read=t["read"],
            requires=tuple(t.get("requires", ())),
            requires_evidence=t.get("requires_evidence"),
        )


@valueclass(kw_only=False, frozen=False)
class Report:
    """What a refresh found, line by line, by kind (``new``, ``unread``, ``unlisted``,
    ``review``, ``recorded``, ``metadata``, ``differs``, ``refused``, ``skipped``,
    ``failed``; ``scan`` and ``meta``: a file a run would scan, a metadata file it
    would read)."""

    lines: list[tuple[str, str]] = field(default_factory=list)

    def add(self, kind: str, text: str) -> None:
        self.lines.append((kind, text))

    def count(self, kind: str) -> int:
        return sum(1 for k, _ in self.lines if k == kind)

    def needs_a_person(self) -> bool:
        """A refused hash, or a list or hash for review (a manifest a scan contradicts
        is reported, but the record is the file's fact and is used)."""
        return any(k in ("refused", "review") for k, _ in self.lines)

    def render(self) -> str:
        out = [f"{kind}: {text}" for kind, text in self.lines]
        words = {
            "new": "new releases",
            "unread": "pages not read",
            "unlisted": "files no longer listed",
            "recorded": "kernel lists recorded",
            "metadata": "metadata recorded",
            "refused": "refused (sha256)",
            "review": "for review",
            "differs": "differ from their manifest",
            "skipped": "skipped",
            "failed": "failed",
            "scan": "to scan",
            "meta": "metadata to read",
        }
        counts = [f"{w}: {self.count(k)}" for k, w in words.items() if self.count(k)]
        out.append("summary: " + (", ".join(counts) if counts else "nothing changed"))
        return "\n".join(out) + "\n"


# --- pages and the link table --------------------------------------------------------


def page_urls(manifests: Mapping[str, Manifest]) -> list[str]:
    """Every page the manifests' index flavours name, in a stable order."""
    urls: dict[str, None] = {}
    for name in sorted(manifests):
        for f in manifests[name].indexes:
            url = page_of(f)
            if url is not None:
                urls.setdefault(url)
    return list(urls)


def read_pages(client: IndexClient, urls: Sequence[str], report: Report) -> dict[str, Page]:
    """The pages that could be read, their links' URLs mapped back from the client's
    mirrors to the upstream ones (what the data cites); each other page is reported.

    The data cites public URLs: a link whose upstream URL the URL policy refuses
    without ``--allow-insecure-urls`` (plain http, a loopback or ``file:`` URL no
    mirror maps back), and one the client left out, is reported for review and kept
    out of the table and the snapshot."""
    out: dict[str, Page] = {}
    seen = len(client.left_out)
    for url, got in client.pages(urls).items():
        if isinstance(got, Page):
            links = []
            for x in got.links:
                upstream = upstream_of(x.url, client.mirrors)
                problem = url_problem(upstream)
                if problem is not None:
                    report.add("review", f"{x.filename}: {url}: {problem}: not added")
                    continue
                links.append(replace(x, url=upstream))
            out[url] = replace(got, url=url, links=tuple(links))
        else:
            read = redact(client.url_of(url))
            why = got.message.removeprefix(f"{read}: ")
            where = redact(url) if read == redact(url) else f"{redact(url)} (read as {read})"
            report.add("unread", f"{where}: {why}: nothing of it is removed")
    for page, problem in client.left_out[seen:]:
        shown = upstream_of(page, client.mirrors)
        report.add("review", f"{shown}: link left out: {problem}: not added")
    return out


def relevant_links(
    manifests: Mapping[str, Any], pages: Mapping[str, Page]
) -> dict[str, list[Link]]:
    """Per page, the links some index flavour of ``manifests`` could plan (its
    distribution, local label, platforms and Pythons), of each flavour's newest
    :data:`~resolver_hook.limits.SNAPSHOT_RELEASES` releases: what a snapshot keeps."""
    keep: dict[str, dict[str, Link]] = {}
    for man in manifests.values():
        for f in man.indexes:
            url = page_of(f)
            page = pages.get(url) if url is not None else None
            if page is None:
                continue
            releases: list[Any] = []
            for c in candidates(f, page):  # newest first
                if f.versions is None and c.version < f.version:
                    continue  # older than the entry: never planned
                if c.version not in releases:
                    if len(releases) == SNAPSHOT_RELEASES:
                        break  # an offline plan of an older pin reads the manifest alone
                    releases.append(c.version)
                keep.setdefault(page.url, {})[c.link.url] = c.link
    return {url: sorted(links.values(), key=lambda x: x.filename) for url, links in keep.items()}


def compare(
    manifests: Mapping[str, Manifest],
    pages: Mapping[str, Page],
    rows: Sequence[Row],
    today: datetime.date,
    report: Report,
) -> list[Row]:
    """The rows to add: files some flavour could plan that the table lacks. A file of a
    page read that is no longer listed there, or listed with another sha256, is
    reported and its row kept as it is."""
    by_url = {r.url: r for r in rows}
    added: list[Row] = []
    for url, links in relevant_links(manifests, pages).items():
        new: dict[str, list[str]] = {}
        for x in links:
            row = by_url.get(x.url)
            if row is not None:
                if x.sha256 and x.sha256 != row.sha256:
                    report.add(
                        "review",
                        f"{x.filename}: {url} gives sha256 {x.sha256}, the table "
                        f"{row.sha256} (read {row.read}): not changed",
                    )
                continue
            if not x.sha256:
                report.add("skipped", f"{x.filename}: {url} gives no sha256: not added")
                continue
            r = Row(
                page=url,
                url=x.url,
                filename=x.filename,
                sha256=x.sha256,
                evidence=url,
                read=today.isoformat(),
                requires_python=x.requires_python,
            )
            added.append(r)
            name, version, _ = release_key(x.filename)
            new.setdefault(f"{name} {version}", []).append(x.filename)
        for release, files in new.items():
            n = len(files)
            report.add("new", f"{release}: {n} file{'' if n == 1 else 's'} on {url}")
    for r in rows:
        page = pages.get(r.page)
        if page is not None and all(x.url != r.url for x in page.links):
            report.add("unlisted", f"{r.filename}: no longer on {r.page}: its row is kept")
    return added


def new_releases(
    manifests: Mapping[str, Manifest],
    pages: Mapping[str, Page],
    rows: Sequence[ReleaseRow],
    today: datetime.date,
    report: Report,
) -> list[ReleaseRow]:
    """The compact rows to add: every release of a page read that a range entry covers
    (its label, in its range) and the table lacks, the page itself as the source. The
    files of a page are kept for its newest releases only; its history, by name."""
    have = {(r.page, r.version) for r in rows}
    seen: dict[tuple[str, str], None] = {}
    for man in manifests.values():
        for f in man.indexes:
            url = page_of(f)
            page = pages.get(url) if url is not None else None
            if url is None or page is None or f.versions is None or not f.version.local:
                continue
            for c in candidates(f, page):
                if f.versions.contains(c.version, prereleases=False):
                    seen.setdefault((url, str(c.version)))
    out = [
        ReleaseRow(page=u, version=v, evidence=u, read=today.isoformat())
        for u, v in sorted(seen, key=lambda k: (k[0], Version(k[1])))
        if (u, v) not in have
    ]
    if out:
        report.add("new", f"{len(out)} releases the pages read name (compact rows)")
    return out


def releases_toml(rows: Sequence[ReleaseRow], today: datetime.date) -> str:
    """TOML text of compact ``rows``, to append to the table."""
    head = f"Releases read from the pages themselves by scripts/refresh_data.py on {today}."
    return _toml_rows("release", head, rows, ("page", "version", "evidence", "read"))


def render_snapshot(
    rows: Iterable[Row],
    manifests: Mapping[str, Manifest],
    date: datetime.date | None = None,
    metadata: Iterable[MetaRow] = (),
    releases: Iterable[ReleaseRow] = (),
) -> str:
    """The snapshot of the table's rows that some flavour of ``manifests`` could plan,
    each with its ``metadata`` row where there is one, and the ``releases`` rows some
    flavour covers (every one: a compact row has no file, so no bound but the
    snapshot's size); ``date`` defaults to the newest ``read`` of the rows kept."""
    metas = {m.file: m for m in metadata}
    by_page: dict[str, list[Link]] = {}
    cited: dict[str, Row] = {}
    for row in rows:
        link = row.link()
        meta = metas.get(row.url)
        if meta is not None:  # the planner reads metadata only where a page offers it
            link = replace(link, core_metadata={"sha256": meta.sha256})
        by_page.setdefault(row.page, []).append(link)
        cited[row.url] = row
    pages = {url: Page(url=url, links=tuple(links)) for url, links in by_page.items()}
    kept = relevant_links(manifests, pages)
    if date is None:
        dates = [cited[x.url].read for links in kept.values() for x in links]
        date = datetime.date.fromisoformat(max(dates)) if dates else datetime.date.today()
    tables = {
        url: [_with_metadata(link_table(x, cited[x.url].evidence), metas.get(x.url)) for x in links]
        for url, links in kept.items()
    }
    compact: dict[str, list[dict[str, str]]] = {}
    covered = covered_releases(manifests, [(r.page, r.version) for r in releases])
    named: set[tuple[str, Version]] = set()
    for r in releases:
        if (r.page, r.version) in covered:
            item: dict[str, Any] = {
                "version": r.version,
                "evidence": f"{r.evidence} (read {r.read})",
            }
            if r.requires:
                item["requires"] = list(r.requires)
                item["requires_evidence"] = str(r.requires_evidence)
                named.update(_exact_pins(r.requires))
            if item not in compact.setdefault(r.page, []):
                compact[r.page].append(item)
    # The files of a release a kept row's coupling pins exactly (torch 2.5.1's
    # triton==3.1.0): kept too, so that offline judges the pair as online does.
    for url, links in by_page.items():
        extra = [x for x in links if _release_of(x.filename) in named]
        for x in extra:
            if x not in kept.get(url, []):
                tables.setdefault(url, []).append(
                    _with_metadata(link_table(x, cited[x.url].evidence), metas.get(x.url))
                )
        if extra:
            tables[url].sort(key=lambda t: str(t["filename"]))
    by_version = {u: sorted(v, key=lambda r: Version(r["version"])) for u, v in compact.items()}
    return dump_snapshot(date, tables, by_version)


def _exact_pins(requires: Iterable[str]) -> set[tuple[str, Version]]:
    """The (project, release) of each ``==`` pin among ``requires``."""
    out: set[tuple[str, Version]] = set()
    for text in requires:
        r = Requirement(text)
        for s in r.specifier:
            if s.operator == "==" and "*" not in s.version:
                out.add((canonicalize_name(r.name), Version(Version(s.version).public)))
    return out


def _release_of(filename: str) -> tuple[str, Version] | None:
    name, version, _ = release_key(filename)
    try:
        return canonicalize_name(name), Version(Version(version).public)
    except InvalidVersion:
        return None


def _with_metadata(table: dict[str, Any], meta: MetaRow | None) -> dict[str, Any]:
    if meta is not None:
        table["metadata"] = meta.text
        table["metadata_evidence"] = f"{meta.source} (read {meta.read})"
    return table


def rows_toml(rows: Sequence[Row], today: datetime.date) -> str:
    """TOML text of ``rows``, to append to the table (its rows and comments stay)."""
    keys = ("page", "url", "filename", "sha256", "requires_python", "evidence", "read")
    head = f"Read from the pages themselves by scripts/refresh_data.py on {today}."
    return _toml_rows("link", head, rows, keys)


def metadata_toml(rows: Sequence[MetaRow], today: datetime.date) -> str:
    """TOML text of metadata ``rows``, to append to the table."""
    head = f"Core metadata read by scripts/refresh_data.py on {today}."
    return _toml_rows("metadata", head, rows, ("file", "source", "sha256", "read", "text"))


def _toml_rows(table: str, head: str, rows: Sequence[object], keys: Sequence[str]) -> str:
    """``[[table]]`` rows of ``keys`` (None values left out) under one comment line."""
    if not rows:
        return ""
    out = [f"\n# {head}\n"]
    for r in rows:
        out.append(f"\n[[{table}]]\n")
        for key in keys:
            value = getattr(r, key)
            if value is not None:
                out.append(f"{key} = {json.dumps(value, ensure_ascii=False)}\n")
    return "".join(out)


# --- core metadata ---------------------------------------------------------------------

_KEPT_FIELDS = ("Metadata-Version", "Name", "Version", "Requires-Python")
_EXTRA = re.compile(r"\bextra\b")
_METADATA_MEMBER = re.compile(r"^[^/]+\.dist-info/METADATA$")


def core_text(data: bytes) -> str:
    """What the planner uses of a core metadata file (its Metadata-Version, Name,
    Version, Requires-Python, and each Requires-Dist not under an ``extra`` marker), as
    core metadata text; :class:`~resolver_hook.index.errors.PageError` when it has no
    Name or Version."""
    parse_metadata(data, "metadata")  # Name and Version, or PageError
    message = metadata_headers(data)
    lines = []
    for key in _KEPT_FIELDS:
        value = message.get(key)
        if value:
            lines.append(f"{key}: {str(value).strip()}")
    for value in message.get_all("Requires-Dist") or ():
        text = str(value).strip()
        try:
            marker = Requirement(text).marker
        except InvalidRequirement:
            continue  # the planner skips it too
        if marker is None or not _EXTRA.search(str(marker)):
            lines.append(f"Requires-Dist: {text}")
    return "\n".join(lines) + "\n"


def _wheel_metadata(path: Path) -> bytes:
    """The ``*.dist-info/METADATA`` member of the wheel at ``path`` (bounded)."""
    try:
        with zipfile.ZipFile(path) as zf:
            found = [i for i in zf.infolist() if _METADATA_MEMBER.match(i.filename)]
            if len(found) != 1:
                raise PageError(f"{path.name}: {len(found)} .dist-info/METADATA members, not 1")
            if found[0].file_size > MAX_METADATA_BYTES:
                raise PageError(f"{path.name}: its METADATA is over {MAX_METADATA_BYTES} bytes")
            with zf.open(found[0]) as handle:
                return handle.read(MAX_METADATA_BYTES + 1)[:MAX_METADATA_BYTES]
    except ZIP_ERRORS as exc:
        raise PageError(f"{path.name}: not a readable wheel ({exc})") from None


def read_metadata(
    snapshot_links: Iterable[Link],
    pages: Mapping[str, Page],
    metas: Sequence[MetaRow],
    *,
    client: IndexClient | None,
    folder: Path,
    today: datetime.date,
    max_reads: int,
    max_wheel_bytes: int,
    report: Report,
) -> list[MetaRow]:
    """Metadata rows for the files of ``snapshot_links`` (what the snapshot keeps) that
    have none, read from the pages read now (``pages``: a file of a page not read is
    left for a later run). The ``.metadata`` file where the page offers one, checked
    against the page's hash; else the wheel, at most ``max_wheel_bytes``, its sha256
    checked against the page's before it is opened. A file whose metadata names
    another release, or whose bytes do not match, is refused. ``client=None`` (a
    check) reports the ``.metadata`` files a run would read and reads nothing."""
    have = {m.file for m in metas}
    live = {x.url: x for page in pages.values() for x in page.links}
    todo = [live[x.url] for x in snapshot_links if x.url not in have and x.url in live]
    todo.sort(key=lambda x: x.filename)
    added: list[MetaRow] = []
    large: dict[str, int] = {}
    for done, link in enumerate(todo):
        if client is None:
            if link.core_metadata is not None:
                report.add("meta", f"{link.filename}: {link.url}.metadata")
            continue
        if done >= max_reads:
            left = len(todo) - done
            report.add("skipped", f"metadata of {left} more files: at most {max_reads} a run")
            break
        try:
            got = _read_one(link, client, folder, max_wheel_bytes)
        except TooLarge:
            release = " ".join(release_key(link.filename)[:2])
            large[release] = large.get(release, 0) + 1
            continue
        except HashMismatch as exc:
            report.add("refused", f"{link.filename}: {exc.message}: its metadata not recorded")
            continue
        except ResolverHookError as exc:
            report.add("failed", f"{link.filename}: metadata: {exc.message}")
            continue
        if isinstance(got, str):
            report.add("refused", f"{link.filename}: {got}: its metadata not recorded")
            continue
        source, data = got
        try:
            text = core_text(data)
        except ResolverHookError as exc:
            report.add("refused", f"{link.filename}: {exc.message}")
            continue
        wrong = _names_other(text, link.filename)
        if wrong:
            report.add("refused", f"{link.filename}: its metadata names {wrong}: not recorded")
            continue
        sha = hashlib.sha256(data).hexdigest()
        added.append(MetaRow(file=link.url, source=source, sha256=sha, read=today.isoformat(),
                             text=text))  # fmt: skip
        report.add("metadata", f"{link.filename}: from {source} (sha256 {sha})")
    for release, n in large.items():
        report.add(
            "skipped",
            f"metadata of {release} ({n} file{'' if n == 1 else 's'}): the page offers no "
            f".metadata file and the wheel is over {max_wheel_bytes} bytes (raise it with "
            "--max-metadata-wheel-bytes): not recorded",
        )
    return added


def _read_one(
    link: Link, client: IndexClient, folder: Path, max_wheel_bytes: int
) -> tuple[str, bytes] | str:
    """(what was read, the core metadata bytes), or why the wheel was refused."""
    if link.core_metadata is not None:
        return f"{link.url}.metadata", client.metadata_file(link)
    if not link.sha256:
        raise PageError("the page offers no .metadata file and no sha256 for the wheel")
    if Path(link.filename).name != link.filename:
        raise PageError("not a plain file name")
    path = folder / link.filename
    try:
        digest = client.download(link.url, path, max_bytes=max_wheel_bytes)
        if digest != link.sha256:
            return f"its bytes have sha256 {digest}, its page gives {link.sha256}"
        return link.url, _wheel_metadata(path)
    finally:
        path.unlink(missing_ok=True)


def _names_other(text: str, filename: str) -> str | None:
    """The release ``text`` names when it is not the one of ``filename``."""
    found = parse_metadata(text.encode("utf-8"), filename)
    name, version, _ = release_key(filename)
    try:
        same = canonicalize_name(found.name) == name and Version(found.version) == Version(version)
    except InvalidVersion:
        same = False
    return None if same else f"{found.name} {found.version}"


# --- kernel lists ----------------------------------------------------------------------


def scan_carried(
    manifests: Mapping[str, Manifest],
    pages: Mapping[str, Page],
    records: KernelRecords,
    *,
    client: IndexClient | None,
    folder: Path,
    today: datetime.date,
    max_bytes: int,
    max_scans: int,
    report: Report,
    save: Callable[[KernelRecords], None] | None = None,
) -> KernelRecords:
    """Download, check, scan and record every carried-forward file without a record;
    ``client=None`` (a check) reports them and reads nothing. ``save`` is called after
    each record (a run cut short keeps what it recorded; a rerun goes on)."""
    carried = carried_files(manifests, pages)
    # A flavour without ``gpu`` claims no kernels (it runs without a GPU): nothing to
    # verify, so its files are not downloaded.
    todo = [(f, c) for f, c in carried if f.needs.gpu and records.get(c.sha256, c.filename) is None]
    scans = 0
    for done, (f, c) in enumerate(todo):
        if client is None:
            report.add("scan", f"{c.filename}: kernels assumed from {f.version}")
            continue
        if not c.sha256:
            report.add("skipped", f"{c.filename}: its page gives no sha256: not downloaded")
            continue
        if scans >= max_scans:
            left = len(todo) - done
            report.add("skipped", f"{left} more files: at most {max_scans} scans a run; run again")
            break
        if Path(c.filename).name != c.filename:
            report.add("skipped", f"{c.filename[:200]!r}: not a plain file name")
            continue
        scans += 1
        path = folder / c.filename
        try:
            digest = client.download(c.url, path, max_bytes=max_bytes)
        except TooLarge as exc:
            report.add("skipped", f"{c.filename}: larger than {exc.limit} bytes (raise it with "
                       "--max-wheel-bytes)")  # fmt: skip
            continue
        except ResolverHookError as exc:
            report.add("failed", f"{c.filename}: {exc.message}")
            continue
        try:
            if digest != c.sha256:
                report.add(
                    "refused",
                    f"{c.filename}: its bytes have sha256 {digest}, its page gives "
                    f"{c.sha256}: not scanned, nothing recorded",
                )
                continue
            try:
                scanned = scan_wheel(path)
            except ScanError as exc:
                report.add("failed", f"{c.filename}: {exc.message}")
                continue
        finally:
            path.unlink(missing_ok=True)
        records = _record(f, c, scanned.gpu, records, today=today, report=report)
        if save is not None:
            save(records)
    return records


def _record(
    f: IndexFlavour,
    c: Candidate,
    gpu: Sequence[str],
    records: KernelRecords,
    *,
    today: datetime.date,
    report: Report,
) -> KernelRecords:
    """Record what the file ``c`` (its sha256 checked) was found to carry, unless it
    carries nothing or differs from a list recorded for its release."""
    filename, url, sha256 = c.filename, c.url, c.sha256 or ""
    found = ", ".join(gpu)
    if not gpu:
        report.add("review", f"{filename}: no kernel found in it: nothing recorded")
        return records
    key = release_key(filename)
    for other in records.of_release(key):
        if set(other.gpu) != set(gpu):
            report.add(
                "review",
                f"{filename}: carries {found}; {key[0]} {key[1]} {key[2]} is recorded with "
                f"{', '.join(other.gpu)} ({other.filename}, read {other.read}): not recorded",
            )
            return records
    record = KernelRecord(
        distribution=key[0], filename=filename, url=url, sha256=sha256, gpu=tuple(gpu), read=today
    )
    report.add("recorded", f"{filename}: {found} (sha256 {sha256})")
    if {str(t) for t in f.needs.gpu} != set(gpu):
        carried = ", ".join(str(t) for t in sorted(f.needs.gpu)) or "no list"
        report.add(
            "differs",
            f"{filename}: the manifest carries {carried} "
            f"forward from {f.version}; the file carries {found}: the record is used, the "
            "manifest is unchanged (a kernels_until or an entry of its own may be due)",
        )
    return KernelRecords({**records.files, sha256: record})
