"""Issue 42, installs: real pip and uv on the loopback index of tests/installenv.py.

- a dry run killed by a signal is 128+N, not the 247 of ``sys.exit(-9)``;
- an optional package whose put-back fails is not said to be put back;
- ``--verify-kernels`` says a wheel holds no kernels instead of "runs on every GPU";
- two ``env create DIR`` at once: the second removes nothing it did not make.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.process.which import find_uv
from tests.installenv import (
    PY,
    UV,
    GpuIndex,
    clean_env,
    make_venv,
    venv_for,
    wheel_entry,
    write_manifest,
)
from tests.test_install import B200, hook, install, versions
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="a process killing itself")

# A .pth line: the interpreter kills itself (SIGKILL) as it first connects to the
# index while its command line (sys.argv, as pip reads it: an interpreter started ahead
# of its dry run is given the dry run's words after it started) holds the given word,
# so the real pip dies at the start of the run that has it.
_KILL_WHEN = (
    "import os, sys; sys.addaudithook(lambda e, a: e == 'socket.connect' "
    "and '{word}' in sys.argv and os.kill(os.getpid(), 9))\n"
)


def _site(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python*/site-packages")
    return site


@LINUX
def test_a_dry_run_killed_by_sigkill_exits_137(gpu_index: GpuIndex, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    (_site(venv) / "zz_kill_dry_run.pth").write_text(_KILL_WHEN.format(word="--dry-run"))
    before = versions(venv)
    proc = install("pip", gpu_index, venv, "demo-gpu", target=B200)
    assert proc.returncode == 137, proc.stderr
    assert "nothing was installed: pip's dry run failed (exit 137)" in proc.stderr
    assert versions(venv) == before


def _tinyb_replaced_by_optpkg(tmp_path: Path, tool: str) -> tuple[LoopbackIndex, Path]:
    """An index of mainpkg 1.0, tinyb 2.0 and optpkg 1.0 (needs tinyb 2.0, fails to
    import), and a venv for ``tool`` holding tinyb 1.0 from a file the index does not
    serve."""
    built = tmp_path / "built"
    index = LoopbackIndex(tmp_path / "index")
    index.add(build_wheel(built, "mainpkg", "1.0"))
    index.add(build_wheel(built, "tinyb", "2.0"))
    index.add(
        build_wheel(
            built, "optpkg", "1.0", requires=["tinyb==2.0"], code="raise ImportError('no')\n"
        )
    )
    old = build_wheel(tmp_path / "local", "tinyb", "1.0")
    venv = tmp_path / "venv"
    venv_for(tool, venv)
    subprocess.run(
        [*UV, "pip", "install", "--python", str(venv / "bin/python"), "--no-index", str(old.path)],
        check=True, capture_output=True, env=clean_env(),
    )  # fmt: skip
    return index, venv


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_what_a_rolled_back_optional_package_replaced_is_put_back_when_no_index_serves_it(
    tmp_path: Path, tool: str
) -> None:
    """optpkg needs tinyb 2.0 and fails to import; tinyb 1.0, installed from a file the
    index does not serve, was replaced by 2.0: its own files, kept before the optional
    install, are put back (issue 49), and the warning says so."""
    index, venv = _tinyb_replaced_by_optpkg(tmp_path, tool)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    with index.serving():
        flags = ["--target", B200, "--optional", "optpkg"]
        command = ["install"] if tool == "pip" else ["pip", "install"]
        url = index.simple_url
        proc = hook(tool, *flags, *command, "--index-url", url, "mainpkg", venv=venv,
                    manifests=manifests)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = versions(venv)
    assert found.get("tinyb") == "1.0", proc.stderr  # its own files, put back
    assert "optpkg" not in found
    assert "warning: rolled back: removed optpkg; put back tinyb 1.0" in proc.stderr
    # The files are 1.0's: its module says so.
    code = "import tinyb; print(tinyb.__version__)"
    check = subprocess.run([str(venv / "bin/python"), "-c", code],
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert check.stdout.strip() == "1.0", check.stdout + check.stderr


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_verify_kernels_refuses_a_wheel_that_holds_none_of_the_kernels_it_claims(
    tmp_path: Path, tool: str
) -> None:
    """knone's manifest claims Blackwell kernels; its wheel holds none: a claim the file
    does not bear out is refused, naming the file (issue 49), and nothing is installed."""
    index = LoopbackIndex(tmp_path / "index", core_metadata=True)
    wheel = build_wheel(tmp_path / "built", "knone", "1.0+cu130")
    index.add(wheel, simple=False)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    venv = tmp_path / "venv"
    venv_for(tool, venv)
    with index.serving():
        write_manifest(
            manifests, "knone", "wheel", wheel_entry(index, wheel, ">=13.0", ["sm_100", "sm_120"])
        )
        command = ["install"] if tool == "pip" else ["pip", "install"]
        flags = ["--verify-kernels", "--target", f"linux-x86_64-py{PY}-cuda13.0-sm120"]
        cache = {"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / "c")}
        proc = hook(tool, *flags, *command, "--index-url", index.simple_url, "knone",
                    venv=venv, manifests=manifests, env=cache)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "knone" not in versions(venv)
    assert "runs on every visible GPU" not in proc.stderr
    assert (
        f"error: knone 1.0+cu130: {wheel.path.name} holds no GPU code (no SASS or PTX in "
        "any of its files), but its manifest says it carries sm_100, sm_120"
    ) in proc.stderr


# A uv that holds `uv venv` until two commands have reached it (or 5 s passed), then
# lets one create the environment and the other try after it: the race of two
# `env create DIR` started together, made certain. Every other call is uv's own.
_RACING_UV = """\
import os, subprocess, sys, time
real, flags = {real!r}, {flags!r}
argv = sys.argv[1:]
if argv[:1] == ["venv"]:
    open(os.path.join(flags, str(os.getpid())), "w").close()
    end = time.time() + 5
    while time.time() < end and sum(f.isdigit() for f in os.listdir(flags)) < 2:
        time.sleep(0.05)
    try:
        os.mkdir(os.path.join(flags, "first"))
    except FileExistsError:
        while time.time() < end + 30 and not os.path.exists(os.path.join(flags, "made")):
            time.sleep(0.05)
    else:
        code = subprocess.call([real, *argv])
        open(os.path.join(flags, "made"), "w").close()
        sys.exit(code)
