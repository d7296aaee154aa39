"""``resolver-hook placeholder build|check``: loud name-reservation packages."""

from __future__ import annotations

import argparse
import hashlib
import sys

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "placeholder",
        help="build and check placeholders that fail loudly",
        description="Placeholders reserve a PyPI name for a package whose real builds live "
        "elsewhere: installing one fails with a message that names this machine, the builds "
        "that exist and what does not match.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True

    b = actions.add_parser(
        "build",
        help="build the placeholder sdist of a manifest",
        description="Render the placeholder project from a flavour "
        "manifest and build a reproducible sdist (SOURCE_DATE_EPOCH is "
        "honoured).",
    )
    b.add_argument("manifest", metavar="MANIFEST", help="a flavour manifest (TOML)")
    b.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        default="dist",
        help="where to write the sdist (default: dist)",
    )
    b.add_argument(
        "--version",
        default=None,
        metavar="V",
        help="the placeholder's version (default: 0.0.0.dev0)",
    )
    b.add_argument(
        "--wheel",
        action="store_true",
        help="also build the escape-hatch wheel (it raises on import)",
    )
    b.set_defaults(func=run_build)

    c = actions.add_parser(
        "check",
        help="prove with pip and uv that a placeholder fails loudly",
        description="Install the sdist offline in throwaway virtual "
        "environments with pip and with uv and check that the install "
        "fails with the message, and that with the escape hatch the "
        "installed package fails on import with the message.",
    )
    c.add_argument("dist", metavar="DIST", help="the placeholder sdist (.tar.gz)")
    c.set_defaults(func=run_check)


def run_build(args: argparse.Namespace) -> int:
    from resolver_hook.placeholder import DEFAULT_VERSION, build_placeholder

    built = build_placeholder(
        args.manifest, args.out, version=args.version or DEFAULT_VERSION, wheel=args.wheel
    )
    for path in (built.sdist, built.wheel):
        if path is not None:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            sys.stdout.write(f"{path}  sha256={digest}\n")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from resolver_hook.placeholder import CheckResult, check_placeholder

    def show(result: CheckResult) -> None:
        sys.stdout.write(f"{'PASS' if result.ok else 'FAIL'}  {result.name}\n")
        if not result.ok and result.detail:
            sys.stdout.write("".join(f"      {line}\n" for line in result.detail.splitlines()))
        sys.stdout.flush()

    results = check_placeholder(args.dist, progress=show)
    failed = [r for r in results if not r.ok]
    sys.stdout.write(f"{len(results) - len(failed)} passed, {len(failed)} failed\n")
    return 1 if failed else 0
