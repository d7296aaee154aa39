"""`resolver-hook lock` as a lock (issue 45): output names and folders, hash-complete
lines, the whole environment pinned from the user's index, stable pins and ``--check``;
real uv and real pip against the loopback index of tests/installenv.py.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clirun import cli
from tests.indexreplica import PageServer
from tests.installenv import PY, UV, GpuIndex, clean_env, installed, make_uv_venv, make_venv
from tests.wheelfactory import LoopbackIndex, build_wheel

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"  # demo-gpu/demo-idx cu130
ARM_L4 = f"linux-aarch64-py{PY}-cuda12.6-sm89"  # cu126


def lock(
    gi: GpuIndex, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    # Pages on 127.0.0.1 only: read them (the suite's RESOLVER_HOOK_OFFLINE is for the
    # internet); a test of --offline says so.
    env = {"RESOLVER_HOOK_OFFLINE": "", **env}
    full = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests), RESOLVER_HOOK_ALLOW_INSECURE_URLS="1", **env
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "lock", *args],
        capture_output=True, text=True, env=full, cwd=cwd, timeout=300, check=False,
    )  # fmt: skip


# --- item 3: names and folders ---------------------------------------------------------


@pytest.mark.parametrize("name", ["env.pylock.toml", "lock.toml", "requirements.lock"])
def test_an_output_name_that_says_no_format_is_refused(
    gpu_index: GpuIndex, tmp_path: Path, name: str
) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200, "-o", name,
                cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: -o {name}: the name is neither a requirements file")
    assert "\nhint: name it " in proc.stderr
    assert "or give --format" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_format_says_what_the_name_does_not(gpu_index: GpuIndex, tmp_path: Path) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200,
                "--format", "requirements", "-o", "requirements.lock", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "demo-gpu @ " in (tmp_path / "requirements.lock").read_text()


def test_missing_parent_folders_are_made(gpu_index: GpuIndex, tmp_path: Path) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200, "--target", ARM_L4,
                "-o", "new/deeper/{target}.txt", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    made = sorted(p.name for p in (tmp_path / "new" / "deeper").iterdir())
    assert made == sorted([f"{X86_B200}.txt", f"{ARM_L4}.txt", "index.toml"])


# --- item 4: hash-complete or refused --------------------------------------------------


@pytest.fixture
def broken() -> Iterator[PageServer]:
    """A server that answers every path with HTTP 500."""
    server = PageServer(missing=500)
    with server.serving():
        yield server


def _gone_page_manifest(server: PageServer, tmp_path: Path) -> Path:
    """demo-idx known only as a find-links page that cannot be read (a 500: a page that
    answers 404 does not exist, and no build is planned from it)."""
    path = tmp_path / "demo-idx.toml"
    path.write_text(
        'schema = 1\n[package]\nname = "demo-idx"\n[[index]]\n'
        f'url = "{server.url}/links/broken/demo-idx/"\nversion = "2.0+cu130"\n'
    )
    return path


def test_an_unreadable_flavour_page_is_refused_naming_the_line(
    gpu_index: GpuIndex, tmp_path: Path, broken: PageServer
) -> None:
    manifest = _gone_page_manifest(broken, tmp_path)
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "demo-gpu", "--manifest", str(manifest),
                "--target", X86_B200, "-o", str(out))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: 1 lock line without a sha256")
    assert f"\n  demo-idx==2.0+cu130 (for {X86_B200}): " in proc.stderr
    assert f"{broken.url}/links/broken/demo-idx/" in proc.stderr
    assert "HTTP 500" in proc.stderr
    assert "\nhint: run lock where those pages and files are reachable" in proc.stderr
    assert "--allow-unhashed" in proc.stderr
    assert not out.exists()


def test_allow_unhashed_writes_the_line_with_a_header_note(
    gpu_index: GpuIndex, tmp_path: Path, broken: PageServer
) -> None:
    manifest = _gone_page_manifest(broken, tmp_path)
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "demo-gpu", "--manifest", str(manifest),
                "--target", X86_B200, "-o", str(out), "--allow-unhashed")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert "# note: without a sha256 (--allow-unhashed): demo-idx==2.0+cu130" in lines
    assert "demo-idx==2.0+cu130" in lines
    gpu130 = gpu_index.wheels["gpu130"]
    [gpu] = [x for x in lines if x.startswith("demo-gpu @ ")]
    assert f"#sha256={gpu130.sha256}" in gpu  # pip and uv check a URL's own #sha256=


def test_a_wheel_without_sha256_in_its_manifest_is_hashed_at_lock_time(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    manifest = tmp_path / "demo-gpu.toml"
    wheel = gpu_index.wheels["gpu130"]
    manifest.write_text(
        'schema = 1\n[package]\nname = "demo-gpu"\n[[wheel]]\n'
        f'url = "{gpu_index.index.wheel_url(wheel)}"\n'
    )
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "--manifest", str(manifest), "--target", X86_B200,
                "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"demo-gpu @ {gpu_index.index.wheel_url(wheel)} --hash=sha256:{wheel.sha256}" in (
        out.read_text().splitlines()
    )


def test_offline_a_flavour_known_only_as_a_page_is_unhashed(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-idx", "--target", X86_B200, "-o", str(out), "--offline")
    assert proc.returncode == 1, proc.stderr
    assert f"demo-idx==2.0+cu130 (for {X86_B200}): --offline: known only as the page " in (
        proc.stderr
    )
    online = lock(gpu_index, "demo-idx", "--target", X86_B200, "-o", str(out),
                  RESOLVER_HOOK_OFFLINE="")  # fmt: skip
    assert online.returncode == 0, online.stderr
    idx130 = gpu_index.wheels["idx130"]
    assert f"#sha256={idx130.sha256}" in out.read_text()  # the page read, its file pinned


# --- items 1 and 2: the whole environment, from the user's index ----------------------


def _pip_install(venv: Path, lockfile: Path, *args: str, **env: str) -> dict[str, str]:
    python = make_venv(venv)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--require-hashes", "-r", str(lockfile),
         *args],
        capture_output=True, text=True, env=clean_env(**env), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return installed(python)


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackIndex]:
    """A second index, the only one with kplain 1.0 (needs demo-dep, there too)."""
    root = tmp_path_factory.mktemp("company")
    index = LoopbackIndex(root / "index")
    index.add(build_wheel(root / "built", "kplain", "1.0", requires=["kdep>=1"]))
    index.add(build_wheel(root / "built", "kdep", "1.5"))
    with index.serving():
        yield index


def _sha(index: LoopbackIndex, filename: str) -> str:
    return hashlib.sha256((index.files / filename).read_bytes()).hexdigest()


@pytest.mark.integration
def test_a_requirements_lock_pins_every_package_with_hashes_and_pip_installs_it(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    if platform.machine() != "x86_64" or sys.platform != "linux":
        pytest.skip("the lock's target is Linux x86_64: pip installs it on such a machine")
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "plainpkg", "--target", X86_B200,
                "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    body = [x for x in lines if not x.startswith("#")]
    gpu, plain = gpu_index.wheels["gpu130"], gpu_index.wheels["plain"]
    assert body == [
        f"demo-gpu @ {gpu_index.index.wheel_url(gpu)}#sha256={gpu.sha256}",
        f"plainpkg==1.0 --hash=sha256:{plain.sha256}",
    ]
    assert f"by uv for each target against index {gpu_index.simple} (from --index-url)." in (
        out.read_text()
    )
    found = _pip_install(tmp_path / "venv", out, "--index-url", gpu_index.simple)
    assert (found["demo-gpu"], found["plainpkg"]) == ("1.0+cu130", "1.0")
    uv_venv = make_uv_venv(tmp_path / "uv-venv")
    done = subprocess.run(
        [*UV, "pip", "install", "--python", str(uv_venv / "bin" / "python"), "--require-hashes",
         "-r", str(out), "--index-url", gpu_index.simple],
        capture_output=True, text=True, env=clean_env(tmp_path), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = installed(uv_venv / "bin" / "python")
    assert (found["demo-gpu"], found["plainpkg"]) == ("1.0+cu130", "1.0")


@pytest.mark.integration
@pytest.mark.parametrize("how", ["PIP_INDEX_URL", "pip.conf"])
def test_the_rest_is_resolved_from_the_users_own_index(
    gpu_index: GpuIndex, company: LoopbackIndex, tmp_path: Path, how: str
) -> None:
    if platform.machine() != "x86_64" or sys.platform != "linux":
        pytest.skip("the lock's target is Linux x86_64: pip installs it on such a machine")
    if how == "PIP_INDEX_URL":
        env = {"PIP_INDEX_URL": company.simple_url}
    else:
        conf = tmp_path / "pip.conf"
        conf.write_text(f"[global]\nindex-url = {company.simple_url}\n")
        env = {"PIP_CONFIG_FILE": str(conf)}
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "kplain", "--target", X86_B200, "-o", str(out), **env)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert f"kplain==1.0 --hash=sha256:{_sha(company, 'kplain-1.0-py3-none-any.whl')}" in text
    assert f"kdep==1.5 --hash=sha256:{_sha(company, 'kdep-1.5-py3-none-any.whl')}" in text
    where = "PIP_INDEX_URL" if how == "PIP_INDEX_URL" else f"index-url in {tmp_path / 'pip.conf'}"
    assert f"against index {company.simple_url} (from {where}" in text
    found = _pip_install(tmp_path / "venv", out, **env)
    assert (found["demo-gpu"], found["kplain"], found["kdep"]) == ("1.0+cu130", "1.0", "1.5")


def test_credentials_in_the_index_are_not_written(gpu_index: GpuIndex, tmp_path: Path) -> None:
    secret = gpu_index.simple.replace("http://", "http://user:s3cret@")
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "plainpkg", "--target", X86_B200, "-o", str(out),
                PIP_INDEX_URL=secret)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "s3cret" not in out.read_text() + proc.stdout + proc.stderr
    assert "http://****@127.0.0.1" in out.read_text()


def test_flavoured_only_keeps_the_partial_form(gpu_index: GpuIndex, tmp_path: Path) -> None:
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", "plainpkg", "--target", X86_B200, "--flavoured-only",
                "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert "plainpkg" in lines
    assert "# Flavoured packages are pinned; others are as you wrote them (--flavoured-only)." in (
        lines
    )


def test_without_uv_a_whole_lock_is_one_error(
    gpu_index: GpuIndex,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from resolver_hook.cli import lock as lock_cli

    monkeypatch.setattr(lock_cli, "find_uv", lambda env=None: None)
    monkeypatch.setenv("RESOLVER_HOOK_MANIFESTS", str(gpu_index.manifests))
    monkeypatch.setenv("RESOLVER_HOOK_ALLOW_INSECURE_URLS", "1")
    out = tmp_path / "requirements.txt"
    code, _, err = cli(capsys, "lock", "demo-gpu", "plainpkg", "--target", X86_B200,
                       "-o", str(out))  # fmt: skip
    assert code == 1
    assert err.startswith("error: uv not found on PATH: a lock of the whole environment")
    assert "or --flavoured-only" in err
    assert not out.exists()


def test_index_settings_first_found_first() -> None:
    from resolver_hook.lock.indexes import lock_indexes

    files = {"index-url": ("https://conf.example/simple/", "index-url in /etc/pip.conf")}
    env = {
        "PIP_INDEX_URL": "https://pip.example/simple/",
        "UV_INDEX_URL": "https://uv-old.example/simple/",
        "UV_INDEX": "corp=https://corp.example/simple/ https://two.example/simple/",
        "UV_FIND_LINKS": "https://a.example/,https://b.example/",
    }

    def main(cli: str | None, env: dict[str, str]) -> tuple[str | None, str]:
        got = lock_indexes(index_url=cli, extra_index_urls=[], find_links=[], env=env,
                           pip_files=files)  # fmt: skip
        return got.index_url, got.index_from

    assert main("https://cli.example/simple/", env) == (
        "https://cli.example/simple/",
        "--index-url",
    )
    new = {**env, "UV_DEFAULT_INDEX": "https://uv.example/simple/"}
    assert main(None, new) == ("https://uv.example/simple/", "UV_DEFAULT_INDEX")
    assert main(None, env) == ("https://uv-old.example/simple/", "UV_INDEX_URL")
    pip_only = {"PIP_INDEX_URL": "https://pip.example/simple/"}
    assert main(None, pip_only) == ("https://pip.example/simple/", "PIP_INDEX_URL")
    assert main(None, {}) == (
        "https://conf.example/simple/",
        "index-url in /etc/pip.conf",
    )
    got = lock_indexes(index_url=None, extra_index_urls=[], find_links=[], env=env, pip_files={})
    assert got.extra_index_urls == ("https://corp.example/simple/", "https://two.example/simple/")
    assert got.find_links == ("https://a.example/", "https://b.example/")
    bare = lock_indexes(index_url=None, extra_index_urls=[], find_links=[], env={}, pip_files={})
    assert (bare.index_url, bare.uv_env({"X": "1"}), bare.described()) == (None, {"X": "1"}, "")
    # Handed to uv in its environment (off the command line); its own variables kept.
    cli = lock_indexes(index_url="https://u:p@cli.example/simple/", extra_index_urls=[],
                       find_links=[], env=env, pip_files={})  # fmt: skip
    child = cli.uv_env(env)
    assert child["UV_INDEX_URL"] == "https://u:p@cli.example/simple/"
    assert "UV_DEFAULT_INDEX" not in child
    assert child["UV_INDEX"] == env["UV_INDEX"]
    assert cli.described().startswith("index https://****@cli.example/simple/ (from --index-url)")


# --- item 5: stable locks and --check ---------------------------------------------------


def test_check_passes_on_an_unchanged_set_and_fails_after_the_input_changes(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    req = tmp_path / "requirements.in"
    req.write_text("demo-gpu\nplainpkg\n")
    args = ["-r", str(req), "--target", X86_B200, "--target", ARM_L4,
            "--index-url", gpu_index.simple, "-o", "locks/{target}.txt"]  # fmt: skip
    assert lock(gpu_index, *args, cwd=tmp_path).returncode == 0
    files = {p.name: p.read_bytes() for p in (tmp_path / "locks").iterdir()}
    assert set(files) == {f"{X86_B200}.txt", f"{ARM_L4}.txt", "index.toml"}
    same = lock(gpu_index, *args, "--check", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert same.stdout.startswith("up to date: locks/")
    req.write_text("demo-gpu\nplainpkg\nhelperlib\n")
    changed = lock(gpu_index, *args, "--check", cwd=tmp_path)
    assert changed.returncode == 1, changed.stderr
    assert f"+++ locks/{X86_B200}.txt (lock now)" in changed.stdout
    assert "\n+helperlib==2.0 --hash=sha256:" in changed.stdout
    assert "error: 2 lock files differ from what lock would write now" in changed.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "locks").iterdir()} == files


def test_check_of_a_pylock(gpu_index: GpuIndex, tmp_path: Path) -> None:
    args = ["demo-gpu", "plainpkg", "--target", X86_B200, "--index-url", gpu_index.simple,
            "-o", "pylock.toml"]  # fmt: skip
    assert lock(gpu_index, *args, cwd=tmp_path).returncode == 0
    assert (
        f"# the unflavoured packages resolved by uv against index {gpu_index.simple} "
        "(from --index-url)\n" in (tmp_path / "pylock.toml").read_text()
    )
    assert lock(gpu_index, *args, "--check", cwd=tmp_path).returncode == 0
    (tmp_path / "pylock.toml").write_text("# edited\n")
    stale = lock(gpu_index, *args, "--check", cwd=tmp_path)
    assert stale.returncode == 1
    assert "-# edited" in stale.stdout
    assert (tmp_path / "pylock.toml").read_text() == "# edited\n"


@pytest.mark.parametrize("fmt", ["requirements.txt", "pylock.toml"])
def test_a_new_release_moves_the_lock_only_with_upgrade(
    gpu_index: GpuIndex, tmp_path: Path, fmt: str
) -> None:
    root = tmp_path / "company"
    index = LoopbackIndex(root / "index")
    index.add(build_wheel(root / "built", "kplain", "1.0"))
    with index.serving():
        args = ["demo-gpu", "kplain", "--target", X86_B200, "--index-url", index.simple_url,
                "-o", str(tmp_path / fmt)]  # fmt: skip
        assert lock(gpu_index, *args).returncode == 0
        first = (tmp_path / fmt).read_text()
        index.add(build_wheel(root / "built", "kplain", "1.1"))
        kept = lock(gpu_index, *args)
        assert kept.returncode == 0, kept.stderr
        assert (tmp_path / fmt).read_text() == first
        assert lock(gpu_index, *args, "--check").returncode == 0
        moved = lock(gpu_index, *args, "--upgrade-package", "kplain")
        assert moved.returncode == 0, moved.stderr
        text = (tmp_path / fmt).read_text()
        assert "kplain-1.1-py3-none-any.whl" in text or "kplain==1.1 --hash" in text
        assert "kplain-1.0-py3-none-any.whl" not in text
        assert "kplain==1.0" not in text
        (tmp_path / fmt).write_text(first)
        assert lock(gpu_index, *args, "--upgrade").returncode == 0
        assert (tmp_path / fmt).read_text() == text
