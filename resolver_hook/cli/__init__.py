"""The ``resolver-hook`` command line.

This package is the only place that parses flags, prints, and maps errors to exit
codes. Each sub-command lives in its own small module exposing
``register(subparsers)``; the module sets ``func`` on its parser, a callable
taking the parsed namespace and returning the exit code. The command table below is
the one door for start-up: a command module imports what it uses at its top, and is
itself imported only when its command runs (:func:`command_module`).

Exit codes: 0 success; 1 operational failure (nothing fits, an installer or a
check failed); 2 bad input or usage; 128+N on signal N (130 Ctrl-C, 143 SIGTERM).
``pip install`` and ``uv pip install`` otherwise exit with the installer's own code.

When stdout's reader goes away (``resolver-hook placeholder check X | head -1``), the
rest of the output is dropped and the command runs to its end: its exit status is its
own, so a failing check is not turned into a success by a closed pipe.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from resolver_hook import __version__
from resolver_hook.cli._output import add_output_options, paint_lines, set_verbosity, verbosity
from resolver_hook.errors import ResolverHookError
from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.ground.stdout import DropAfterClose, never_unencodable

__all__ = ["main"]

# Command name -> module under resolver_hook.cli, in the order of --help.
_COMMANDS = {
    "detect": "detect",
    "plan": "plan",
    "explain": "explain",
    "lock": "lock",
    "env": "env",
    "sync": "sync",
    "pip": "install",
    "uv": "install",
    "enable": "hook",
    "disable": "hook",
    "status": "hook",
    "placeholder": "placeholder",
    "scan": "scan",
    "manifest": "manifest",
    "lint": "lint",
    "doctor": "doctor",
}

# Command name -> its line in ``resolver-hook --help``: the list is shown without
# importing every command module. Each module registers the same line (a test holds
# them equal).
_SUMMARIES = {
    "detect": "what this machine is",
    "plan": "which flavour each requirement gets, and why",
    "explain": "every flavour of a package against this machine",
    "lock": "write pinned flavour lines for one or more targets",
    "env": "an application's whole environment from [tool.resolver-hook.env]",
    "sync": "install this machine's lock from a lock set",
    "pip": "plan, then run pip install",
    "uv": "plan, then run uv pip install",
    "enable": "make plain 'pip install' in this venv use the plan",
    "disable": "restore the venv's pip configuration",
    "status": "is the hook on, and does the machine still match?",
    "placeholder": "build and check placeholders that fail loudly",
    "scan": "derive the support matrix from real wheels",
    "manifest": "work with flavour manifests",
    "lint": "warnings about wheels, sdists, pyproject.toml or manifests, with evidence",
    "doctor": "detection report and installed-package check; source-build toolchain "
    "checks (--build)",
}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors follow the project's one-line format.

    argparse asks :func:`shutil.get_terminal_size` for each help formatter's width, and
    importing :mod:`shutil` imports bz2 and lzma (~3 ms of every command that parses its
    arguments, most of which never print help): the width is read here as shutil reads it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        formatter = kwargs.pop("formatter_class", argparse.HelpFormatter)
        kwargs["formatter_class"] = lambda prog: formatter(prog, width=_help_width())
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # argparse names the words it did not take (`--index-url URL` to a command that
        # has none): a URL's userinfo is shown as stars, as everywhere else.
        from resolver_hook.ground.userinfo import redact_text

        sys.stderr.write(f"error: {redact_text(message)}\nhint: see '{self.prog} --help'\n")
        raise SystemExit(2)


def _help_width() -> int:
    """``shutil.get_terminal_size().columns - 2``, argparse's width: ``COLUMNS`` when a
    positive number, else the width of the terminal stdout started on, else 80."""
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = 0
    return (width or 80) - 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command``, whose module alone is imported (start-up); for no
    command (``--help``, a missing or unknown one), the list of commands, none imported."""
    parser = _Parser(
        prog="resolver-hook",
        description="Pick the right flavour of GPU Python packages before pip or uv runs.",
    )
    parser.add_argument("--version", action="version", version=f"resolver-hook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    if command in _COMMANDS:
        command_module(_COMMANDS[command]).register(sub)
    else:
        for name, summary in _SUMMARIES.items():
            sub.add_parser(name, help=summary)
    for leaf in _leaves(sub):
        add_output_options(leaf)
    return parser


def command_module(name: str) -> ModuleType:
    """The module under resolver_hook.cli that runs a command (a value of the command
    table), imported now: only the command that runs pays for its imports."""
    return importlib.import_module(f"resolver_hook.cli.{name}")


def _leaves(action: argparse._SubParsersAction[Any]) -> list[argparse.ArgumentParser]:
    """The parsers that run a command (``placeholder build``, not ``placeholder``)."""
    out = []
    for p in dict.fromkeys(action.choices.values()):
        nested = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if nested:
            for n in nested:
                out.extend(_leaves(n))
        else:
            out.append(p)
    return out


def main(argv: Sequence[str] | None = None, *, record: Recorder = NOWHERE) -> int:
    """Run the command line; return the exit code. ``record``: where the readers of a
    plan declare what they read (resolver_hook._plancache stores the plan by it)."""
    # What the terminal cannot show never raises; set before parsing, so argparse's own
    # refusals name a path as every other message does.
    never_unencodable(sys.stdout, sys.stderr)
    quiet, verbose, rest = _output_flags_first(sys.argv[1:] if argv is None else list(argv))
    argv = _command_first(rest)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    args.record = record
    set_verbosity(quiet or getattr(args, "quiet", False), verbose + getattr(args, "verbose", 0))
    stdout = sys.stdout
    sys.stdout = DropAfterClose(stdout)
    try:
        if _quiet_stdout(args):
            # -q: errors only. The command's report is dropped; what was asked for as
            # output (--json, -o -) and an installer's own output are kept.
            with contextlib.redirect_stdout(io.StringIO()):
                code: int = args.func(args)
        else:
            code = args.func(args)
    except (ResolverHookError, KeyboardInterrupt, BrokenPipeError) as exc:
        return exit_for(exc)
    finally:
        with contextlib.suppress(BrokenPipeError):
            sys.stdout.flush()
        sys.stdout = stdout
    return code


def exit_for(exc: ResolverHookError | KeyboardInterrupt | BrokenPipeError) -> int:
    """Say what stopped a command, as the command line says it; its exit code."""
    if isinstance(exc, ResolverHookError):
        report_error(exc)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        # Ctrl-C (130), or a signal that reached a child first (ground.signals.Interrupted: 128+N).
        code = getattr(exc, "exit_code", 130)
        sys.stderr.write(f"error: {str(exc) or 'interrupted'}\n")
        return code if isinstance(code, int) else 130
    # Written past the wrapper (a child's stream): the run did not finish.
    return 1


def _quiet_stdout(args: argparse.Namespace) -> bool:
    return (
        verbosity() < 0
        and args.command not in ("pip", "uv")
        and not getattr(args, "json", False)
        and getattr(args, "output", None) != "-"
    )


def _output_flags_first(argv: list[str]) -> tuple[bool, int, list[str]]:
    """``-q``/``-v`` given before the command word: resolver-hook's own."""
    quiet, verbose = False, 0
    i = 0
    while i < len(argv) and argv[i] not in _COMMANDS and argv[i].startswith("-"):
        arg = argv[i]
        if arg in ("-q", "--quiet"):
            quiet = True
        elif arg == "--verbose" or (arg.startswith("-v") and set(arg[1:]) == {"v"}):
            verbose += 1 if arg == "--verbose" else len(arg) - 1
        else:
            i += 1
            continue
        del argv[i]
    return quiet, verbose, argv


def _command_first(argv: list[str]) -> list[str]:
    """Accept a command's options before its name, as in ``resolver-hook --target X pip install``.

    The options move after the command name, where its parser reads them.
    """
    if not argv or not argv[0].startswith("-") or argv[0] in ("-h", "--help", "--version"):
        return argv
    for i, arg in enumerate(argv):
        if arg in _COMMANDS:
            return [arg, *argv[:i], *argv[i + 1 :]]
    return argv


def report_error(exc: ResolverHookError) -> None:
    """Print ``error: ...`` (and ``hint: ...``) for an expected failure."""
    text = f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else "")
    sys.stderr.write(paint_lines(text, sys.stderr))
