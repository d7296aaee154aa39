"""An application's environment declared in pyproject.toml: validation, env plan, env create.

``env plan`` tests read the bundled example (resolver_hook/examples/ai-toolkit) against
the frozen manifests, on the machines a hand-written mapper told apart. ``env create``
runs real uv against the loopback index of tests/installenv.py.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.appenv.declaration import parse_declaration
from resolver_hook.inventory.snapshot import dump_snapshot
from resolver_hook.manifest import ManifestError
from tests.clirun import cli
from tests.installenv import PY, GpuIndex, clean_env, installed
from tests.wheelfactory import LoopbackIndex, build_wheel

RTX4090 = "linux-x86_64-py312-cuda13.0-sm89"
RTX5090_OLD_DRIVER = "linux-x86_64-py312-cuda12.8-sm120"
WINDOWS_ON_ARM = "windows-aarch64-py312-cuda13.0-sm89"
APPLE = "macos-aarch64-py312"
CPU_ONLY = "linux-x86_64-py312"
ROCM = "linux-x86_64-py312-rocm7.2"


def env_plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return cli(capsys, "env", "plan", "--example", *argv)


def env_plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """``env plan --example ARGV... --json``, which must succeed quietly: the plan."""
    code, out, err = env_plan(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    data: dict[str, Any] = json.loads(out)
    return data


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``env plan --example ARGV...``, which must refuse the machine (exit 1, no pass
    printed): its standard error."""
    code, out, err = env_plan(capsys, *argv)
    assert code == 1
    assert "pass 1" not in out
    return err


def test_a_gpu_workstation_gets_every_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = env_plan(capsys, "--target", RTX4090)
    assert (code, err) == (0, "")
    assert "interpreter: uv venv --python 3.12\n" in out
    assert "  torch: torch==2.13.0+cu130 from https://download.pytorch.org/whl/cu130/torch/" in out
    assert "requirements.txt\n" in out.split("pass 2, requirements: -r ", 1)[1]
    assert "pass 3, extras (--upgrade): torchcodec==0.15.0\n" in out
    optional = out.split("pass 4, optional", 1)[1]
    assert "flash-attn==2.8.3, natten, flash-linear-attention==0.5.2" in optional
    assert "  flash-attn: https://github.com/mjun0812/" in optional
    assert "cu130torch2.13-cp312-cp312-manylinux" in optional
    assert "every pass: the stack's pins as constraints" in out


def test_an_old_driver_is_refused_with_the_driver_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = refused(capsys, "--target", RTX5090_OLD_DRIVER)
    assert "error: torch: no build of torch fits this machine" in err
    assert "hint: a driver of 580 or newer (CUDA 13.0) gets torch 2.13.0+cu130" in err
    assert err.endswith("error: the stack has no build for this machine\n")


