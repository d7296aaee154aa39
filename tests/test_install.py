"""`resolver-hook pip install` / `uv pip install` with real pip and real uv.

Everything is real except the GPU (a --target or override) and the internet (a
loopback index of wheels built here). Facts checked come from docs/facts.md section 3
(URL constraints, uv replacing UV_CONSTRAINT, --overrides only in uv, hashes).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.installenv import (
    PY,
    GpuIndex,
    build_gpu_index,
    clean_env,
    download_pip,
    installed,
    make_uv_venv,
    make_venv,
    venv_for,
    write_manifests,
)

pytestmark = pytest.mark.integration

B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"  # picks cu130
L4 = f"linux-x86_64-py{PY}-cuda12.6-sm89"  # picks cu126
OLD_DRIVER_BLACKWELL = f"linux-x86_64-py{PY}-cuda12.6-sm120"  # no fit
# One package of each kind the index serves: a direct-URL flavour, an index flavour, plain.
EACH_KIND = ("demo-gpu", "demo-idx", "plainpkg")


def hook(
    *args: str,
    venv: Path | None = None,
    tmp: Path | None = None,
    env: dict[str, str] | None = None,
    manifests: Path | None = None,
    check: bool = False,
    cwd: Path | None = None,
    python_flags: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run resolver-hook as a user would: in the venv (VIRTUAL_ENV, PATH);
    ``python_flags`` go to its interpreter (``-X importtime``)."""
    e = clean_env(tmp, **(env or {}))
    if venv is not None:
        e["VIRTUAL_ENV"] = str(venv)
        e["PATH"] = f"{venv / 'bin'}{os.pathsep}{e['PATH']}"
    if manifests is not None:
        e["RESOLVER_HOOK_MANIFESTS"] = str(manifests)
        e["RESOLVER_HOOK_ALLOW_INSECURE_URLS"] = "1"
    proc = subprocess.run(
        [sys.executable, *python_flags, "-m", "resolver_hook", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=600,
        check=False,
        cwd=cwd,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def install(
    tool: str,
    gi: GpuIndex,
    venv: Path,
    *args: str,
    target: str = B200,
    flags: Sequence[str] = (),
    **kw: Any,
) -> subprocess.CompletedProcess[str]:
    """``resolver-hook TOOL --target T FLAGS [pip] install --index-url <gi> ARGS`` in
    ``venv``, with ``gi``'s manifests: pip or uv installing from the loopback index."""
    sub = ["install"] if tool == "pip" else ["pip", "install"]
    head = [tool, "--target", target, *flags, *sub, "--index-url", gi.simple]
    return hook(*head, *args, venv=venv, manifests=gi.manifests, **kw)


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    make_venv(tmp_path / "venv")
    return tmp_path / "venv"


@pytest.fixture
def uv_venv(tmp_path: Path) -> Path:
    return make_uv_venv(tmp_path / "uvenv")


def _install_with_manifest_file(
    gi: GpuIndex, venv: Path, manifest: Path, target: str = B200
) -> subprocess.CompletedProcess[str]:
    """pip installs demo-gpu with one manifest file named by ``--manifest`` (no folder)."""
    flags = ["--manifest", str(manifest), "--allow-insecure-urls", "--target", target]
    return hook("pip", *flags, "install", "--index-url", gi.simple, "demo-gpu", venv=venv)


@pytest.fixture
def tmpdir_for_hook(tmp_path: Path) -> Path:
    d = tmp_path / "hook-tmp"
    d.mkdir()
    return d


def versions(venv: Path) -> dict[str, str]:
    return installed(venv / "bin" / "python")


@pytest.mark.parametrize(("target", "flavour"), [(B200, "cu130"), (L4, "cu126")])
def test_pip_installs_the_flavour_for_the_target(
    gpu_index: GpuIndex, venv: Path, tmpdir_for_hook: Path, target: str, flavour: str
) -> None:
    proc = install(
        "pip",
        gpu_index,
        venv,
        *EACH_KIND,
        target=target,
        tmp=tmpdir_for_hook,
        check=True,
    )
    v = versions(venv)
    assert v["demo-gpu"] == f"1.0+{flavour}"
    assert v["demo-idx"] == f"2.0+{flavour}"
    assert v["plainpkg"] == "1.0"
    # One line per rewritten package, before the installer ran.
    assert (
        f"resolver-hook: demo-gpu: {gpu_index.index.url}/files/demo_gpu-1.0+{flavour}"
        in proc.stderr
    )
    assert f"resolver-hook: demo-idx: demo-idx==2.0+{flavour} from" in proc.stderr
    assert list(tmpdir_for_hook.iterdir()) == []  # generated files removed


@pytest.fixture(scope="module")
def current_pip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of the newest pip from the package registry (docs/facts.md section 3: test the
    oldest pip we claim, the venv's bundled one, and a current one)."""
    found = download_pip(tmp_path_factory.mktemp("pip"), "pip>=25")
    if isinstance(found, str):
        pytest.skip(found)
    return found


def test_current_pip_installs_the_flavour(
    gpu_index: GpuIndex, venv: Path, current_pip: Path, tmpdir_for_hook: Path
) -> None:
    subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-index", str(current_pip)],
        check=True,
        env=clean_env(),
    )
    pip_version = versions(venv)["pip"]
    assert int(pip_version.split(".")[0]) >= 25
    install("pip", gpu_index, venv, "demo-gpu", "demo-idx", tmp=tmpdir_for_hook, check=True)
    v = versions(venv)
    assert (v["demo-gpu"], v["demo-idx"]) == ("1.0+cu130", "2.0+cu130")


@pytest.mark.parametrize(("target", "flavour"), [(B200, "cu130"), (L4, "cu126")])
def test_uv_installs_the_flavour_for_the_target(
    gpu_index: GpuIndex, uv_venv: Path, tmpdir_for_hook: Path, target: str, flavour: str
) -> None:
    install("uv", gpu_index, uv_venv, *EACH_KIND, target=target, tmp=tmpdir_for_hook, check=True)
    v = versions(uv_venv)
    assert (v["demo-gpu"], v["demo-idx"]) == (f"1.0+{flavour}", f"2.0+{flavour}")
    assert list(tmpdir_for_hook.iterdir()) == []


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_timings_record_names_the_dry_run_and_the_install(
    gpu_index: GpuIndex, tmp_path: Path, tool: str
) -> None:
    """RESOLVER_HOOK_TIMINGS: the phases and each child process of one install."""
    record = tmp_path / "timings.json"
    env = {"RESOLVER_HOOK_TIMINGS": str(record)}
    venv = venv_for(tool, tmp_path / "venv")
    install(tool, gpu_index, venv, "demo-gpu", "plainpkg", env=env, check=True)
    data = json.loads(record.read_text())
    assert {"manifests", "machine", "plan", "proof", "install"} <= set(data["phases"])
    phases = [c["phase"] for c in data["children"]]
    assert phases.count("install") == 1
    assert phases.count("proof") >= 1
    ran = {c["phase"]: c["argv"] for c in data["children"]}
    if tool == "pip":
        assert ran["install"] == [str(venv / "bin" / "python"), "-m", "pip", "install"]
    else:
        assert Path(ran["install"][0]).name == "uv"
        assert ran["install"][1:3] == ["pip", "install"]
    assert data["total_ms"] >= sum(c["ms"] for c in data["children"])


@pytest.mark.parametrize("proof", [True, False], ids=["checked", "no-proof"])
def test_a_plain_install_imports_only_what_it_uses(
    gpu_index: GpuIndex, venv: Path, proof: bool
) -> None:
    """A checked install of verified flavours for a target (no kernel list assumed, no
    pip configuration file, no variant wheel) leaves the kernel readers, configparser,
    the variant-wheel module and importlib.metadata (the environment is read by a child
    process) unimported; an unchecked one (--no-proof) the proof's modules too: start-up
    time of every install."""
    proc = install(
        "pip",
        gpu_index,
        venv,
        *EACH_KIND,
        flags=[] if proof else ["--no-proof"],
        python_flags=["-X", "importtime"],
        check=True,
    )
    # -X importtime lists every module the hook imported (not the installer's: the flag
    # is not passed on to child processes).
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    unused = {
        "resolver_hook.install.kernels",
        "resolver_hook.inventory.kernels",
        "resolver_hook.install.variantwheels",
        "configparser",
        "importlib.metadata",
    }
    checking = {"resolver_hook.install.checked", "resolver_hook.install.proof"}
    if proof:
        assert checking <= imported  # the proof ran
    else:
        unused |= checking
    assert not imported & unused, imported & unused
    assert versions(venv)["demo-idx"] == "2.0+cu130"


def test_env_override_drives_detection(gpu_index: GpuIndex, uv_venv: Path) -> None:
    hook(
        "uv",
        "pip",
        "install",
        "--index-url",
        gpu_index.simple,
        "demo-gpu",
        venv=uv_venv,
        manifests=gpu_index.manifests,
        check=True,
        env={"RESOLVER_HOOK_OVERRIDE_CUDA": "12.8", "RESOLVER_HOOK_OVERRIDE_SM": "8.6"},
    )
    assert versions(uv_venv)["demo-gpu"] == "1.0+cu126"


def test_no_fit_stops_before_the_installer(gpu_index: GpuIndex, venv: Path) -> None:
    before = versions(venv)
    proc = install("pip", gpu_index, venv, "demo-gpu", "plainpkg", target=OLD_DRIVER_BLACKWELL)
    assert proc.returncode == 1
    assert "error: demo-gpu:" in proc.stderr
    assert "sm_120" in proc.stderr
    assert "nothing was installed" in proc.stderr
    assert proc.stdout == ""  # pip printed nothing: it never ran
    assert versions(venv) == before


@pytest.mark.parametrize(
    ("tool", "reqs", "says"),
    [
        ("pip", ("demo-gpu", "plainpkg"), "THESE PACKAGES DO NOT MATCH THE HASHES"),
        ("uv", ("demo-gpu",), "hash"),
    ],
)
def test_wrong_sha256_installs_nothing(
    tmp_path: Path, tool: str, reqs: tuple[str, ...], says: str
) -> None:
    venv = venv_for(tool, tmp_path / "venv")
    gi = build_gpu_index(tmp_path / "bad")
    with gi.index.serving():
        write_manifests(gi, bad_sha=True)
        before = versions(venv)
        proc = install(tool, gi, venv, *reqs)
        assert proc.returncode != 0
        # pip's own words, on either stream; uv's in any case on stderr.
        assert says in (proc.stderr + proc.stdout if tool == "pip" else proc.stderr.lower())
        assert versions(venv) == before


def test_url_naming_another_project_is_refused(
    gpu_index: GpuIndex, venv: Path, tmp_path: Path
) -> None:
    other = gpu_index.wheels["plain"]
    manifest = tmp_path / "evil.toml"
    manifest.write_text(
        f'schema = 1\n[package]\nname = "demo-gpu"\n[[wheel]]\n'
        f'url = "{gpu_index.index.wheel_url(other)}"\n'
    )
    before = versions(venv)
    proc = _install_with_manifest_file(gpu_index, venv, manifest)
    assert proc.returncode == 2
    assert "plainpkg" in proc.stderr
    assert "demo-gpu" in proc.stderr
    assert proc.stdout == ""
    assert versions(venv) == before


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_require_hashes(gpu_index: GpuIndex, tmp_path: Path, tool: str) -> None:
    venv = venv_for(tool, tmp_path / "v")
    plain = gpu_index.wheels["plain"]
    reqs = tmp_path / "requirements.txt"
    # The user's hash for demo-gpu is of another flavour's file: it must be replaced.
    text = (
        f"demo-gpu==1.0 --hash=sha256:{gpu_index.wheels['gpu126'].sha256}\n"
        f"plainpkg==1.0 --hash=sha256:{plain.sha256}\n"
    )
    reqs.write_text(text)
    digest = hashlib.sha256(reqs.read_bytes()).hexdigest()
    cmd = ["pip"] if tool == "pip" else ["uv", "pip"]
    head, tail = cmd[0], cmd[1:]
    proc = hook(
        head,
        "--target",
        B200,
        *tail,
        "install",
        "--require-hashes",
        "--index-url",
        gpu_index.simple,
        "-r",
        str(reqs),
        venv=venv,
        manifests=gpu_index.manifests,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert versions(venv)["demo-gpu"] == "1.0+cu130"
    assert "--require-hashes: requirement lines rewritten" in proc.stderr
    assert hashlib.sha256(reqs.read_bytes()).hexdigest() == digest  # user file untouched


@pytest.mark.parametrize("pip", ["venv's pip", "current pip"])
def test_transitive_pin_reported_under_pip(
    gpu_index: GpuIndex, venv: Path, pip: str, request: pytest.FixtureRequest
) -> None:
    if pip == "current pip":
        wheel = request.getfixturevalue("current_pip")
        subprocess.run(
            [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-index", str(wheel)],
            check=True,
            env=clean_env(),
        )
    proc = install("pip", gpu_index, venv, "app", "demo-gpu")
    assert proc.returncode != 0
    assert (
        "error: app 1.0 pins demo-gpu==1.0+cu126, but this machine needs demo-gpu 1.0+cu130"
    ) in proc.stderr
    assert "hint: pip cannot replace a dependency's exact pin" in proc.stderr
    assert "app" not in versions(venv)


def test_transitive_pin_overridden_under_uv(gpu_index: GpuIndex, uv_venv: Path) -> None:
    proc = install("uv", gpu_index, uv_venv, "app", "demo-gpu")
    assert proc.returncode == 0, proc.stderr
    v = versions(uv_venv)
    assert (v["app"], v["demo-gpu"]) == ("1.0", "1.0+cu130")
    assert "--overrides" in proc.stderr


def test_uv_constraint_env_is_forwarded(gpu_index: GpuIndex, uv_venv: Path, tmp_path: Path) -> None:
    """uv drops UV_CONSTRAINT when given -c (docs/facts.md section 3): we pass it on."""
    user = tmp_path / "user-constraints.txt"
    user.write_text("plainpkg<1.0\n")  # unsatisfiable: proves the file is in force
    proc = install(
        "uv", gpu_index, uv_venv, "demo-gpu", "plainpkg", env={"UV_CONSTRAINT": str(user)}
    )
    assert proc.returncode != 0
    assert "plainpkg" in proc.stderr


def test_interrupted_run_leaves_no_temporary_files(
    gpu_index: GpuIndex, venv: Path, tmpdir_for_hook: Path, tmp_path: Path
) -> None:
    # An installer that hangs: the index accepts the connection and never answers.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    e = clean_env(
        tmpdir_for_hook,
        VIRTUAL_ENV=str(venv),
        RESOLVER_HOOK_MANIFESTS=str(gpu_index.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
    )
    e["PATH"] = f"{venv / 'bin'}{os.pathsep}{e['PATH']}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "resolver_hook",
            "pip",
            "--target",
            B200,
            "install",
            "--index-url",
            f"http://127.0.0.1:{port}/simple/",
            "--timeout",
            "60",
            "--retries",
            "0",
            "demo-gpu",
            "plainpkg",
        ],
        env=e,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(tmpdir_for_hook.iterdir()):
            time.sleep(0.05)
        assert any(tmpdir_for_hook.iterdir()), "the hook never wrote its files"
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        silent.close()
    assert proc.returncode != 0
    assert list(tmpdir_for_hook.iterdir()) == []


def test_enable_then_plain_pip(gpu_index: GpuIndex, venv: Path, tmp_path: Path) -> None:
    conf = venv / "pip.conf"
    conf.write_text("[global]\n# mine\ntimeout = 61\n")
    original = conf.read_bytes()
    hook("enable", "--target", B200, venv=venv, manifests=gpu_index.manifests, check=True)
    status = hook("status", venv=venv)
    assert "on in" in status.stdout
    e = clean_env(VIRTUAL_ENV=str(venv))
    e.pop("PIP_CONFIG_FILE")  # a plain pip reads the venv's pip.conf (its site config)
    subprocess.run(
        [str(venv / "bin/pip"), "install", "--index-url", gpu_index.simple, "demo-gpu", "demo-idx"],
        check=True,
        env=e,
        capture_output=True,
    )
    v = versions(venv)
    assert (v["demo-gpu"], v["demo-idx"]) == ("1.0+cu130", "2.0+cu130")
    hook("disable", venv=venv, check=True)
    assert conf.read_bytes() == original
    assert not (venv / "resolver-hook").exists()
    assert hook("status", venv=venv).returncode == 1


def test_enable_without_pip_conf_and_machine_change(gpu_index: GpuIndex, venv: Path) -> None:
    env = {"RESOLVER_HOOK_OVERRIDE_CUDA": "12.6", "RESOLVER_HOOK_OVERRIDE_SM": "8.9"}
    hook("enable", venv=venv, manifests=gpu_index.manifests, env=env, check=True)
    assert hook("status", venv=venv, env=env).returncode == 0
    changed = hook(
        "status",
        venv=venv,
        env={"RESOLVER_HOOK_OVERRIDE_CUDA": "13.0", "RESOLVER_HOOK_OVERRIDE_SM": "12.0"},
    )
    assert changed.returncode == 1
    assert "driver CUDA 12.6 -> 13.0" in changed.stdout
    assert "GPUs sm_89 -> sm_120" in changed.stdout
    hook("disable", venv=venv, check=True)
    assert not (venv / "pip.conf").exists()


def test_optional_rollback_keeps_main_install(gpu_index: GpuIndex, venv: Path) -> None:
    """demo-broken upgrades helperlib 1.0 -> 2.0 and fails to import: both are undone."""
    proc = install(
        "pip", gpu_index, venv, "demo-gpu", "helperlib==1.0", flags=["--optional", "demo-broken"]
    )
    assert proc.returncode == 0, proc.stderr
    v = versions(venv)
    assert v["demo-gpu"] == "1.0+cu130"
    assert v["helperlib"] == "1.0"  # what the optional package replaced is put back
    assert "demo-broken" not in v
    assert "warning: optional demo-broken skipped: installed but does not import" in proc.stderr
    assert "kernels missing" in proc.stderr
    assert "warning: rolled back: removed demo-broken; put back helperlib 1.0" in proc.stderr


def test_dry_run_with_nested_requirement_files(
    gpu_index: GpuIndex, venv: Path, tmp_path: Path
) -> None:
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner/gpu.txt").write_text("demo-gpu\n")
    (tmp_path / "outer.txt").write_text("-r inner/gpu.txt\nplainpkg\n")
    before = versions(venv)
    proc = install(
        "pip", gpu_index, venv, "--dry-run", "-r", str(tmp_path / "outer.txt"), check=True
    )
    assert "Would install demo-gpu-1.0+cu130 plainpkg-1.0" in proc.stdout
    assert versions(venv) == before


def test_optional_that_fits_is_kept(gpu_index: GpuIndex, uv_venv: Path) -> None:
    proc = install("uv", gpu_index, uv_venv, "demo-gpu", flags=["--optional", "demo-idx"])
    assert proc.returncode == 0, proc.stderr
    assert versions(uv_venv)["demo-idx"] == "2.0+cu130"
    assert "optional demo-idx: installed and imports" in proc.stderr


def test_installer_exit_code_is_passed_on(gpu_index: GpuIndex, venv: Path) -> None:
    proc = install("pip", gpu_index, venv, "no-such-package-here")
    assert proc.returncode == 1  # pip's own code for "no matching distribution"
    assert "no-such-package-here" in proc.stderr


@pytest.mark.parametrize("options", [[], ["--require-hashes"]])
def test_requirements_after_double_dash(
    gpu_index: GpuIndex, venv: Path, options: list[str]
) -> None:
    """pip reads every argument after "--" as a requirement: the hook's own options go first."""
    proc = hook(
        "pip",
        "--target",
        B200,
        "install",
        "--dry-run",
        "--index-url",
        gpu_index.simple,
        *options,
        "--",
        "demo-gpu",
        venv=venv,
        manifests=gpu_index.manifests,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Would install demo-gpu-1.0+cu130" in proc.stdout


def test_clustered_short_options(gpu_index: GpuIndex, venv: Path, tmp_path: Path) -> None:
    """`pip install -Ur FILE` is `-U -r FILE` (optparse clusters short options)."""
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("demo-gpu\n")
    proc = hook(
        "pip",
        "--target",
        L4,
        "install",
        "--dry-run",
        "--index-url",
        gpu_index.simple,
        "-Ur",
        str(reqs),
        venv=venv,
        manifests=gpu_index.manifests,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Would install demo-gpu-1.0+cu126" in proc.stdout


@pytest.mark.parametrize("optional", ["demo-gpu~=1.0", "demo-gpu ; python_version > '3'"])
def test_optional_without_a_fit_does_not_block(
    gpu_index: GpuIndex, venv: Path, optional: str
) -> None:
    """Any requirement form names the optional package: its no-fit skips it, nothing more."""
    proc = hook(
        "pip",
        "--target",
        OLD_DRIVER_BLACKWELL,
        "--optional",
        optional,
        "install",
        "--dry-run",
        "--index-url",
        gpu_index.simple,
        "plainpkg",
        venv=venv,
        manifests=gpu_index.manifests,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Would install plainpkg-1.0" in proc.stdout
    assert f"warning: optional {optional} skipped: no build of demo-gpu fits" in proc.stderr


def test_missing_install_word_is_a_usage_error() -> None:
    proc = hook("pip", "--target", B200, "freeze")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: expected 'install' after 'resolver-hook pip'")


def test_source_build_needs_are_checked_before_the_installer(
    gpu_index: GpuIndex, venv: Path, tmp_path: Path
) -> None:
    """No wheel fits and the manifest allows a build whose needs this machine lacks."""
    manifest = tmp_path / "demo-gpu.toml"
    manifest.write_text(
        (gpu_index.manifests / "demo-gpu.toml").read_text() + '\n[build]\nneeds = ["nvcc>=99.0"]\n'
    )
    before = versions(venv)
    proc = _install_with_manifest_file(gpu_index, venv, manifest, target=OLD_DRIVER_BLACKWELL)
    assert proc.returncode == 1
    assert "error: demo-gpu: cannot build from source: nvcc>=99.0" in proc.stderr
    assert "a source build's needs are not met" in proc.stderr
    assert proc.stdout == ""
    assert versions(venv) == before


@pytest.mark.parametrize("how", ["-c", "PIP_CONSTRAINT", "pip.conf"])
def test_constraints_pip_reads_elsewhere_are_planned_like_c(
    gpu_index: GpuIndex, tmp_path: Path, how: str
) -> None:
    """A constraint on the flavour pip will read, however it is given, reaches the plan."""
    venv = tmp_path / "v"
    make_venv(venv)
    cons = tmp_path / "cons.txt"
    cons.write_text("demo-gpu==1.0+cu126\n")
    args = ["pip", "--target", L4, "install", "--index-url", gpu_index.simple, "demo-gpu"]
    env: dict[str, str] = {}
    if how == "-c":
        args += ["-c", str(cons)]
    elif how == "PIP_CONSTRAINT":
        env["PIP_CONSTRAINT"] = str(cons)
    else:
        site = tmp_path / "site.conf"  # named by PIP_CONFIG_FILE, read after the others
        site.write_text(f"# mine\n[install]\nconstraint = {cons}\n")
        env["PIP_CONFIG_FILE"] = str(site)
    proc = hook(*args, venv=venv, env=env, manifests=gpu_index.manifests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert versions(venv)["demo-gpu"] == "1.0+cu126"
    if how != "-c":
        assert "planned with the constraints the installer reads from" in proc.stderr
    # On a machine where that pin is not the flavour: refused with the reason, before pip.
    other = tmp_path / "other"
    make_venv(other)
    refused = hook(*args[:2], B200, *args[3:], venv=other, env=env, manifests=gpu_index.manifests)
    assert refused.returncode == 1
    said = " ".join(refused.stderr.split())  # fitted to 80 columns: wrapped at spaces
    assert "demo-gpu==1.0+cu126 has no build that runs here: " in said  # the pin it read
    assert "the nearest that does: demo-gpu==1.0+cu130" in said
    assert "ResolutionImpossible" not in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "demo-gpu" not in versions(other)


def test_uv_requirements_from_stdin_are_planned_and_installed(
    gpu_index: GpuIndex, uv_venv: Path, tmp_path: Path
) -> None:
    e = clean_env(tmp_path, VIRTUAL_ENV=str(uv_venv))
    e["RESOLVER_HOOK_MANIFESTS"] = str(gpu_index.manifests)
    e["RESOLVER_HOOK_ALLOW_INSECURE_URLS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "resolver_hook", "uv", "--target", B200, "pip", "install",
         "--index-url", gpu_index.simple, "-r", "-"],
        input="demo-gpu\nplainpkg==1.0\n", capture_output=True, text=True, env=e, timeout=600,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = versions(uv_venv)
    assert (v["demo-gpu"], v["plainpkg"]) == ("1.0+cu130", "1.0")


def test_pip_has_no_stdin_requirements_and_says_so(gpu_index: GpuIndex, venv: Path) -> None:
    proc = hook("pip", "--target", B200, "install", "-r", "-", venv=venv)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: could not open requirements file -")


def test_a_target_for_another_python_is_planned_with_a_warning(
    gpu_index: GpuIndex, venv: Path
) -> None:
    other = f"linux-x86_64-py{sys.version_info[0]}{sys.version_info[1] + 1}-cuda13.0-sm100"
    proc = hook("pip", "--target", other, "install", "--dry-run", "--index-url",
                gpu_index.simple, "plainpkg", venv=venv, manifests=gpu_index.manifests)  # fmt: skip
    have = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"but {venv / 'bin' / 'python'} is Python {have}: the plan is for Python" in proc.stderr
    assert proc.stderr.count("warning:") == 1


@pytest.mark.parametrize("spelling", [["--target", B200], [f"--target={B200}"], ["-t", B200]])
def test_pips_target_dir_that_reads_as_a_spec_gets_one_warning(
    gpu_index: GpuIndex, venv: Path, tmp_path: Path, spelling: list[str]
) -> None:
    proc = hook("pip", "install", "--index-url", gpu_index.simple, *spelling, "plainpkg",
                venv=venv, manifests=gpu_index.manifests, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.startswith("warning:")]
    assert (tmp_path / B200 / "plainpkg").is_dir()  # pip's --target DIR, as documented
    assert lines == [
        f"warning: --target {B200} after 'install' is the installer's --target DIR: it "
        f"installs into a folder named {B200}; to plan for that machine, put it before "
        "'install' (resolver-hook pip --target SPEC install ...)"
    ]


def test_a_target_dir_that_is_no_spec_gets_no_warning(
    gpu_index: GpuIndex, venv: Path, tmp_path: Path
) -> None:
    proc = hook("pip", "install", "--index-url", gpu_index.simple, "--target", "vendor",
                "plainpkg", venv=venv, manifests=gpu_index.manifests, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "warning:" not in proc.stderr


def test_a_pip_too_old_for_url_constraints_is_named_before_it_runs(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """pip 20.3 and 21.0 stop at 'Links are not allowed as constraints': say it first.

    No such pip can be installed offline, so the venv's pip is a stand-in that answers
    ``--version`` as pip 21.0 does and records any other call.
    """
    venv = tmp_path / "old"
    make_venv(venv, with_pip=False)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "pip").mkdir()
    (site / "pip" / "__init__.py").write_text("")
    ran = tmp_path / "pip-ran"
    (site / "pip" / "__main__.py").write_text(
        "import os, sys\n"
        "if sys.argv[1:] == ['--version']:\n"
        "    print('pip 21.0.1 from ' + os.path.dirname(__file__) + ' (python 3.x)')\n"
        f"else:\n    open({str(ran)!r}, 'w').close()\n"
    )
    proc = hook("pip", "--target", B200, "install", "--index-url", gpu_index.simple,
                "demo-gpu", venv=venv, manifests=gpu_index.manifests)  # fmt: skip
    assert proc.returncode == 1
    assert (
        f"error: pip 21.0 (of {venv / 'bin' / 'python'}) cannot read the plan's URL "
        "constraints: that needs pip >= 21.1"
    ) in proc.stderr
    assert not ran.exists()
