"""A wait that shows: a plan whose index pages take over a second draws one progress
line on a terminal's stderr (pages read, seconds waited) and erases it; never in a pipe,
with --json or with -q. The real command, its output a pseudo-terminal or a pipe."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.indexreplica import PageServer
from tests.test_cli_output import on_terminal, piped

LINE = "reading index pages: "


@pytest.fixture
def slow_flags(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """torch's pages from a loopback server that answers each after 1.5 s (server
    errors: the snapshot serves them; a 404 would say the pages do not exist)."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    server = PageServer(delay=1.5, missing=503)
    with server.serving():
        yield [
            "plan",
            "torch",
            "--target",
            "linux-x86_64-py312",
            "--mirror",
            f"https://download.pytorch.org/whl={server.url}/whl",
            "--allow-insecure-urls",
        ]


def test_the_wait_shows_on_a_terminal(slow_flags: list[str]) -> None:
    code, shown = on_terminal(*slow_flags)
    assert code == 0, shown
    assert LINE in shown
    drawn = shown.split(LINE, 1)[1].split("\r", 1)[0]
    assert drawn.endswith(" s\x1b[K"), drawn  # the seconds waited
    assert "\r\x1b[K" in shown  # erased before the plan is printed
    assert shown.rindex("\r\x1b[K") < shown.index("machine: ")


@pytest.mark.parametrize("extra", [[], ["--json"], ["-q"]], ids=["pipe", "json", "quiet"])
def test_never_in_a_pipe(slow_flags: list[str], extra: list[str]) -> None:
    proc = piped(*slow_flags, *extra)
    assert proc.returncode == 0, proc.stderr
    assert LINE not in proc.stderr + proc.stdout
    assert "\x1b[" not in proc.stderr


@pytest.mark.parametrize("extra", [["--json"], ["-q"]], ids=["json", "quiet"])
def test_never_with_json_or_quiet_on_a_terminal(slow_flags: list[str], extra: list[str]) -> None:
    code, shown = on_terminal(*slow_flags, *extra)
    assert code == 0, shown
    assert LINE not in shown
