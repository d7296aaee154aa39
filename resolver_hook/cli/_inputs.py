"""Options shared by plan, explain and lock: requirements and manifests."""

from __future__ import annotations

import argparse
import datetime
import os
import re
from typing import TYPE_CHECKING

from resolver_hook._data import data_path
from resolver_hook.cli._machine import recorder
from resolver_hook.cli._output import Progress
from resolver_hook.errors import UsageError
from resolver_hook.manifest import ENV_INSECURE, collect_manifests
from resolver_hook.planner import Planner
from resolver_hook.reqfile import read_requirements
from resolver_hook.settings import InstallerSettings, combine, env_flag, seconds_problem

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from resolver_hook.index.userindex import UvConfig
    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile
    from resolver_hook.settings import Settings

__all__ = [
    "INSECURE_HELP",
    "add_insecure_option",
    "add_inventory_options",
    "add_manifest_options",
    "add_requirement_options",
    "allow_insecure",
    "manifests_from_args",
    "planner_from_args",
    "refuse_writing_inputs",
    "requirements_from_args",
    "seconds",
    "settings_from_args",
]

EXAMPLE = "gpu-stack.txt"
# A plan's wait for index pages shows a progress line once it has lasted this long.
PROGRESS_DELAY = 1.0


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
        help=f"plan the bundled example ({', '.join(example_names())})",
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


def seconds(text: str) -> float:
    """argparse type: a timeout (:func:`resolver_hook.settings.seconds_problem`)."""

    problem = seconds_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return float(text)


def add_inventory_options(
    parser: argparse.ArgumentParser, *, offline: bool = True, timeout: bool = True
) -> None:
    """``--offline``, ``--refresh``, ``--mirror`` and ``--timeout``: how a command that
    plans reads the packages' index pages (``offline=False``, ``timeout=False``: the
    command defines that option itself, and its value serves the page reads too)."""
    if offline:
        parser.add_argument(
            "--offline",
            action="store_true",
            help="read no index page from the network: the page cache, then the shipped "
            "snapshot (also RESOLVER_HOOK_OFFLINE=1)",
        )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="revalidate cached index pages now instead of within their freshness window",
    )
    parser.add_argument(
        "--mirror",
        action="append",
        default=[],
        metavar="UPSTREAM=MIRROR",
        help="read and pin URLs under UPSTREAM from MIRROR instead (repeatable; also "
        "RESOLVER_HOOK_MIRRORS, space-separated pairs)",
    )
    parser.add_argument(
        "--trust-mirror-hashes",
        action="store_true",
        help="pin a mirror's file whose sha256 is not the one the shipped snapshot records "
        "for that file (said in a note); without it the plan is refused",
    )
    if not timeout:
        return
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="the most one index page may take in all, and each wait for its server (a "
        "file downloaded whole to hash it: this plus a second per 128 KiB; default 10; "
        "also RESOLVER_HOOK_TIMEOUT)",
    )


def settings_from_args(
    args: argparse.Namespace,
    *,
    reads_pages: bool = True,
    installer: InstallerSettings | None = None,
    points_at_pages: bool = False,
    uv: UvConfig | None = None,
) -> Settings:
    """The command's :class:`~resolver_hook.settings.Settings`: its flags and the
    environment, combined once. ``reads_pages``: the command reads index pages (its
    mirrors and the user's index are read too); ``points_at_pages``: it reads none but
    its plans name them, so its mirrors are read. ``installer``: the installer the
    command runs and what its arguments say of the pages (its default index is the
    user's); ``uv``: uv's files, where the command has read them already."""

    return combine(
        os.environ,
        allow_insecure_urls=bool(getattr(args, "allow_insecure_urls", False)),
        offline=bool(getattr(args, "offline", False)),
        refresh=bool(getattr(args, "refresh", False)),
        mirror=getattr(args, "mirror", []) if reads_pages or points_at_pages else None,
        timeout=getattr(args, "timeout", None),
        index_url=getattr(args, "index_url", None),
        trust_mirror_hashes=bool(getattr(args, "trust_mirror_hashes", False)),
        extra_index_urls=getattr(args, "extra_index_url", None) or (),
        find_links=getattr(args, "find_links", None) or (),
        installer=installer,
        record=recorder(args),
        uv=uv,
    )


def planner_from_args(
    args: argparse.Namespace,
    *,
    read_pages: bool = True,
    installer: InstallerSettings | None = None,
    uv: UvConfig | None = None,
) -> Planner:
    """The command's planner, from :func:`settings_from_args` and today's date;
    ``read_pages=False``: one that plans the manifests as given, their own URLs through
    the mirrors. A wait for its pages over a second shows (stderr, a terminal only,
    never with --json or -q). ``uv``: as :func:`settings_from_args` takes it."""

    settings = settings_from_args(
        args, reads_pages=read_pages, installer=installer, points_at_pages=True, uv=uv
    )

    def watch() -> Progress:
        return Progress(
            "reading index pages", delay=PROGRESS_DELAY, enabled=not getattr(args, "json", False)
        )

    return Planner(settings=settings, today=datetime.date.today(), read_pages=read_pages,
                   watch=watch, record=recorder(args))  # fmt: skip


def example_names() -> list[str]:
    """The names the bundled example asks for, as its file lists them (the help says
    what it holds from the file itself, so the two cannot drift apart)."""
    with open(example_path(), encoding="utf-8") as f:
        lines = [x.split("#", 1)[0].strip() for x in f]
    return [m.group() for x in lines if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", x))]


def example_path() -> str:
    return data_path("examples", EXAMPLE)


def requirements_from_args(args: argparse.Namespace) -> ReqFile:
    files = list(args.requirement_files)
    if getattr(args, "example", False):
        files.insert(0, example_path())
    if not files and not args.reqs:
        raise UsageError("nothing to plan: give requirements, -r FILE or --example")
    return read_requirements(
        files, args.reqs, constraints=args.constraint_files, record=recorder(args)
    )


def manifests_from_args(args: argparse.Namespace) -> Mapping[str, Manifest]:
    return collect_manifests(
        args.manifest, allow_insecure=allow_insecure(args), record=recorder(args)
    )


def refuse_writing_inputs(path: str, inputs: Iterable[str]) -> None:
    """A usage error when writing ``-o path`` would change one of ``inputs``: the same
    path, or the same file through a symlink or a hard link. Inputs are never modified."""

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
    """``--allow-insecure-urls``, or RESOLVER_HOOK_ALLOW_INSECURE_URLS on
    (:func:`~resolver_hook.settings.env_flag`), for a command that reads no other setting."""

    return bool(getattr(args, "allow_insecure_urls", False)) or env_flag(os.environ, ENV_INSECURE)
