"""Seeing processes from the outside: alive, and the members of a process group."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    return text[text.rindex(")") + 2 :].split()


def alive(pid: int) -> bool:
    """Running or sleeping: a zombie waiting for its parent counts as gone."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group is ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
                found.append(int(entry))
    return found


def wait_gone(pids: list[int], within: float = 10.0) -> list[int]:
    """The pids still alive after waiting up to ``within`` seconds for them to go."""
    end = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def wait_group_gone(pgid: int, within: float = 10.0) -> list[int]:
    """Members of ``pgid`` still alive after waiting up to ``within`` seconds.

    A process sent SIGKILL on a loaded machine shows as running until it is scheduled
    to die: give it that moment.
    """
    end = time.monotonic() + within
    while True:
        left = group_members(pgid)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def wait_for_file(path: Path, within: float = 30.0) -> str:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")
