"""An unchecked install run again replays its stored plan, and installs the same.

``resolver_hook/_plancache.py`` records ``resolver-hook pip|uv --no-proof ... install``
up to the moment the session starts the installer (it tells the run's recorder, with
what it generated for the installer), and a later run that finds nothing it declared
changed starts the same installer command without planning. Real pip and real uv install real wheels
from a loopback index into a venv kept between runs (the packages removed after each):
the replay must say what the full path says, install the same set, explain a failed
install as the full path does, and give way to planning when an input changed. A
checked install (the default) and ``--optional`` are never stored.

Children run ``python -I -B`` as in tests/test_plan_cache.py: ``-I`` keeps the current
folder off ``sys.path``, ``-B`` writes no bytecode during the run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook import _entry, _plancache
from resolver_hook.errors import OperationalError
from tests.installenv import PY, UV, GpuIndex, build_gpu_index, clean_env, installed, venv_for
from tests.installenv import write_manifests as write_index_manifests
from tests.test_plan_cache import Run, run_of

pytestmark = pytest.mark.integration

B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
NAMES = ["demo-gpu", "demo-idx", "plainpkg"]
EXPECTED = {"demo-gpu": "1.0+cu130", "demo-idx": "2.0+cu130", "plainpkg": "1.0"}
PLANNER = "resolver_hook.resolve"
SECRET = "s3cr3t-t0ken"


@pytest.fixture
def index(tmp_path: Path) -> Iterator[GpuIndex]:
    """A loopback index of this test's own (a test below damages a wheel on it)."""
    gi = build_gpu_index(tmp_path / "index")
    with gi.index.serving():
        write_index_manifests(gi)
        yield gi


class Setting:
    """One test's venv, cache, folders and environment, and the command it repeats."""

    def __init__(
        self, tmp_path: Path, gi: GpuIndex, tool: str, *hook_flags: str, names: list[str] = NAMES
    ) -> None:
        self.root = tmp_path
        self.tool = tool
        self.venv = venv_for(tool, tmp_path / "venv")
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.cache = tmp_path / "cache"
        self.env = clean_env(
            VIRTUAL_ENV=str(self.venv),
            RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
            RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
            RESOLVER_HOOK_CACHE_DIR=str(self.cache),
            MY_INDEX_TOKEN=SECRET,  # stands for a credential in the environment
        )
        self.env.pop("RESOLVER_HOOK_OFFLINE", None)  # the loopback index is read
        self.env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{self.env['PATH']}"
        sub = ["install"] if tool == "pip" else ["pip", "install"]
        self.args = [tool, *hook_flags, "--target", B200, *sub, "--index-url", gi.simple, *names]

    def run(self, env: dict[str, str] | None = None) -> Run:
        argv = [sys.executable, "-I", "-B", "-X", "importtime", "-m", "resolver_hook"]
        proc = subprocess.run(
            [*argv, *self.args],
            capture_output=True,
            text=True,
            env=env or self.env,
            cwd=self.work,
            timeout=600,
            check=False,
        )
        return run_of(proc)

    def installed(self) -> dict[str, str]:
        return {k: v for k, v in installed(self.venv / "bin" / "python").items() if k in EXPECTED}

    def remove_installed(self) -> None:
        python = str(self.venv / "bin" / "python")
        subprocess.run([*UV, "pip", "uninstall", "-q", "--python", python, *NAMES], check=True)

    def stored(self) -> list[Path]:
        return sorted((self.cache / "plans").glob("*.json"))

    def stored_then_replayed(self) -> tuple[Run, Run]:
        """Two full runs (the first reads the index; the second, served by the page
        cache, stores its plan), then the replay; the packages removed after each."""
        first = self.run()
        assert first.code == 0, first.stderr
        assert self.installed() == EXPECTED
        assert not self.stored()  # it read pages from the (loopback) network
        self.remove_installed()
        second = self.run()
        assert second.code == 0, second.stderr
        assert not _replayed(second)
        assert self.installed() == EXPECTED
        self.remove_installed()
        third = self.run()
        assert third.code == 0, third.stderr
        assert self.installed() == EXPECTED
        return second, third


def _replayed(run: Run) -> bool:
    return "resolver_hook.install.launch" in run.imported and PLANNER not in run.imported


