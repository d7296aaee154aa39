"""A plan stored by one run is replayed by the next only while it is still the answer.

``resolver_hook/_plancache.py`` prints a stored plan again where nothing the run that
stored it read has changed. For a table of machines (a GPU target, no GPU, a Jetson,
ROCm, the host profile of the detect cache, overrides on it, text, ``-v`` and
``--json``), the replay must give the full path's stdout, stderr and exit code, and
must really be a replay (``-X importtime``: the planner is not imported). Then each kind
of input changes in turn (a requirements file, a manifest, a ``pyproject.toml`` looked
for, the environment, the host profile, the freshness of a cached page) and the next
run must plan again and print the new answer; a run that read a pipe or the network
is never stored.

Children run ``python -I -B``: ``-I`` keeps the current folder off ``sys.path`` (its
time would be part of the key), ``-B`` writes no bytecode.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resolver_hook.ground import cache as _cache
from resolver_hook.ground import hostkey as _hostkey
from resolver_hook.ground.valueclass import replace
from resolver_hook.host import HostProfile, cache, parse_target
from resolver_hook.host.profile import NvidiaGpu, NvidiaInfo
from tests.installenv import GpuIndex
from tests.paths import DATA, REPO, child_env

PLANNER = "resolver_hook.resolve"

# The detected machine: a target's tags, with an H100 as NVML would name it.
HOST = replace(
    parse_target("linux-x86_64-py312-glibc2.39-cuda13.0-sm90"),
    nvidia=NvidiaInfo(
        driver_version="580.65.06",
        cuda_version="13.0",
        gpus=(NvidiaGpu(index=0, name="NVIDIA H100 80GB HBM3", cc=(9, 0)),),
    ),
)

# name: (plan arguments, extra environment, host profile in the detect cache, exit code)
MACHINES: dict[str, tuple[list[str], dict[str, str], HostProfile | None, int]] = {
    "gpu": (["torch", "flash-attn", "--target", "linux-x86_64-py312-cuda13.0-sm100"], {}, None, 0),
    "no gpu, no fit": (["torch", "flash-attn", "--target", "linux-x86_64-py312"], {}, None, 1),
    "jetson": (["torch", "--target", "linux-aarch64-py310-cuda12.6-sm87-l4t36.4"], {}, None, 0),
    "rocm": (["torch", "--target", "linux-x86_64-py312-rocm7.2"], {}, None, 0),
    "detected": (["torch", "flash-attn"], {}, HOST, 0),
    "detected, json": (["torch", "--json"], {}, HOST, 0),
    "verbose": (["-v", "torch", "--target", "linux-x86_64-py311-cuda12.8-sm90"], {}, None, 0),
    "no colour": (["torch", "--target", "linux-x86_64-py312"], {"NO_COLOR": "1"}, None, 0),
    "forced colour": (["torch", "--target", "linux-x86_64-py312"], {"FORCE_COLOR": "1"}, None, 0),
}
TARGET = ["--target", "linux-x86_64-py312-cuda13.0-sm100"]


@dataclasses.dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    imported: set[str]

    @property
    def replayed(self) -> bool:
        return "resolver_hook._plancache" in self.imported and PLANNER not in self.imported


def _plan(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    *,
    stdin: str | None = None,
    program: tuple[str, ...] = ("-m", "resolver_hook"),
) -> Run:
    argv = [sys.executable, "-I", "-B", "-X", "importtime", *program, "plan", *args]
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        input=stdin,
        timeout=300,
        check=False,
    )
    return run_of(proc)


def run_of(proc: subprocess.CompletedProcess[str]) -> Run:
    """A finished child of ``-X importtime``: its outcome, and the modules it imported."""
    lines = proc.stderr.splitlines(keepends=True)
    imported = {x.rsplit("|", 1)[-1].strip() for x in lines if x.startswith("import time:")}
    stderr = "".join(x for x in lines if not x.startswith("import time:"))
    return Run(proc.returncode, proc.stdout, stderr, imported)


def _setup(tmp_path: Path, extra: dict[str, str] | None = None) -> tuple[dict[str, str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    # Offline: the shipped snapshot serves the pages (child_env drops RESOLVER_HOOK_*).
    base = {"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "cache"), "RESOLVER_HOOK_OFFLINE": "1"}
    return child_env({**base, **(extra or {})}), work


def _store_host(env: dict[str, str], profile: HostProfile) -> None:
    path, key = _hostkey.cache_file(env), _hostkey.cache_key(env)
    if path is None or key is None:
        pytest.skip("this system has no boot id, so no host profile is cached")
    cache.store(path, key, profile)


def _replaying(args: list[str], env: dict[str, str], work: Path) -> Run:
    """Run once (the plan is stored: what it read is kept by digest, so a file written a
    moment before needs no settling), then twice more, which must be replays; all three
    print the same."""
    first = _plan(args, env, work)
    second = _plan(args, env, work)
    third = _plan(args, env, work)
    for run in (first, second, third):
        assert (run.code, run.stdout, run.stderr) == (first.code, first.stdout, first.stderr)
    assert not first.replayed
    assert second.replayed, second.imported & {PLANNER}
    assert third.replayed, third.imported & {PLANNER}
    return third


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_a_replay_prints_what_the_full_path_prints(name: str, tmp_path: Path) -> None:
    args, extra, host, code = MACHINES[name]
    env, work = _setup(tmp_path, extra)
    if host is not None:
        _store_host(env, host)
    run = _replaying(args, env, work)
    assert run.code == code, run.stderr
    if "--json" in args:
        assert json.loads(run.stdout)["packages"]
    else:
        assert run.stdout.startswith("machine: ") or run.stdout.startswith("\x1b[")
    assert ("H100 80GB HBM3" in run.stdout) == (host is not None)
    assert ("\x1b[" in run.stdout) == ("FORCE_COLOR" in extra)


def _fresh(args: list[str], env: dict[str, str], work: Path, tmp_path: Path) -> Run:
    """The full path's answer now: the same command with a cache folder of its own."""
    folder = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}"
    host = Path(env["RESOLVER_HOOK_CACHE_DIR"]) / "host-profile.json"
    folder.mkdir()
    if host.exists():
        (folder / host.name).write_bytes(host.read_bytes())
        os.chmod(folder / host.name, 0o600)
    run = _plan(args, {**env, "RESOLVER_HOOK_CACHE_DIR": str(folder)}, work)
    assert not run.replayed
    return run


