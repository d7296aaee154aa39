"""What a stored plan keeps of the facts read through resolver_hook/_observed.py: a
digest of what was seen, taken again on a replay. The bytes count, not the time stamps:
a file rewritten with other bytes of the same size and dated back is a change, a folder
made again with the same names is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from resolver_hook import _observed, _plancache
from tests.paths import child_env


def _seen(how: list[object], path: Path) -> object:
    """The digest a reader's observation leaves in a store."""
    if how == ["list"]:
        return _observed.digest(how, _observed.folder_names(str(path)))
    if how == ["kind"]:
        return _observed.digest(how, _observed.path_kind(str(path)))
    return _observed.digest(how, _observed.file_bytes(str(path), 64))


def test_the_bytes_tell_a_change_not_the_time_stamps(tmp_path: Path) -> None:
    cfg = tmp_path / "pyvenv.cfg"
    cfg.write_text("version = 3.12.1\n")
    stamps = os.stat(cfg)
    kept = _seen(["read", 64], cfg)
    assert _observed.current(["read", 64], str(cfg)) == kept
    cfg.write_text("version = 3.11.1\n")  # the same size
    os.utime(cfg, ns=(stamps.st_atime_ns, stamps.st_mtime_ns))
    assert _observed.current(["read", 64], str(cfg)) != kept
    cfg.unlink()
    cfg.write_text("version = 3.12.1\n")  # another inode, a new time, the same bytes
    assert _observed.current(["read", 64], str(cfg)) == kept


def test_only_the_bytes_read_count(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_bytes(b"x" * 64 + b"tail")
    kept = _seen(["read", 64], init)
    init.write_bytes(b"x" * 64 + b"another tail")
    assert _observed.current(["read", 64], str(init)) == kept
    assert _observed.current(["read", 65], str(init)) != kept


def test_a_folder_made_again_with_the_same_names_is_the_same(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / "python3.12").mkdir(parents=True)
    kept = _seen(["list"], lib)
    (lib / "python3.12").rmdir()
    lib.rmdir()
    (lib / "python3.12").mkdir(parents=True)
    assert _observed.current(["list"], str(lib)) == kept
    (lib / "python3.13").mkdir()
    assert _observed.current(["list"], str(lib)) != kept


def test_kinds_and_absence(tmp_path: Path) -> None:
    assert _seen(["kind"], tmp_path) == 2
    assert _seen(["kind"], tmp_path / "none") is None
    assert _seen(["read", 64], tmp_path / "none") is None
    assert _seen(["list"], tmp_path / "none") is None
    assert _seen(["read", 64], tmp_path / "none" / "below") is None
    (tmp_path / "file").write_text("")
    assert _seen(["kind"], tmp_path / "file") == 1
    assert _observed.current(["kind"], str(tmp_path / "file")) == 1
    # A folder where a file was read: no digest, so never equal to one.
    assert _observed.current(["read", 64], str(tmp_path)) == _observed.UNREADABLE
    assert not _observed.unchanged(["read", 64], str(tmp_path), _observed.UNREADABLE)
    with pytest.raises(IsADirectoryError):
        _observed.file_bytes(str(tmp_path), 64)


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pyvenv.cfg"
    os.mkfifo(fifo)  # nobody writes to it: a blocking read would never end
    with pytest.raises(OSError, match="not a regular file"):
        _observed.file_bytes(str(fifo), 64)
    assert _observed.current(["read", 64], str(fifo)) == _observed.UNREADABLE
    assert _observed.path_kind(str(fifo)) == 0


@pytest.mark.parametrize(
    "how",
    [["read"], ["read", -1], ["read", True], ["read", (1 << 20) + 1], ["stat"], "read", None],
)
def test_a_stored_observation_of_no_known_form_is_a_miss(tmp_path: Path, how: object) -> None:
    (tmp_path / "f").write_text("")
    assert _observed.current(how, str(tmp_path / "f")) == _observed.UNREADABLE


def test_a_file_seen_two_ways_in_one_run_is_not_stored(tmp_path: Path) -> None:
    watch = _plancache._Watch(install=True)
    watch.observe(str(tmp_path / "cfg"), ["read", 64], b"version = 3.12\n")
    watch.observe(str(tmp_path / "cfg"), ["kind"], 1)
    watch.observe(str(tmp_path / "cfg"), ["read", 64], b"version = 3.12\n")
    assert watch.refused is None
    watch.observe(str(tmp_path / "cfg"), ["read", 64], b"version = 3.13\n")
    assert watch.refused is not None
    assert "changed during the run" in watch.refused


@pytest.mark.parametrize(
    ("how", "seen"),
    [
        (["kind"], "1"),
        (["kind"], True),
        (["list"], "ab"),
        (["read", 4], "ab"),
        (["read", b"4"], b"ab"),
        ("read", b"ab"),
        (None, None),
    ],
)
def test_an_observation_no_reader_makes_is_not_stored(how: list[object], seen: object) -> None:
    watch = _plancache._Watch(install=True)
    watch.observe("/x", how, seen)
    assert watch.refused == _observed.EVENT


# A run watched and stored as the plan store does it, in a child interpreter: its inputs
# are then the installed modules and the files below, none of them written just now
# except where a test says so.
_CHILD = """
import contextlib, pathlib, sys
from resolver_hook import _observed, _plancache
from tests.paths import child_env

path, record, how = sys.argv[1:]

def run():
    with contextlib.suppress(OSError):
        _observed.file_bytes(path, 64)
    if how == "and-read":
        pathlib.Path(path).read_bytes()  # another reader: it may use more than was observed
    return 0

_plancache._record(record, "key", run, install=False, argv=["plan"])
"""


def _stored(tmp_path: Path, path: Path, how: str = "") -> list[list[Any]] | None:
    """The inputs under ``tmp_path`` of a run that observes ``path`` (and, with
    ``and-read``, reads it besides), as the plan store keeps them (None: not stored)."""
    record = tmp_path / "record.json"
    record.unlink(missing_ok=True)
    argv = [sys.executable, "-I", "-B", "-c", _CHILD, str(path), str(record), how]
    subprocess.run(argv, check=True, env=child_env(), timeout=60)
    if not record.exists():
        return None
    inputs = json.loads(record.read_bytes())["inputs"]
    return [item for item in inputs if item[0].startswith(str(tmp_path))]


def test_a_file_only_observers_read_is_kept_by_what_they_saw(tmp_path: Path) -> None:
    cfg = tmp_path / "pyvenv.cfg"
    cfg.write_text("version = 3.12.1\n")  # just now: no identity of it could be kept
    assert _stored(tmp_path, cfg) == [[str(cfg), ["read", 64], _seen(["read", 64], cfg)]]


def test_what_else_reads_an_observed_file_is_kept_by_identity_too(tmp_path: Path) -> None:
    cfg = tmp_path / "pyvenv.cfg"
    cfg.write_text("version = 3.12.1\n")
    assert _stored(tmp_path, cfg, "and-read") is None  # written just now: not settled
    past = time.time() - 10
    os.utime(cfg, (past, past))
    seen = _stored(tmp_path, cfg, "and-read")
    assert seen is not None
    assert [item[1:] for item in seen] == [
        [["read", 64], _seen(["read", 64], cfg)],
        [_plancache._identity(str(cfg))],
    ]


def test_a_failed_observation_is_not_stored(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    assert _stored(tmp_path, tmp_path / "folder") is None