def _ours(stderr: str) -> list[str]:
    """resolver-hook's own lines (the installers print times and temporary paths)."""
    return [
        line
        for line in stderr.splitlines()
        if line.startswith(("resolver-hook:", "error:", "hint:", "warning:"))
    ]


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_an_unchecked_install_replays_its_plan(index: GpuIndex, tmp_path: Path, tool: str) -> None:
    s = Setting(tmp_path, index, tool, "--no-proof")
    full, replay = s.stored_then_replayed()
    assert _replayed(replay), replay.imported & {PLANNER}
    # An unchecked install has no dry run to share uv's cache with (install/uvcache.py).
    assert "resolver_hook.install.uvcache" not in replay.imported
    assert _ours(replay.stderr) == _ours(full.stderr)
    assert any(line.startswith("resolver-hook: demo-gpu: ") for line in _ours(replay.stderr))
    (record,) = s.stored()
    raw = record.read_bytes()
    assert SECRET.encode() not in raw  # the environment is hashed, never stored
    data = json.loads(raw)
    assert data["launch"]["tool"] == tool
    assert data["launch"]["env"] == {}
    # Not the folder of that run: a replay makes its own.
    assert all(
        not a.startswith(("/", "resolver-hook-")) for k, a in data["launch"]["argv"] if k == 1
    )


def test_an_unchecked_pip_install_runs_in_the_interpreter_started_as_it_plans(
    index: GpuIndex, tmp_path: Path
) -> None:
    """pip's interpreter starts once the store of plans has no answer, and imports pip
    while the hook plans: the install runs in it, and no other interpreter of the venv
    starts. A replay, done in a few milliseconds, starts pip then (``-m pip``). A .pth
    file in the venv writes down each one's process and how it was started (a venv's
    lib64 link runs it twice)."""
    s = Setting(tmp_path, index, "pip", "--no-proof")
    starts = tmp_path / "starts.txt"
    (site,) = s.venv.glob("lib/python*/site-packages")
    (site / "zz_starts.pth").write_text(
        "import os, sys; p = os.environ.get('PIP_STARTS'); "
        "p and open(p, 'a').write(f'{os.getpid()} {sys.orig_argv[1]}\\n')\n"
    )
    env = {**s.env, "PIP_STARTS": str(starts)}
    runs, how = [], []
    for _ in range(3):  # the index read, the plan stored, the plan replayed
        runs.append(s.run(env))
        assert runs[-1].code == 0, runs[-1].stderr
        assert s.installed() == EXPECTED
        started = set(starts.read_text().splitlines())
        starts.unlink()
        assert len(started) == 1, started  # one interpreter
        how.append(started.pop().split()[1])
        s.remove_installed()
    assert [_replayed(r) for r in runs] == [False, False, True]
    assert how == ["-c", "-c", "-m"]  # started ahead, ahead, then for the replayed launch
    assert _ours(runs[2].stderr) == _ours(runs[1].stderr)


def test_the_plan_is_stored_while_the_installer_runs(index: GpuIndex, tmp_path: Path) -> None:
    """What a replay needs is complete once the installer starts: it is kept while the
    installer works (no time of the run's own after it), so it is older than what
    pip writes for the packages it installs."""
    s = Setting(tmp_path, index, "pip", "--no-proof")
    assert s.run().code == 0  # reads the index: not stored
    s.remove_installed()
    run = s.run()
    assert run.code == 0, run.stderr
    (record,) = s.stored()
    (written,) = s.venv.glob("lib/python*/site-packages/plainpkg-*.dist-info/RECORD")
    assert record.stat().st_mtime_ns < written.stat().st_mtime_ns


def test_a_failed_install_is_explained_as_the_full_path_explains_it(
    index: GpuIndex, tmp_path: Path
) -> None:
    """``app`` pins another build of demo-gpu: pip, unchecked, fails on it, and the
    words for that come from the plan's pins, stored with the launch."""
    s = Setting(tmp_path, index, "pip", "--no-proof", names=["app", "demo-gpu"])
    full = s.run()  # its manifests name the wheels: no page is read, so it stores
    assert full.code != 0
    assert not _replayed(full)
    assert s.stored()  # stored at the launch, whatever the installer then did
    replay = s.run()
    assert _replayed(replay)
    assert replay.code == full.code != 0
    assert _ours(replay.stderr) == _ours(full.stderr)
    assert (
        "error: app 1.0 pins demo-gpu==1.0+cu126, but this machine needs demo-gpu 1.0+cu130"
    ) in replay.stderr
    assert "hint: pip cannot replace a dependency's exact pin" in replay.stderr
    assert s.installed() == {}


