"""pip's dry run and its install by one interpreter (resolver_hook.process.foreground.PipSteps),
with a stand-in for pip's entry point: what each step prints reaches the tee, each step's
exit code comes back, the install step gets its own words and variables, and a process
stopped between the steps exits with the dry run's code."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from resolver_hook.ground import timings as _timings
from resolver_hook.process.foreground import PipSteps

# pip._internal.cli.main.main as a stand-in: it prints its words (the last line without
# a newline, as a progress line may end) and what it was given, and returns the exit
# code its last word names.
_FAKE_MAIN = """
import json, os, sys, time
if os.environ.get("SLOW_IMPORT"):  # pip's imports, long enough to be seen stopped
    time.sleep(60)
def main(args):
    print("step", json.dumps(args))
    print("FLAG=" + os.environ.get("FLAG", "-"))
    if "COLUMNS" in os.environ:  # the width, where the step sets one
        print("COLUMNS=" + os.environ["COLUMNS"])
    sys.stdout.write("no newline")
    with open(os.environ["STEPS_LOG"], "a") as f:
        f.write(json.dumps(args) + "\\n")
    return int(args[-1])
"""


@pytest.fixture
def fake_pip(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``pip._internal.cli.main`` is the stand-in."""
    root = tmp_path / "site"
    folder = root / "pip" / "_internal" / "cli"
    folder.mkdir(parents=True)
    for init in (root / "pip", root / "pip" / "_internal", folder):
        (init / "__init__.py").write_text("")
    (folder / "main.py").write_text(_FAKE_MAIN)
    return {"PYTHONPATH": str(root), "STEPS_LOG": str(tmp_path / "steps.log"), "FLAG": "dry"}


def _steps(env: dict[str, str], *args: str) -> tuple[PipSteps, list[str]]:
    seen: list[str] = []
    command = [sys.executable, "-m", "pip"]
    return PipSteps(command, ["install", "--dry-run", *args], env=env, tee=seen.append), seen


def test_the_install_runs_in_the_dry_runs_process(fake_pip: dict[str, str]) -> None:
    steps, seen = _steps(fake_pip, "0")
    code, _ = steps.dry_run()
    assert code == 0
    assert "".join(seen) == 'step ["install", "--dry-run", "0"]\nFLAG=dry\nno newline'
    assert steps.proc is not None  # waiting for the install
    argv = [sys.executable, "-m", "pip", "install", "--no-deps", "3"]
    assert steps.takes(argv, fake_pip)
    assert steps.takes(argv, {**fake_pip, "FLAG": "other"})  # the install's own variables
    assert not steps.takes(["/other/python", "-m", "pip", "install"], fake_pip)
    later: list[str] = []
    code, tail = steps.install(argv, {**fake_pip, "FLAG": "install"}, later.append)
    assert code == 3
    assert "".join(later) == 'step ["install", "--no-deps", "3"]\nFLAG=install\nno newline'
    assert tail == "".join(later)
    assert steps.proc is None
    log = Path(fake_pip["STEPS_LOG"]).read_text().splitlines()
    assert [json.loads(x) for x in log] == [["install", "--dry-run", "0"], argv[3:]]


def test_stopped_between_the_steps_it_exits_and_installs_nothing(
    fake_pip: dict[str, str],
) -> None:
    steps, _ = _steps(fake_pip, "1")
    assert steps.dry_run()[0] == 1
    proc = steps.proc
    assert proc is not None
    steps.close()
    assert proc.returncode == 1  # the dry run's code
    assert steps.proc is None
    assert len(Path(fake_pip["STEPS_LOG"]).read_text().splitlines()) == 1
    steps.close()  # once more: nothing left to stop


def test_a_dry_run_that_ends_the_process_says_its_exit_code(
    fake_pip: dict[str, str], tmp_path: Path
) -> None:
    # The stand-in exits the interpreter itself (pip's own usage errors do).
    main = tmp_path / "site" / "pip" / "_internal" / "cli" / "main.py"
    main.write_text("import sys\ndef main(args):\n    print('bye')\n    sys.exit(2)\n")
    steps, seen = _steps(fake_pip, "0")
    assert steps.dry_run()[0] == 2
    assert seen == ["bye\n"]
    assert steps.proc is None


