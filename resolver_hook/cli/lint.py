"""``resolver-hook lint``: warnings a maintainer can act on, each with its evidence.

Usage::

    resolver-hook lint DIST_OR_PYPROJECT... [--json]

Inputs: wheels, sdists (``.tar.gz``), ``pyproject.toml`` files, flavour manifests and
saved index pages (``.html``, the project's wheel links).
Inputs of one project are judged together (a release lacks an aarch64 wheel, not one
file): given a single wheel, lint says what that file is for instead, as a
``note:`` (a caveat about what one file cannot tell, not a finding). One line per
warning, ``warning: FILE: what (evidence)``, then ``hint: ...``.
Exit 0 when clean (notes only), 1 when there are warnings, 2 when an input cannot be read (one
``error:`` line each; the others are still linted).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from resolver_hook.cli._inputs import add_insecure_option, allow_insecure
from resolver_hook.errors import UsageError
from resolver_hook.ground.input import InputError, check_archive_input, read_text_input
from resolver_hook.manifest import ManifestError, loads_manifest
from resolver_hook.manifest.urls import INSECURE_FLAG
from resolver_hook.publish.lint import lint_paths

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="warnings about wheels, sdists, pyproject.toml or manifests, with evidence",
        description="Check what a project publishes: classifiers that contradict the wheels, "
        "missing platforms, GPU kernels for one family only, the CUDA 13 driver floor, a "
        "single Python, and placeholders that do not fail loudly.",
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="DIST_OR_PYPROJECT",
        help="wheels, sdists, pyproject.toml files, manifests or saved index pages (.html)",
    )
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    add_insecure_option(parser)
    parser.set_defaults(func=run)


def _url_refusal(path: str, insecure: bool) -> str | None:
    """For a flavour manifest, the URL policy's refusal of its loopback http:// or file:
    URLs without the flag (the same refusal as ``placeholder build`` and the resolver's),
    else None; every other problem is left to lint to report."""

    if insecure or not path.endswith(".toml") or os.path.basename(path) == "pyproject.toml":
        return None
    try:
        loads_manifest(read_text_input(path), source=path, allow_insecure=False)
    except (InputError, ManifestError) as exc:
        problems = getattr(exc, "problems", ())
        refused = [p for p in problems if INSECURE_FLAG in p]
        return "; ".join(refused) if refused else None
    return None


def run(args: argparse.Namespace) -> int:
    insecure = allow_insecure(args)
    inputs: list[str] = []
    refused: list[UsageError] = []
    for path in args.inputs:
        try:
            check_archive_input(path)
        except InputError as refusal:
            refused.append(refusal)
            continue
        problem = _url_refusal(path, insecure)
        if problem is not None:
            refused.append(UsageError(problem))
            continue
        inputs.append(path)
    findings, linted = lint_paths(inputs)
    errors: list[Any] = [*refused, *linted]
    for exc in errors:
        sys.stderr.write(f"error: {exc.message}\n")
    if args.json:
        doc = {
            "warnings": [f.to_dict() for f in findings if not f.caveat],
            "notes": [f.to_dict() for f in findings if f.caveat],
            "errors": [exc.message for exc in errors],
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        for finding in findings:
            sys.stdout.write(finding.line() + "\n")
            if finding.hint:
                sys.stdout.write(f"hint: {finding.hint}\n")
    if errors:
        return 2
    # A caveat (what one input cannot tell) is a note, not a finding against the input.
    return 1 if any(not f.caveat for f in findings) else 0
