"""Options shared by plan, explain and lock: requirements and manifests."""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from resolver_hook.cli._output import Progress

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from resolver_hook.host import HostProfile
    from resolver_hook.manifest import Manifest
    from resolver_hook.reqfile import ReqFile

__all__ = [
    "INSECURE_HELP",
    "add_insecure_option",
    "add_inventory_options",
    "add_manifest_options",
    "add_requirement_options",
    "allow_insecure",
    "manifests_from_args",
    "offline",
    "planning_manifests",
    "refuse_writing_inputs",
    "requirement_names",
    "requirements_from_args",
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


ENV_OFFLINE = "RESOLVER_HOOK_OFFLINE"


def add_inventory_options(parser: argparse.ArgumentParser, *, offline: bool = True) -> None:
    """``--offline``, ``--refresh`` and ``--mirror``: how a command that plans reads the
    packages' index pages (``offline=False``: the command defines ``--offline`` itself)."""
    if offline:
        parser.add_argument(
            "--offline",
            action="store_true",
            help="read no index page from the network: the page cache, then the shipped "
            f"snapshot (also {ENV_OFFLINE}=1)",
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


def offline(args: argparse.Namespace) -> bool:
    """``--offline``, or RESOLVER_HOOK_OFFLINE set to 1/true/yes."""
    from_env = os.environ.get(ENV_OFFLINE, "") in ("1", "true", "yes")
    return bool(getattr(args, "offline", False)) or from_env


def requirement_names(reqs: ReqFile) -> list[str]:
    """The names the requirements ask for (what a plan reads the pages of), a wheel URL's
    too: it is judged against the builds its manifest's pages list."""
    return [e.name for e in reqs.requirements if e.name]


def planning_manifests(
    args: argparse.Namespace,
    manifests: Mapping[str, Manifest],
    names: Iterable[str] | None = None,
    profile: HostProfile | None = None,
    *,
    unread: dict[str, str] | None = None,
) -> Mapping[str, Manifest]:
    """``manifests`` with the index flavours of ``names`` (every manifest when None) and
    of what they couple with replaced by the files their pages list (the inventory),
    read through the index client; the shipped snapshot serves a page the client cannot
    give (``--offline``: one not in its page cache). What the reading showed is in the
    manifests' ``notes``; ``unread``, when given, gets each page that could not be read
    (its URL, and why in a few words)."""
    from resolver_hook.index import IndexClient, mirrors_from
    from resolver_hook.inventory import expand_manifests
    from resolver_hook.inventory.expand import with_notes
    from resolver_hook.inventory.snapshot import builtin_snapshot
    from resolver_hook.inventory.sources import FallbackSource

    insecure = allow_insecure(args)
    mirrors = mirrors_from(os.environ, getattr(args, "mirror", []), allow_insecure=insecure)
    quiet = offline(args)
    client = IndexClient(
        allow_insecure=insecure,
        offline=quiet,
        refresh=bool(getattr(args, "refresh", False)),
        mirrors=mirrors,
    )
    source = FallbackSource(client, builtin_snapshot(), mirrors, offline=quiet)
    wanted = None
    if profile is not None and profile.tags:
        accepted = frozenset(profile.tags)

        def wanted(tags: frozenset[object]) -> bool:
            return any(str(t) in accepted for t in tags)

    chosen = list(manifests) if names is None else list(names)
    # A wait over a second shows: pages read so far and the seconds waited (stderr,
    # a terminal only, never with --json or -q).
    waiting = Progress(
        "reading index pages", delay=PROGRESS_DELAY, enabled=not getattr(args, "json", False)
    )
    with waiting:
        client.on_read = lambda url: waiting.advance(f"done (last: {urlsplit(url).hostname})")
        done = expand_manifests(manifests, chosen, source, wanted=wanted, mirrors=mirrors)
    if unread is not None:
        unread.update(source.unread)
    return with_notes(done, [*done.notes, *source.notes, *client.notes])


def example_path() -> str:
    from importlib import resources

    return str(resources.files("resolver_hook") / "examples" / EXAMPLE)


def example_names() -> list[str]:
    """The names the bundled example asks for, as its file lists them (the help says
    what it holds from the file itself, so the two cannot drift apart)."""
    with open(example_path(), encoding="utf-8") as f:
        lines = [x.split("#", 1)[0].strip() for x in f]
    return [m.group() for x in lines if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", x))]


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
