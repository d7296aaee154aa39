"""`resolver-hook lock --format pylock|uv` against a loopback index built here.

pylock.toml: PEP 751, read back with packaging.pylock and selected per target
(docs/facts.md section 3); uv: [tool.uv.sources] with markers and explicit flat
indexes (docs/facts.md section 3). The integration tests install with real uv.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.pylock import Pylock
from packaging.tags import parse_tag

from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.host.detect import parse_target
from resolver_hook.resolve import marker_environment
from tests.clirun import cli
from tests.installenv import PY, GpuIndex, build_gpu_index, clean_env, installed, make_venv
from tests.installenv import write_manifests as write_demo_manifests

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"  # demo-gpu/demo-idx cu130
ARM_L4 = f"linux-aarch64-py{PY}-cuda12.6-sm89"  # cu126
X86_L4 = f"linux-x86_64-py{PY}-cuda12.6-sm89"  # cu126 on the same markers as X86_B200


@pytest.fixture(scope="module")
def gpu_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    gi = build_gpu_index(tmp_path_factory.mktemp("lockfmt-index"))
    with gi.index.serving():
        write_demo_manifests(gi)
        # One wheel without sha256: it must be hashed at lock time.
        text = (gi.manifests / "demo-gpu.toml").read_text()
        nosha = text.replace(f'sha256 = "{gi.wheels["gpu130"].sha256}"\n', "")
        assert nosha != text
        (gi.manifests / "demo-gpu.toml").write_text(nosha)
        yield gi


# The tests that lock against the loopback replica read it (tests/conftest.py sets
# RESOLVER_HOOK_OFFLINE for every test).
ONLINE = {"RESOLVER_HOOK_OFFLINE": "0"}


def lock(
    gi: GpuIndex, *args: str, cwd: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests), RESOLVER_HOOK_ALLOW_INSECURE_URLS="1", **extra
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "lock", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def selected(lockfile: Pylock, spec: str) -> dict[str, str]:
    profile = parse_target(spec)
    tags = [t for text in profile.tags for t in parse_tag(text)]
    env = marker_environment(profile)
    return {
        str(pkg.name): str(getattr(dist, "url", ""))
        for pkg, dist in lockfile.select(environment=env, tags=tags)  # type: ignore[arg-type]
    }


def test_pylock_two_targets_select_their_own_wheels(gpu_index: GpuIndex, tmp_path: Path) -> None:
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", "demo-idx", "--target", X86_B200, "--target", ARM_L4,
                "-o", str(out), **ONLINE)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = toml_loads(out.read_text())
    lockfile = Pylock.from_dict(doc)  # validates PEP 751
    assert len(doc["environments"]) == 2
    w, idx = gpu_index.wheels, gpu_index.index
    assert selected(lockfile, X86_B200) == {
        "demo-gpu": idx.wheel_url(w["gpu130"]),
        "demo-idx": idx.wheel_url(w["idx130"]),
    }
    assert selected(lockfile, ARM_L4) == {
        "demo-gpu": idx.wheel_url(w["gpu126"]),
        "demo-idx": idx.wheel_url(w["idx126"]),
    }
    hashes = {
        wheel["url"]: wheel["hashes"]["sha256"] for p in doc["packages"] for wheel in p["wheels"]
    }
    # gpu130 had no sha256 in its manifest, idx130 was known only as a page: both hashed.
    for key in ("gpu130", "gpu126", "idx130", "idx126"):
        assert hashes[idx.wheel_url(w[key])] == w[key].sha256


def test_pylock_locks_the_whole_environment_through_uv(gpu_index: GpuIndex, tmp_path: Path) -> None:
    """plainpkg has no manifest: uv resolves it for each target, with the plan's pins as
    constraints; the lock validates, selects per target, and real uv installs it."""
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", "plainpkg", "--target", X86_B200, "--target", ARM_L4,
                "--index-url", gpu_index.simple, "-o", str(out), **ONLINE)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lockfile = Pylock.from_dict(toml_loads(out.read_text()))
    w, idx = gpu_index.wheels, gpu_index.index
    for spec, gpu in ((X86_B200, "gpu130"), (ARM_L4, "gpu126")):
        assert selected(lockfile, spec) == {
            "demo-gpu": idx.wheel_url(w[gpu]),
            "plainpkg": idx.wheel_url(w["plain"]),
        }
    if platform.machine() != "x86_64":
        return  # the install half needs the x86_64 target to be this machine
    venv = tmp_path / "venv"
    make_venv(venv, with_pip=False)
    done = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "install", "--python", str(venv / "bin/python"),
         "-r", str(out)],
        capture_output=True, text=True, env=clean_env(), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = installed(venv / "bin/python")
    assert (found["demo-gpu"], found["plainpkg"]) == ("1.0+cu130", "1.0")


def test_pylock_without_uv_is_one_error(
    gpu_index: GpuIndex,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from resolver_hook.lock import resolved

    monkeypatch.setattr(resolved, "find_uv", lambda env=None: None)
    monkeypatch.setenv("RESOLVER_HOOK_MANIFESTS", str(gpu_index.manifests))
    monkeypatch.setenv("RESOLVER_HOOK_ALLOW_INSECURE_URLS", "1")
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", "0")
    out = tmp_path / "pylock.toml"
    code, _, err = cli(capsys, "lock", "demo-gpu", "plainpkg", "--target", X86_B200,
                       "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
    assert code == 1
    assert err == "error: uv not found on PATH\nhint: install it: python3 -m pip install uv\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        pytest.param(["--offline"], ONLINE, id="flag"),
        # The variable is offline for every format, as for plan and the other lock formats.
        pytest.param([], {"RESOLVER_HOOK_OFFLINE": "1"}, id="env"),
        pytest.param([], {"RESOLVER_HOOK_OFFLINE": "True"}, id="env-True"),
    ],
)
def test_pylock_offline_refuses_and_names_what_needs_the_network(
    gpu_index: GpuIndex, tmp_path: Path, flags: list[str], env: dict[str, str]
) -> None:
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", "demo-idx", "--target", X86_B200, *flags,
                "-o", str(out), **env)  # fmt: skip
    assert proc.returncode == 1
    assert "demo-gpu" in proc.stderr
    assert "has no sha256" in proc.stderr
    assert f"demo-idx==2.0+cu130: known only as the page {gpu_index.index.url}" in proc.stderr
    assert not out.exists()


def test_pylock_offline_works_when_everything_is_hashed(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", "--target", ARM_L4, "--offline", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert selected(Pylock.from_dict(toml_loads(out.read_text())), ARM_L4) == {
        "demo-gpu": gpu_index.index.wheel_url(gpu_index.wheels["gpu126"])
    }


def test_pylock_plain_build_is_read_from_the_index_page(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    manifest = tmp_path / "plainpkg.toml"
    # The plain build on the user's own index: a flavour without url (known only by version).
    manifest.write_text('schema = 1\n[package]\nname = "plainpkg"\n[[index]]\nversion = "1.0"\n')
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "plainpkg", "--manifest", str(manifest), "--target", X86_B200,
                "--index-url", gpu_index.simple, "-o", str(out), **ONLINE)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = toml_loads(out.read_text())
    [pkg] = doc["packages"]
    assert pkg["index"] == gpu_index.simple + "plainpkg/"
    assert pkg["wheels"][0]["url"] == gpu_index.index.wheel_url(gpu_index.wheels["plain"])
    assert pkg["wheels"][0]["hashes"]["sha256"] == gpu_index.wheels["plain"].sha256
    # The plan read that page too (the user's index): offline, its cached copy pins.
    offline = lock(gpu_index, "plainpkg", "--manifest", str(manifest), "--target", X86_B200,
                   "--index-url", gpu_index.simple, "--offline", "-o", str(out))  # fmt: skip
    assert offline.returncode == 0, offline.stderr
    assert toml_loads(out.read_text())["packages"] == doc["packages"]
    # Never read: offline, the page is all that is known.
    offline = lock(gpu_index, "plainpkg", "--manifest", str(manifest), "--target", X86_B200,
                   "--index-url", gpu_index.simple, "--offline", "-o", str(out),
                   RESOLVER_HOOK_CACHE_DIR=str(tmp_path / "empty-cache"))  # fmt: skip
    assert offline.returncode == 1
    assert f"plainpkg==1.0: known only as the page {gpu_index.simple}plainpkg/" in offline.stderr


def test_pylock_of_a_page_linking_another_scheme_names_the_link(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    page = gpu_index.index.root / "links" / "evil" / "demo-idx"
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        '<a href="ftp://example.org/demo_idx-2.0+cu130-py3-none-any.whl#sha256='
        + "0" * 64
        + '">x</a>'
    )
    manifest = tmp_path / "demo-idx.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "demo-idx"\n[[index]]\n'
        f'url = "{gpu_index.index.url}/links/evil/demo-idx/"\nversion = "2.0+cu130"\n'
    )
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-idx", "--manifest", str(manifest), "--target", X86_B200,
                "-o", str(out), **ONLINE)  # fmt: skip
    # The page's only link is left out, so uv finds no demo-idx: the note says why.
    assert proc.returncode == 1, proc.stderr
    assert "note: skipped a link of" in proc.stderr
    assert "'ftp://example.org/demo_idx-2.0+cu130-py3-none-any.whl' uses ftp:" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["demo-gpu", "-o", "lock.toml", "--format", "pylock"], "pylock.NAME.toml", id="bad-name"
        ),
        pytest.param(["demo-gpu", "--format", "pylock"], "needs -o FILE", id="no-output"),
        pytest.param(
            ["demo-gpu", "--format", "uv", "-o", "pyproject.toml"],
            "never writes into a pyproject.toml",
            id="uv-pyproject",
        ),
    ],
)
def test_lock_format_refusals(
    gpu_index: GpuIndex, tmp_path: Path, args: list[str], message: str
) -> None:
    proc = lock(gpu_index, *args, "--target", X86_B200, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert proc.stderr.startswith("error: ")
    assert list(tmp_path.iterdir()) == []


def test_pylock_targets_that_markers_cannot_tell_apart(gpu_index: GpuIndex, tmp_path: Path) -> None:
    proc = lock(gpu_index, "demo-gpu", "--target", X86_B200, "--target", X86_L4,
                "-o", str(tmp_path / "pylock.toml"), **ONLINE)  # fmt: skip
    assert proc.returncode == 2
    assert "markers cannot tell apart" in proc.stderr


def test_uv_sources_text(gpu_index: GpuIndex) -> None:
    proc = lock(gpu_index, "demo-gpu", "demo-idx", "plainpkg", "--format", "uv",
                "--target", X86_B200, "--target", ARM_L4)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = toml_loads(proc.stdout)["tool"]["uv"]
    w, idx = gpu_index.wheels, gpu_index.index
    x86 = 'platform_machine == "x86_64"'
    arm = 'platform_machine == "aarch64"'
    gpu = doc["sources"]["demo-gpu"]
    assert [s["url"] for s in gpu] == [idx.wheel_url(w["gpu130"]), idx.wheel_url(w["gpu126"])]
    assert x86 in gpu[0]["marker"]
    assert arm in gpu[1]["marker"]
    idx_sources = doc["sources"]["demo-idx"]
    tables = {t["name"]: t for t in doc["index"]}
    assert tables[idx_sources[0]["index"]]["url"] == idx.links_url("cu130", "demo-idx")
    assert tables[idx_sources[1]["index"]]["url"] == idx.links_url("cu126", "demo-idx")
    assert all(t["explicit"] is True and t["format"] == "flat" for t in tables.values())
    assert "plainpkg" not in doc["sources"]  # no manifest: left to uv
    assert len(doc["environments"]) == 2


# --- end to end with real uv ---------------------------------------------------------

# The lock files hold an x86_64 and an aarch64 target; uv installs the one of this machine.
HERE_FLAVOUR = {"x86_64": "cu130", "aarch64": "cu126"}.get(platform.machine(), "")


def _needs_linux_target() -> None:
    if sys.platform != "linux" or not HERE_FLAVOUR:
        pytest.skip("the lock targets are Linux x86_64 and aarch64")


@pytest.mark.integration
def test_uv_pip_installs_the_pylock(gpu_index: GpuIndex, tmp_path: Path) -> None:
    _needs_linux_target()
    out = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", "demo-idx", "--target", X86_B200, "--target", ARM_L4,
                "-o", str(out), **ONLINE)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    py = make_venv(tmp_path / "venv", with_pip=False)
    env = clean_env(tmp_path, UV_CACHE_DIR=str(tmp_path / "cache"))
    del env["UV_NO_CACHE"]
    run = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "install", "--python", str(py), "-r", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    got = installed(py)
    assert got["demo-gpu"] == f"1.0+{HERE_FLAVOUR}"
    assert got["demo-idx"] == f"2.0+{HERE_FLAVOUR}"


@pytest.mark.integration
def test_uv_project_lock_and_sync_install_the_planned_flavour(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    _needs_linux_target()
    here, other = (X86_B200, ARM_L4) if HERE_FLAVOUR == "cu130" else (ARM_L4, X86_B200)
    proc = lock(gpu_index, "demo-gpu", "demo-idx", "--format", "uv",
                "--target", here, "--target", other)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[project]\n"
        'name = "proj"\n'
        'version = "0.1"\n'
        f'requires-python = ">={sys.version_info[0]}.{sys.version_info[1]}"\n'
        'dependencies = ["demo-gpu", "demo-idx", "plainpkg"]\n\n' + proc.stdout
    )
    env = clean_env(
        tmp_path,
        UV_INDEX_URL=gpu_index.simple,
        UV_CACHE_DIR=str(tmp_path / "cache"),
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
    )
    del env["UV_NO_CACHE"]
    for cmd in (["lock"], ["sync"]):
        run = subprocess.run(
            [sys.executable, "-m", "uv", *cmd], cwd=project, capture_output=True, text=True,
            env=env, timeout=300, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
    got = installed(project / ".venv" / "bin" / "python")
    assert got["demo-gpu"] == f"1.0+{HERE_FLAVOUR}"
    assert got["demo-idx"] == f"2.0+{HERE_FLAVOUR}"
    assert got["plainpkg"] == "1.0"


_CLASHING = ("linux-x86_64-py312-cuda12.6-sm89", "linux-x86_64-py312-cuda12.8-sm120")


def _write_clashing(fmt: str) -> None:
    from resolver_hook.lock.pylock import TargetWheels, pylock_document
    from resolver_hook.lock.uvproject import UvTarget, uv_project_text
    from resolver_hook.resolve import resolve

    profiles = [parse_target(s) for s in _CLASHING]
    pairs = list(zip(_CLASHING, profiles, strict=True))
    if fmt == "pylock":
        pylock_document([TargetWheels(spec=s, profile=p, wheels=()) for s, p in pairs])
    else:
        uv_project_text([UvTarget(spec=s, profile=p, plan=resolve([], {}, p)) for s, p in pairs])


@pytest.mark.parametrize(
    ("fmt", "clash", "hint"),
    [
        ("pylock", "a pylock.toml holds one of them", "its own -o pylock.NAME.toml"),
        ("uv", "uv sources select by marker, so one project holds one", "for one of them"),
    ],
)
def test_targets_one_marker_apart_refused_in_both_formats(fmt: str, clash: str, hint: str) -> None:
    """pylock and uv sources share one marker-clash check; each keeps its own message."""
    from resolver_hook.errors import UsageError

    with pytest.raises(UsageError) as caught:
        _write_clashing(fmt)
    message = str(caught.value)
    first, second = _CLASHING
    assert message == (
        f"targets {first} and {second} differ only in what markers cannot tell apart "
        f"(GPU, driver): {clash}"
    )
    assert hint in (caught.value.hint or "")


def test_a_path_line_whose_marker_is_false_here_is_not_unlockable() -> None:
    # The plan marks it (cause "marker"); a Requirement cannot parse a path line.
    from resolver_hook.lock.wheels import unlockable
    from resolver_hook.resolve import resolve

    reqs = ['./foo-1.0-py3-none-any.whl ; sys_platform == "win32"', "six2"]
    p = resolve(reqs, {}, parse_target("linux-x86_64-py312"))
    assert [x.name for x in unlockable(p)] == ["six2"]


def test_a_version_pattern_locks_the_newest_wheel_with_the_best_tag() -> None:
    from resolver_hook.index.model import Link
    from resolver_hook.lock.wheels import best_link

    profile = parse_target("linux-x86_64-py312")
    names = [
        "demo-1.0-py3-none-any.whl",
        "demo-2.0-py3-none-any.whl",
        "demo-2.0-cp312-cp312-manylinux_2_28_x86_64.whl",  # a better tag than py3-none-any
        "demo-3.0-cp312-cp312-win_amd64.whl",  # newest, but not for this target
    ]
    links = [Link(url=f"https://x.org/{n}", filename=n) for n in names]
    best = best_link(links, "demo", "1.0", profile, versions=">=1.0")
    assert best is not None
    assert best.filename == "demo-2.0-cp312-cp312-manylinux_2_28_x86_64.whl"
