"""The opt-in timing record (RESOLVER_HOOK_TIMINGS) that the install benchmark reads."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.ground import timings as _timings
from resolver_hook.process.foreground import foreground
from resolver_hook.process.proc import capture


@pytest.fixture(autouse=True)
def no_record_left() -> Iterator[None]:
    yield
    _timings.stop()  # a failed test must not leave a record for the next one


def test_children_are_recorded_in_their_phase(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    _timings.start({_timings.ENV: str(path)})
    capture([sys.executable, "-c", "pass", "secret-argument"], timeout=60)
    with _timings.phase("proof"):
        foreground([sys.executable, "-c", "pass"])
    with _timings.phase("install"):
        foreground([sys.executable, "-c", "import time; time.sleep(0.05)"])
    with _timings.phase("proof"):  # a phase that runs again adds up
        pass
    _timings.stop()
    data = json.loads(path.read_text())
    assert set(data) == {"schema", "total_ms", "started", "ended", "phases", "children"}
    assert data["ended"] - data["started"] == pytest.approx(data["total_ms"] / 1000, abs=0.05)
    assert data["schema"] == 1
    assert set(data["phases"]) == {"proof", "install"}
    assert [c["phase"] for c in data["children"]] == ["other", "proof", "install"]
    assert data["children"][0]["argv"] == [sys.executable, "-c", "pass", "secret-argument"][:4]
    assert all(set(c) == {"phase", "argv", "ms"} for c in data["children"])
    slept = data["children"][2]["ms"]
    assert slept >= 50
    assert data["phases"]["install"] >= slept
    assert data["total_ms"] >= data["phases"]["install"] + data["phases"]["proof"]


def test_only_the_first_words_of_a_command_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    _timings.start({_timings.ENV: str(path)})
    capture([sys.executable, "-c", "pass", "a", "https://user:token@example.org/"], timeout=60)
    _timings.stop()
    assert "token" not in path.read_text()


def test_nothing_is_written_without_the_variable(tmp_path: Path) -> None:
    _timings.start({})
    with _timings.phase("install"):
        capture([sys.executable, "-c", "pass"], timeout=60)
    _timings.stop()
    assert list(tmp_path.iterdir()) == []


def test_started_runs_while_the_child_does(tmp_path: Path) -> None:
    """``foreground(started=...)``: called once the child runs, before it is waited for
    (the child here exits 0 only once the call has made its file, 3 after 60 s)."""
    flag = tmp_path / "called"
    child = (
        "import os, sys, time\n"
        "end = time.monotonic() + 60\n"
        "while not os.path.exists(sys.argv[1]):\n"
        "    if time.monotonic() > end: sys.exit(3)\n"
        "    time.sleep(0.01)\n"
    )
    calls: list[int] = []

    def started() -> None:
        calls.append(1)
        flag.touch()

    code, _ = foreground([sys.executable, "-c", child, str(flag)], started=started)
    assert (code, calls) == (0, [1])
