"""Credentials never leave: a password planted in a mirror, a manifest's page URL, an
index URL and netrc is found in no output and no file the tool writes.

Every command runs as a child process with a HOME and cache folder of its own, so that
every file a run writes can be read back and searched; real pip and real uv install
from the loopback index of tests/installenv.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.installenv import (
    PY,
    GpuIndex,
    build_gpu_index,
    clean_env,
    installed,
    make_uv_venv,
    make_venv,
    write_manifest,
)

SECRET = "pl4nted-Secr3t"
X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
UPSTREAM = "https://gpu.example.org"


@pytest.fixture(scope="module")
def gpu_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    gi = build_gpu_index(tmp_path_factory.mktemp("secrets-index"))
    gi.index.credentials = ("user", SECRET)  # every request without them: 401
    with gi.index.serving():
        yield gi


def _with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://user:{SECRET}@{rest}"


class Home:
    """A HOME, cache folder and manifests folder of one test's own, and the runs in it."""

    def __init__(self, root: Path, gi: GpuIndex) -> None:
        self.root = root
        self.gi = gi
        self.home = root / "home"
        self.cache = root / "xdg-cache"
        self.manifests = root / "manifests"
        self.work = root / "work"
        for d in (self.home, self.cache, self.manifests, self.work):
            d.mkdir()
        self.outputs: list[str] = []
        self.inputs: set[Path] = set()  # the files the test planted the password in

    def plant(self, path: Path) -> Path:
        """``path`` is an input the test wrote the password into (not searched)."""
        self.inputs.add(path)
        return path

    def env(self, **extra: str) -> dict[str, str]:
        env = clean_env(
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.cache),
            RESOLVER_HOOK_MANIFESTS=str(self.manifests),
            RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
            # Whole lines to compare: output fits the width, 80 in a pipe.
            **{"COLUMNS": "1000", **extra},
        )
        for name in ("RESOLVER_HOOK_CACHE_DIR", "RESOLVER_HOOK_OFFLINE"):
            env.pop(name, None)  # the XDG folder above, and the loopback index is read
        return env

    def run(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "resolver_hook", *args],
            capture_output=True, text=True, env=self.env(**extra), cwd=self.work,
            stdin=subprocess.DEVNULL, timeout=600, check=False,
        )  # fmt: skip
        self.outputs += [proc.stdout, proc.stderr]
        return proc

    def leaks(self) -> list[str]:
        """Every output and every file under the test's folder (the planted inputs
        aside) that holds the password."""
        found = [f"output {i}" for i, text in enumerate(self.outputs) if SECRET in text]
        for path in sorted(self.root.rglob("*")):
            if path.is_symlink() or not path.is_file() or path in self.inputs:
                continue
            if SECRET.encode() in path.read_bytes():
                found.append(str(path.relative_to(self.root)))
        return found


@pytest.fixture
def home(tmp_path: Path, gpu_index: GpuIndex) -> Home:
    return Home(tmp_path, gpu_index)


def _idx_manifest(home: Home, url: str) -> Path:
    path = write_manifest(
        home.manifests,
        "demo-idx",
        "index",
        {"url": url, "version": "2.0+cu130", "cuda": ">=13.0", "gpu": ["sm_100"]},
    )
    return home.plant(path)


def _gpu_manifest(home: Home, url: str) -> Path:
    wheel = home.gi.wheels["gpu130"]
    path = write_manifest(
        home.manifests,
        "demo-gpu",
        "wheel",
        {"url": url, "sha256": wheel.sha256, "cuda": ">=13.0", "gpu": ["sm_100"]},
    )
    return home.plant(path)


# --- mirrors -------------------------------------------------------------------------


