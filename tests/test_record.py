"""What a stored plan keeps of what its readers declared (resolver_hook/ground/record.py): a
digest of what was seen, taken again on a replay. The bytes count, not the time stamps:
a file rewritten with other bytes of the same size and dated back is a change, a folder
made again with the same names is not."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from resolver_hook.ground import record as _record
from resolver_hook.ground.record import NOWHERE, Recorder, current, file_bytes, path_kind
from tests.paths import python_child


def _seen(how: list[object], path: Path) -> object:
    """The digest a reader's observation leaves in a store."""
    if how == ["list"]:
        return _record.digest(how, _record.folder_names(str(path)))
    if how == ["kind"]:
        return _record.digest(how, _record.path_kind(str(path)))
    return _record.digest(how, _record.file_bytes(str(path), 64))


def test_the_bytes_tell_a_change_not_the_time_stamps(tmp_path: Path) -> None:
    cfg = tmp_path / "pyvenv.cfg"
    cfg.write_text("version = 3.12.1\n")
    stamps = os.stat(cfg)
    kept = _seen(["read", 64], cfg)
    assert _record.current(["read", 64], str(cfg)) == kept
    cfg.write_text("version = 3.11.1\n")  # the same size
    os.utime(cfg, ns=(stamps.st_atime_ns, stamps.st_mtime_ns))
    assert _record.current(["read", 64], str(cfg)) != kept
    cfg.unlink()
    cfg.write_text("version = 3.12.1\n")  # another inode, a new time, the same bytes
    assert _record.current(["read", 64], str(cfg)) == kept


