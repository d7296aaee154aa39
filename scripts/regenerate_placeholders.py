#!/usr/bin/env python3
"""Regenerate every placeholder: build each manifest's sdist into dist/, check it.

    python scripts/regenerate_placeholders.py [MANIFEST_DIR] [-o DIST] [--version V]
        [--no-check]

MANIFEST_DIR defaults to resolver-hook's built-in manifests. Prints one line per
placeholder: name, version, sha256 of the sdist, and the check's verdict (the
individual checks only when one fails). Exits 1 when any check fails, 2 on bad input.
Builds are reproducible (SOURCE_DATE_EPOCH is honoured), so an unchanged manifest
gives an unchanged sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from resolver_hook.errors import ResolverHookError
    from resolver_hook.placeholder import DEFAULT_VERSION, build_placeholder, check_placeholder

    default_dir = Path(__file__).resolve().parents[1] / "resolver_hook" / "manifests"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="?", default=str(default_dir), metavar="MANIFEST_DIR")
    parser.add_argument("-o", "--out", default="dist", metavar="DIST")
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--no-check", action="store_true", help="build only")
    args = parser.parse_args(argv)
    paths = sorted(Path(args.manifests).glob("*.toml"))
    if not paths:
        sys.stderr.write(f"error: no *.toml manifests in {args.manifests}\n")
        return 2
    failures = 0
    for path in paths:
        try:
            built = build_placeholder(path, args.out, version=args.version)
        except ResolverHookError as exc:
            sys.stderr.write(f"error: {path}: {exc.message}\n")
            failures += 1
            continue
        digest = hashlib.sha256(built.sdist.read_bytes()).hexdigest()
        verdict = "not checked"
        if not args.no_check:
            report = check_placeholder(built.sdist)
            bad = [r for r in report.results if r.status != "PASS"]
            verdict = "check passed" if report.passed else "check FAILED"
            for r in bad:
                sys.stderr.write(f"{r.status}  {built.name}: {r.name}\n{r.detail}\n")
            for v in report.verdicts:
                if not report.passed:
                    sys.stderr.write(f"{built.name}: {v.installer}: {v.verdict}\n{v.detail}\n")
            failures += not report.passed
        sys.stdout.write(f"{built.name}  {built.version}  {digest}  {verdict}\n")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