def test_mirror_credentials_are_in_no_cache_entry_plan_line_lock_or_stored_plan(
    home: Home,
) -> None:
    idx = home.gi.index
    _idx_manifest(home, f"{UPSTREAM}/links/cu130/demo-idx/")
    mirrors = f"{UPSTREAM}={_with_password(idx.url)}"
    proc = home.run("plan", "demo-idx", "--target", X86_B200, RESOLVER_HOOK_MIRRORS=mirrors)
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx @ {idx.url}/files/demo_idx-2.0" in proc.stdout  # the mirror, read and pinned
    again = home.run("plan", "demo-idx", "--target", X86_B200, RESOLVER_HOOK_MIRRORS=mirrors)
    assert again.stdout == proc.stdout  # the stored plan's replay
    lock = home.work / "requirements.txt"
    proc = home.run(
        "lock", "demo-idx", "--flavoured-only", "--target", X86_B200, "-o", str(lock),
        RESOLVER_HOOK_MIRRORS=mirrors,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx @ {idx.url}/files/demo_idx-2.0" in lock.read_text()
    assert list((home.cache / "resolver-hook" / "index").iterdir())
    assert home.leaks() == []


# --- a manifest's page URL -----------------------------------------------------------


def test_manifest_page_credentials_are_read_with_never_printed_or_locked(home: Home) -> None:
    idx = home.gi.index
    page = idx.links_url("cu130", "demo-idx")
    _idx_manifest(home, _with_password(page))
    proc = home.run("plan", "demo-idx", "--target", X86_B200)
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx @ {home.gi.index.url}/files/demo_idx-2.0" in proc.stdout  # read
    lock = home.work / "requirements.txt"
    proc = home.run("lock", "demo-idx", "--flavoured-only", "--target", X86_B200, "-o", str(lock))
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx @ {home.gi.index.url}/files/demo_idx-2.0" in lock.read_text()
    assert home.leaks() == []


def test_a_manifest_page_that_is_down_is_planned_and_locked_without_its_credentials(
    home: Home,
) -> None:
    page = "http://127.0.0.1:9/links/cu130/demo-idx/"
    _idx_manifest(home, _with_password(page))
    proc = home.run("plan", "demo-idx", "--target", X86_B200)
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx==2.0+cu130 from {page}" in proc.stdout  # the plan line
    assert f"find-links:\n  {page}\n" in proc.stdout
    lock = home.work / "requirements.txt"
    proc = home.run("lock", "demo-idx", "--flavoured-only", "--allow-unhashed",
                    "--target", X86_B200, "-o", str(lock))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "--find-links http://127.0.0.1:9/links/cu130/demo-idx/" in lock.read_text()
    assert home.leaks() == []


# --- the installer's own arguments -----------------------------------------------------


def test_a_stored_install_plan_keeps_no_index_url_credentials(home: Home) -> None:
    """The installer's ``--index-url https://user:password@...`` is kept as the number of
    the command's word it came from: the replay hands pip the password again (the index
    answers 401 without it) and no plan file holds it."""
    venv = home.root / "venv"
    make_venv(venv)
    _gpu_manifest(home, home.gi.index.wheel_url(home.gi.wheels["gpu130"]))
    args = ("pip", "--no-proof", "--target", X86_B200, "install", "--dry-run", "demo-gpu",
            "plainpkg", "--index-url", _with_password(home.gi.simple))  # fmt: skip
    for _ in range(3):  # the first reads the index: the second stores, the third replays
        proc = home.run(*args, VIRTUAL_ENV=str(venv))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Would install demo-gpu-1.0+cu130" in proc.stdout
    plans = list((home.cache / "resolver-hook" / "plans").iterdir())
    (record,) = [json.loads(p.read_text()) for p in plans]
    assert [2, len(args) - 1] in record["launch"]["argv"]
    assert home.leaks() == []


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_private_find_links_page_with_credentials_in_the_manifest_installs(
    home: Home, tool: str
) -> None:
    """Every path of the index needs Basic auth and only the manifest's page URL carries
    the credentials: the page is read with them and the wheel pinned by URL; real pip
    and real uv then fetch that wheel too, handed the credentials for this run only (a
    private netrc named by NETRC in their environment: never on their command line, in
    no file that outlives the run). With the user's own netrc entry for the host,
    nothing is handed and the user's file is what they read."""
    venv = home.root / "venv"
    (make_venv if tool == "pip" else make_uv_venv)(venv)
    tmp = home.root / "tmp"
    tmp.mkdir()
    idx = home.gi.index
    _idx_manifest(home, _with_password(idx.links_url("cu130", "demo-idx")))
    head = ("pip", "--target", X86_B200, "install") if tool == "pip" else (
        "uv", "--target", X86_B200, "pip", "install")  # fmt: skip
    args = (*head, "demo-idx", "--index-url", home.gi.simple)
    before = idx.gets(home.gi.wheels["idx130"])
    proc = home.run(*args, VIRTUAL_ENV=str(venv), TMPDIR=str(tmp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installed(venv / "bin" / "python")["demo-idx"] == "2.0+cu130"
    assert idx.gets(home.gi.wheels["idx130"]) > before  # fetched by the installer
    host = idx.url.removeprefix("http://")
    assert f"{host}: the credentials given in a URL" in proc.stderr
    assert f"handed to {tool} for this run" in proc.stderr
    assert list(tmp.iterdir()) == []  # the private folder, netrc and all, is gone
    netrc = home.home / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login user password {SECRET}\n")
    netrc.chmod(0o600)
    home.plant(netrc)
    proc = home.run(*args, "--force-reinstall", VIRTUAL_ENV=str(venv), TMPDIR=str(tmp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the credentials given in a URL" not in proc.stdout + proc.stderr
    assert home.leaks() == []


def test_pylock_cites_the_index_page_of_a_plain_build_without_its_credentials(
    home: Home,
) -> None:
    """The plain build on the installer's own index: pylock reads its page there, with
    the credentials of ``--index-url``, and cites the page without them."""
    home.plant(write_manifest(home.manifests, "plainpkg", "index", {"version": "1.0"}))
    out = home.work / "pylock.toml"
    proc = home.run("lock", "plainpkg", "--target", X86_B200, "--format", "pylock",
                    "--index-url", _with_password(home.gi.simple), "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f'index = "{home.gi.simple}plainpkg/"' in out.read_text()
    assert home.leaks() == []


def test_a_requirement_files_own_index_url_is_shown_without_its_credentials(home: Home) -> None:
    """The file's option lines go to the installer as written; what is printed (text
    and JSON) and stored shows them without the password."""
    reqs = home.work / "requirements.in"
    reqs.write_text(f"--index-url {_with_password(home.gi.simple)}\nplainpkg\n")
    home.plant(reqs)
    for extra in ((), ("--json",)):
        for _ in range(2):  # stored, then replayed
            proc = home.run("plan", "-r", str(reqs), "--target", X86_B200, *extra)
            assert proc.returncode == 0, proc.stderr
            assert f"--index-url {home.gi.simple.replace('http://', 'http://****@')}" in proc.stdout
    assert home.leaks() == []


def test_a_requirement_files_urls_with_credentials_are_printed_and_locked_without_them(
    home: Home,
) -> None:
    """A requirement pinned by a URL that holds the password, one left out by its
    marker and an extra index holding it: the plan's rows (cut to a narrow width too,
    and under -v), its notes and a lock's header notes show none of them; the lock
    that copies a line as written copies it without the credentials and says so."""
    gi = home.gi
    plain = _with_password(gi.index.wheel_url(gi.wheels["plain"]))
    helper = _with_password(gi.index.wheel_url(gi.wheels["helper1"]))
    reqs = home.plant(home.work / "requirements.in")
    reqs.write_text(
        f"--extra-index-url {_with_password(gi.simple)}\n"
        f"plainpkg @ {plain}\n"
        f"helperlib @ {helper} ; sys_platform == 'win32'\n"
    )
    shown = gi.index.wheel_url(gi.wheels["plain"]).replace("http://", "http://****@")
    for extra in ((), ("-v",)):
        for columns in ("1000", "80"):
            proc = home.run("plan", "-r", str(reqs), "--target", X86_B200, *extra,
                            COLUMNS=columns)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert f"plainpkg @ {shown}" in proc.stdout  # the requirement line, to copy
    lock = home.work / "requirements.txt"
    proc = home.run("lock", "-r", str(reqs), "--flavoured-only", "--target", X86_B200,
                    "-o", str(lock))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = lock.read_text()
    assert f"plainpkg @ {gi.index.wheel_url(gi.wheels['plain'])}" in text.splitlines()
    host = gi.index.url.removeprefix("http://")
    assert f"# note: {host}: the credentials in a URL of your requirements" in text  # said
    assert home.leaks() == []


# --- the whole round ---------------------------------------------------------------


def test_a_password_planted_everywhere_is_found_in_nothing_the_tool_writes(home: Home) -> None:
    """A password in a mirror, a manifest's page URL, the installer's index URL and
    netrc; then plan, lock in every format and as a set, pip and uv installs, enable,
    sync and env plan: no output, cache file, stored plan, lock or configuration holds
    it, and every command did its work (the index answers 401 without the password)."""
    gi, idx = home.gi, home.gi.index
    wheel = gi.wheels["gpu130"]
    _gpu_manifest(home, f"{UPSTREAM}/files/{wheel.filename}")  # read through the mirror
    _idx_manifest(home, _with_password(idx.links_url("cu130", "demo-idx")))
    netrc = home.home / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login user password {SECRET}\n")
    netrc.chmod(0o600)
    home.plant(netrc)
    mirror = {"RESOLVER_HOOK_MIRRORS": f"{UPSTREAM}={_with_password(idx.url)}"}
    index = _with_password(gi.simple)
    target = ("--target", X86_B200)
    reqs = ("demo-gpu", "demo-idx", "plainpkg")

    def ok(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        proc = home.run(*args, **{**mirror, **extra})
        assert proc.returncode == 0, (args, proc.stdout + proc.stderr)
        return proc

    planned = ok("plan", *reqs[:2], *target)
    assert f"demo-gpu @ {idx.url}/files/{wheel.filename}" in planned.stdout
    ok("plan", *reqs[:2], *target)  # stored (the first read the index)
    ok("plan", *reqs[:2], *target)  # the stored plan, replayed
    ok("plan", *reqs[:2], *target, "--json")
    work = home.work
    (work / "locks").mkdir()
    ok("lock", *reqs, *target, "-o", str(work / "requirements.txt"), "--index-url", index)
    ok("lock", *reqs[:2], *target, "-o", f"{work}/locks/{{target}}.txt", "--index-url", index)
    ok("lock", *reqs, *target, "--format", "pylock", "-o", str(work / "pylock.toml"),
       "--index-url", index)  # fmt: skip
    ok("lock", *reqs[:2], *target, "--format", "uv", "-o", str(work / "uv-sources.toml"),
       "--index-url", index)  # fmt: skip
    pip_venv, uv_venv, sync_venv = (home.root / n for n in ("pip-venv", "uv-venv", "sync-venv"))
    for venv in (pip_venv, uv_venv, sync_venv):
        make_venv(venv)
    for _ in range(3):  # an unchecked install's plan stored (its venv is new), replayed
        ok("pip", "--no-proof", *target, "install", *reqs, "--index-url", index,
           VIRTUAL_ENV=str(pip_venv))  # fmt: skip
    ok("pip", *target, "install", "--force-reinstall", *reqs, "--index-url", index,
       VIRTUAL_ENV=str(pip_venv))  # fmt: skip
    ok("uv", *target, "pip", "install", "--python", str(uv_venv / "bin" / "python"), *reqs,
       "--index-url", index)  # fmt: skip
    ok("enable", "--venv", str(pip_venv), *target, "--offline")
    ok("sync", f"{work}/locks", "--installer", "pip", *target, "--allow-insecure-urls",
       VIRTUAL_ENV=str(sync_venv), PIP_INDEX_URL=index)  # fmt: skip
    ok("env", "plan", "--example", *target, RESOLVER_HOOK_OFFLINE="1")
    for venv in (pip_venv, uv_venv, sync_venv):
        assert installed(venv / "bin" / "python")["demo-gpu"] == "1.0+cu130"
    assert installed(uv_venv / "bin" / "python")["plainpkg"] == "1.0"
    written = [p for p in (home.cache / "resolver-hook").rglob("*") if p.is_file()]
    assert any("plans" in p.parts for p in written)
    assert any("index" in p.parts for p in written)
    assert (pip_venv / "pip.conf").is_file()  # what enable wrote
    assert home.leaks() == []