os.execv(real, [real, *argv])
"""


def test_two_env_create_of_one_folder_leave_the_first_whole(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    real = find_uv()
    assert real is not None
    flags = tmp_path / "flags"
    flags.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text(
        f"#!{sys.executable}\n" + _RACING_UV.format(real=real, flags=str(flags))
    )
    (bin_dir / "uv").chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[tool.resolver-hook.env]\nstack = ["demo-gpu"]\n'
        f'[[tool.resolver-hook.env.interpreter]]\nrequest = "{sys.executable}"\n'
    )
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gpu_index.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        UV_DEFAULT_INDEX=gpu_index.simple,
        UV_INSECURE_HOST="127.0.0.1",
    )
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    venv = tmp_path / "env"
    argv = [sys.executable, "-m", "resolver_hook", "env", "create", str(venv),
            "--project", str(project / "pyproject.toml"), "--target", B200]  # fmt: skip
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    done = [(p.wait(timeout=600), p.communicate()[1]) for p in procs]
    codes = sorted(code for code, _ in done)
    assert codes == [0, 2], done
    refused = next(err for code, err in done if code == 2)
    assert f"error: {venv} exists" in refused
    assert "removed the unfinished environment" not in refused
    assert versions(venv)["demo-gpu"] == "1.0+cu130"  # the first one's, whole


def test_a_replaced_version_that_cannot_be_put_back_is_named_with_why(tmp_path: Path) -> None:
    """Where the dry run that names what would be replaced fails, nothing is kept: a
    version the index does not bring back either is said exactly so."""
    from resolver_hook.install.backends import Installer
    from resolver_hook.install.optional import _not_back
    from resolver_hook.install.replaced import keep_replaced
    from resolver_hook.process.proc import Result

    def failing(argv: object, **_: object) -> Result:
        return Result(argv=("pip",), returncode=1, stderr="boom")

    pip = Installer(tool="pip", command=("python", "-m", "pip", "install"), python="python")
    kept = keep_replaced(pip, ["python", "-m", "pip", "install", "optpkg"], {"tinyb": "1.0"},
                         tmp_path, {}, run=failing)  # fmt: skip
    assert kept.files == {}
    assert _not_back("tinyb", {}, kept, {}) == (
        "not installed; its files were not kept: its dry run failed ('pip' failed: boom); "
        "no index served it either"
    )


def test_a_replaced_version_without_record_that_uv_leaves_beside_the_new_one_is_named(
    tmp_path: Path,
) -> None:
    """tinyb 1.0 lists no files (its RECORD is gone: a tool that wrote none). uv replaces it
    anyway ("Failed to uninstall ... missing RECORD"), so after optpkg's rollback both
    tinyb-1.0 and tinyb-2.0 metadata sit in the environment and the module is 2.0's.
    The rollback said only "removed optpkg": what the optional install replaced was
    neither put back nor named."""
    index, venv = _tinyb_replaced_by_optpkg(tmp_path, "uv")
    (record,) = _site(venv).glob("tinyb-1.0.dist-info/RECORD")
    record.unlink()
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    with index.serving():
        proc = hook("uv", "--target", B200, "--optional", "optpkg", "pip", "install",
                    "--index-url", index.simple_url, "mainpkg", venv=venv,
                    manifests=manifests)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (said,) = [line for line in proc.stderr.splitlines() if "rolled back" in line]
    assert said.startswith(
        "warning: rolled back: removed optpkg; could not put back tinyb 1.0 ("
    ), said
    assert "1.0 and 2.0 are installed side by side" in said, said
    assert "it lists no files (no RECORD)" in said, said