def test_started_ahead_it_waits_for_its_dry_runs_words(fake_pip: dict[str, str]) -> None:
    # Started before the plan (its start-up overlaps the planning): it runs nothing
    # until the dry run's words come, then runs them as a process started for them;
    # without the terminal's width, whose wrapping the dry run's reader would see.
    command = [sys.executable, "-m", "pip"]
    steps = PipSteps.ahead(command, env={**fake_pip, "COLUMNS": "91"})
    log = Path(fake_pip["STEPS_LOG"])
    args = ["install", "--dry-run", "0"]
    assert steps.fits(command, args, fake_pip)
    assert not steps.fits(command, args, {**fake_pip, "FLAG": "other"})
    assert not steps.fits(["/other/python", "-m", "pip"], args, fake_pip)
    assert not log.exists()
    seen: list[str] = []
    code, _ = steps.dry_run(args, seen.append)
    assert code == 0
    assert "".join(seen) == 'step ["install", "--dry-run", "0"]\nFLAG=dry\nno newline'
    assert not steps.fits(command, args, fake_pip)  # asked once
    code, _ = steps.install([*command, "install", "--no-deps", "4"], fake_pip, seen.append)
    assert code == 4
    assert [json.loads(x) for x in log.read_text().splitlines()] == [
        args,
        ["install", "--no-deps", "4"],
    ]


def test_started_ahead_it_runs_an_unchecked_install_as_its_only_step(
    fake_pip: dict[str, str],
) -> None:
    # --no-proof: no dry run; the interpreter started with the program runs the install
    # itself, as a process started for it would, and ends with its exit code.
    command = [sys.executable, "-m", "pip"]
    steps = PipSteps.ahead(command, env=fake_pip)
    proc = steps.proc
    argv = [*command, "install", "--no-deps", "5"]
    # Started as a process for these words and variables would be; the width aside.
    assert steps.takes(argv, {**fake_pip, "COLUMNS": "91"})
    assert not steps.takes(argv, {**fake_pip, "FLAG": "other"})
    assert not steps.takes(["/other/python", "-m", "pip", "install"], fake_pip)
    seen: list[str] = []
    started: list[int] = []
    code, tail = steps.install(
        argv, {**fake_pip, "COLUMNS": "91"}, seen.append, lambda: started.append(len(seen))
    )
    assert code == 5
    assert started == [0]  # once it has its words, before its output is read
    assert "".join(seen) == 'step ["install", "--no-deps", "5"]\nFLAG=dry\nCOLUMNS=91\nno newline'
    assert tail == "".join(seen)
    assert steps.proc is None
    assert proc is not None
    assert proc.returncode == 5
    log = Path(fake_pip["STEPS_LOG"]).read_text().splitlines()
    assert [json.loads(x) for x in log] == [argv[3:]]  # one step: the install
    steps.close()  # nothing left to stop


def test_started_ahead_and_never_asked_it_runs_nothing(fake_pip: dict[str, str]) -> None:
    # Stopped at once, even while pip's imports still run (here: for a minute): a hook
    # that refuses before its dry run does not wait for them.
    steps = PipSteps.ahead([sys.executable, "-m", "pip"], env={**fake_pip, "SLOW_IMPORT": "1"})
    proc = steps.proc
    assert proc is not None
    steps.close()
    assert proc.returncode == -signal.SIGTERM
    assert steps.proc is None
    assert not Path(fake_pip["STEPS_LOG"]).exists()


def test_started_ahead_its_dry_run_is_timed_from_its_words(
    fake_pip: dict[str, str], tmp_path: Path
) -> None:
    # The timing record (RESOLVER_HOOK_TIMINGS) counts a child's time as the installer's:
    # the wait for its words ran beside the plan, and is the hook's own time, not pip's.
    path = tmp_path / "t.json"
    _timings.start({_timings.ENV: str(path)})
    try:
        command = [sys.executable, "-m", "pip"]
        steps = PipSteps.ahead(command, env=fake_pip)
        time.sleep(0.5)  # the plan, being made
        with _timings.phase("proof"):
            assert steps.dry_run(["install", "--dry-run", "0"], lambda _: None)[0] == 0
        steps.close()
    finally:
        _timings.stop()
    (child,) = json.loads(path.read_text())["children"]
    assert child["phase"] == "proof"
    assert child["ms"] < 400