def test_windows_on_arm_gets_an_x64_interpreter_and_the_x64_stack(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = env_plan(capsys, "--target", WINDOWS_ON_ARM)
    assert code == 0
    assert "planned for: Windows x86_64, Python 3.12" in out
    assert "interpreter: uv venv --python cpython-3.12-windows-x86_64-none\n" in out
    assert "cp312-cp312-win_amd64.whl" in out
    assert "triton-windows>=3.7,<3.8" in out
    assert "natten" not in out  # no Windows wheels: the selector leaves it out
    assert "note: Windows on Arm: the x64 stack" in out


def test_apple_silicon_gets_the_plain_stack_and_no_accelerators(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = env_plan(capsys, "--target", APPLE)
    assert code == 0
    assert "  torch: torch==2.13.0, as written: the plain build from your index fits" in out
    assert "optional" not in out
    assert "note: flash-attn, NATTEN, triton and flash-linear-attention are unavailable" in out


def test_a_cpu_only_machine_is_refused_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, "--target", CPU_ONLY)
    assert "this environment refuses CPU-only machines" in err
    assert err.endswith("hint: pass --cpu to make a CPU-only environment anyway\n")
    code, out, err = env_plan(capsys, "--target", CPU_ONLY, "--cpu")
    assert (code, err) == (0, "")
    assert "  torch: torch==2.13.0+cpu from https://download.pytorch.org/whl/cpu/torch/" in out
    assert "optional" not in out
    assert "note: CPU-only environment" in out


def test_rocm_gets_the_rocm_stack_and_no_cuda_accelerators(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = env_plan_json(capsys, "--target", ROCM)
    assert data["accelerator"] == "rocm"
    assert [p["kind"] for p in data["passes"]] == ["stack", "requirements", "extras", "optional"]
    stack = data["passes"][0]["choices"]
    assert stack[0].startswith("torch: torch==2.13.0+rocm7.1 from ")
    assert data["passes"][3]["packages"] == ["flash-linear-attention==0.5.2"]
    assert "AMD ROCm support is experimental" in " ".join(data["notes"])


def _declaration(tmp_path: Path, body: str, files: tuple[str, ...] = ()) -> Path:
    for name in files:
        (tmp_path / name).write_text("plainpkg\n")
    tables = textwrap.dedent(body).replace("[[", "[[tool.resolver-hook.env.")
    (tmp_path / "pyproject.toml").write_text("[tool.resolver-hook.env]\n" + tables)
    return tmp_path / "pyproject.toml"


def test_a_grace_machine_gets_its_own_requirements_file_and_the_aarch64_stack(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _declaration(
        tmp_path,
        """\
        stack = ["torch==2.13.0"]
        [[requirements]]
        when = { grace = true }
        file = "dgx_requirements.txt"
        [[requirements]]
        file = "requirements.txt"
        """,
        ("dgx_requirements.txt", "requirements.txt"),
    )
    code, out, _ = cli(
        capsys, "env", "plan", "--project", str(path), "--target",
        "linux-aarch64-py312-cuda13.0-sm121", "--json",
    )  # fmt: skip
    assert code == 0
    passes = json.loads(out)["passes"]
    assert passes[1]["file"] == str(tmp_path / "dgx_requirements.txt")
    assert passes[1]["why"] == "grace"
    assert any("manylinux_2_28_aarch64" in c or "aarch64" in c for c in passes[0]["choices"])
    code, out, _ = cli(capsys, "env", "plan", "--project", str(path), "--target", RTX4090, "--json")
    assert json.loads(out)["passes"][1]["file"] == str(tmp_path / "requirements.txt")


def test_every_problem_of_a_declaration_in_one_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _declaration(
        tmp_path,
        """\
        stak = ["torch"]
        [[requirements]]
        when = { gpu = "kepler" }
        file = "missing.txt"
        [[optional]]
        packages = ["flash-attn"]
        when = { acelerator = "cuda" }
        """,
    )
    code, out, err = cli(capsys, "env", "plan", "--project", str(path), "--target", RTX4090)
    assert (code, out) == (2, "")
    source = f"{path} [tool.resolver-hook.env]"
    assert err.startswith(f"error: 5 problems in {source}:\n")
    for line in (
        f"{source}: stak: unknown key; did you mean 'stack'?",
        f"{source}: requirements[0].when.gpu: unknown GPU family 'kepler' (known: volta,",
        f"{source}: requirements[0].file: {tmp_path / 'missing.txt'}: no such file",
        f"{source}: optional[0].when.acelerator: unknown key; did you mean 'accelerator'?",
        f"{source}: stack: missing or empty",
    ):
        assert f"  {line}" in err, line


def test_a_declaration_is_validated_without_a_machine(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        parse_declaration(
            {"stack": ["torch", "not a requirement!"], "cpu": "sometimes", "python": 3.12},
            source="decl",
            root=tmp_path,
        )
    assert [p.split(": ", 2)[1] for p in info.value.problems] == ["python", "cpu", "stack[1]"]
    with pytest.raises(ManifestError) as info:
        parse_declaration({"stack": "torch"}, source="decl", root=tmp_path)
    assert info.value.problems == ("decl: stack: expected a list of strings, got a string",)


def test_no_declaration_is_one_error_with_a_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    code, _, err = cli(capsys, "env", "plan", "--project", str(tmp_path))
    assert code == 2
    assert err.startswith(f"error: {tmp_path / 'pyproject.toml'}: no [tool.resolver-hook.env]")
    assert "\nhint: " in err


# --- env create with real uv -------------------------------------------------------

B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"


def _create(gi: GpuIndex, project: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(gi.manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        UV_DEFAULT_INDEX=gi.simple,
        UV_INSECURE_HOST="127.0.0.1",
    )
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", "env", "create", str(venv),
         "--project", str(project), "--target", B200],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_env_create_runs_the_passes_in_order_with_the_stack_pinned(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    project = _declaration(
        tmp_path,
        f"""\
        stack = ["demo-gpu"]
        [[interpreter]]
        request = "{sys.executable}"
        [[requirements]]
        file = "requirements.txt"
        [[extras]]
        packages = ["helperlib==1.0"]
        [[optional]]
        packages = ["demo-broken"]
        [[no-deps]]
        packages = ["app"]
        """,
        ("requirements.txt",),
    )
    venv = tmp_path / "env"
    proc = _create(gpu_index, project, venv)
    assert proc.returncode == 0, proc.stderr
    passes = [line for line in proc.stderr.splitlines() if line.startswith("resolver-hook: pass ")]
    assert passes == [
        "resolver-hook: pass 1/5, stack: demo-gpu",
        "resolver-hook: pass 2/5, requirements: requirements.txt",
        "resolver-hook: pass 3/5, extras: helperlib==1.0",
        "resolver-hook: pass 4/5, optional: demo-broken",
        "resolver-hook: pass 5/5, no-deps: app",
    ]
    found = installed(venv / "bin" / "python")
    # demo-broken needs helperlib 2.0 and fails to import: rolled back, helperlib put back.
    assert "demo-broken" not in found
    assert found["helperlib"] == "1.0"
    assert found["demo-gpu"] == "1.0+cu130"  # the stack's flavour, kept on every pass
    assert found["plainpkg"] == "1.0"
    # app pins demo-gpu==1.0+cu126; installed with --no-deps it moves nothing.
    assert found["app"] == "1.0"
    assert "warning: optional demo-broken skipped: installed but does not import" in proc.stderr


def test_a_failed_required_pass_leaves_no_environment(gpu_index: GpuIndex, tmp_path: Path) -> None:
    project = _declaration(
        tmp_path,
        f"""\
        stack = ["demo-gpu"]
        [[interpreter]]
        request = "{sys.executable}"
        [[extras]]
        packages = ["no-such-package-here"]
        """,
    )
    venv = tmp_path / "env"
    proc = _create(gpu_index, project, venv)
    assert proc.returncode == 1
    assert "resolver-hook: pass 1/2, stack: demo-gpu" in proc.stderr
    assert "error: pass 2, extras, failed: uv exited with" in proc.stderr
    assert "(installed: stack)" in proc.stderr
    assert not venv.exists()


def test_env_create_refuses_an_existing_folder(gpu_index: GpuIndex, tmp_path: Path) -> None:
    project = _declaration(tmp_path, 'stack = ["demo-gpu"]\n')
    venv = tmp_path / "env"
    venv.mkdir()
    (venv / "keep").write_text("mine")
    proc = _create(gpu_index, project, venv)
    assert proc.returncode == 2
    assert f"error: {venv} exists" in proc.stderr
    assert (venv / "keep").read_text() == "mine"


@pytest.mark.builtin_data
def test_the_example_on_a_dgx_spark_uses_the_dgx_file_and_the_aarch64_stack(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = env_plan_json(capsys, "--target", "linux-aarch64-py312-cuda13.0-sm121")
    assert data["passes"][1]["file"].endswith("dgx_requirements.txt")
    assert data["passes"][1]["why"] == "grace"
    torch = data["passes"][0]["choices"][0]
    assert torch.startswith("torch: torch==2.13.0+cu130 ")
    assert "Linux aarch64" in torch


def test_a_pass_with_an_unjudged_package_lists_it_among_its_choices() -> None:
    # A CUDA distribution no manifest describes is unjudged on a GPU machine (issue 50):
    # the pass's choices say so beside the rewritten packages, never a traceback.
    from resolver_hook.appenv.plan import EnvPass
    from resolver_hook.host import parse_target
    from resolver_hook.resolve import resolve
    from tests.frozen import frozen_manifests

    reqs = ["torch", "nvidia-cublas-cu12", "requests"]
    plan = resolve(reqs, frozen_manifests(), parse_target("linux-x86_64-py312-cuda13.0-sm100"))
    got = EnvPass(kind="requirements", packages=tuple(reqs), plan=plan).choices()
    assert [c.split(":", 1)[0] for c in got] == ["torch", "nvidia-cublas-cu12"]
    assert "UNJUDGED: no manifest describes its CUDA builds" in got[1]


UPSTREAM = "https://gpu.example.org"  # never reached: no such host here


def _stack_on_a_mirror(tmp_path: Path, mirror: LoopbackIndex) -> tuple[Path, dict[str, str]]:
    """A declaration whose stack is demo-idx 2.0+cu130, its manifest naming its page on
    UPSTREAM, which ``mirror`` serves (RESOLVER_HOOK_MIRRORS): the pyproject.toml and
    the environment to run resolver-hook in."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "demo-idx.toml").write_text(
        'schema = 1\n[package]\nname = "demo-idx"\n[[index]]\n'
        f'url = "{UPSTREAM}/links/cu130/demo-idx/"\nversion = "2.0+cu130"\n'
        'cuda = ">=13.0"\ngpu = ["sm_100"]\n'
    )
    project = _declaration(
        tmp_path, f'stack = ["demo-idx"]\n[[interpreter]]\nrequest = "{sys.executable}"\n'
    )
    env = clean_env(
        RESOLVER_HOOK_MANIFESTS=str(manifests),
        RESOLVER_HOOK_ALLOW_INSECURE_URLS="1",
        RESOLVER_HOOK_MIRRORS=f"{UPSTREAM}={mirror.url}",
        UV_DEFAULT_INDEX=mirror.simple_url,
        UV_INSECURE_HOST="127.0.0.1",
    )
    return project, env


def test_env_plan_and_create_point_at_the_mirror_of_a_manifests_page(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """A manifest names its page on an upstream that only a mirror serves here
    (RESOLVER_HOOK_MIRRORS): env plan shows the mirror's page, and env create's passes
    hand uv the mirror's page, as plan and install do (env reads no page, but where a
    URL points is the mirror's business, not the reading's)."""
    upstream = UPSTREAM
    project, env = _stack_on_a_mirror(tmp_path, gpu_index.index)
    mirrored = gpu_index.index.links_url("cu130", "demo-idx")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "resolver_hook", "env", *args, "--project", str(project),
             "--target", B200],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip

    proc = run("plan")
    assert proc.returncode == 0, proc.stderr
    assert f"demo-idx: demo-idx==2.0+cu130 from {mirrored}:" in proc.stdout
    assert upstream not in proc.stdout
    venv = tmp_path / "env"
    proc = run("create", str(venv))
    assert proc.returncode == 0, proc.stderr
    assert upstream not in proc.stderr
    assert installed(venv / "bin" / "python")["demo-idx"] == "2.0+cu130"


# Runs the CLI with the shipped snapshot replaced by the file named in argv[1].
_WITH_SNAPSHOT = """
import sys
from pathlib import Path
import resolver_hook.planner
from resolver_hook.cli import main
from resolver_hook.inventory.snapshot import load_snapshot
snapshot = load_snapshot(Path(sys.argv[1]).read_text())
resolver_hook.planner.builtin_snapshot = lambda: snapshot
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("served", ["swapped", "upstream"])
def test_env_create_checks_a_mirrors_file_against_the_snapshots_sha256(
    tmp_path: Path, served: str
) -> None:
    """The shipped snapshot records the upstream's demo-idx 2.0+cu130 wheel; the mirror
    (RESOLVER_HOOK_MIRRORS) serves a file of the same name. env reads no page, so the
    pass pins the release from the mirror's page: with the snapshot's sha256, which uv
    checks. Another file under that name installs nothing and leaves no venv; the
    upstream's own installs."""
    upstream = UPSTREAM
    page = f"{upstream}/links/cu130/demo-idx/"
    good = build_wheel(tmp_path / "good", "demo-idx", "2.0+cu130", code="WHO = 'upstream'\n")
    other = build_wheel(tmp_path / "other", "demo-idx", "2.0+cu130", code="WHO = 'mirror'\n")
    assert good.filename == other.filename
    assert good.sha256 != other.sha256
    snapshot = tmp_path / "snapshot.json"
    row = {"url": f"{upstream}/files/{good.filename}", "filename": good.filename,
           "sha256": good.sha256}  # fmt: skip
    snapshot.write_text(dump_snapshot(datetime.date(2026, 11, 2), {page: [row]}))
    mirror = LoopbackIndex(tmp_path / "mirror")
    mirror.add(other if served == "swapped" else good, simple=False, flavour="cu130")
    venv = tmp_path / "env"
    with mirror.serving():
        project, env = _stack_on_a_mirror(tmp_path, mirror)
        proc = subprocess.run(
            [sys.executable, "-c", _WITH_SNAPSHOT, str(snapshot), "env", "create", str(venv),
             "--project", str(project), "--target", B200],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip
    if served == "upstream":
        assert proc.returncode == 0, proc.stderr
        assert installed(venv / "bin" / "python")["demo-idx"] == "2.0+cu130"
    else:
        assert proc.returncode == 1, proc.stderr
        assert "Hash mismatch for `demo-idx==2.0+cu130`" in proc.stderr
        assert f"sha256:{good.sha256}" in proc.stderr
        assert not venv.exists()
    assert mirror.gets(good if served == "upstream" else other) >= 1  # the file asked was read
    assert (
        "note: demo-idx 2.0+cu130: the shipped snapshot of 2026-11-02 records 1 file(s) of "
        f"it for this machine on {page}: pinned with their sha256" in proc.stderr
    )