def test_a_changed_manifest_is_planned_again(index: GpuIndex, tmp_path: Path) -> None:
    s = Setting(tmp_path, index, "uv", "--no-proof")
    s.stored_then_replayed()
    s.remove_installed()
    manifest = index.manifests / "demo-gpu.toml"
    manifest.write_text(manifest.read_text().replace('cuda = ">=13.0"', 'cuda = ">=13.9"'))
    again = s.run()
    assert not _replayed(again)
    assert again.code == 1
    assert "nothing was installed: no build of demo-gpu fits" in again.stderr
    assert s.installed() == {}


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_venv_made_again_replays_its_plan(index: GpuIndex, tmp_path: Path, tool: str) -> None:
    """As CI does: the venv removed and made again at the same path just before the
    install. Its files are new (other inodes, times of a moment ago) and say the same, and
    the plan store checks them by what was read (resolver_hook/ground/record.py)."""
    s = Setting(tmp_path, index, tool, "--no-proof")
    full, _ = s.stored_then_replayed()
    shutil.rmtree(s.venv)
    venv_for(tool, s.venv)
    replay = s.run()
    assert replay.code == 0, replay.stderr
    assert _replayed(replay), replay.imported & {PLANNER}
    assert _ours(replay.stderr) == _ours(full.stderr)
    assert s.installed() == EXPECTED


def test_a_venv_made_again_with_another_pip_or_python_is_planned_again(
    index: GpuIndex, tmp_path: Path
) -> None:
    s = Setting(tmp_path, index, "pip", "--no-proof")
    s.stored_then_replayed()
    (init,) = s.venv.glob("lib/python*/site-packages/pip/__init__.py")
    pip_version = re.search(r'^__version__ = "(.*)"', init.read_text(), re.M)
    assert pip_version is not None
    for change in ("pip", "python"):
        s.remove_installed()
        shutil.rmtree(s.venv)
        venv_for("pip", s.venv)
        if change == "pip":  # the same size: only the bytes tell
            old = pip_version.group(1)
            new = old[:-1] + ("1" if old[-1] != "1" else "2")
            init.write_text(init.read_text().replace(f'"{old}"', f'"{new}"'))
        else:
            cfg = s.venv / "pyvenv.cfg"
            cfg.write_text(re.sub(r"(?m)^version = .*$", "version = 3.9.0", cfg.read_text()))
        again = s.run()
        assert again.code == 0, again.stderr
        assert not _replayed(again), change
        assert s.installed() == EXPECTED
        if change == "python":
            assert f"names Python {PY[0]}.{PY[1:]}, but" in again.stderr
            assert "is Python 3.9" in again.stderr


def test_without_a_target_the_venv_s_python_is_read_and_the_plan_replays(
    index: GpuIndex, tmp_path: Path
) -> None:
    """Planned for this machine, with the Python of a venv of another interpreter file
    (a copy): its pyvenv.cfg and lib/pythonX.Y say which, so no interpreter is started and
    the plan can be stored (a run that starts a program never is); the third run is in
    the venv made again, a new copy of the interpreter."""
    s = Setting(tmp_path, index, "pip", "--no-proof", names=["plainpkg"])
    s.args = [a for a in s.args if a not in ("--target", B200)]
    assert os.path.realpath(s.venv / "bin" / "python") != os.path.realpath(sys.executable)
    runs = []
    for _ in range(3):
        if len(runs) == 2:
            shutil.rmtree(s.venv)
            venv_for("pip", s.venv)
        runs.append(s.run())
        assert runs[-1].code == 0, runs[-1].stderr
        assert s.installed() == {"plainpkg": "1.0"}
        python = str(s.venv / "bin" / "python")
        subprocess.run([*UV, "pip", "uninstall", "-q", "--python", python, "plainpkg"], check=True)
    assert [_replayed(r) for r in runs] == [False, False, True]  # the first one detects


@pytest.mark.parametrize(
    "flags", [(), ("--no-proof", "--optional", "plainpkg")], ids=["checked", "optional"]
)
def test_checked_and_optional_installs_are_never_stored(
    index: GpuIndex, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    s = Setting(tmp_path, index, "uv", *flags)
    for _ in range(3):
        run = s.run()
        assert run.code == 0, run.stderr
        assert not _replayed(run)
        assert PLANNER in run.imported
        s.remove_installed()
    assert s.stored() == []


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [
        (
            OperationalError("pip cannot start", hint="make the venv again"),
            1,
            "error: pip cannot start\nhint: make the venv again\n",
        ),
        (KeyboardInterrupt(), 130, "error: interrupted\n"),
    ],
)
def test_what_stops_a_replayed_install_is_said_as_the_command_line_says_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: BaseException,
    code: int,
    said: str,
) -> None:
    """A replay raises what stops it (install/ knows no command line); the program says
    it with the command line's words and exit code."""

    def replay_that_stops(*_: object) -> int:
        raise raised

    monkeypatch.setattr(_plancache, "run_stored", replay_that_stops)
    monkeypatch.setenv("NO_COLOR", "1")
    assert _entry._command_line(["pip", "--no-proof", "install", "x"]) == code
    assert capsys.readouterr().err == said