def test_only_the_bytes_read_count(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_bytes(b"x" * 64 + b"tail")
    kept = _seen(["read", 64], init)
    init.write_bytes(b"x" * 64 + b"another tail")
    assert _record.current(["read", 64], str(init)) == kept
    assert _record.current(["read", 65], str(init)) != kept


def test_a_folder_made_again_with_the_same_names_is_the_same(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / "python3.12").mkdir(parents=True)
    kept = _seen(["list"], lib)
    (lib / "python3.12").rmdir()
    lib.rmdir()
    (lib / "python3.12").mkdir(parents=True)
    assert _record.current(["list"], str(lib)) == kept
    (lib / "python3.13").mkdir()
    assert _record.current(["list"], str(lib)) != kept


def test_kinds_and_absence(tmp_path: Path) -> None:
    assert _seen(["kind"], tmp_path) == 2
    assert _seen(["kind"], tmp_path / "none") is None
    assert _seen(["read", 64], tmp_path / "none") is None
    assert _seen(["list"], tmp_path / "none") is None
    assert _seen(["read", 64], tmp_path / "none" / "below") is None
    (tmp_path / "file").write_text("")
    assert _seen(["kind"], tmp_path / "file") == 1
    assert _record.current(["kind"], str(tmp_path / "file")) == 1
    # A folder where a file was read: no digest, so never equal to one.
    assert _record.current(["read", 64], str(tmp_path)) == _record.UNREADABLE
    with pytest.raises(IsADirectoryError):
        _record.file_bytes(str(tmp_path), 64)


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pyvenv.cfg"
    os.mkfifo(fifo)  # nobody writes to it: a blocking read would never end
    with pytest.raises(OSError, match="not a regular file"):
        _record.file_bytes(str(fifo), 64)
    assert _record.current(["read", 64], str(fifo)) == _record.UNREADABLE
    assert _record.path_kind(str(fifo)) == 0


@pytest.mark.parametrize(
    "how",
    [
        ["read"],
        ["read", -1],
        ["read", True],
        ["read", _record.MAX_READ + 1],
        ["stat"],
        "read",
        None,
    ],
)
def test_a_stored_observation_of_no_known_form_is_a_miss(tmp_path: Path, how: object) -> None:
    (tmp_path / "f").write_text("")
    assert _record.current(how, str(tmp_path / "f")) == _record.UNREADABLE


def test_a_file_seen_two_ways_in_one_run_is_not_stored(tmp_path: Path) -> None:
    record = Recorder()
    record.declare(str(tmp_path / "cfg"), ["read", 64], b"version = 3.12\n")
    record.declare(str(tmp_path / "cfg"), ["kind"], 1)
    record.declare(str(tmp_path / "cfg"), ["read", 64], b"version = 3.12\n")
    assert record.refused is None
    assert len(record.inputs) == 2
    record.declare(str(tmp_path / "cfg"), ["read", 64], b"version = 3.13\n")
    assert record.refused is not None
    assert "changed during the run" in record.refused


@pytest.mark.parametrize(
    ("how", "seen"),
    [
        (["kind"], "1"),
        (["kind"], True),
        (["list"], "ab"),
        (["read", 4], "ab"),
        (["read", 1], b"ab"),
        (["read", b"4"], b"ab"),
        ("read", b"ab"),
        (None, None),
    ],
)
def test_an_observation_no_reader_makes_is_not_stored(how: list[object], seen: object) -> None:
    record = Recorder()
    record.declare("/x", how, seen)
    assert record.refused is not None
    assert record.inputs == {}


def test_a_whole_file_is_declared_with_one_byte_more(tmp_path: Path) -> None:
    """A reader of a whole file: a replay reads one byte more, so a file that grew (or
    shrank) is a change, and a file that appears where none was is one too."""
    reqs = tmp_path / "reqs.txt"
    reqs.write_bytes(b"torch\n")
    record = Recorder()
    record.file(reqs, reqs.read_bytes())
    record.file(tmp_path / "none.txt", None)
    (gone, how_gone, none), (path, how, kept) = sorted(record.inputs.values())
    assert (how, none) == (["read", 7], None)
    assert current(how, path) == kept
    reqs.write_bytes(b"torch\nflash-attn\n")
    assert current(how, path) != kept
    (tmp_path / "none.txt").write_text("")
    assert current(how_gone, gone) != none


def test_a_pipe_or_a_failed_read_refuses_the_run(tmp_path: Path) -> None:
    fifo = tmp_path / "reqs.fifo"
    os.mkfifo(fifo)
    record = Recorder()
    record.file(fifo, b"torch\n")  # what a reader got from it: no file holds it
    assert record.refused is not None
    record = Recorder()
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        file_bytes(str(tmp_path / "folder"), 64, record)
    assert record.refused is not None


def test_nothing_is_declared_after_the_launch(tmp_path: Path) -> None:
    """What the installer's run reads is done again on a replay: not an input."""
    record = Recorder()
    record.launched({"tool": "pip"})
    path_kind(str(tmp_path), record)
    record.refuse("the installer started")
    assert (record.inputs, record.refused) == ({}, None)


def test_what_waits_for_the_installer_runs_once_after_the_launch() -> None:
    """``running`` calls ``when_running`` once an installer was launched, and once."""
    record = Recorder()
    calls: list[int] = []
    record.when_running = lambda: calls.append(1)
    record.running()  # nothing launched yet
    assert calls == []
    record.launched({"tool": "pip"})
    record.running()
    record.running()
    assert calls == [1]


def test_the_no_op_recorder_keeps_nothing(tmp_path: Path) -> None:
    path_kind(str(tmp_path))
    NOWHERE.refuse("nothing")
    NOWHERE.fresh_until(1.0)
    NOWHERE.take([[str(tmp_path), ["kind"], 2]], 1.0)
    assert (NOWHERE.inputs, NOWHERE.refused, NOWHERE.until) == ({}, None, None)


def test_declarations_taken_from_another_recorder_are_this_ones(tmp_path: Path) -> None:
    """What a kept expansion's own recorder declared becomes the plan's: the same
    entries, the earlier freshness bound, and one path seen two ways is a change."""
    (tmp_path / "page").write_bytes(b"page")
    kept = Recorder(cwd=str(tmp_path))
    file_bytes(str(tmp_path / "page"), 64, kept)
    path_kind(str(tmp_path / "missing"), kept)
    kept.fresh_until(20.0)
    plan = Recorder(cwd=str(tmp_path))
    plan.fresh_until(30.0)
    plan.take(kept.inputs.values(), kept.until)
    assert plan.inputs == kept.inputs
    assert [x[2] is None for x in sorted(plan.inputs.values())] == [True, False]  # missing; page
    assert (plan.until, plan.refused) == (20.0, None)
    assert _record.unchanged(sorted(plan.inputs.values()), None)
    assert not _record.unchanged(sorted(plan.inputs.values()), plan.until)  # stale since 1970
    plan.take([[str(tmp_path / "page"), ["read", 64], "another digest"]], None)
    assert plan.refused == f"{tmp_path / 'page'} changed during the run"
    (tmp_path / "page").write_bytes(b"other")
    assert not _record.unchanged(sorted(kept.inputs.values()), None)
    launched = Recorder(cwd=str(tmp_path))
    launched.launched({"tool": "pip"})
    launched.take(kept.inputs.values(), kept.until)  # the installer's part: not the plan's
    assert (launched.inputs, launched.until) == ({}, None)


@pytest.mark.parametrize("shape", [None, {}, [["a", ["kind"]]], [[1, ["kind"], None]]])
def test_declarations_of_another_shape_are_no_answer(shape: object) -> None:
    assert not _record.unchanged(shape, None)


@pytest.mark.parametrize("size", [0, 1, 512 << 10, (512 << 10) + 1, 1 << 20])
@pytest.mark.parametrize("loaded", [True, False])
def test_sha256_hex_is_the_sha256_of_any_input(
    monkeypatch: pytest.MonkeyPatch, size: int, loaded: bool
) -> None:
    """The interpreter's own sha256 or OpenSSL's: the same digest, hashlib loaded or not."""
    data = os.urandom(size)
    want = hashlib.sha256(data).hexdigest()
    if not loaded:
        monkeypatch.delitem(sys.modules, "hashlib")
    assert _record.sha256_hex(data) == want


def test_the_small_texts_of_an_installs_plan_are_hashed_without_openssl(tmp_path: Path) -> None:
    """A kept TOML document's text, a built-in manifest's (torch's: 45 kB) and a page
    cache entry of a few kilobytes (what an install's plan hashes) are hashed without
    importing hashlib: loading OpenSSL takes 2-7 ms, more than the interpreter's own
    sha256 spends on them. A large input loads it."""
    code = (
        "import sys\n"
        "sys.modules.pop('hashlib', None)  # a site hook's import: what is seen is ours\n"
        "from pathlib import Path\n"
        "from resolver_hook.ground.record import sha256_hex\n"
        "from resolver_hook.ground.toml import kept, loads\n"
        "from resolver_hook.index.cache import CacheEntry, PageCache\n"
        "import resolver_hook.index.client, resolver_hook.inventory.snapshot\n"
        "import resolver_hook.manifest.stored\n"
        "text = ''.join(f'k{i} = {i}\\n' for i in range(2000))  # 17 kB\n"
        "print(kept('doc', text, lambda: loads(text)) == kept('doc', text, lambda: {}))\n"
        f"pages = PageCache(Path({str(tmp_path / 'index')!r}))\n"
        "pages.put('k', CacheEntry(url='https://x/', body=b'<a>x</a>' * 1000, fetched=0.0))\n"
        "sha256_hex(bytes(46 << 10))  # as large as torch's built-in manifest\n"
        "print(pages.get('k')[0] is not None, 'hashlib' in sys.modules)\n"
        "sha256_hex(bytes(600 << 10))\n"
        "print('hashlib' in sys.modules)\n"
    )
    done = python_child(code, env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path)})
    assert done.stdout.split() == ["True", "True", "False", "True"], done.stderr


def test_the_interpreters_sha256_is_imported_by_its_name_alone(tmp_path: Path) -> None:
    """The interpreter's own sha256 is imported by the name of its version's module
    (_sha2 from 3.12, _sha256 before): the other name, which it lacks, is not looked
    for (a search of every folder of sys.path)."""
    other = "_sha256" if sys.version_info >= (3, 12) else "_sha2"
    code = (
        "import sys\n"
        "asked = []\n"
        "class Asked:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        asked.append(name)\n"
        "sys.meta_path.insert(0, Asked())\n"
        "from resolver_hook.ground.record import sha256_hex\n"
        "print(sha256_hex(b'x') == __import__('hashlib').sha256(b'x').hexdigest())\n"
        f"print({other!r} in asked)\n"
    )
    done = python_child(code, env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path)})
    assert done.stdout.split() == ["True", "False"], done.stderr
