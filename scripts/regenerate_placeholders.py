#!/usr/bin/env python3
"""Regenerate every placeholder: build each manifest's sdist into dist/, check it.

    python scripts/regenerate_placeholders.py [MANIFEST_DIR] [-o DIST] [--version V]
        [--index-url URL [--allow-insecure-urls]] [--no-check] [-j N]
    python scripts/regenerate_placeholders.py [MANIFEST_DIR] -o DIST --check

MANIFEST_DIR defaults to resolver-hook's built-in manifests. The builds run first (in
this process, a fraction of a second each), then the checks (real pip and uv installs,
seconds each) run N at a time (default: the number of CPUs); one progress line per
placeholder goes to stderr as it finishes. At the end stdout has one line per
placeholder, in manifest order: name, version, sha256 of the sdist, and the check's
verdict (the individual checks only when one fails). Exits 1 when any check fails, 2 on
bad input. With --index-url each version is chosen against that index as `placeholder
build --index-url` chooses it (above every placeholder-looking release there, below the
first real one); otherwise every placeholder gets --version.

--check is for CI: nothing is written. For every manifest it rebuilds, in a temporary
folder, the newest NAME-*.tar.gz found in DIST at that file's own version, and compares
the two sha256s. Builds are reproducible (SOURCE_DATE_EPOCH is honoured, else
hatchling's fixed date), so a difference means the manifest (or the template) changed
since DIST was built. Placeholders are not committed to this repository: DIST is
whatever folder of published or release sdists CI keeps. Exits 1 when one is missing or
out of date.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from resolver_hook.publish.placeholder import BuiltPlaceholder
    from resolver_hook.publish.placeholder.check import CheckReport


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _newest(dist: Path, name: str) -> Path | None:
    """The sdist of ``name`` in ``dist`` with the highest version, or None."""
    from packaging.utils import InvalidSdistFilename, parse_sdist_filename

    found = []
    for path in dist.glob("*.tar.gz"):
        try:
            parsed, version = parse_sdist_filename(path.name)
        except InvalidSdistFilename:
            continue
        if parsed == name:
            found.append((version, path))
    return max(found)[1] if found else None


def check_mode(paths: list[Path], dist: Path) -> int:
    """``--check``: every placeholder in ``dist`` is what its manifest builds now."""
    from packaging.utils import parse_sdist_filename

    from resolver_hook.errors import ResolverHookError
    from resolver_hook.publish.placeholder import build_placeholder
    from resolver_hook.publish.placeholder.build import placeholder_name

    stale = 0
    with tempfile.TemporaryDirectory(prefix="resolver-hook-regenerate-") as tmp:
        for n, path in enumerate(paths, 1):
            try:
                name = placeholder_name(path)
                have = _newest(dist, name)
                if have is None:
                    sys.stdout.write(f"{name}  missing: no {name}-*.tar.gz in {dist}\n")
                    stale += 1
                    continue
                version = str(parse_sdist_filename(have.name)[1])
                built = build_placeholder(path, Path(tmp) / str(n), version=version)
            except ResolverHookError as exc:
                sys.stderr.write(f"error: {path}: {exc.message}\n")
                return 2
            same = _sha256(built.sdist) == _sha256(have)
            verdict = "up to date" if same else f"OUT OF DATE with {path.name}"
            sys.stdout.write(f"{name}  {version}  {have.name}  {verdict}\n")
            stale += not same
    if stale:
        sys.stderr.write(
            f"{stale} placeholder(s) differ from their manifests: run "
            "scripts/regenerate_placeholders.py and publish the new versions\n"
        )
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    from resolver_hook.errors import ResolverHookError
    from resolver_hook.publish.placeholder import (
        DEFAULT_VERSION,
        build_placeholder,
        check_placeholder,
    )
    from resolver_hook.publish.placeholder.build import placeholder_name

    default_dir = Path(__file__).resolve().parents[1] / "resolver_hook" / "manifests"
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("manifests", nargs="?", default=str(default_dir), metavar="MANIFEST_DIR")
    parser.add_argument("-o", "--out", default="dist", metavar="DIST")
    parser.add_argument("--version", default=None, help=f"default: {DEFAULT_VERSION}")
    parser.add_argument("--index-url", default=None, metavar="URL")
    parser.add_argument("--allow-insecure-urls", action="store_true")
    parser.add_argument("--no-check", action="store_true", help="build only")
    parser.add_argument("--check", action="store_true", help="compare DIST with fresh builds")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N")
    args = parser.parse_args(argv)
    paths = sorted(Path(args.manifests).glob("*.toml"))
    if not paths:
        sys.stderr.write(f"error: no *.toml manifests in {args.manifests}\n")
        return 2
    if args.jobs < 1:
        sys.stderr.write(f"error: -j {args.jobs}: at least 1\n")
        return 2
    if args.check:
        return check_mode(paths, Path(args.out))

    start = time.monotonic()
    built: list[tuple[Path, BuiltPlaceholder]] = []
    failures = 0
    for n, path in enumerate(paths, 1):
        try:
            version = args.version or DEFAULT_VERSION
            if args.index_url is not None:
                from resolver_hook.publish.placeholder.versions import choose_from_index

                choice = choose_from_index(
                    placeholder_name(path, allow_insecure=args.allow_insecure_urls),
                    args.index_url,
                    requested=args.version,
                    allow_insecure=args.allow_insecure_urls,
                )
                version = choice.version
                sys.stderr.write("".join(f"warning: {w}\n" for w in choice.warnings))
            one = build_placeholder(
                path, args.out, version=version, allow_insecure=args.allow_insecure_urls
            )
        except ResolverHookError as exc:
            sys.stderr.write(f"error: {path}: {exc.message}\n")
            failures += 1
            continue
        built.append((path, one))
        sys.stderr.write(f"[built {n}/{len(paths)}] {one.sdist.name}\n")
    sys.stderr.flush()

    reports: dict[Path, CheckReport] = {}
    if not args.no_check and built:
        reports = _check_all(built, args.jobs, check_placeholder)
    for path, one in built:
        verdict = "not checked"
        report = reports.get(path)
        if report is not None:
            verdict = "check passed" if report.passed else "check FAILED"
            failures += not report.passed
            if not report.passed:
                _explain(one.name, report)
        sys.stdout.write(f"{one.name}  {one.version}  {_sha256(one.sdist)}  {verdict}\n")
    sys.stderr.write(
        f"{len(built)} built, {len(reports)} checked ({args.jobs} at a time) in "
        f"{time.monotonic() - start:.1f} s\n"
    )
    return 1 if failures else 0


def _check_all(
    built: list[tuple[Path, BuiltPlaceholder]],
    jobs: int,
    check: Callable[[Path], CheckReport],
) -> dict[Path, CheckReport]:
    """Check every placeholder, ``jobs`` at a time, with a progress line as each ends.

    Ctrl-C drops the checks not yet started and waits for the running ones: each ends
    its own processes and removes its own folder (resolver_hook.publish.placeholder.check).
    """
    reports: dict[Path, CheckReport] = {}
    started = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(check, one.sdist): (path, one) for path, one in built}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            path, one = futures[future]
            report = future.result()
            reports[path] = report
            verdicts = ", ".join(f"{v.installer}: {v.verdict}" for v in report.verdicts)
            sys.stderr.write(
                f"[checked {done}/{len(built)}, {time.monotonic() - started:.0f} s] "
                f"{one.name} {one.version}: {verdicts or 'no installer ran'}\n"
            )
            sys.stderr.flush()
    except KeyboardInterrupt:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return reports


def _explain(name: str, report: CheckReport) -> None:
    for r in report.results:
        if r.status != "PASS":
            sys.stderr.write(f"{r.status}  {name}: {r.name}\n{r.detail}\n")
    for v in report.verdicts:
        sys.stderr.write(f"{name}: {v.installer}: {v.verdict}\n{v.detail}\n")


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None
