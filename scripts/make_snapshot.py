#!/usr/bin/env python3
"""Regenerate the shipped inventory snapshot from the built-in flavours' pages.

    python scripts/make_snapshot.py [--links FILE] [--date YYYY-MM-DD] [-o OUT] [--check]

The pages come from ``--links`` (default ``scripts/data/snapshot_links.toml``): wheel
links as public sources record them, each row with its page, URL, filename, sha256
and the source it was read from; ``[[metadata]]`` rows give a file's core metadata
(what the planner uses of it, with the file read and its sha256); ``[[release]]`` rows
name a release a source says a page lists, without its files (the compact form: every
release a range entry covers, planned offline in page form). Only links some
built-in flavour could plan are kept (its distribution, local label, platforms and
Pythons; not older than the entry's release), so the snapshot stays small.
``--date`` defaults to the newest ``read`` date of the rows kept. ``--check`` writes
nothing and exits 1 when the shipped file differs from what would be written (the
test suite runs it).

``scripts/refresh_data.py`` reads the pages themselves, appends the files it finds to
the same table (citing the page and the date read) and renders the snapshot the same
way, so this script stays the offline check of what it wrote.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LINKS = ROOT / "scripts" / "data" / "snapshot_links.toml"
DEFAULT_OUT = ROOT / "resolver_hook" / "inventory" / "data" / "snapshot.json"


def render(links_file: Path, date: datetime.date | None) -> str:
    from resolver_hook.ground.toml import loads
    from resolver_hook.manifest import collect_manifests
    from resolver_hook.publish.refresh import MetaRow, ReleaseRow, Row, render_snapshot

    table = loads(links_file.read_text(encoding="utf-8"))
    manifests = collect_manifests(env={}, entry_points=None)
    rows = [Row.from_table(r) for r in table.get("link", [])]
    metas = [MetaRow.from_table(m) for m in table.get("metadata", [])]
    releases = [ReleaseRow.from_table(x) for x in table.get("release", [])]
    return render_snapshot(rows, manifests, date, metadata=metas, releases=releases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", type=Path, default=DEFAULT_LINKS, metavar="FILE")
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=None)
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT, metavar="OUT")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    text = render(args.links, args.date)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is not what {args.links} gives: run scripts/make_snapshot.py")
            return 1
        print(f"{args.out} is up to date")
        return 0
    from resolver_hook.ground.fs import write_atomic

    write_atomic(args.out, text)
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
