"""Twin distributions: the manifest field, the built-in families, the proof's refusal."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.host import parse_target
from resolver_hook.install.checked import twin_problems
from resolver_hook.install.proof import judge, read_uv_dry_run
from resolver_hook.manifest import Manifest, ManifestError
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.manifest.twins import builtin_families, families, twins_among
from resolver_hook.resolve import Plan, resolve
from tests.clirun import cli
from tests.installenv import GpuIndex, make_uv_venv, make_venv
from tests.test_install import B200, hook, install, versions
from tests.test_plan_cache import run_of
from tests.wheelfactory import LoopbackIndex, build_wheel

_MANIFEST = """
schema = 1
[package]
name = "demo"
twins = {twins}
[[index]]
versions = ">=1.0"
"""


def test_a_manifest_names_its_twins() -> None:
    man = loads_manifest(_MANIFEST.format(twins='["Demo_GPU", "demo-gpu"]'), source="m.toml")
    assert man.twins == ("demo-gpu",)
    fam = families({"demo": man})
    hit = twins_among(["app", "demo", "demo-gpu"], fam)
    assert [found for _, found in hit] == [("demo", "demo-gpu")]


@pytest.mark.parametrize(
    ("twins", "problem"),
    [
        ('["demo"]', "m.toml: package.twins[0]: 'demo' is the package itself"),
        ('["not a name"]', "m.toml: package.twins[0]: 'not a name' is not a valid project name"),
        ('"x"', None),  # one string reads as a list of one
    ],
    ids=["self", "bad-name", "string"],
)
def test_bad_twins_name_the_key(twins: str, problem: str | None) -> None:
    text = _MANIFEST.format(twins=twins)
    if problem is None:
        assert loads_manifest(text, source="m.toml").twins == ("x",)
        return
    with pytest.raises(ManifestError) as err:
        loads_manifest(text, source="m.toml")
    assert any(p.startswith(problem) for p in err.value.problems)


def test_builtin_families_each_cite_a_source() -> None:
    found = builtin_families()
    names = {n for f in found for n in f.names}
    for want in (
        "onnxruntime-gpu",
        "onnxruntime-directml",
        "opencv-python-headless",
        "opencv-contrib-python-headless",
        "faiss-cpu",
        "faiss-gpu-cu12",
        "cupy-cuda12x",
        "cupy-cuda13x",
        "tensorflow-cpu",
    ):
        assert want in names
    assert all(f.evidence and f.evidence.startswith("https://") and f.checked for f in found)
    # A name in two families would make "which twin" ambiguous.
    assert len(names) == sum(len(f.names) for f in found)


def test_a_manifest_family_joins_the_builtin_one() -> None:
    man = loads_manifest(
        _MANIFEST.replace('"demo"', '"onnxruntime"').format(twins='["onnxruntime-rocm"]'),
        source="m.toml",
    )
    fam = families({"onnxruntime": man})
    ort = next(f for f in fam if "onnxruntime" in f.names)
    assert "onnxruntime-rocm" in ort.names
    assert "onnxruntime-gpu" in ort.names
    assert len(fam) == len(builtin_families())


_ORT = """
schema = 1
[package]
name = "onnxruntime"
[[index]]
install = "onnxruntime-gpu"
versions = ">=1.27"
cuda = ">=13.0"
"""


_ORT_PLAIN = """
[[index]]
versions = ">=1.19"
"""


def _ort_plan() -> tuple[Plan, dict[str, Manifest]]:
    manifests = {"onnxruntime": loads_manifest(_ORT, source="m.toml")}
    return resolve(["onnxruntime"], manifests, parse_target(B200)), manifests


def test_the_distribution_a_flavour_installs_is_held_to_the_plan() -> None:
    plan, manifests = _ort_plan()
    old = read_uv_dry_run(" + onnxruntime-gpu==1.26.0\n")
    (problem,) = judge(old, plan, manifests)
    assert problem.text() == (
        "onnxruntime-gpu 1.26.0 would be installed, but the plan approved onnxruntime>=1.27"
    )
    assert judge(read_uv_dry_run(" + onnxruntime-gpu==1.31.1\n"), plan, manifests) == []


def test_a_plan_that_installs_another_distribution_makes_the_pair_twins() -> None:
    # No family declared: the manifest's own install = ... says they are one package.
    plan, _ = _ort_plan()
    both = read_uv_dry_run(" + kapp==1.0\n + onnxruntime==1.32.0\n + onnxruntime-gpu==1.31.1\n")
    (t,) = twin_problems(both, plan, ())
    assert (t.keep.name, [r.name for r, _ in t.others]) == ("onnxruntime-gpu", ["onnxruntime"])
    assert t.text().startswith(
        "onnxruntime-gpu 1.31.1 and onnxruntime 1.32.0 would both be installed"
    )
    assert twin_problems(read_uv_dry_run(" + onnxruntime-gpu==1.31.1\n"), plan, ()) == []


def test_three_of_a_builtin_family_are_named_with_the_import_package() -> None:
    plan, _ = _ort_plan()  # plans nothing of opencv: the first of the family is kept
    text = " + opencv-python==5.1.0.95\n + opencv-python-headless==5.1.0.95\n"
    text += " + opencv-contrib-python==5.1.0.95\n"
    (t,) = twin_problems(read_uv_dry_run(text), plan, builtin_families())
    assert t.text() == (
        "opencv-python 5.1.0.95, opencv-python-headless 5.1.0.95 and "
        "opencv-contrib-python 5.1.0.95 would all be installed: they install the same "
        "import package, cv2, and the one unpacked last overwrites the other's files; "
        "opencv-python-headless is pulled in by a dependency (the installer did not say "
        "which); opencv-contrib-python is pulled in by a dependency (the installer did "
        "not say which)"
    )


# --- the proof: real pip and real uv against a loopback replica of PyPI ----------------
#
# PyPI's shape (docs/facts.md section 6.3): onnxruntime (the CPU build) and
# onnxruntime-gpu both install the import package ``onnxruntime``; ``kapp`` requires
# ``onnxruntime`` by name (onnxruntime-extensions, gliner[gpu] in the field reports).
# The built-in manifest's GPU flavour reads the replica of https://pypi.org/simple/
# onnxruntime-gpu/ through a mirror and pins its file.


@pytest.fixture(scope="module")
def pypi_replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    root = tmp_path_factory.mktemp("twins")
    out = root / "built"
    tag = "py3-none-manylinux_2_28_x86_64"
    w = {
        "cpu": build_wheel(out, "onnxruntime", "1.32.0", tag=tag, module="onnxruntime"),
        "gpu": build_wheel(out, "onnxruntime-gpu", "1.31.1", tag=tag, module="onnxruntime"),
        "kapp": build_wheel(out, "kapp", "1.0", requires=["onnxruntime"]),
    }
    index = LoopbackIndex(root / "index")
    for wheel in w.values():
        index.add(wheel)
    manifests = root / "manifests"  # none of its own: the built-in onnxruntime manifest
    manifests.mkdir()
    with index.serving():
        yield GpuIndex(index=index, wheels=w, manifests=manifests)


def _online(gi: GpuIndex) -> dict[str, str]:
    """The plan reads PyPI's pages from the replica (a mirror), nothing from the internet."""
    return {
        "RESOLVER_HOOK_OFFLINE": "0",
        "RESOLVER_HOOK_MIRRORS": f"https://pypi.org/simple={gi.simple.rstrip('/')}",
    }