def _planned_again(before: Run, args: list[str], env: dict[str, str], work: Path, tmp: Path) -> Run:
    after = _plan(args, env, work)
    assert not after.replayed
    fresh = _fresh(args, env, work, tmp)
    assert (after.code, after.stdout, after.stderr) == (fresh.code, fresh.stdout, fresh.stderr)
    assert (after.code, after.stdout, after.stderr) != (before.code, before.stdout, before.stderr)
    return after


def test_a_changed_requirements_file_is_planned_again(tmp_path: Path) -> None:
    env, work = _setup(tmp_path)
    reqs = work / "requirements.txt"
    reqs.write_text("torch==2.12.1\n")
    args = ["-r", str(reqs), *TARGET]
    before = _replaying(args, env, work)
    reqs.write_text("torch==2.11.0\n")  # the same size: its bytes tell
    after = _planned_again(before, args, env, work, tmp_path)
    assert "torch==2.11.0" in after.stdout


def test_a_changed_manifest_is_planned_again(tmp_path: Path) -> None:
    env, work = _setup(tmp_path)
    manifest = work / "demo.toml"
    text = (DATA / "manifests" / "cuda-builds.toml").read_text()
    manifest.write_text(text)
    args = ["demo", "--manifest", str(manifest), *TARGET]
    before = _replaying(args, env, work)
    assert before.code == 0, before.stderr
    manifest.write_text(text.replace('cuda = ">=13.0"', 'cuda = ">=13.9"'))
    _planned_again(before, args, env, work, tmp_path)


def test_a_pyproject_that_appears_is_read(tmp_path: Path) -> None:
    """The run looked for ./pyproject.toml and found none: that absence is an input."""
    env, work = _setup(tmp_path)
    args = ["torch", *TARGET]
    before = _replaying(args, env, work)
    (work / "pyproject.toml").write_text('[tool.resolver-hook]\nbogus = "x"\n')
    after = _planned_again(before, args, env, work, tmp_path)
    assert after.code == 2
    assert "bogus: unknown key" in after.stderr


def test_another_environment_is_another_plan(tmp_path: Path) -> None:
    env, work = _setup(tmp_path)
    args = ["torch", *TARGET]
    before = _replaying(args, env, work)
    _planned_again(before, args, {**env, "FORCE_COLOR": "1"}, work, tmp_path)


def test_another_host_profile_is_another_plan(tmp_path: Path) -> None:
    env, work = _setup(tmp_path)
    _store_host(env, HOST)
    before = _replaying(["torch"], env, work)
    _store_host(env, parse_target("linux-x86_64-py312-glibc2.39-cuda13.0-sm100"))
    after = _planned_again(before, ["torch"], env, work, tmp_path)
    assert "H100 80GB" in before.stdout
    assert "H100 80GB" not in after.stdout


