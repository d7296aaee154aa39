"""Placeholders against real pip and real uv, offline.

Every install uses ``--no-index --find-links`` on a folder holding only the
placeholder sdist, and an empty cache: pip and uv cache a wheel built with the escape
hatch and would never run the build again (docs/facts.md section 4).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.manifest import load_manifest
from resolver_hook.process.which import find_uv
from resolver_hook.publish.placeholder import build_placeholder, check_placeholder, placeholder_data
from resolver_hook.publish.placeholder.check import (
    FAILS_LOUDLY,
    INSTALLS_SILENTLY,
    CheckResult,
    shows_message,
)
from resolver_hook.publish.placeholder.render import runtime
from tests.placeholder_support import DATA, TILERT, find_python

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
UV = find_uv()
TILERT_URL = (
    "https://github.com/tile-ai/TileRT/releases/download/v0.1.5.post2/"
    "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl"
)
GB10 = {
    "RESOLVER_HOOK_OVERRIDE_ARCH": "aarch64",
    "RESOLVER_HOOK_OVERRIDE_SM": "12.1",
    "RESOLVER_HOOK_OVERRIDE_CUDA": "13.0",
}
B200 = {
    "RESOLVER_HOOK_OVERRIDE_ARCH": "x86_64",
    "RESOLVER_HOOK_OVERRIDE_SM": "10.0",
    "RESOLVER_HOOK_OVERRIDE_CUDA": "13.0",
}


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RESOLVER_HOOK_", "UV_", "TILERT_"))
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _run(argv: Sequence[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), env=_env(**extra), capture_output=True, text=True, check=False, timeout=600
    )


def _message(env: dict[str, str], python: tuple[int, int] | None = None) -> str:
    rt = runtime()
    found = rt.detect(env)
    if python:
        found["python"] = list(python)
    return rt.render_message(placeholder_data(load_manifest(TILERT)), found)


@pytest.fixture(scope="session")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A find-links folder with only the tilert placeholder sdist in it."""
    folder = tmp_path_factory.mktemp("links")
    build_placeholder(TILERT, folder)
    return folder


