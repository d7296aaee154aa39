"""The installer's resolution held to the plan before anything is installed, with real pip
and real uv against a loopback index.

The index is shaped like torch and tilert (docs/facts.md section 5): ``ktorch`` has two
CUDA 13 builds (2.12.0, 2.13.0) behind wheel URLs and a plain 2.15.0 on the simple
index (PyPI's newest); ``ktil`` 0.1.4 (the release its manifest approves) requires
``ktorch<2.13`` while 0.1.3 takes any; ``tvision`` pins ``ktorch==2.12.0+cu130``;
``kmodel`` needs ``ktorch>=2.0`` and has no manifest (timm pulling torch in).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.installenv import (
    GpuIndex,
    clean_env,
    download_pip,
    make_uv_venv,
    make_venv,
    venv_for,
    wheel_entry,
    write_manifest,
)
from tests.test_install import install, versions
from tests.wheelfactory import LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def coupled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuIndex]:
    root = tmp_path_factory.mktemp("coupled")
    out = root / "built"
    w = {
        "t12": build_wheel(out, "ktorch", "2.12.0+cu130"),
        "t13": build_wheel(out, "ktorch", "2.13.0+cu130"),
        "t15": build_wheel(out, "ktorch", "2.15.0"),
        "k3": build_wheel(out, "ktil", "0.1.3", requires=["ktorch"]),
        "k4": build_wheel(out, "ktil", "0.1.4", requires=["ktorch<2.13"]),
        "tv": build_wheel(out, "tvision", "1.0", requires=["ktorch==2.12.0+cu130"]),
        "model": build_wheel(out, "kmodel", "1.0", requires=["ktorch>=2.0"]),
    }
    index = LoopbackIndex(root / "index")
    for key in ("t15", "k3", "k4", "tv", "model"):
        index.add(w[key])
    for key in ("t12", "t13"):
        index.add(w[key], simple=False)
    manifests = root / "manifests"
    manifests.mkdir()
    with index.serving():
        sm100 = ["sm_100"]
        t13, t12 = (wheel_entry(index, w[k], ">=13.0", sm100) for k in ("t13", "t12"))
        write_manifest(manifests, "ktorch", "wheel", t13, t12)
        write_manifest(
            manifests, "ktil", "index", {"version": "0.1.4", "cuda": ">=13.0", "gpu": sm100}
        )
        yield GpuIndex(index=index, wheels=w, manifests=manifests)


@pytest.fixture(scope="module")
def pip_wheel(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A wheel of pip from the package registry, by requirement (docs/facts.md section 3:
    users run pips from the one bundled with their interpreter to the newest)."""
    folder = tmp_path_factory.mktemp("pips")
    found: dict[str, Path] = {}

    def get(spec: str) -> Path:
        if spec not in found:
            wheel = download_pip(folder / str(len(found)), spec)
            if isinstance(wheel, str):
                pytest.skip(wheel)
            found[spec] = wheel
        return found[spec]

    return get


PIPS = ["pip==23.2.1", "pip>=25"]


def _venv(tmp_path: Path, tool: str, pip_wheel: Callable[[str], Path], pip: str) -> Path:
    venv = tmp_path / "venv"
    if tool == "uv":
        return make_uv_venv(venv)
    make_venv(venv)
    subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-index", str(pip_wheel(pip))],
        check=True,
        env=clean_env(),
    )
    return venv


INSTALLERS = [("pip", pip) for pip in PIPS] + [("uv", "")]
IDS = ["pip 23.2.1", "newest pip", "uv"]


@pytest.fixture(params=INSTALLERS, ids=IDS)
def each_installer(
    request: pytest.FixtureRequest, tmp_path: Path, pip_wheel: Callable[[str], Path]
) -> tuple[str, Path]:
    """Each installer in turn, with a fresh venv for it: (``pip`` or ``uv``, the venv)."""
    tool, pip = request.param
    return tool, _venv(tmp_path, tool, pip_wheel, pip)


def test_a_dependency_pinning_another_build_stops_before_anything_is_installed(
    coupled: GpuIndex, each_installer: tuple[str, Path]
) -> None:
    tool, venv = each_installer
    before = versions(venv)
    proc = install(tool, coupled, venv, "tvision", "ktorch")
    assert proc.returncode != 0
    assert versions(venv) == before
    who = "tvision 1.0" if tool == "pip" else "tvision"
    assert f"error: {who}" in proc.stderr
    assert "ktorch==2.12.0+cu130" in proc.stderr
    assert "this machine needs ktorch 2.13.0+cu130" in proc.stderr
    assert "nothing was installed" in proc.stderr
    # Another version, not another build of the same one: never overridden.
    assert "--overrides replace" not in proc.stderr


def test_an_older_release_taken_for_the_plans_torch_is_caught(
    coupled: GpuIndex, each_installer: tuple[str, Path]
) -> None:
    tool, venv = each_installer
    before = versions(venv)
    proc = install(tool, coupled, venv, "ktil", "ktorch")
    assert proc.returncode == 1, proc.stderr
    assert versions(venv) == before
    assert (
        "error: ktil 0.1.3 would be installed, pulled in by your requirement, "
        "but the plan approved ktil 0.1.4"
        if tool == "pip"
        else "error: ktil 0.1.3 would be installed, but the plan approved ktil 0.1.4"
    ) in proc.stderr
    # Why: asked with the approved release pinned, the installer names the requirement.
    assert "requires ktorch<2.13" in proc.stderr
    assert "hint: loosen a pin or add a constraint" in proc.stderr


