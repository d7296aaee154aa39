"""The command table is the door: ``--help`` lists every command without importing any
command module, with the line each module registers."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from resolver_hook.cli import _COMMANDS, _SUMMARIES, build_parser


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {a.dest: a.help for a in sub._choices_actions}


def test_the_table_names_every_command_once() -> None:
    assert list(_SUMMARIES) == list(_COMMANDS)


@pytest.mark.parametrize("command", list(_COMMANDS))
def test_each_command_module_registers_the_line_of_the_table(command: str) -> None:
    registered = _summaries(build_parser(command))
    assert registered[command] == _SUMMARIES[command]
    # A module registers only commands the table sends to it.
    assert {_COMMANDS[name] for name in registered} == {_COMMANDS[command]}


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from resolver_hook.cli import _COMMANDS, main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "names = {f'resolver_hook.cli.{m}' for m in _COMMANDS.values()}\n"
        "print(sorted(names & set(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "positional arguments" in done.stdout
    assert done.stderr.strip() == "[]"