@pytest.fixture(scope="session")
def pip_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``python -m venv`` environment (the interpreter's bundled pip) that never gets
    the placeholder installed, shared by the tests where the install must fail."""
    venv = tmp_path_factory.mktemp("pip") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return venv / "bin" / "python"


def _uv_venv(where: Path, python: str = sys.executable) -> Path:
    assert UV is not None, "uv is a test dependency"
    subprocess.run([UV, "venv", "--quiet", str(where), "--python", python], check=True, env=_env())
    return where / "bin" / "python"


def _pip_install(python: Path, links: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-index",
            "--find-links",
            str(links),
            "--no-cache-dir",
            "tilert",
        ],
        **env,
    )


def _uv_install(
    python: Path, links: Path, cache: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    assert UV is not None
    return _run(
        [
            UV,
            "pip",
            "install",
            "--no-index",
            "--find-links",
            str(links),
            "tilert",
            "--python",
            str(python),
            "--cache-dir",
            str(cache),
        ],
        **env,
    )


# --- install time -----------------------------------------------------------------------


def test_pip_install_fails_and_shows_the_message(pip_venv: Path, links: Path) -> None:
    out = _pip_install(pip_venv, links)
    output = out.stdout + out.stderr
    assert out.returncode == 1
    # pip shows the backend's output under "Preparing metadata (pyproject.toml) did not
    # run successfully" (docs/facts.md section 4), indented.
    assert "Preparing metadata (pyproject.toml) did not run successfully" in output
    assert shows_message(_message({}), output)
    assert "Traceback" not in output
    for words in (
        "Linux x86_64 (glibc 2.28 or newer)",
        "sm_100f: NVIDIA B200/GB200, B300/GB300",
        "Real downloads: https://github.com/tile-ai/TileRT/releases",
        f"This machine: Linux {os.uname().machine}, CPython "
        f"{sys.version_info[0]}.{sys.version_info[1]}, ",
    ):
        assert words in output


def test_uv_install_fails_and_shows_the_message(links: Path, tmp_path: Path) -> None:
    python = _uv_venv(tmp_path / "venv")
    out = _uv_install(python, links, tmp_path / "cache")
    output = out.stdout + out.stderr
    assert out.returncode == 1
    assert "placeholder_backend.build_wheel` failed" in output
    assert shows_message(_message({}), output)
    assert "Traceback" not in output


def test_emulated_gb10_is_told_which_requirements_fail(pip_venv: Path, links: Path) -> None:
    out = _pip_install(pip_venv, links, **GB10)
    output = out.stdout + out.stderr
    assert shows_message(_message(GB10), output)
    assert (
        "- Linux x86_64 (glibc 2.28 or newer); this machine is Linux aarch64 with glibc" in output
    )
    assert (
        "- a GPU for sm_100f: NVIDIA B200/GB200, B300/GB300; this machine's NVIDIA GB10 "
        "(DGX Spark) (compute capability 12.1, sm_121) is not one of them"
    ) in output


@pytest.mark.skipif(sys.version_info[:2] == (3, 12), reason="needs a Python other than 3.12")
def test_emulated_b200_under_another_python_names_the_pythons(pip_venv: Path, links: Path) -> None:
    out = _pip_install(pip_venv, links, **B200)
    output = out.stdout + out.stderr
    assert shows_message(_message(B200), output)
    assert f"- CPython 3.12; this is CPython {sys.version_info[0]}.{sys.version_info[1]}" in output
    assert "A listed build fits" not in output


@pytest.mark.skipif(
    find_python("3.12") is None,
    reason="no Python 3.12 on this machine "
    "(test_placeholder_message covers it with an injected version)",
)
def test_emulated_b200_under_python_3_12_gets_the_pip_install_line(
    links: Path, tmp_path: Path
) -> None:
    python312 = find_python("3.12")
    assert python312 is not None
    python = _uv_venv(tmp_path / "venv", python312)
    out = _uv_install(python, links, tmp_path / "cache", **B200)
    output = out.stdout + out.stderr
    assert out.returncode == 1
    assert shows_message(_message(B200, python=(3, 12)), output)
    assert (
        f"\n  pip install {TILERT_URL}\n"
        in "\n".join(line.strip() and "  " + line.strip() for line in output.splitlines()) + "\n"
    )


# --- with the escape hatch --------------------------------------------------------------


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_escape_hatch_installs_a_package_that_refuses_to_run(
    installer: str, links: Path, tmp_path: Path
) -> None:
    if installer == "pip":
        subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
        python = tmp_path / "venv" / "bin" / "python"
        out = _pip_install(python, links, TILERT_ALLOW_PLACEHOLDER="1")
    else:
        python = _uv_venv(tmp_path / "venv")
        out = _uv_install(python, links, tmp_path / "cache", TILERT_ALLOW_PLACEHOLDER="1")
    assert out.returncode == 0, out.stdout + out.stderr
    message = _message({})
    run = _run([str(python), "-m", "tilert.models.preprocess.weight_converter"])
    assert (run.returncode, run.stdout, run.stderr) == (1, "", message + "\n")
    run = _run([str(python), "-c", "import tilert.models"])
    assert run.returncode == 1
    assert run.stderr.endswith(f"\ntilert._placeholder.PlaceholderError: {message}\n")
    assert "ModuleNotFoundError" not in run.stderr


# --- placeholder check --------------------------------------------------------------------


def test_check_passes_on_the_tilert_placeholder(
    links: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["placeholder", "check", str(links / "tilert-0.0.0.dev0.tar.gz")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "PASS  static metadata (Metadata-Version >= 2.2, no Dynamic)",
        "PASS  its URLs pass the URL policy (https; loopback only with --allow-insecure-urls)",
        "PASS  twine check --strict",
        "PASS  python -m venv",
        "PASS  uv venv",
        "PASS  uv resolves it without building (static metadata)",
        "pip: fails loudly at install",
        "PASS  pip install with TILERT_ALLOW_PLACEHOLDER=1 succeeds",
        "PASS  pip: import tilert fails with the message",
        "PASS  pip: python -m tilert.placeholder.submodule fails with the message",
        "uv: fails loudly at install",
        "PASS  uv install with TILERT_ALLOW_PLACEHOLDER=1 succeeds",
        "PASS  uv: import tilert fails with the message",
        "PASS  uv: python -m tilert.placeholder.submodule fails with the message",
        "12 passed, 0 failed, 0 skipped; verdicts: pip: fails loudly at install; "
        "uv: fails loudly at install",
        "check passed: it fails loudly at install under pip and uv",
    ]


def _manifests() -> list[Path]:
    builtin = sorted((REPO / "resolver_hook" / "manifests").glob("*.toml"))
    return builtin + sorted(DATA.glob("placeholder-*.toml"))


@pytest.mark.parametrize("manifest", _manifests(), ids=lambda p: p.stem)
def test_check_passes_on_every_manifest(manifest: Path, tmp_path: Path) -> None:
    built = build_placeholder(manifest, tmp_path)
    report = check_placeholder(built.sdist)
    assert [r for r in report.results if not r.ok] == []
    assert [v.verdict for v in report.verdicts] == [FAILS_LOUDLY, FAILS_LOUDLY]
    assert report.passed
    assert len(report.results) == 12


def test_twine_missing_is_a_skip_never_a_pass(links: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "twine" else real(name, *a)
    )
    report = check_placeholder(links / "tilert-0.0.0.dev0.tar.gz", run=_no_process)
    (twine,) = [r for r in report.results if r.name == "twine check --strict"]
    assert (twine.status, twine.ok) == ("SKIP", False)


def test_twine_output_has_no_colour_codes(links: Path) -> None:
    # twine 7 colours its output (rich) even into a pipe and with NO_COLOR set: the
    # report must stay plain text. twine runs for real; nothing else runs.
    def run(
        argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        if "twine" in argv:
            return subprocess.run(
                list(argv), env=env, cwd=cwd, capture_output=True, text=True, check=False
            )
        return _no_process(argv, env, cwd)

    report = check_placeholder(links / "tilert-0.0.0.dev0.tar.gz", run=run)
    (twine,) = [r for r in report.results if r.name == "twine check --strict"]
    assert "PASSED" in twine.detail
    assert "\x1b" not in twine.detail


def test_a_placeholder_wheel_of_one_small_module_is_flagged(tmp_path: Path) -> None:
    # No package at all: one top-level module of one statement, a 0.0.0 version and a
    # "placeholder" summary (docs/facts.md section 4: pip and uv install wheels silently).
    import zipfile

    wheel = tmp_path / "mod1-0.0.0a0-py3-none-any.whl"
    info = "mod1-0.0.0a0.dist-info"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("mod1.py", "x = 1\n")
        zf.writestr(
            f"{info}/METADATA",
            "Metadata-Version: 2.1\nName: mod1\nVersion: 0.0.0a0\n"
            "Summary: reserved name placeholder\n",
        )
        zf.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{info}/RECORD", "")
    report = check_placeholder(wheel, run=_no_process)
    (flag,) = [r for r in report.results if r.name.startswith("not a placeholder wheel")]
    assert flag.status == "FAIL"
    assert "the package is only mod1.py" in flag.detail


def test_check_reports_an_install_that_succeeds(links: Path) -> None:
    # A fake runner where every command succeeds silently: both verdicts are "installs
    # silently" and the check fails; no real process is started.
    calls: list[list[str]] = []

    def run(
        argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        calls.append(list(argv))
        out = "tilert==0.0.0.dev0" if "compile" in argv else ""
        return subprocess.CompletedProcess(list(argv), 0, out, "")

    report = check_placeholder(links / "tilert-0.0.0.dev0.tar.gz", run=run)
    assert [(v.installer, v.verdict) for v in report.verdicts] == [
        ("pip", INSTALLS_SILENTLY),
        ("uv", INSTALLS_SILENTLY),
    ]
    assert not report.passed
    assert all(isinstance(r, CheckResult) for r in report.results)
    # twine, 2 venvs, uv compile, then per installer: install and the file listing.
    assert len(calls) == 8


@pytest.mark.parametrize(
    ("output", "shown"),
    [
        ("      a\n      b\n", True),
        ("X.PlaceholderError: a\nb\n", True),
        ("a\nc\nb\n", False),
        ("", False),
    ],
)
def test_shows_message(output: str, shown: bool) -> None:
    assert shows_message("a\n\nb", output) is shown


def test_regenerate_script_builds_and_checks_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    shutil.copy(TILERT, folder / "tilert.toml")
    out = _run(
        [
            sys.executable,
            str(REPO / "scripts" / "regenerate_placeholders.py"),
            str(folder),
            "-o",
            str(tmp_path / "dist"),
        ],
        PYTHONPATH=str(REPO),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    sdist = tmp_path / "dist" / "tilert-0.0.0.dev0.tar.gz"
    import hashlib

    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert out.stdout.splitlines()[-1] == f"tilert  0.0.0.dev0  {digest}  check passed"


# --- malformed or hostile sdists: one error or a failed check, never a traceback ----------


def _repack(
    src: Path, dest: Path, *, pkg_info: str | None = None, extra: tuple[tuple[str, int], ...] = ()
) -> Path:
    """``src`` rewritten to ``dest``: PKG-INFO replaced, members of zero bytes added."""
    import io
    import tarfile

    with tarfile.open(src) as old, tarfile.open(dest, "w:gz") as new:
        for member in old.getmembers():
            data = old.extractfile(member).read()  # type: ignore[union-attr]
            if pkg_info is not None and member.name.endswith("/PKG-INFO"):
                data = pkg_info.encode()
                member.size = len(data)
            new.addfile(member, io.BytesIO(data))
        for name, size in extra:
            info = tarfile.TarInfo(name)
            info.size = size
            new.addfile(info, io.BytesIO(bytes(size)))
    return dest


def _no_process(
    argv: Sequence[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(list(argv), 1, "", "not run")


def test_check_bad_metadata_version_is_a_failed_check(links: Path, tmp_path: Path) -> None:
    sdist = _repack(
        links / "tilert-0.0.0.dev0.tar.gz",
        tmp_path / "tilert-0.0.0.dev0.tar.gz",
        pkg_info="Metadata-Version: 2.x\nName: tilert\nVersion: 0.0.0.dev0\n",
    )
    report = check_placeholder(sdist, run=_no_process)
    assert report.results[0] == CheckResult(
        name="static metadata (Metadata-Version >= 2.2, no Dynamic)",
        status="FAIL",
        detail="Metadata-Version 2.x, Dynamic []",
    )
    assert not report.passed


@pytest.mark.parametrize("name", ["../../../tmp/x", "Til/ert", ""])
def test_check_refuses_a_name_that_is_not_a_project_name(
    links: Path, tmp_path: Path, name: str
) -> None:
    # The name goes into the installers' command lines: a project name only.
    sdist = _repack(
        links / "tilert-0.0.0.dev0.tar.gz",
        tmp_path / "t.tar.gz",
        pkg_info=f"Metadata-Version: 2.2\nName: {name}\nVersion: 0.0.0.dev0\n",
    )
    with pytest.raises(UsageError, match=r"PKG-INFO Name: .* is not a valid project name"):
        check_placeholder(sdist, run=_no_process)


def test_check_refuses_an_oversized_sdist_before_extracting(
    links: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver_hook.publish.placeholder import check as check_module

    monkeypatch.setattr(check_module, "MAX_SDIST_BYTES", 100_000)
    sdist = _repack(
        links / "tilert-0.0.0.dev0.tar.gz",
        tmp_path / "t.tar.gz",
        extra=(("tilert-0.0.0.dev0/big.bin", 200_000),),
    )
    dest = tmp_path / "x"
    with pytest.raises(UsageError, match="more than 100000 bytes of files"):
        check_module.extract_sdist(sdist, dest)
    assert not dest.exists()


def test_a_command_that_hangs_or_cannot_start_is_a_failed_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver_hook.publish.placeholder import check as check_module

    monkeypatch.setattr(check_module, "TIMEOUT", 0.5)
    hung = check_module.run_subprocess(
        [sys.executable, "-c", "import time; time.sleep(30)"], dict(os.environ), tmp_path
    )
    assert (hung.returncode, hung.stderr) == (
        124,
        f"{sys.executable}: no answer after 0.5 seconds; stopped",
    )
    missing = check_module.run_subprocess([str(tmp_path / "nope")], {}, tmp_path)
    assert missing.returncode == 127
    assert missing.stderr == f"{tmp_path / 'nope'}: cannot run: not found"


# --- a retired name -------------------------------------------------------------------------

RETIRED_LINES = [
    "sklearn 0.0.0.dev0: this name is retired; install scikit-learn instead.",
    "pip install scikit-learn",
    "uv pip install scikit-learn",
]


@pytest.fixture(scope="module")
def retired_links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from resolver_hook.publish.placeholder import build_retired

    folder = tmp_path_factory.mktemp("retired")
    build_retired("sklearn", "scikit-learn", folder)
    return folder


def _install_retired(tool: str, venv_python: Path, links: Path, cache: Path, **env: str) -> str:
    if tool == "pip":
        argv = [sys.executable, "-m", "pip", "--python", str(venv_python), "install"]
        argv += ["--no-index", "--no-cache-dir", "--find-links", str(links), "sklearn"]
    else:
        assert UV is not None
        argv = [UV, "pip", "install", "--no-index", "--find-links", str(links), "sklearn"]
        argv += ["--python", str(venv_python), "--cache-dir", str(cache)]
    out = _run(argv, PIP_CONFIG_FILE=os.devnull, **env)
    return f"exit {out.returncode}\n{out.stdout}{out.stderr}"


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_retired_name_fails_at_install_and_at_import_naming_the_replacement(
    tool: str, retired_links: Path, tmp_path: Path
) -> None:
    venv_python = _uv_venv(tmp_path / "venv")
    output = _install_retired(tool, venv_python, retired_links, tmp_path / "cache")
    assert output.startswith("exit 1\n")
    lines = [line.strip() for line in output.splitlines()]
    assert all(line in lines for line in RETIRED_LINES), output
    assert "Traceback" not in output
    # The escape hatch installs it; importing it still fails with the same lines.
    hatch = _install_retired(
        tool, venv_python, retired_links, tmp_path / "cache", SKLEARN_ALLOW_PLACEHOLDER="1"
    )
    assert hatch.startswith("exit 0\n"), hatch
    imported = _run([str(venv_python), "-c", "import sklearn"])
    assert imported.returncode == 1
    assert f"sklearn._placeholder.PlaceholderError: {RETIRED_LINES[0]}" in imported.stderr
    stripped = [line.strip() for line in imported.stderr.splitlines()]
    assert all(line in stripped for line in RETIRED_LINES[1:])


def test_check_passes_a_retired_name(retired_links: Path) -> None:
    report = check_placeholder(retired_links / "sklearn-0.0.0.dev0.tar.gz")
    assert [(v.installer, v.verdict) for v in report.verdicts] == [
        ("pip", FAILS_LOUDLY),
        ("uv", FAILS_LOUDLY),
    ]
    assert [r for r in report.results if not r.ok] == []
    assert report.passed


def test_a_missing_uv_is_one_line_and_pip_alone_is_judged(
    links: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from resolver_hook.publish.placeholder import check as check_module

    monkeypatch.setattr(check_module, "find_uv", lambda: None)
    assert main(["placeholder", "check", str(links / "tilert-0.0.0.dev0.tar.gz")]) == 0
    out = capsys.readouterr().out
    assert (
        "SKIP  uv\n      uv is not installed, so only pip is judged: "
        "pip install 'resolver-hook[publish]'\n"
    ) in out
    assert "pip: fails loudly at install\n" in out
    assert out.endswith(
        "verdicts: pip: fails loudly at install\n"
        "check passed: it fails loudly at install under pip "
        "(uv not judged: pip install 'resolver-hook[publish]')\n"
    )


def test_a_silent_artifact_still_fails_without_uv(
    links: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resolver_hook.publish.placeholder import check as check_module

    def run(
        argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(argv), 0, "", "")  # installs, imports: silent

    monkeypatch.setattr(check_module, "find_uv", lambda: None)
    report = check_placeholder(links / "tilert-0.0.0.dev0.tar.gz", run=run)
    assert report.missing == ["uv"]
    assert [(v.installer, v.verdict) for v in report.verdicts] == [("pip", INSTALLS_SILENTLY)]
    assert not report.passed


def test_verbose_shows_what_the_user_sees_under_each_installer(
    retired_links: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sdist = retired_links / "sklearn-0.0.0.dev0.tar.gz"
    assert main(["placeholder", "check", "-v", str(sdist)]) == 0
    out = capsys.readouterr().out
    for tool in ("pip", "uv"):
        _, _, rest = out.partition(f"{tool}: fails loudly at install\n")
        assert rest.startswith(f"      what the user sees under {tool}:\n"), out
        shown = [line.strip() for line in rest.split("\nPASS ", 1)[0].splitlines()]
        assert all(line in shown for line in RETIRED_LINES), rest
