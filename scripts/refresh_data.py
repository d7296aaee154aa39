#!/usr/bin/env python3
"""Refresh the built-in data from the packages' own pages and files.

    python scripts/refresh_data.py [--package NAME]... [--mirror UPSTREAM=MIRROR]...
        [--allow-insecure-urls] [--date YYYY-MM-DD] [--max-wheel-bytes N]
        [--max-scans N] [--max-metadata N] [--max-metadata-wheel-bytes N]
        [--timeout S] [--links FILE] [--snapshot FILE] [--kernels FILE] [--check]

Reads every page the built-in manifests' flavours name (``--package``: only those
packages') through the index client, appends the wheel files some flavour could plan
that ``scripts/data/snapshot_links.toml`` lacks (each row citing its page and the date
read), reads the core metadata of each file the snapshot keeps that has none recorded
(the PEP 658 ``.metadata`` file, checked against the hash its page gives; where the
page offers none, the wheel's own METADATA, the wheel checked against its page's
sha256 first and skipped past ``--max-metadata-wheel-bytes``) and appends what the
planner uses of it as a ``[[metadata]]`` row (what was read, its sha256, the date),
regenerates ``resolver_hook/inventory/data/snapshot.json`` from that table (as
``scripts/make_snapshot.py`` does), then downloads every file the planner would plan
with a kernel list assumed from an older release, checks its sha256 against its
page's before reading it, scans it with the project's scanner and records its kernel
list, URL, sha256 and the date in ``resolver_hook/inventory/data/kernels.json``. A
summary of what changed goes to stdout.

Never changed: a manifest; a row or record already there (a page not read, a file no
longer listed, a changed sha256, a scan that differs from a list recorded for the same
release, label and platform: each is reported for review). Files larger than
``--max-wheel-bytes`` are skipped and reported (torch's CUDA wheels are about 1 GB or
more). Downloads go to a private temporary folder, removed also on Ctrl-C; each
record is written as it is made, so a run cut short is picked up by the next.

``--mirror`` (and ``RESOLVER_HOOK_MIRRORS``) read pages and files from a mirror while
the data keeps citing the upstream URLs; loopback http mirrors need
``--allow-insecure-urls``. ``--check`` reads the pages, downloads and writes nothing,
and exits 1 when a refresh would change something. Exit 1 also when something needs
a person (a refused sha256, an item for review); 2 for bad usage.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resolver_hook.index import IndexClient
    from resolver_hook.index.model import Page
    from resolver_hook.manifest import Manifest
    from resolver_hook.publish.refresh import MetaRow, ReleaseRow, Report, Row

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_LINKS = ROOT / "scripts" / "data" / "snapshot_links.toml"
DEFAULT_SNAPSHOT = ROOT / "resolver_hook" / "inventory" / "data" / "snapshot.json"
DEFAULT_KERNELS = ROOT / "resolver_hook" / "inventory" / "data" / "kernels.json"


def _parser() -> argparse.ArgumentParser:
    from resolver_hook.limits import (
        MAX_REFRESH_METADATA,
        MAX_REFRESH_METADATA_WHEEL_BYTES,
        MAX_REFRESH_SCANS,
        MAX_REFRESH_WHEEL_BYTES,
        NETWORK_DEADLINE,
    )
    from resolver_hook.manifest.urls import INSECURE_FLAG

    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--package",
        action="append",
        default=[],
        metavar="NAME",
        help="refresh only this built-in package (repeatable)",
    )
    p.add_argument(
        "--mirror",
        action="append",
        default=[],
        metavar="UPSTREAM=MIRROR",
        help="read URLs under UPSTREAM from MIRROR (repeatable; also "
        "RESOLVER_HOOK_MIRRORS); the data keeps citing UPSTREAM",
    )
    p.add_argument(
        INSECURE_FLAG,
        action="store_true",
        dest="allow_insecure_urls",
        help="allow loopback http and file: mirrors (tests, local replicas)",
    )
    p.add_argument(
        "--date",
        type=datetime.date.fromisoformat,
        default=None,
        help="the date recorded as read (default: today)",
    )
    p.add_argument(
        "--max-wheel-bytes",
        type=int,
        default=MAX_REFRESH_WHEEL_BYTES,
        metavar="N",
        help=f"largest wheel downloaded to scan (default {MAX_REFRESH_WHEEL_BYTES})",
    )
    p.add_argument(
        "--max-scans",
        type=int,
        default=MAX_REFRESH_SCANS,
        metavar="N",
        help=f"wheels scanned in one run (default {MAX_REFRESH_SCANS})",
    )
    p.add_argument(
        "--max-metadata",
        type=int,
        default=MAX_REFRESH_METADATA,
        metavar="N",
        help=f"core metadata files read in one run (default {MAX_REFRESH_METADATA})",
    )
    p.add_argument(
        "--max-metadata-wheel-bytes",
        type=int,
        default=MAX_REFRESH_METADATA_WHEEL_BYTES,
        metavar="N",
        help="largest wheel downloaded to read its METADATA where the page offers no "
        f".metadata file (default {MAX_REFRESH_METADATA_WHEEL_BYTES})",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=NETWORK_DEADLINE,
        metavar="S",
        help="deadline of one page; a file's reads each",
    )
    p.add_argument("--links", type=Path, default=DEFAULT_LINKS, metavar="FILE")
    p.add_argument("--snapshot", type=Path, default=DEFAULT_SNAPSHOT, metavar="FILE")
    p.add_argument("--kernels", type=Path, default=DEFAULT_KERNELS, metavar="FILE")
    p.add_argument(
        "--check",
        action="store_true",
        help="read the pages; download and write nothing; exit 1 if out of date",
    )
    return p  # fmt: skip


def _read(path: Path) -> str:
    from resolver_hook.ground.input import read_text_input

    return read_text_input(str(path)) if path.exists() else ""


def _chosen(manifests: Mapping[str, Manifest], names: list[str]) -> Mapping[str, Manifest]:
    """The built-in manifests ``--package`` names (every one when none is named)."""
    from resolver_hook.errors import UsageError

    if not names:
        return manifests
    unknown = [n for n in names if n not in manifests]
    if unknown:
        raise UsageError(
            f"no built-in manifest for {', '.join(unknown)}",
            hint=f"built-in: {', '.join(sorted(manifests))}",
        )
    return {n: manifests[n] for n in manifests if n in names}


def _with_metadata(
    args: argparse.Namespace,
    all_manifests: Mapping[str, Manifest],
    client: IndexClient,
    *,
    rows: list[Row],
    metas: list[MetaRow],
    pages: Mapping[str, Page],
    report: Report,
    releases: Sequence[ReleaseRow] = (),
) -> tuple[str, list[MetaRow]]:
    """The snapshot of ``rows``, with the metadata rows read now for its files."""
    from resolver_hook.ground.fs import private_tempdir
    from resolver_hook.inventory.snapshot import load_snapshot
    from resolver_hook.publish import refresh as r

    snapshot = r.render_snapshot(rows, all_manifests, metadata=metas, releases=releases)
    kept = load_snapshot(snapshot, where="the refreshed snapshot").pages
    with private_tempdir() as folder:
        new = r.read_metadata(
            [x for page in kept.values() for x in page.links],
            pages,
            metas,
            client=None if args.check else client,
            folder=folder,
            today=args.date or datetime.date.today(),
            max_reads=args.max_metadata,
            max_wheel_bytes=args.max_metadata_wheel_bytes,
            report=report,
        )
    if new:
        snapshot = r.render_snapshot(
            rows, all_manifests, metadata=[*metas, *new], releases=releases
        )
    return snapshot, new


def run(args: argparse.Namespace) -> int:
    from resolver_hook.errors import UsageError
    from resolver_hook.ground.fs import private_tempdir, write_all, write_atomic
    from resolver_hook.ground.toml import loads
    from resolver_hook.index import IndexClient, mirrors_from
    from resolver_hook.inventory.kernels import KernelRecords, dump_kernels, load_kernels
    from resolver_hook.inventory.snapshot import load_snapshot
    from resolver_hook.manifest import collect_manifests
    from resolver_hook.publish import refresh as r

    if os.environ.get("RESOLVER_HOOK_OFFLINE", "") in ("1", "true", "yes"):
        raise UsageError(
            "RESOLVER_HOOK_OFFLINE is set: a refresh reads the pages themselves",
            hint="unset it (or run scripts/make_snapshot.py for the offline table)",
        )
    if (
        min(args.max_wheel_bytes, args.max_metadata_wheel_bytes) < 1
        or min(args.max_scans, args.max_metadata) < 0
        or args.timeout <= 0
    ):
        raise UsageError("the --max-... bounds and --timeout must be positive")
    today = args.date or datetime.date.today()
    all_manifests = collect_manifests(env={}, entry_points=None)
    manifests = _chosen(all_manifests, args.package)
    insecure = bool(args.allow_insecure_urls)
    mirrors = mirrors_from(os.environ, args.mirror, allow_insecure=insecure)
    client = IndexClient(
        allow_insecure=insecure, mirrors=mirrors, cache=False, timeout=args.timeout
    )
    links_text = _read(args.links)
    kernels_text = _read(args.kernels)
    try:
        table = loads(links_text)
        rows = [r.Row.from_table(t) for t in table.get("link", [])]
        metas, releases = (
            [r.MetaRow.from_table(t) for t in table.get("metadata", [])],
            [r.ReleaseRow.from_table(t) for t in table.get("release", [])],
        )
        records = load_kernels(kernels_text, where=str(args.kernels)) if kernels_text else None
    except (ValueError, KeyError, TypeError) as exc:  # TomlError, KernelRecordsError, a row
        raise UsageError(f"{args.links} or {args.kernels}: {exc}") from None

    report = r.Report()
    urls = r.page_urls(manifests)
    pages = r.read_pages(client, urls, report)
    added, history = (  # new files; and new releases, by name (compact rows)
        r.compare(manifests, pages, rows, today, report),
        r.new_releases(manifests, pages, releases, today, report),
    )
    snapshot, new_metas = _with_metadata(
        args,
        all_manifests,
        client,
        rows=[*rows, *added],
        metas=metas,
        pages=pages,
        report=report,
        releases=[*releases, *history],
    )
    snap_pages = load_snapshot(snapshot, where="the refreshed snapshot").pages
    snap_changed = snapshot != _read(args.snapshot)
    if not args.check:
        rows_text = (
            r.rows_toml(added, today)
            + r.metadata_toml(new_metas, today)
            + r.releases_toml(history, today)
        )
        table = [(args.links, links_text + rows_text)] if added or new_metas or history else []
        # The cited table and the snapshot built from it: both or neither (a run stopped
        # between the two would leave a snapshot the table does not cite).
        write_all([*table, *([(args.snapshot, snapshot)] if snap_changed else [])])

    def save(done: KernelRecords) -> None:
        write_atomic(args.kernels, dump_kernels(done))

    with private_tempdir() as folder:
        r.scan_carried(
            manifests,
            snap_pages,
            records or KernelRecords(),
            client=None if args.check else client,
            folder=folder,
            today=today,
            max_bytes=args.max_wheel_bytes,
            max_scans=args.max_scans,
            report=report,
            save=None if args.check else save,
        )
    print(f"read {len(pages)} of {len(urls)} pages on {today}")
    for note in client.notes:
        print(f"note: {note}")
    sys.stdout.write(report.render())
    if args.check:
        due = bool(added) or snap_changed or report.count("scan") + report.count("meta") > 0
        print("a refresh is due" if due else "the data is up to date")
        return 1 if due or report.needs_a_person() else 0
    return 1 if report.needs_a_person() else 0


def main(argv: list[str] | None = None) -> int:
    from resolver_hook.errors import ResolverHookError

    args = _parser().parse_args(argv)
    try:
        return run(args)
    except ResolverHookError as exc:
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        return exc.exit_code


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None
