"""Wheel variants on the command line: ``manifest import`` of variant wheels,
``manifest export --variants``, and what ``scan`` prints (PEP 825; docs/facts.md section 2)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from resolver_hook.cli._inputs import add_insecure_option, allow_insecure
from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.ground.fs import write_all
from resolver_hook.manifest import load_manifest
from resolver_hook.manifest.variantname import split_variant_label
from resolver_hook.publish.indexpage import ImportResult, import_manifest
from resolver_hook.publish.variants import MAX_JSON_BYTES, export_variants, import_variant_links

if TYPE_CHECKING:
    from resolver_hook.index.client import IndexClient
    from resolver_hook.index.model import Link

__all__ = ["import_with_variants", "register_export", "run_export"]


def import_with_variants(
    links: Sequence[Link],
    args: argparse.Namespace,
    *,
    cuda_map: Mapping[str, str],
    gpu_map: Mapping[str, tuple[str, ...]],
    allow_file_links: bool,
    client: IndexClient,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Ordinary wheels as :func:`import_manifest` reads them, plus the page's variant wheels."""

    def fetch(url: str) -> bytes:
        if urlsplit(url).scheme == "file" and not allow_file_links:
            raise UsageError(f"{url}: a file: link on a page that is not a local file")
        return client.fetch(url, max_bytes=MAX_JSON_BYTES, local=allow_file_links)

    variants = import_variant_links(links, fetch, package=args.package)
    plain = [x for x in links if split_variant_label(x.filename)[1] is None]
    try:
        result = import_manifest(
            tuple(plain),
            package=(args.package or variants.name) if variants.wheels else args.package,
            cuda_map=cuda_map,
            gpu_map=gpu_map,
            allow_insecure=args.allow_insecure_urls,
            allow_file_links=allow_file_links,
            progress=progress,
        )
    except OperationalError as exc:
        if variants.wheels:  # no ordinary wheels beside the variants
            assert variants.name is not None
            return ImportResult(name=variants.name, wheels=variants.wheels, notes=variants.notes)
        if not variants.notes:
            raise
        raise OperationalError(
            f"{exc.message} ({'; '.join(variants.notes)})", hint=exc.hint
        ) from None
    if not variants.wheels:
        return ImportResult(
            name=result.name, wheels=result.wheels, notes=(*result.notes, *variants.notes)
        )
    assert variants.name is not None
    return ImportResult(
        name=variants.name,
        wheels=(*variants.wheels, *result.wheels),
        notes=(*variants.notes, *result.notes),
    )


def register_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    exp = sub.add_parser(
        "export",
        help="write a manifest's wheels as PEP 825 variant metadata",
        description="--variants: write {name}-{version}-variants.json (the index-level file) "
        "for every version of the manifest, and {name}-{version}-{label}.variant.json, the "
        "*.dist-info/variant.json a publisher puts into the wheels of that label. Wheels are "
        "never rewritten. Format 0.1.1 of PEP 825 as changed on 10-Aug-2026.",
    )
    exp.add_argument("manifest", metavar="MANIFEST", help="a flavour manifest (TOML)")
    exp.add_argument(
        "--variants", action="store_true", required=True, help="write variant metadata"
    )
    exp.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write into")
    add_insecure_option(exp)
    exp.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    insecure = allow_insecure(args)
    manifest = load_manifest(args.manifest, allow_insecure=insecure)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {out}: not a folder")
    result = export_variants(manifest)
    out.mkdir(parents=True, exist_ok=True)
    for note in result.notes:
        sys.stderr.write(f"note: {note}\n")
    docs = {**result.index_files, **result.wheel_files}
    # All or nothing: a failure on one file leaves every file as it was.
    write_all([(out / n, json.dumps(d, indent=2, sort_keys=False) + "\n") for n, d in docs.items()])
    for name in docs:
        sys.stdout.write(f"wrote {out / name}\n")
    for old, new in result.filenames.items():
        if old != new:
            sys.stdout.write(f"wheel {old} -> publish as {new}\n")
    return 0
