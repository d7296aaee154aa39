"""Every command that stores a plan declares every file it read: the oracle of
tests/plantracer.py watches each (plan, plan --json, pip and uv --no-proof installs)
and finds no read its stored record leaves out; taking one declaration away (a
requirement file's include) is caught. And a credential planted in the installer's
``--index-url``, a mirror and a manifest's URL is in no stored record, while the replay
says what the full run said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.installenv import PY, GpuIndex, build_gpu_index, clean_env, venv_for, write_manifest
from tests.paths import DATA, child_env
from tests.plantracer import traced, undeclared
from tests.test_plan_cache import PLANNER, Run, run_of

B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
TARGET = ["--target", "linux-x86_64-py312-cuda13.0-sm100"]


def _offline(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = child_env({"RESOLVER_HOOK_CACHE_DIR": str(cache), "RESOLVER_HOOK_OFFLINE": "1"})
    return env, work, cache


def _inputs(work: Path) -> list[str]:
    """Requirement files with an include, a constraint and a ``-f`` folder beside them;
    a manifest given, one in a RESOLVER_HOOK_MANIFESTS folder, one a pyproject names."""
    (work / "wheels").mkdir()
    (work / "reqs.txt").write_text("-r more.txt\n-c pins.txt\n-f wheels\ntorch\n")
    (work / "more.txt").write_text("flash-attn\n")
    (work / "pins.txt").write_text("torch<3\n")
    text = (DATA / "manifests" / "cuda-builds.toml").read_text()
    for folder in ("given", "folder", "project"):
        (work / folder).mkdir()
        (work / folder / "demo.toml").write_text(text)
    (work / "pyproject.toml").write_text('[tool.resolver-hook]\nmanifests = ["project"]\n')
    return ["-r", "reqs.txt", "demo", "--manifest", "given/demo.toml"]


def _oracle(
    args: list[str], env: dict[str, str], work: Path, cache: Path, patch: str = ""
) -> list[str]:
    out = work.parent / "trace.json"
    proc = traced(args, env, work, out, patch=patch)
    assert proc.returncode in (0, 1), proc.stderr
    assert list((cache / "plans").glob("*.json")), "the run stored no plan"
    return undeclared(out, cache)


@pytest.mark.parametrize("extra", [[], ["--json"], ["-v"]], ids=["text", "json", "verbose"])
def test_a_stored_plan_declares_every_file_it_read(tmp_path: Path, extra: list[str]) -> None:
    env, work, cache = _offline(tmp_path)
    env["RESOLVER_HOOK_MANIFESTS"] = str(work / "folder")
    args = ["plan", *_inputs(work), *TARGET, *extra]
    assert _oracle(args, env, work, cache) == []


def test_a_profile_file_is_declared(tmp_path: Path) -> None:
    env, work, cache = _offline(tmp_path)
    detect = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "detect", "--json"],
        capture_output=True, text=True, env=env, check=True, timeout=120,
    )  # fmt: skip
    (work / "machine.json").write_text(detect.stdout)
    assert _oracle(["plan", "torch", "--profile", "machine.json"], env, work, cache) == []


def test_the_oracle_fails_when_a_reader_does_not_declare(tmp_path: Path) -> None:
    """The includes of a requirement file (``-r``, ``-c``) read with a reader that
    declares nothing."""
    env, work, cache = _offline(tmp_path)
    args = ["plan", *_inputs(work)[:2], *TARGET]
    patch = (
        "import resolver_hook.reqfile as r, resolver_hook.ground.record as rec\n"
        "_orig = r._include\n"
        "def _include(target, source, where, read, *a, **k):\n"
        "    return _orig(target, source, where, r._text_reader([], None, rec.NOWHERE), *a, **k)\n"
        "r._include = _include\n"
    )
    missed = [f"open {work / 'more.txt'}", f"open {work / 'pins.txt'}"]
    assert _oracle(args, env, work, cache, patch) == missed


def _run(args: list[str], env: dict[str, str], cwd: Path) -> Run:
    proc = subprocess.run(
        [sys.executable, "-I", "-B", "-X", "importtime", "-m", "resolver_hook", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False,
    )  # fmt: skip
    return run_of(proc)


def _ours(text: str) -> list[str]:
    """resolver-hook's own lines (an installer prints times and temporary paths)."""
    return [x for x in text.splitlines() if x.startswith(("resolver-hook:", "error:", "hint:"))]


def test_pages_served_from_the_cache_are_declared(gpu_index: GpuIndex, tmp_path: Path) -> None:
    env, work, cache = _offline(tmp_path)
    env.pop("RESOLVER_HOOK_OFFLINE")
    manifest = work / "demo-idx.toml"
    manifest.write_bytes((gpu_index.manifests / manifest.name).read_bytes())
    args = ["plan", "demo-idx", "--manifest", str(manifest), "--allow-insecure-urls", *TARGET]
    fetched = _run(args, env, work)
    assert fetched.code == 0, fetched.stderr
    assert not list((cache / "plans").glob("*.json"))  # it asked the server
    assert _oracle(args, env, work, cache) == []
    (record,) = (cache / "plans").glob("*.json")
    assert json.loads(record.read_bytes())["until"] is not None