def test_a_narrow_terminal_width_does_not_cut_uvs_reason(
    coupled: GpuIndex, tmp_path: Path, pip_wheel: Callable[[str], Path]
) -> None:
    """uv wraps its conflict explanation at an exported $COLUMNS even into a pipe; the
    dry run the hook reads runs without it, so the reason still reads whole."""
    venv = _venv(tmp_path, "uv", pip_wheel, "")
    proc = install("uv", coupled, venv, "ktil", "ktorch", env={"COLUMNS": "40"})
    assert proc.returncode == 1, proc.stderr
    assert "requires ktorch<2.13" in proc.stderr


def test_no_proof_keeps_the_unchecked_install(coupled: GpuIndex, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    make_venv(venv)
    proc = install("pip", coupled, venv, "ktil", "ktorch", flags=["--no-proof"])
    assert proc.returncode == 0, proc.stderr
    assert (versions(venv)["ktil"], versions(venv)["ktorch"]) == ("0.1.3", "2.13.0+cu130")
    assert "checking what pip would install" not in proc.stderr


def test_a_flavoured_dependency_is_planned(
    coupled: GpuIndex, each_installer: tuple[str, Path]
) -> None:
    """kmodel never names a build of ktorch: unplanned, the installer takes 2.15.0."""
    tool, venv = each_installer
    proc = install(tool, coupled, venv, "kmodel")
    assert proc.returncode == 0, proc.stderr
    assert versions(venv)["ktorch"] == "2.13.0+cu130"
    who = (
        "kmodel 1.0 (requires ktorch>=2.0)" if tool == "pip" else "uv does not say of which package"
    )
    assert f"ktorch arrives as a dependency ({who}): planned like a requested" in proc.stderr
    assert f"ktorch: {coupled.index.wheel_url(coupled.wheels['t13'])}" in proc.stderr


def test_a_pip_without_report_gets_the_note_and_the_old_path(
    coupled: GpuIndex, tmp_path: Path, pip_wheel: Callable[[str], Path]
) -> None:
    venv = _venv(tmp_path, "pip", pip_wheel, "pip==22.0.4")
    proc = install("pip", coupled, venv, "ktorch")
    assert proc.returncode == 0, proc.stderr
    assert versions(venv)["ktorch"] == "2.13.0+cu130"
    assert proc.stderr.count("cannot report what it would install") == 1
    assert "pip 22.0.4 cannot report what it would install (--report needs pip 22.2" in proc.stderr
    assert "checking what pip would install" not in proc.stderr


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_an_unreadable_page_is_named(tmp_path: Path, tool: str) -> None:
    """The flavour's find-links page answers 404: the installer fails on the plan's pin."""
    out = tmp_path / "built"
    index = LoopbackIndex(tmp_path / "index")
    index.add(build_wheel(out, "kidx", "1.0"))  # the plain build only
    with index.serving():
        page = index.links_url("cu130", "kidx")  # never written: 404
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        flavour = {"url": page, "version": "1.0+cu130", "cuda": ">=13.0", "gpu": ["sm_100"]}
        write_manifest(manifests, "kidx", "index", flavour)
        ci = GpuIndex(index=index, wheels={}, manifests=manifests)
        venv = venv_for(tool, tmp_path / "venv")
        proc = install(tool, ci, venv, "kidx")
    assert proc.returncode != 0
    assert (
        f"error: resolver-hook pinned kidx==1.0+cu130 for this machine, a build served by "
        f"the page {page}, and {tool} did not find it there"
    ) in proc.stderr
    assert f"hint: check that {page} can be read from here" in proc.stderr


# A .pth line: an interpreter of the venv that imports pip's command line (pip's runs,
# an interpreter started ahead of its dry run among them; the hook's reads of the
# environment import no pip) appends its process id to a file (a process may read the
# .pth files more than once).
_COUNT_STARTS = (
    "import os, sys; sys.addaudithook(lambda e, a: e == 'import' "
    "and a[0] == 'pip._internal.cli.main' "
    "and open({path!r}, 'a').write('%d\\n' % os.getpid()))\n"
)


@pytest.mark.parametrize("pip", PIPS, ids=IDS[:2])
@pytest.mark.parametrize(
    ("asked", "starts"), [(["ktorch"], 1), (["kmodel"], 2)], ids=["plain", "replan"]
)
def test_pips_dry_run_and_install_are_one_interpreter(  # noqa: PLR0917 - fixtures and cases
    coupled: GpuIndex,
    tmp_path: Path,
    pip_wheel: Callable[[str], Path],
    pip: str,
    asked: list[str],
    starts: int,
) -> None:
    """The checked install's dry run and install run in one pip process (the install
    does not start Python and import pip again); where a dependency is planned after
    the first dry run, that one's process stops and the second one installs."""
    venv = _venv(tmp_path, "pip", pip_wheel, pip)
    log = tmp_path / "starts.txt"
    (site,) = (venv / "lib").glob("python*/site-packages")
    (site / "zz_count_starts.pth").write_text(_COUNT_STARTS.format(path=str(log)))
    proc = install("pip", coupled, venv, *asked)
    assert proc.returncode == 0, proc.stderr
    assert versions(venv)["ktorch"] == "2.13.0+cu130"
    assert "Successfully installed" in proc.stdout
    assert len(set(log.read_text().split())) == starts, proc.stderr
