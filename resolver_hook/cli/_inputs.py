"""Options shared by plan, explain and lock: requirements and manifests."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile

__all__ = [
    "INSECURE_HELP",
    "add_insecure_option",
    "add_manifest_options",
    "add_requirement_options",
    "allow_insecure",
    "manifests_from_args",
    "refuse_writing_inputs",
    "requirements_from_args",
]

EXAMPLE = "gpu-stack.txt"


def add_requirement_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reqs", nargs="*", metavar="REQ", help="requirements, e.g. 'torch>=2.13'")
    parser.add_argument(
        "-r",
        "--requirement",
        action="append",
        default=[],
        metavar="FILE",
        dest="requirement_files",
        help="a pip requirements file (repeatable)",
    )
    parser.add_argument(
        "-c",
        "--constraint",
        action="append",
        default=[],
        metavar="FILE",
        dest="constraint_files",
        help="a pip constraints file (repeatable)",
    )
    parser.add_argument(
        "--example",
        action="store_true",
        help="plan the bundled example (torch, flash-attn, natten, tilert, numpy)",
    )


def add_manifest_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        action="append",
        default=[],
        metavar="FILE",
        help="a flavour manifest (TOML); replaces the built-in one of its package (repeatable)",
    )
    add_insecure_option(parser)


# One flag, one policy, on every command that reads a URL (resolver_hook/manifest/urls.py).
INSECURE_HELP = (
    "accept loopback http:// (127.0.0.1, ::1, localhost) and file: URLs, for a local test "
    "index (also RESOLVER_HOOK_ALLOW_INSECURE_URLS=1)"
)


def add_insecure_option(parser: argparse.ArgumentParser) -> None:
    """``--allow-insecure-urls``: read back with :func:`allow_insecure`."""
    parser.add_argument("--allow-insecure-urls", action="store_true", help=INSECURE_HELP)


def example_path() -> str:
    from importlib import resources

    return str(resources.files("resolver_hook") / "examples" / EXAMPLE)


def requirements_from_args(args: argparse.Namespace) -> ReqFile:
    from resolver_hook.errors import UsageError
    from resolver_hook.reqfile import read_requirements

    files = list(args.requirement_files)
    if getattr(args, "example", False):
        files.insert(0, example_path())
    if not files and not args.reqs:
        raise UsageError("nothing to plan: give requirements, -r FILE or --example")
    return read_requirements(files, args.reqs, constraints=args.constraint_files)


def manifests_from_args(args: argparse.Namespace) -> Mapping[str, Manifest]:
    from resolver_hook.manifest import collect_manifests

    return collect_manifests(args.manifest, allow_insecure=allow_insecure(args))


def refuse_writing_inputs(path: str, inputs: Iterable[str]) -> None:
    """A usage error when writing ``-o path`` would change one of ``inputs``: the same
    path, or the same file through a symlink or a hard link. Inputs are never modified."""
    from resolver_hook.errors import UsageError

    if path != "-" and any(_same_file(path, f) for f in inputs):
        raise UsageError(f"-o {path} is one of the input files: inputs are never modified")


def _same_file(a: str, b: str) -> bool:
    """Whether writing ``a`` would change ``b``: through symlinks (realpath) and hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def allow_insecure(args: argparse.Namespace) -> bool:
    """``--allow-insecure-urls``, or RESOLVER_HOOK_ALLOW_INSECURE_URLS set to 1/true/yes."""
    from resolver_hook.manifest import ENV_INSECURE

    from_env = os.environ.get(ENV_INSECURE, "") in ("1", "true", "yes")
    return bool(getattr(args, "allow_insecure_urls", False)) or from_env
