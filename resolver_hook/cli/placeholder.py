"""``resolver-hook placeholder build|check``: loud name-reservation packages."""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import TYPE_CHECKING

from resolver_hook.cli._inputs import add_insecure_option, allow_insecure
from resolver_hook.errors import UsageError
from resolver_hook.ground.fs import sigterm_raises
from resolver_hook.manifest.urls import check_url
from resolver_hook.publish.placeholder import build_placeholder, build_retired
from resolver_hook.publish.placeholder.build import placeholder_name
from resolver_hook.publish.placeholder.check import (
    PUBLISH_EXTRA,
    CheckInterrupted,
    Verdict,
    check_placeholder,
)
from resolver_hook.publish.placeholder.versions import PYPI_SIMPLE, choose_from_index

if TYPE_CHECKING:
    from collections.abc import Callable

    from resolver_hook.publish.placeholder.check import CheckResult

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
        help="the placeholder's version; without --index-url the index is not read (offline)",
    )
    b.add_argument(
        "--index-url",
        metavar="URL",
        default=None,
        help="the index the placeholder goes to (default: https://pypi.org/simple/); its "
        "project page decides the version: above every placeholder-looking release there "
        "(0.0.N.devK), below the first real release; a version already there is refused",
    )
    add_insecure_option(b)
    b.set_defaults(func=run_build)

    c = actions.add_parser(
        "check",
        help="find out with pip and uv whether an sdist or wheel fails loudly",
        description="Install the sdist or wheel offline with pip and with uv, each in a "
        "throwaway virtual environment (fresh caches, a scrubbed environment), import what "
        "installed with the venv's own interpreter, and give one verdict per installer: "
        "fails loudly at install / installs, fails at import / installs silently / "
        "inconclusive. Exit 0 only when every installer that ran fails loudly at install; "
        "an installer that is missing is one SKIP line saying how to add it "
        "(pip install 'resolver-hook[publish]' brings uv and twine), and the others are "
        "judged; steps that cannot run print SKIP and never count as passing. -v shows, "
        "under each installer, what the end user sees. Nothing from the artifact runs "
        "in resolver-hook's own interpreter.",
    )
    c.add_argument("dist", metavar="DIST", help="an sdist (.tar.gz) or a wheel (.whl)")
    c.add_argument(
        "--find-links",
        metavar="DIR",
        action="append",
        default=[],
        help="a folder of wheels the installers may use offline, e.g. build backends (repeatable)",
    )
    add_insecure_option(c)
    c.set_defaults(func=run_check)


def run_build(args: argparse.Namespace) -> int:
    if args.version is not None and not args.version.strip():
        raise UsageError(
            f"--version {args.version!r}: an empty version; leave it out to choose one "
            "from the index"
        )
    insecure = allow_insecure(args)
    if args.index_url is not None:
        check_url(args.index_url, key="--index-url", allow_insecure=insecure)
    if args.homepage is not None:
        check_url(args.homepage, key="--homepage", allow_insecure=insecure)
    retired = args.retired_name is not None or args.replacement is not None
    if retired and args.manifest is not None:
        raise UsageError("give a MANIFEST or --retired-name/--replacement, not both")
    if retired:
        if args.retired_name is None or args.replacement is None:
            raise UsageError("--retired-name and --replacement go together")
        name = args.retired_name
    elif args.manifest is None:
        raise UsageError(
            "nothing to build", hint="give a MANIFEST, or --retired-name OLD --replacement NEW"
        )
    else:
        if args.homepage is not None:
            raise UsageError("--homepage is for a retired name; a manifest has its own")
        name = placeholder_name(args.manifest, allow_insecure=insecure)
    version, notes = _choose_version(args, name, insecure)
    if retired:
        built = build_retired(
            args.retired_name,
            args.replacement,
            args.out,
            version=version,
            import_name=args.import_name,
            homepage=args.homepage,
        )
    else:
        built = build_placeholder(
            args.manifest,
            args.out,
            version=version,
            import_name=args.import_name,
            allow_insecure=insecure,
        )
    digest = hashlib.sha256(built.sdist.read_bytes()).hexdigest()
    sys.stderr.write(notes)
    sys.stdout.write(f"{built.sdist}  sha256={digest}\n")
    return 0


def _choose_version(args: argparse.Namespace, name: str, insecure: bool) -> tuple[str, str]:
    """``--version`` as given (offline) or checked against ``--index-url``; else the
    version the index's page calls for. Also the lines that say why and what to remove
    from the index, printed once the build succeeded (an error stays one line)."""

    if args.version is not None and args.index_url is None:
        note = (
            f"note: {name} {args.version}: the index was not read (--version without "
            "--index-url); a version already there is refused only at upload\n"
        )
        return str(args.version), note
    choice = choose_from_index(
        name, args.index_url or PYPI_SIMPLE, requested=args.version, allow_insecure=insecure
    )
    notes = f"version {choice.why}\n" + "".join(f"warning: {w}\n" for w in choice.warnings)
    return choice.version, notes


def run_check(args: argparse.Namespace) -> int:
    def show(item: CheckResult | Verdict) -> None:
        if isinstance(item, Verdict):
            sys.stdout.write(f"{item.installer}: {item.verdict}\n")
            detail = item.detail
            if getattr(args, "verbose", 0) and item.output:  # -v: resolver-hook's own
                sys.stdout.write(f"      what the user sees under {item.installer}:\n")
                detail = item.output
        else:
            sys.stdout.write(f"{item.status:<4}  {item.name}\n")
            detail = item.detail if item.status != "PASS" else ""
        sys.stdout.write("".join(f"      {line}\n" for line in detail.splitlines()))
        sys.stdout.flush()

    # SIGTERM raises (as Ctrl-C does) from here on: the check's own handlers restore this
    # one, so a SIGTERM during or after its final cleanup is one "error: interrupted" line
    # (cli/__init__.py) and 143, never a silent exit after "check passed".
    with sigterm_raises():
        return _check(args.dist, args.find_links, show, allow_insecure=allow_insecure(args))


def _check(
    dist: str,
    find_links: list[str],
    show: Callable[[CheckResult | Verdict], None],
    *,
    allow_insecure: bool = False,
) -> int:
    try:
        report = check_placeholder(
            dist, find_links=find_links, progress=show, allow_insecure=allow_insecure
        )
    except CheckInterrupted as exc:
        sys.stderr.write("error: interrupted; the check's processes and folder are gone\n")
        return 128 + exc.signum
    counts = {s: sum(r.status == s for r in report.results) for s in ("PASS", "FAIL", "SKIP")}
    verdicts = "; ".join(f"{v.installer}: {v.verdict}" for v in report.verdicts) or "none"
    sys.stdout.write(
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped; "
        f"verdicts: {verdicts}\n"
    )
    judged = " and ".join(v.installer for v in report.verdicts)
    missing = ""
    if report.missing:
        missing = f" ({' and '.join(report.missing)} not judged: {PUBLISH_EXTRA})"
    if report.passed:
        sys.stdout.write(f"check passed: it fails loudly at install under {judged}{missing}\n")
        return 0
    sys.stdout.write(
        f"check failed: only 'fails loudly at install' under every installer passes{missing}\n"
    )
    return 1
