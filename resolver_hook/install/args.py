"""What the user's ``pip install`` / ``uv pip install`` arguments ask for.

The arguments themselves are passed on untouched; this only finds the requirements,
requirement and constraint files, ``--require-hashes`` and ``--python`` in them, reading
options as pip's optparse and uv's clap read them.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from resolver_hook.errors import UsageError
from resolver_hook.ground.valueclass import valueclass

__all__ = ["InstallArgs", "parse_install_args", "requirement_name"]


# Options of `pip install` / `uv pip install` that take a value, so the value is
# not mistaken for a requirement. Requirement-bearing ones are handled first.
_VALUE_OPTIONS = frozenset(
    (
        "-t",
        "--target",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--root",
        "--prefix",
        "--src",
        "--upgrade-strategy",
        "-C",
        "--config-settings",
        "--config-setting",
        "--global-option",
        "--no-binary",
        "--only-binary",
        "--progress-bar",
        "--root-user-action",
        "--report",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--python",
        "-p",
        "--log",
        "--keyring-provider",
        "--proxy",
        "--retries",
        "--timeout",
        "--exists-action",
        "--trusted-host",
        "--cert",
        "--client-cert",
        "--cache-dir",
        "--use-feature",
        "--use-deprecated",
        "--no-editable-package",
        "--excludes",
        "-b",
        "--build-constraints",
        "--build-constraint",
        "--extra",
        "--group",
        "--python-platform",
        "--output-format",
        "--torch-backend",
        "--index",
        "--default-index",
        "--index-strategy",
        "-P",
        "--upgrade-package",
        "--upgrade-group",
        "--resolution",
        "--prerelease",
        "--prerelease-package",
        "--fork-strategy",
        "--exclude-newer",
        "--exclude-newer-package",
        "--no-sources-package",
        "--reinstall-package",
        "--link-mode",
        "--config-settings-package",
        "--no-build-isolation-package",
        "--refresh-package",
        "--color",
        "--allow-insecure-host",
        "--directory",
        "--project",
        "--config-file",
        "--overrides",
        "--override",
    )
)
_REQ_FILE = frozenset({"-r", "--requirement", "--requirements"})
_CONSTRAINT_FILE = frozenset({"-c", "--constraint", "--constraints"})
_EDITABLE = frozenset({"-e", "--editable"})
_WITH_VALUE = _REQ_FILE | _CONSTRAINT_FILE | _EDITABLE | _VALUE_OPTIONS


@valueclass
class InstallArgs:
    """What the user's installer arguments ask for (the arguments themselves stay as given)."""

    tool: str  # "pip" or "uv"
    args: tuple[str, ...]
    requirements: tuple[str, ...] = ()  # positional requirement strings
    requirement_files: tuple[str, ...] = ()
    constraint_files: tuple[str, ...] = ()
    require_hashes: bool = False
    python: str | None = None
    # ``args`` less positional requirements, ``-r`` files and ``--``, in order: what
    # stays when the requirements are handed over another way.
    options: tuple[str, ...] = ()
    # Index in ``args`` of each positional requirement.
    positions: tuple[int, ...] = ()
    # The default index the arguments name (the last ``--index-url``/``-i``; for uv,
    # ``--default-index`` first): the one the installer reads, so the plan reads it too.
    index_url: str | None = None
    # pip's --cert and --proxy (the last of each): the plan's pages are read with them too.
    cert: str | None = None
    proxy: str | None = None
    # uv's --config-file (read instead of the files uv finds) and --no-config (none found
    # read): they decide which of uv's files the plan reads too.
    config_file: str | None = None
    no_config: bool = False


def _option_with_value(arg: str) -> tuple[str, str | None, str] | None:
    """The option in ``arg`` that takes a value: (option, value if attached, flags before it).

    Read as pip's optparse and uv's clap read them: ``--name=VALUE``, ``--name``,
    ``-rVALUE`` and clustered short options (``-Ur`` is ``-U -r``, ``-qrFILE`` is
    ``-q -r FILE``). None for a requirement, a flag or a cluster of flags.
    """
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return (name, value if eq else None, "") if name in _WITH_VALUE else None
    if arg.startswith("-"):
        for j in range(1, len(arg)):
            if f"-{arg[j]}" in _WITH_VALUE:
                return f"-{arg[j]}", arg[j + 1 :] or None, arg[:j] if j > 1 else ""
    return None


def parse_install_args(tool: str, args: Sequence[str]) -> InstallArgs:
    """Find the requirements in ``pip install`` / ``uv pip install`` arguments."""
    reqs: list[str] = []
    files: list[str] = []
    constraints: list[str] = []
    options: list[str] = []
    positions: list[int] = []
    values: dict[str, str] = {}
    index: str | None = None  # the last --index-url or -i
    require_hashes = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # pip and uv read every argument after it as a requirement
            reqs += args[i + 1 :]
            positions += range(i + 1, len(args))
            break
        found = _option_with_value(arg)
        if found is None:
            if arg.startswith("-"):
                options.append(arg)
                require_hashes = require_hashes or arg == "--require-hashes"
            else:
                reqs.append(arg)
                positions.append(i)
            i += 1
            continue
        key, value, flags = found
        span = 1
        if value is None:
            if i + 1 >= len(args):
                raise UsageError(f"{tool} install: option {arg} needs a value")
            value, span = args[i + 1], 2
        taken = args[i : i + span]
        i += span
        if key in _REQ_FILE:
            files.append(value)
            options += [flags] if flags else []
            continue
        options += taken
        if key in _CONSTRAINT_FILE:
            constraints.append(value)
        else:
            values[key] = value
            index = value if key in ("--index-url", "-i") else index
    return InstallArgs(
        tool=tool,
        args=tuple(args),
        requirements=tuple(reqs),
        requirement_files=tuple(files),
        constraint_files=tuple(constraints),
        require_hashes=require_hashes,
        python=values.get("--python") or values.get("-p"),
        index_url=(values.get("--default-index") if tool == "uv" else None) or index,
        options=tuple(options),
        positions=tuple(positions),
        cert=values.get("--cert") if tool == "pip" else None,
        proxy=values.get("--proxy") if tool == "pip" else None,
        config_file=values.get("--config-file") if tool == "uv" else None,
        no_config=tool == "uv" and "--no-config" in options,
    )


def requirement_name(line: str) -> str | None:
    """The canonical project name of a requirement (``--hash`` options allowed), or None."""

    try:
        return canonicalize_name(Requirement(line.split(" --hash", 1)[0]).name)
    except InvalidRequirement:
        return None