def test_a_run_that_detects_is_never_stored(tmp_path: Path) -> None:
    """Detection reads the driver, /proc and /sys: what it found is in no file the run
    could check again (an override variable makes every plan detect)."""
    env, work = _setup(tmp_path, {"RESOLVER_HOOK_OVERRIDE_SM": "9.0"})
    _store_host(env, HOST)
    for _ in range(2):
        run = _plan(["torch"], env, work)
        assert run.code in (0, 1), run.stderr
        assert not run.replayed
    assert not list((tmp_path / "cache" / "plans").glob("*.json"))


def test_stdin_and_fifos_are_never_stored(tmp_path: Path) -> None:
    env, work = _setup(tmp_path)
    target = TARGET
    for _ in range(2):
        run = _plan(["-r", "/dev/stdin", *target], env, work, stdin="torch\n")
        assert run.code == 0, run.stderr
        assert not run.replayed
    fifo = work / "reqs.fifo"
    os.mkfifo(fifo)
    for _ in range(2):
        writer = subprocess.Popen(["sh", "-c", f"echo torch > '{fifo}'"])
        run = _plan(["-r", str(fifo), *target], env, work)
        writer.wait(timeout=30)
        assert run.code == 0, run.stderr
        assert not run.replayed
    assert not list((tmp_path / "cache" / "plans").glob("*.json"))


@pytest.mark.parametrize(
    "content", [b"[" * 100_000, b"{not json", b"\xff\xfe"], ids=["nested", "not-json", "not-utf8"]
)
def test_a_stored_plan_that_cannot_be_read_is_planned_again(tmp_path: Path, content: bytes) -> None:
    """A stored plan that does not decode (a hostile one nested too deeply for the JSON
    decoder, a torn one) is a miss: the plan is made again and stored anew."""
    env, work = _setup(tmp_path)
    args = ["torch", *TARGET]
    before = _replaying(args, env, work)
    (stored,) = (tmp_path / "cache" / "plans").glob("*.json")
    stored.write_bytes(content)
    after = _plan(args, env, work)
    assert not after.replayed
    assert (after.code, after.stdout, after.stderr) == (before.code, before.stdout, before.stderr)
    assert _plan(args, env, work).replayed


def test_pages_read_from_the_network_are_fresh_for_a_while(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """A run that read a page from the (loopback) network is not stored; one that
    served it from the page cache is, until the page would be read again."""
    env, work = _setup(tmp_path)
    env.pop("RESOLVER_HOOK_OFFLINE", None)
    manifest = work / "demo-idx.toml"
    manifest.write_bytes((gpu_index.manifests / manifest.name).read_bytes())
    args = ["demo-idx", "--manifest", str(manifest), "--allow-insecure-urls"]
    args += ["--target", "linux-x86_64-py312-cuda13.0-sm100"]
    plans = tmp_path / "cache" / "plans"
    fetched = _plan(args, env, work)
    assert fetched.code == 0, fetched.stderr
    assert not list(plans.glob("*.json"))  # it asked the server
    replay = _replaying(args, env, work)
    (stored,) = plans.glob("*.json")
    data = json.loads(stored.read_bytes())
    assert time.time() < data["until"] <= time.time() + 24 * 3600
    data["until"] = time.time() - 1  # as if the page's freshness had run out
    stored.write_text(json.dumps(data))
    again = _plan(args, env, work)
    assert not again.replayed
    assert (again.code, again.stdout) == (replay.code, replay.stdout)


def test_a_built_in_manifest_edited_in_place_is_planned_again(tmp_path: Path) -> None:
    """The tool's own files are part of the key: a checkout whose built-in data is
    edited (its version unchanged) plans again. The tool runs from a copy here."""
    env, work = _setup(tmp_path)
    copy = tmp_path / "tool"
    shutil.copytree(
        REPO / "resolver_hook", copy / "resolver_hook", ignore=shutil.ignore_patterns("__pycache__")
    )
    start = f"import sys; sys.path.insert(0, {str(copy)!r}); from resolver_hook._entry import main"

    def plan(args: list[str]) -> Run:
        return _plan(args, env, work, program=("-c", f"{start}; sys.exit(main())"))

    args = ["torch==2.12.1", *TARGET]
    first, second = plan(args), plan(args)
    assert first.code == 0, first.stderr
    assert not first.replayed
    assert second.replayed
    manifest = copy / "resolver_hook" / "manifests" / "torch.toml"
    manifest.write_text(manifest.read_text().replace("2.12.1+cu130", "2.12.1+cu131"))
    after = plan(args)
    assert not after.replayed
    assert "2.12.1+cu131" in after.stdout


def test_the_tools_files_are_walked_once_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan store's key and the built-in manifests' kept results both hold the
    tool's files: a process walks them once."""
    first = _cache.tool_files()

    def no_walk(path: str) -> None:
        raise AssertionError(f"walked {path} again")

    monkeypatch.setattr(os, "scandir", no_walk)
    assert _cache.tool_files() == first