@pytest.mark.integration
@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_dependency_pulling_the_plain_twin_is_refused_before_installing(
    pypi_replica: GpuIndex, tmp_path: Path, tool: str
) -> None:
    venv = tmp_path / "venv"
    _ = make_uv_venv(venv) if tool == "uv" else make_venv(venv)
    before = versions(venv)
    proc = install(tool, pypi_replica, venv, "kapp", "onnxruntime", env=_online(pypi_replica))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert versions(venv) == before  # nothing installed
    err = proc.stderr
    assert "onnxruntime-gpu 1.31.1 and onnxruntime 1.32.0 would both be installed" in err, err
    assert "the same import package, onnxruntime," in err
    assert "nothing was installed: the installer's resolution holds twin distributions" in err
    # pip's report names the requirer; uv's verbose dry run does (asked on a refusal).
    assert "onnxruntime is pulled in by kapp 1.0 (requires onnxruntime" in err
    if tool == "pip":
        assert "then 'pip install --no-deps kapp'" in err
    else:
        assert "'--excludes FILE'" in err
    # The plan pinned the GPU build's file, from the replica of its PyPI page.
    gpu = pypi_replica.wheels["gpu"]
    assert f"onnxruntime: {pypi_replica.index.wheel_url(gpu)}: " in err


