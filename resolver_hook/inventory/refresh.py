"""Keeping the built-in data current: the logic of ``scripts/refresh_data.py``.

The one maintainer tool in this package that reads the network, through the project's
one index client (:class:`~resolver_hook.index.IndexClient`: its URL policy, mirrors,
bounds and credentials). It:

1. reads every page the manifests' index flavours name (:func:`read_pages`); a page
   that cannot be read is reported and nothing of it is dropped;
2. compares the wheel links some flavour could plan
   (:func:`~resolver_hook.inventory.snapshot.relevant_links`) with the cited link table
   (``scripts/data/snapshot_links.toml``, the snapshot's offline source of truth): a
   new file becomes a new row citing its page and the date read; a file no longer
   listed, or listed with another sha256 now, is reported for review and left as it
   is (:func:`compare`);
3. renders the snapshot from the table (:func:`render_snapshot`, which
   ``scripts/make_snapshot.py`` uses too, so ``--check`` there keeps holding);
4. downloads each file the planner would plan with a kernel list carried forward
   (:func:`~resolver_hook.inventory.expand.carried_files`) and no record yet, checks
   its sha256 against its page's before anything reads it, scans it
   (:func:`resolver_hook.publish.scan.scan_wheel`) and records the kernel list
   (:mod:`resolver_hook.inventory.kernels`); a list that differs from one already
   recorded for the same release, label and platform is reported, not recorded
   (:func:`scan_carried`).

It never changes a manifest: where a scan contradicts the list an entry carries
forward, the record is the file's fact and the report says the entry may want a
``kernels_until`` or an entry of its own.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from resolver_hook.errors import ResolverHookError
from resolver_hook.index.client import IndexClient
from resolver_hook.index.errors import TooLarge
from resolver_hook.index.fetch import redact
from resolver_hook.index.mirrors import upstream_of
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory.candidates import Candidate
from resolver_hook.inventory.expand import carried_files, page_of
from resolver_hook.inventory.kernels import KernelRecord, KernelRecords, release_key
from resolver_hook.inventory.snapshot import dump_snapshot, link_table, relevant_links
from resolver_hook.manifest.schema import IndexFlavour, Manifest

__all__ = [
    "Report",
    "Row",
    "compare",
    "read_pages",
    "render_snapshot",
    "rows_toml",
    "scan_carried",
]


@dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclass(slots=True)
class Report:
    """What a refresh found, line by line, by kind (``new``, ``unread``, ``unlisted``,
    ``review``, ``recorded``, ``differs``, ``refused``, ``skipped``, ``failed``,
    ``scan``: a file a run would scan)."""

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
            "refused": "refused (sha256)",
            "review": "for review",
            "differs": "differ from their manifest",
            "skipped": "skipped",
            "failed": "failed",
            "scan": "to scan",
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
    mirrors to the upstream ones (what the data cites); each other page is reported."""
    out: dict[str, Page] = {}
    for url, got in client.pages(urls).items():
        if isinstance(got, Page):
            links = tuple(
                dataclasses.replace(x, url=upstream_of(x.url, client.mirrors)) for x in got.links
            )
            out[url] = dataclasses.replace(got, url=url, links=links)
        else:
            read = redact(client.url_of(url))
            why = got.message.removeprefix(f"{read}: ")
            where = redact(url) if read == redact(url) else f"{redact(url)} (read as {read})"
            report.add("unread", f"{where}: {why}: nothing of it is removed")
    return out


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


def render_snapshot(
    rows: Iterable[Row], manifests: Mapping[str, Manifest], date: datetime.date | None = None
) -> str:
    """The snapshot of the table's rows that some flavour of ``manifests`` could plan;
    ``date`` defaults to the newest ``read`` of the rows kept."""
    by_page: dict[str, list[Link]] = {}
    cited: dict[str, Row] = {}
    for row in rows:
        by_page.setdefault(row.page, []).append(row.link())
        cited[row.url] = row
    pages = {url: Page(url=url, links=tuple(links)) for url, links in by_page.items()}
    kept = relevant_links(manifests, pages)
    if date is None:
        dates = [cited[x.url].read for links in kept.values() for x in links]
        date = datetime.date.fromisoformat(max(dates)) if dates else datetime.date.today()
    tables = {
        url: [link_table(x, cited[x.url].evidence) for x in links] for url, links in kept.items()
    }
    return dump_snapshot(date, tables)


def rows_toml(rows: Sequence[Row], today: datetime.date) -> str:
    """TOML text of ``rows``, to append to the table (its rows and comments stay)."""
    if not rows:
        return ""
    out = [f"\n# Read from the pages themselves by scripts/refresh_data.py on {today}.\n"]
    for r in rows:
        out.append("\n[[link]]\n")
        for key in ("page", "url", "filename", "sha256", "requires_python", "evidence", "read"):
            value = getattr(r, key)
            if value is not None:
                out.append(f"{key} = {json.dumps(value, ensure_ascii=False)}\n")
    return "".join(out)


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
    from resolver_hook.publish.scan import ScanError, scan_wheel

    carried = carried_files(manifests, pages)
    # A flavour without ``gpu`` claims no kernels (it runs without a GPU): nothing to
    # verify, so its files are not downloaded.
    todo = [(f, c) for f, c in carried if f.gpu and records.get(c.sha256, c.filename) is None]
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
    if {str(t) for t in f.gpu} != set(gpu):
        carried = ", ".join(str(t) for t in sorted(f.gpu)) or "no list"
        report.add(
            "differs",
            f"{filename}: the manifest carries {carried} "
            f"forward from {f.version}; the file carries {found}: the record is used, the "
            "manifest is unchanged (a kernels_until or an entry of its own may be due)",
        )
    return KernelRecords({**records.files, sha256: record})
