"""``resolver-hook manifest ...``: work with flavour manifests.

``manifest import URL-or-FILE`` reads a PEP 503 simple page or a find-links HTML page
and writes a manifest with one ``[[wheel]]`` per wheel link (URL resolved against the
page, ``sha256`` from the ``#sha256=`` fragment). What a link cannot say comes from its
local version label and the flags:

* ``cuda``: ``--cuda-map LABEL=SPEC`` (e.g. ``cu130=>=13.0``) when the wheel's whole
  local label is LABEL; else ``cuNNN`` in the label -> ``>=MAJOR.0``; else none.
* ``requires``: ``torch2130`` / ``torch2.13`` in the label -> ``torch==2.13.0`` /
  ``torch==2.13.*``.
* ``gpu``: ``--gpu LABEL=sm_90a,sm_100f`` for that label, ``--gpu '*=...'`` for all.

Variant wheels (PEP 825, ``...-PLATFORM-LABEL.whl``) take their needs from the page's
``{name}-{version}-variants.json`` instead: NVIDIA's ``cuda_version_lower_bound``,
``cuda_version_upper_bound`` and ``sm_arch`` become ``cuda`` and ``gpu``; properties of
other namespaces are kept and reported (the resolver never chooses those wheels).

Only https pages, local files, or http on 127.0.0.1/localhost/::1 with
``--allow-insecure-urls``; the same rule applies to redirects and to the wheel links.
A link whose URL holds characters that have no place in a wheel URL (spaces, quotes,
``$``, ``;``, ...) is skipped with a note, never copied. ``--timeout`` is one deadline
for the whole page, not per read.
A saved copy of a page keeps its relative links (download.pytorch.org writes
``/whl/...``): ``--base-url`` names the address it was saved from, so they resolve to
that server instead of to ``file:`` paths of this machine.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any
from urllib.parse import urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from resolver_hook.cli._inputs import add_insecure_option, allow_insecure, seconds
from resolver_hook.cli._output import Progress
from resolver_hook.cli.variants import import_with_variants, register_export
from resolver_hook.errors import UsageError
from resolver_hook.ground.fs import write_atomic
from resolver_hook.ground.input import read_input
from resolver_hook.index.client import IndexClient, parse_page
from resolver_hook.limits import MAX_PAGE_BYTES, NETWORK_DEADLINE
from resolver_hook.manifest.urls import check_read_url
from resolver_hook.manifest.write import render_manifest
from resolver_hook.portable.cuda import parse_target

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("manifest", help="work with flavour manifests")
    sub = parser.add_subparsers(dest="manifest_command", metavar="SUBCOMMAND")
    sub.required = True
    imp = sub.add_parser(
        "import",
        help="make a manifest from a simple-index or find-links page",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("location", metavar="URL-or-FILE", help="the index page")
    imp.add_argument("--package", metavar="NAME", help="only wheels of this project")
    imp.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    imp.add_argument(
        "--cuda-map", action="append", default=[], metavar="LABEL=SPEC",
        help="CUDA specifier for wheels whose local label is LABEL (repeatable)",
    )  # fmt: skip
    imp.add_argument(
        "--gpu", action="append", default=[], metavar="LABEL=TARGETS",
        help="comma-separated kernel targets for LABEL ('*' = every wheel; repeatable)",
    )  # fmt: skip
    imp.add_argument("--homepage", metavar="URL", help="[package] homepage")
    imp.add_argument(
        "--downloads",
        metavar="URL",
        help="[package] downloads (default: the page URL, unless it is a local file)",
    )
    add_insecure_option(imp)
    imp.add_argument(
        "--base-url", metavar="URL",
        help="resolve the page's relative links against URL (the address a saved page "
        "came from); also the default --downloads",
    )  # fmt: skip
    imp.add_argument(
        "--timeout", type=seconds, default=NETWORK_DEADLINE,
        help="seconds for the whole page, not per read (default 10)",
    )  # fmt: skip
    imp.set_defaults(func=run_import)

    register_export(sub)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        label, sep, spec = value.partition("=")
        if not sep or not label or not spec:
            raise UsageError(f"{flag} {value!r}: expected LABEL=VALUE")
        out[label.lower()] = spec
    return out


def _local_page(location: str) -> tuple[str, str] | None:
    """A saved page given as a plain path, read by the one input opener; else None.

    Folders and devices are refused at open; a pipe (``<(curl ...)``) is read with the
    page size cap and a total deadline. URLs (``file:`` included) go to the index client.
    """

    try:
        scheme = urlsplit(location).scheme
    except ValueError:  # "https://[::1": the index client says what is wrong with it
        return None
    if scheme and not (len(scheme) == 1 and location[1:3] in (":\\", ":/")):
        return None
    raw = read_input(location, limit=MAX_PAGE_BYTES)
    path = pathlib.Path(location)
    uri = path.resolve().as_uri() if path.is_file() else path.absolute().as_uri()
    return raw.decode("utf-8", "replace"), uri


def run_import(args: argparse.Namespace) -> int:
    cuda_map = _pairs(args.cuda_map, "--cuda-map")
    for label, spec in cuda_map.items():
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            raise UsageError(
                f"--cuda-map {label}={spec}: {spec!r} is not a version specifier",
                hint="e.g. --cuda-map cu130=>=13.0",
            ) from None
    gpu_map: dict[str, tuple[str, ...]] = {}
    for label, text in _pairs(args.gpu, "--gpu").items():
        targets = []
        for item in text.split(","):
            try:
                targets.append(str(parse_target(item)))
            except ValueError as exc:
                raise UsageError(f"--gpu {label}={text}: {exc}") from None
        gpu_map[label] = tuple(targets)

    insecure = args.allow_insecure_urls = allow_insecure(args)  # the flag or the variable
    for flag, value in (
        ("--base-url", args.base_url),
        ("--homepage", args.homepage),
        ("--downloads", args.downloads),
    ):
        if value:
            check_read_url(value, allow_insecure=insecure, what=flag)
    with Progress("manifest import") as bar:
        bar.update(0, f"fetching {args.location}")
        # refresh: a publisher imports the page as it is now (a 304 still saves the body).
        client = IndexClient(allow_insecure=insecure, timeout=args.timeout, refresh=True)
        saved = _local_page(args.location)
        if saved is not None:
            html, page_url = saved
            page_url = args.base_url or page_url
            links = parse_page(html, page_url)
        else:
            page = client.page(args.location, base_url=args.base_url, local=True)
            page_url = args.base_url or page.url
            links = page.links

        result = import_with_variants(
            links,
            args,
            client=client,
            cuda_map=cuda_map,
            gpu_map=gpu_map,
            allow_file_links=page_url.startswith("file:"),
            progress=lambda done, total: bar.update(done, f"of {total} links", force=done == total),
        )
    for note in (*client.notes, *result.notes):
        sys.stderr.write(f"note: {note}\n")
    local = sum(1 for w in result.wheels if w.url.startswith("file:"))
    if local:
        are = "wheel URL is a file: path" if local == 1 else "wheel URLs are file: paths"
        sys.stderr.write(
            f"note: {local} {are} on this machine (relative links of a "
            "local page); the resolver and `placeholder build` refuse them without "
            "--allow-insecure-urls; pass --base-url with the address the page came from\n"
        )
    text = render_manifest(
        result.name,
        result.wheels,
        homepage=args.homepage,
        # A saved page's own file: URL is no place to send people (and the manifest
        # loader refuses it without --allow-insecure-urls): then no default.
        downloads=args.downloads or (None if page_url.startswith("file:") else page_url),
        comment=f"Generated by `resolver-hook manifest import` from {page_url}",
    )
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text)
        n = len(result.wheels)
        sys.stderr.write(
            f"wrote {args.output} ({n} wheel{'' if n == 1 else 's'} of {result.name})\n"
        )
    return 0
