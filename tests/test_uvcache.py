"""A checked uv install's runs share one cache where the user turned uv's off
(resolver_hook/install/uvcache.py), with real uv against the loopback index.

Each uv the hook runs is a logging stand-in on PATH in front of the real binary: it
writes down its words and the cache variables it was started with, then becomes uv.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from resolver_hook.install.uvcache import SessionCache, cache_off, start_early, take_early
from tests.installenv import GpuIndex, make_uv_venv
from tests.paths import python_child
from tests.test_install import install, versions

pytestmark = pytest.mark.integration


def _real_uv() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def _logging_uv(folder: Path, log: Path) -> None:
    """``folder/uv``: writes one line per run (its words, UV_CACHE_DIR, UV_NO_CACHE and
    what the cache folder holds when it starts), then runs the real uv."""
    script = folder / "uv"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "cache = os.environ.get('UV_CACHE_DIR')\n"
        "held = sorted(os.listdir(cache)) if cache and os.path.isdir(cache) else []\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps([sys.argv[1:], cache, os.environ.get('UV_NO_CACHE'), held]))\n"
        "    f.write('\\n')\n"
        f"os.execv({_real_uv()!r}, [{_real_uv()!r}, *sys.argv[1:]])\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def _runs(log: Path) -> list[list[object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(
    ("value", "off"),
    [("1", True), ("true", True), ("YES", True), (" on ", True), ("0", False), ("false", False),
     ("", False), ("maybe", False)],
)  # fmt: skip
def test_the_cache_is_off_where_uv_reads_a_true_word(value: str, off: bool) -> None:
    assert cache_off({"UV_NO_CACHE": value}) is off
    assert cache_off({}) is False


def test_a_checked_install_with_uvs_cache_off_shares_one_cache_between_its_runs(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    venv = make_uv_venv(tmp_path / "uvenv")
    log = tmp_path / "uv.log"
    _logging_uv(venv / "bin", log)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    install("uv", gpu_index, venv, "demo-gpu", "demo-idx", "plainpkg", tmp=tmp, check=True)
    assert (versions(venv)["demo-gpu"], versions(venv)["demo-idx"]) == ("1.0+cu130", "2.0+cu130")
    runs = _runs(log)
    words = [r[0][:2] for r in runs]
    # The interpreter's facts first, then the dry run and the install, which finds them.
    assert words == [["python", "find"], ["pip", "install"], ["pip", "install"]]
    assert runs[0][0] == ["python", "find", str(venv / "bin" / "python")]
    assert "--dry-run" in runs[1][0]
    assert "--dry-run" not in runs[2][0]
    caches = {r[1] for r in runs}
    assert len(caches) == 1
    assert None not in caches
    assert all(r[2] is None for r in runs)  # UV_NO_CACHE not passed on
    assert any(name.startswith("interpreter") for name in runs[1][3])
    assert any(name.startswith("wheels") for name in runs[2][3])  # the dry run's downloads
    (cache,) = caches
    assert Path(str(cache)).parent == tmp  # in the session's temporary folder, removed
    assert list(tmp.iterdir()) == []


def test_uvs_own_cache_serves_every_run_where_it_is_on(gpu_index: GpuIndex, tmp_path: Path) -> None:
    user = tmp_path / "user-cache"
    env = {"UV_NO_CACHE": "0", "UV_CACHE_DIR": str(user)}
    # Twice, into two venvs: the second finds the URL's wheel in uv's cache, and its dry
    # run names it "demo-gpu==1.0+cu130 (from URL)" (the install takes that URL).
    for name in ("first", "second"):
        venv = make_uv_venv(tmp_path / name)
        log = tmp_path / f"{name}.log"
        _logging_uv(venv / "bin", log)
        install("uv", gpu_index, venv, "demo-gpu", env=env, check=True)
        assert versions(venv)["demo-gpu"] == "1.0+cu130"
        runs = _runs(log)
        assert [r[0][:2] for r in runs] == [["pip", "install"], ["pip", "install"]]
        assert {(r[1], r[2]) for r in runs} == {(str(user), "0")}


def test_closing_stops_the_query_and_removes_the_folder(tmp_path: Path) -> None:
    slow = tmp_path / "uv"
    slow.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    slow.chmod(0o755)
    cache = SessionCache.start(str(slow), sys.executable, {**os.environ, "UV_NO_CACHE": "1"})
    assert cache is not None
    folder = Path(cache.folder)
    assert folder.is_dir()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert cache.env({"UV_NO_CACHE": "1", "A": "b"}) == {"A": "b", "UV_CACHE_DIR": str(folder)}
    began = time.monotonic()
    cache.close()
    assert time.monotonic() - began < 10  # the sleeping query was stopped, not waited for
    assert not folder.exists()


def test_a_uv_that_cannot_start_leaves_the_dry_run_to_say_so(tmp_path: Path) -> None:
    env = {**os.environ, "UV_NO_CACHE": "1"}
    cache = SessionCache.start(str(tmp_path / "no-such-uv"), sys.executable, env)
    assert cache is not None
    cache.wait()  # nothing to wait for
    folder = Path(cache.folder)
    cache.close()
    assert not folder.exists()
    assert SessionCache.start(str(tmp_path / "no-such-uv"), sys.executable, {}) is None


@pytest.mark.parametrize(
    ("argv", "started"),
    [
        (["uv", "--target", "t", "pip", "install", "demo"], True),
        (["uv", "pip", "install", "-r", "r.txt"], True),
        (["uv", "--no-proof", "pip", "install", "demo"], False),  # no dry run
        (["uv", "pip", "uninstall", "demo"], False),
        (["pip", "install", "demo"], False),
        (["uv", "install"], False),
    ],
)
def test_the_query_starts_with_the_program_for_a_checked_uv_install(
    tmp_path: Path, argv: list[str], started: bool
) -> None:
    venv = make_uv_venv(tmp_path / "uvenv")
    env = {**os.environ, "UV_NO_CACHE": "1", "VIRTUAL_ENV": str(venv)}
    early = start_early(argv, env)
    try:
        assert (early is not None) is started
        if early is not None:
            python = str(venv / "bin" / "python")
            assert take_early(early.uv, python) is early
            assert take_early(early.uv, python) is None  # taken once
            restarted = start_early(argv, env)
            assert restarted is not None
            assert take_early("/elsewhere/uv", python) is None  # for another uv: not taken
            restarted.close()
    finally:
        if early is not None:
            early.close()


def test_no_query_starts_without_a_venv_or_with_uvs_cache_on(tmp_path: Path) -> None:
    venv = make_uv_venv(tmp_path / "uvenv")
    argv = ["uv", "pip", "install", "demo"]
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    assert start_early(argv, {**env, "UV_NO_CACHE": "1"}) is None
    assert start_early(argv, {**env, "VIRTUAL_ENV": str(venv)}) is None
    nowhere = {**env, "VIRTUAL_ENV": str(tmp_path / "none"), "UV_NO_CACHE": "1"}
    assert start_early(argv, nowhere) is None


# The program as a checked uv install starts it, stopped once uv's query starts: what is
# imported by then.
_AT_QUERY = """
import sys
from resolver_hook.install import uvcache

class Stop(BaseException):
    pass

def spy(self, *args, **kwargs):
    heavy = ("json", "packaging", "resolver_hook.ground.hostkey", "resolver_hook.cli")
    print(sorted(m for m in heavy if m in sys.modules))
    raise Stop

uvcache.SessionCache.__init__ = spy
from resolver_hook import _entry
sys.argv = ["resolver-hook", "uv", "pip", "install", "demo"]
try:
    _entry.main()
except Stop:
    pass
"""


def test_the_query_starts_before_the_command_lines_imports(tmp_path: Path) -> None:
    """uv starts asking the interpreter before the program imports the command line,
    packaging, or even json: the query runs while they are imported and the plan is
    made, and the dry run does not wait for it."""
    venv = make_uv_venv(tmp_path / "uvenv")
    ran = python_child(_AT_QUERY, env={"UV_NO_CACHE": "1", "VIRTUAL_ENV": str(venv)})
    assert ran.stdout.strip() == "[]", (ran.stdout, ran.stderr)