@pytest.mark.integration
@pytest.mark.parametrize("tool", ["pip", "uv", "pip on PATH"])
def test_an_unchecked_install_declares_what_it_planned_with(
    gpu_index: GpuIndex, tmp_path: Path, tool: str
) -> None:
    """In the active venv, and (no venv active) with the pip PATH finds: its script's
    ``#!`` line names the interpreter, every folder of PATH before it declared."""
    tool, _, on_path = tool.partition(" ")
    venv = venv_for(tool, tmp_path / "venv")
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = clean_env(
        VIRTUAL_ENV=str(venv),
        RESOLVER_HOOK_MANIFESTS=str(gpu_index.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        RESOLVER_HOOK_CACHE_DIR=str(cache),
    )
    env.pop("RESOLVER_HOOK_OFFLINE", None)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    if on_path:
        env["PATH"] = f"{tmp_path}{os.pathsep}{env['PATH']}"  # a folder without pip first
        del env["VIRTUAL_ENV"]
    sub = ["install"] if tool == "pip" else ["pip", "install"]
    args = [tool, "--no-proof", "--target", B200, *sub, "--index-url", gpu_index.simple]
    args += ["--dry-run", "demo-gpu", "demo-idx"]
    first = _run(args, env, work)  # reads the index: not stored
    assert first.code == 0, first.stderr
    assert _oracle(args, env, work, cache) == []


# --- credentials ---------------------------------------------------------------------

SECRET = "s3cret-Pl4nted"


def _with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://user:{SECRET}@{rest}"


@pytest.mark.integration
def test_credentials_are_in_no_stored_plan_and_the_replay_says_the_same(tmp_path: Path) -> None:
    """A password in ``--index-url``, a mirror (``--mirror`` and RESOLVER_HOOK_MIRRORS)
    and a manifest's page URL: each storing command run twice (stored, then replayed,
    byte for byte), and no file under plans/ holds it."""
    gi = build_gpu_index(tmp_path / "index")
    gi.index.credentials = ("user", SECRET)  # every request without them: 401
    with gi.index.serving():
        idx = gi.index
        manifests, work, cache = tmp_path / "manifests", tmp_path / "work", tmp_path / "cache"
        for d in (manifests, work):
            d.mkdir()
        upstream = "https://gpu.example.org"
        write_manifest(manifests, "demo-idx", "index",
                       {"url": _with_password(idx.links_url("cu130", "demo-idx")),
                        "version": "2.0+cu130", "cuda": ">=13.0", "gpu": ["sm_100"]})  # fmt: skip
        wheel = gi.wheels["gpu130"]
        write_manifest(manifests, "demo-gpu", "wheel",
                       {"url": f"{upstream}/files/{wheel.filename}", "sha256": wheel.sha256,
                        "cuda": ">=13.0", "gpu": ["sm_100"]})  # fmt: skip
        venv = venv_for("pip", tmp_path / "venv")
        env = clean_env(
            RESOLVER_HOOK_MANIFESTS=str(manifests),
            RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
            RESOLVER_HOOK_CACHE_DIR=str(cache),
            RESOLVER_HOOK_MIRRORS=f"{upstream}={_with_password(idx.url)}",
            VIRTUAL_ENV=str(venv),
        )
        env.pop("RESOLVER_HOOK_OFFLINE", None)
        mirror = ["--mirror", f"{upstream}={_with_password(idx.url)}"]
        commands = [
            ["plan", "demo-gpu", "demo-idx", "--target", B200],
            ["plan", "demo-gpu", "demo-idx", "--target", B200, "--json", *mirror],
            ["pip", "--no-proof", "--target", B200, "install", "--dry-run", "demo-gpu",
             "plainpkg", "--index-url", _with_password(gi.simple)],
        ]  # fmt: skip
        for args in commands:
            runs = [_run(args, env, work) for _ in range(3)]  # read, stored, replayed
            for run in runs:
                assert run.code == 0, (args, run.stdout + run.stderr)
            # The first reads the index (the second, for a page the first read already,
            # may be the one that stores); the last is the replay.
            assert PLANNER in runs[0].imported, args
            assert PLANNER not in runs[2].imported, args
            if args[0] == "plan":
                assert (runs[2].stdout, runs[2].stderr) == (runs[1].stdout, runs[1].stderr)
            else:
                assert _ours(runs[2].stderr) == _ours(runs[1].stderr)
                assert "Would install demo-gpu-1.0+cu130" in runs[2].stdout
        plans = list((cache / "plans").glob("*.json"))
        assert len(plans) == len(commands)
        assert [p.name for p in plans if SECRET.encode() in p.read_bytes()] == []
        # The installer's command keeps no word of the user's: each is kept by its place.
        (launch,) = [d["launch"] for p in plans if (d := json.loads(p.read_bytes()))["launch"]]
        assert [t for k, t in launch["argv"] if k == 0 and t in commands[2]] == []
        assert [2, commands[2].index("demo-gpu")] in launch["argv"]
