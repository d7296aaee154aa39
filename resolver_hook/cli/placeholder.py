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
        help="build the placeholder sdist of a manifest, or of a retired name",
        description="Render the placeholder project from a flavour "
        "manifest and build a reproducible sdist (SOURCE_DATE_EPOCH is "
        "honoured). With --retired-name OLD --replacement NEW (or a TOML file with a "
        "[retired] table: name, replacement, homepage, import-name), build a placeholder "
        "for a retired or renamed name: its install and import always fail, naming the "
        "replacement and the exact pip and uv lines. No wheel is ever built: pip and uv "
        "install a wheel without running its code, so a placeholder wheel would be silent.",
    )
    b.add_argument(
        "manifest",
        metavar="MANIFEST",
        nargs="?",
        help="a flavour manifest, or a TOML file with a [retired] table",
    )
    b.add_argument(
        "--retired-name",
        metavar="OLD",
        default=None,
        help="build a placeholder for the retired name OLD (with --replacement)",
    )
    b.add_argument(
        "--replacement",
        metavar="NEW",
        default=None,
        help="the project that replaces the retired name",
    )
    b.add_argument(
        "--homepage", metavar="URL", default=None, help="a retired name's homepage (optional)"
    )
    b.add_argument(
        "--import-name",
        metavar="NAME",
        default=None,
        help="the placeholder's import package (default: the name with '-' as '_'); needed "
        "when that is not a Python identifier or shadows a standard-library module",
    )
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
    from resolver_hook.errors import UsageError
    from resolver_hook.placeholder import DEFAULT_VERSION, build_placeholder, build_retired

    version = args.version or DEFAULT_VERSION
    retired = args.retired_name is not None or args.replacement is not None
    if retired and args.manifest is not None:
        raise UsageError("give a MANIFEST or --retired-name/--replacement, not both")
    if retired:
        if args.retired_name is None or args.replacement is None:
            raise UsageError("--retired-name and --replacement go together")
        built = build_retired(
            args.retired_name,
            args.replacement,
            args.out,
            version=version,
            import_name=args.import_name,
            homepage=args.homepage,
        )
    elif args.manifest is None:
        raise UsageError(
            "nothing to build", hint="give a MANIFEST, or --retired-name OLD --replacement NEW"
        )
    else:
        if args.homepage is not None:
            raise UsageError("--homepage is for a retired name; a manifest has its own")
        built = build_placeholder(
            args.manifest, args.out, version=version, import_name=args.import_name
        )
    digest = hashlib.sha256(built.sdist.read_bytes()).hexdigest()
    sys.stdout.write(f"{built.sdist}  sha256={digest}\n")
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