@pytest.mark.integration
def test_no_proof_installs_and_warns_and_doctor_reports_the_twins(
    pypi_replica: GpuIndex, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    flags = ["--no-proof"]
    proc = install(
        "pip", pypi_replica, venv, "kapp", "onnxruntime", flags=flags, env=_online(pypi_replica)
    )
    assert proc.returncode == 0, proc.stderr
    assert {"onnxruntime", "onnxruntime-gpu", "kapp"} <= set(versions(venv))
    both = "onnxruntime 1.32.0 and onnxruntime-gpu 1.31.1 are installed together"
    assert f"warning: {both}: they install the same import package, onnxruntime" in proc.stderr
    doctor = hook("doctor", "--python", str(venv / "bin/python"), venv=venv)
    assert f"twins   {both}" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "fix: uninstall all of them (onnxruntime onnxruntime-gpu)" in doctor.stdout


@pytest.mark.integration
def test_the_uv_fix_installs_the_gpu_build_alone(pypi_replica: GpuIndex, tmp_path: Path) -> None:
    # What the refusal's hint says: exclude the plain twin; kapp gets the GPU build's files.
    venv = tmp_path / "venv"
    make_uv_venv(venv)
    excludes = tmp_path / "excludes.txt"
    excludes.write_text("onnxruntime\n")
    args = ("--excludes", str(excludes), "kapp", "onnxruntime")
    proc = install("uv", pypi_replica, venv, *args, env=_online(pypi_replica))
    assert proc.returncode == 0, proc.stderr
    got = versions(venv)
    assert (got.get("onnxruntime-gpu"), got.get("kapp")) == ("1.31.1", "1.0")
    assert "onnxruntime" not in got


# --- the plan: twins the requirements name are refused before anything runs ----------

_CPU = "linux-x86_64-py312"


def test_a_plan_naming_both_twins_refuses_the_one_this_machine_does_not_need() -> None:
    manifests = {"onnxruntime": loads_manifest(_ORT + _ORT_PLAIN, source="m.toml")}
    plan = resolve(["onnxruntime", "onnxruntime-gpu"], manifests, parse_target(_CPU))
    assert [p.name for p in plan.errors] == ["onnxruntime-gpu"]
    (p,) = plan.errors
    assert (p.cause, p.twin_of) == ("twins", "onnxruntime")
    assert p.reason == (
        "onnxruntime-gpu and onnxruntime would both be installed: they install the same "
        "import package, onnxruntime, and the one unpacked last overwrites the other's "
        "files (https://onnxruntime.ai/docs/get-started/with-python.html"
        "#install-onnx-runtime)"
    )
    assert p.hint == (
        "keep only onnxruntime, the build planned for this machine: take onnxruntime-gpu "
        "out of the requirements"
    )
    # On a B200 both lines install onnxruntime-gpu: one distribution, no twins.
    gpu = resolve(["onnxruntime", "onnxruntime-gpu"], manifests, parse_target(B200))
    assert gpu.ok, [p.reason for p in gpu.errors]


def test_twins_no_manifest_chooses_between_are_refused_naming_both() -> None:
    plan = resolve(["opencv-python", "opencv-python-headless", "numpy"], {}, parse_target(_CPU))
    assert [(p.name, p.twin_of) for p in plan.errors] == [
        ("opencv-python-headless", "opencv-python")
    ]
    assert plan.errors[0].hint == (
        "keep only one of opencv-python and opencv-python-headless in the requirements "
        "(no manifest here says which this machine needs)"
    )
    # A line whose marker is false here installs nothing: no twins.
    off = resolve(["opencv-python", "opencv-python-headless ; sys_platform == 'win32'"], {},
                  parse_target(_CPU))  # fmt: skip
    assert off.ok


@pytest.mark.parametrize("command", ["plan", "lock"])
def test_plan_and_lock_refuse_both_onnxruntime_builds_for_a_cpu_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    out = tmp_path / "requirements.txt"
    manifest = tmp_path / "onnxruntime.toml"
    manifest.write_text(_ORT + _ORT_PLAIN)
    argv = [
        command,
        "onnxruntime",
        "onnxruntime-gpu",
        "--target",
        _CPU,
        "--manifest",
        str(manifest),
    ]
    if command == "lock":
        argv += ["-o", str(out)]
    code, _, err = cli(capsys, *argv)
    assert code == 1, err
    assert "error: onnxruntime-gpu: onnxruntime-gpu and onnxruntime would both be installed" in err
    assert "hint: keep only onnxruntime, the build planned for this machine" in err
    assert not out.exists()


@pytest.mark.integration
def test_a_replayed_unchecked_install_warns_of_the_twins_as_the_first_run_did(
    pypi_replica: GpuIndex, tmp_path: Path
) -> None:
    # The first run reads the pages (not stored), the second is served by the page cache
    # and stores its plan, the third replays it: each warns, the replay too.
    venv = tmp_path / "venv"
    make_venv(venv)
    both = "onnxruntime 1.32.0 and onnxruntime-gpu 1.31.1 are installed together"
    runs = []
    for _ in range(3):
        proc = install(
            "pip", pypi_replica, venv, "kapp", "onnxruntime", flags=["--no-proof"],
            env=_online(pypi_replica), python_flags=("-X", "importtime"),
        )  # fmt: skip
        runs.append(run_of(proc))
        assert runs[-1].code == 0, runs[-1].stderr
        assert f"warning: {both}: they install the same import package" in runs[-1].stderr, (
            len(runs),
            runs[-1].replayed,
        )
    assert runs[-1].replayed, sorted(m for m in runs[-1].imported if m.startswith("resolver"))


def test_an_install_reads_installed_distributions_only_for_a_family() -> None:
    """The install session loads the reader of an environment's distributions only when
    it asks for twins (an unchecked install naming a package of a family): the first
    run of an install of anything else does without that module."""
    code = (
        "import sys\n"
        "import resolver_hook.install.session\n"
        "print('resolver_hook.install.installed' in sys.modules)\n"
        "from resolver_hook.install.twins import said_twins\n"
        "from resolver_hook.manifest.twins import builtin_families\n"
        "said_twins(sys.executable, builtin_families())\n"
        "print('resolver_hook.install.installed' in sys.modules)\n"
    )
    assert _printed(code) == ["False", "True"]


def test_an_install_loads_the_optional_install_only_for_optional_packages() -> None:
    """``--optional``'s install, import check and rollback (with the files it keeps of
    what it replaces) are imported when it is given, not by every install session."""
    code = (
        "import sys\n"
        "import resolver_hook.install.session\n"
        "print([m in sys.modules for m in "
        "('resolver_hook.install.optional', 'resolver_hook.install.replaced')])\n"
        "import resolver_hook.install.optional\n"
        "print('resolver_hook.install.replaced' in sys.modules)\n"
    )
    assert _printed(code) == ["[False,", "False]", "True"]


def _printed(code: str) -> list[str]:
    """The words a fresh interpreter running ``code`` prints (what it imported, as seen)."""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stdout.split()
