"""Run the CLI in-process and read what it printed."""

from __future__ import annotations

import pytest

from resolver_hook.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``resolver-hook ARGV...``: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
