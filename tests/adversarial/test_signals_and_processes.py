"""Installers and signals, probes and stray processes, closed pipes.

Threat model: a probe (``nvidia-smi``, another interpreter) that hangs or floods its
output; a user who presses Ctrl-C or a supervisor that sends SIGTERM while pip or uv
runs, or while a file is being written; output piped into ``head``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError
from resolver_hook.ground import fs as _fs
from resolver_hook.ground.signals import Interrupted
from resolver_hook.host.probes import probe_nvidia_smi, run_subprocess
from resolver_hook.install.installed import environment_of
from resolver_hook.limits import MAX_SUBPROCESS_OUTPUT
from resolver_hook.process.proc import capture
from tests.adversarial._procs import alive, wait_for_file, wait_gone, wait_group_gone
from tests.installenv import clean_env
from tests.paths import REPO

# A program that starts a background `sleep`, records its pid and its process group,
# then sleeps itself: what a wrapper script around a hung driver call looks like.
HANGS = """#!/bin/sh
sleep 1000 &
echo "$! $(ps -o pgid= -p $$)" > "{pids}"
sleep 1000
"""


def _script(path: Path, body: str) -> Path:
    path.write_text(body)
    path.chmod(0o755)
    return path


def _recorded(pids: Path) -> tuple[int, int]:
    child, group = wait_for_file(pids).split()
    return int(child), int(group)


# --- probes and queries: the whole group dies with them ------------------------------


def test_nvidia_smi_that_hangs_leaves_no_process(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    smi = _script(tmp_path / "nvidia-smi", HANGS.format(pids=pids))

    def run(argv: object, *, timeout: float, **kw: object) -> object:
        return run_subprocess([str(smi)], timeout=timeout)

    info, _, probe = probe_nvidia_smi(run, timeout=0.5)  # type: ignore[arg-type]
    assert info is None
    assert probe.detail == "nvidia-smi timed out after 0.5 s"
    child, group = _recorded(pids)
    assert wait_gone([child]) == []
    assert wait_group_gone(group) == []


def test_doctor_python_that_hangs_leaves_no_process(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    python = _script(tmp_path / "python", HANGS.format(pids=pids))
    with pytest.raises(OperationalError, match=r"no answer after 0\.5 s"):
        environment_of(str(python), timeout=0.5)
    child, group = _recorded(pids)
    assert wait_gone([child]) == []
    assert wait_group_gone(group) == []


@pytest.mark.parametrize("waitid", [True, False], ids=["waitid", "no-waitid"])
def test_a_query_that_exits_leaves_no_background_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waitid: bool
) -> None:
    if not waitid:  # macOS before Python 3.13 has no os.waitid
        monkeypatch.delattr(os, "waitid")
    pids = tmp_path / "pids"
    script = _script(
        tmp_path / "tool",
        f'#!/bin/sh\nsleep 1000 &\necho "$! $(ps -o pgid= -p $$)" > "{pids}"\necho 1.0\n',
    )
    done = capture([str(script)], timeout=30)
    assert (done.returncode, done.stdout) == (0, "1.0\n")
    child, group = _recorded(pids)
    assert wait_gone([child]) == []
    assert wait_group_gone(group) == []


def test_output_is_capped_and_the_flood_stopped(tmp_path: Path) -> None:
    """An nvidia-smi that prints 200 MB: read up to the cap, then killed."""
    pids = tmp_path / "pids"
    smi = _script(
        tmp_path / "nvidia-smi",
        f'#!/bin/sh\necho "$$ $(ps -o pgid= -p $$)" > "{pids}"\n'
        "yes '0, NVIDIA GB10, 12.1, 580.95.05, 1, GPU-1' | head -c 200000000\n",
    )
    done = capture([str(smi)], timeout=120)
    assert done.truncated
    assert len(done.stdout.encode()) <= MAX_SUBPROCESS_OUTPUT
    assert "printed more than" in (done.reason() or "")
    _, group = _recorded(pids)
    assert wait_group_gone(group) == []

    def run(argv: object, *, timeout: float, **kw: object) -> object:
        return run_subprocess([str(smi)], timeout=timeout)

    info, _, probe = probe_nvidia_smi(run, timeout=120)  # type: ignore[arg-type]
    assert info is None
    assert "printed more than" in probe.detail


def test_a_program_that_cannot_start_is_a_result_not_an_exception(tmp_path: Path) -> None:
    missing = capture([str(tmp_path / "nope")], timeout=5)
    assert (missing.returncode, missing.missing) == (None, True)
    plain = tmp_path / "plain"
    plain.write_text("")
    refused = capture([str(plain)], timeout=5)
    assert refused.error == "not executable (permission denied)"  # also as root: no x bit


# --- installers: signals forwarded, then 128+N --------------------------------------

INSTALLER = """#!/bin/sh
trap 'echo TERM > "{got}"; exit 7' TERM
trap 'echo INT > "{got}"; exit 7' INT
echo $$ > "{pidfile}"
while :; do sleep 0.1; done
"""


@pytest.mark.parametrize("tool", ["pip", "uv"])
@pytest.mark.parametrize(
    ("signum", "name"), [(signal.SIGTERM, "TERM"), (signal.SIGINT, "INT")], ids=["TERM", "INT"]
)
def test_signal_reaches_the_installer_and_exits_128_plus_n(
    tmp_path: Path, tool: str, signum: int, name: str
) -> None:
    pidfile, got = tmp_path / "installer.pid", tmp_path / "installer.got"
    body = INSTALLER.format(pidfile=pidfile, got=got)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # pip runs as `$VIRTUAL_ENV/bin/python -m pip install`; uv as `uv pip install`.
    _script(venv / "bin/python", body)
    if tool == "uv":
        (venv / "bin/python").write_text("#!/bin/sh\nexit 0\n")
        # Its cache off (clean_env), the session first asks uv for the interpreter's
        # facts (resolver_hook/install/uvcache.py): answered at once, as uv does.
        answered = '#!/bin/sh\n[ "$1" = python ] && exit 0\n'
        _script(bindir / "uv", body.replace("#!/bin/sh\n", answered))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = clean_env(tmp, PYTHONPATH=str(REPO), VIRTUAL_ENV=str(venv))
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    argv = [sys.executable, "-m", "resolver_hook", tool, "--target", "linux-x86_64-py312"]
    argv += ["install"] if tool == "pip" else ["pip", "install"]
    hook = subprocess.Popen(
        [*argv, "six"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        installer = int(wait_for_file(pidfile))
        os.kill(hook.pid, signum)
        _, err = hook.communicate(timeout=60)
    finally:
        if hook.poll() is None:
            hook.kill()
    assert hook.returncode == 128 + signum, err
    assert got.read_text().strip() == name  # the installer got the very signal
    assert wait_gone([installer]) == []
    assert [p.name for p in tmp.iterdir() if p.name.startswith("resolver-hook-")] == []
    assert f"error: interrupted by SIG{name}" in err
    assert "Traceback" not in err


# An installer that needs a moment to clean up after Ctrl-C, as pip does: a second
# SIGINT during that moment would interrupt the cleanup (docs/facts.md section 3).
SLOW_CLEANUP = """#!/bin/sh
trap 'echo INT >> "{got}"; sleep 0.5; exit 7' INT
echo $$ > "{pidfile}"
while :; do sleep 0.1; done
"""


def test_ctrl_c_to_the_group_reaches_the_installer_once(tmp_path: Path) -> None:
    pidfile, got = tmp_path / "installer.pid", tmp_path / "installer.got"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _script(venv / "bin/python", SLOW_CLEANUP.format(pidfile=pidfile, got=got))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = clean_env(tmp, PYTHONPATH=str(REPO), VIRTUAL_ENV=str(venv))
    argv = [sys.executable, "-m", "resolver_hook", "pip", "--target", "linux-x86_64-py312"]
    hook = subprocess.Popen(
        [*argv, "install", "six"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        start_new_session=True,  # its own group, as a shell gives a foreground job
    )
    try:
        installer = int(wait_for_file(pidfile))
        os.killpg(hook.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
        _, err = hook.communicate(timeout=60)
    finally:
        if hook.poll() is None:
            os.killpg(hook.pid, signal.SIGKILL)
    assert hook.returncode == 130, err
    assert wait_gone([installer]) == []
    assert got.read_text().split() == ["INT"]  # its cleanup ran once, uninterrupted


def test_ctrl_c_before_the_installer_started_reaches_it_at_once() -> None:
    # A SIGINT that came while the installer was being started never reached it: it is
    # passed on without the wait meant for a terminal's Ctrl-C.
    from resolver_hook.process.foreground import _Forwarder

    with _Forwarder(grace=30, sigint_after=30) as forwarder:
        forwarder._on_signal(signal.SIGINT, None)  # as the handler would be called
        proc = subprocess.Popen(["sleep", "60"], text=True)
        try:
            forwarder.started(proc)
            assert proc.wait(timeout=10) == -signal.SIGINT
        finally:
            proc.kill()
            proc.wait()


# --- the atomic writer under SIGTERM --------------------------------------------------


def test_sigterm_during_an_atomic_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    real_fsync = os.fsync

    def fsync_then_sigterm(fd: int) -> None:
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the temp file exists

    monkeypatch.setattr(_fs.os, "fsync", fsync_then_sigterm)
    with pytest.raises(Interrupted) as info:
        _fs.write_atomic(target, "new\n")
    assert info.value.exit_code == 143
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert target.read_text() == "old\n"


def test_sigterm_during_lock_exits_143_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from resolver_hook.cli import main

    (tmp_path / "req.in").write_text("six\n")
    real_fsync = os.fsync

    def fsync_then_sigterm(fd: int) -> None:
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(_fs.os, "fsync", fsync_then_sigterm)
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "lock",
            "--flavoured-only",
            "-r",
            "req.in",
            "-o",
            "out.txt",
            "--target",
            "linux-x86_64-py312",
        ]
    )
    assert code == 143
    assert sorted(p.name for p in tmp_path.iterdir()) == ["req.in"]
    assert capsys.readouterr().err.strip() == "error: interrupted by SIGTERM"


# --- a closed pipe does not turn a failure into success ------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(["plan", "--target", "linux-x86_64-py312", "flash-attn"], 1, id="failing"),
        pytest.param(["plan", "--target", "linux-x86_64-py312", "six"], 0, id="passing"),
    ],
)
def test_a_closed_stdout_keeps_the_commands_own_status(
    tmp_path: Path, argv: list[str], expected: int
) -> None:
    """`resolver-hook ... | head -1`: ${PIPESTATUS[0]} is the command's own status."""
    env = clean_env(None, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "resolver_hook", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == expected
    assert "Traceback" not in err
    assert "Exception ignored" not in err
    if expected:
        assert "error: flash-attn: no build of flash-attn fits" in err


def test_alive_helper_sees_this_process() -> None:
    assert alive(os.getpid())


_TERM_AFTER_CLEANUP = """
import os, signal, sys
from pathlib import Path
from resolver_hook.cli import main
from resolver_hook.publish.placeholder import check

def passing(dist, *, find_links=(), progress=None, **kw):
    # The real check's signal handling around a check that passed; SIGTERM comes once
    # its handlers are restored, as in the final cleanup.
    with check._interruptible():
        report = check.CheckReport()
        for installer in ("pip", "uv"):
            report.verdicts.append(check.Verdict(installer=installer, verdict=check.FAILS_LOUDLY))
    os.kill(os.getpid(), signal.SIGTERM)
    return report

check.check_placeholder = passing
sys.exit(main(["placeholder", "check", sys.argv[1]]))
"""


def test_placeholder_check_terminated_in_its_final_cleanup_says_so(tmp_path: Path) -> None:
    dist = tmp_path / "x-0.0.0.tar.gz"
    dist.write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-c", _TERM_AFTER_CLEANUP, str(dist)],
        env={**clean_env(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr.splitlines()[-1:] == ["error: interrupted by SIGTERM"]
    assert "check passed" not in done.stdout
