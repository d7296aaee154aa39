"""Generating placeholders: validation, safe rendering, reproducible sdists, the backend."""

from __future__ import annotations

import email.parser
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.ground.valueclass import replace
from resolver_hook.manifest import Manifest, load_manifest
from resolver_hook.publish.placeholder import build_from_data, build_placeholder, placeholder_data
from resolver_hook.publish.placeholder.render import (
    render_files,
    render_project,
    runtime,
    template_dir,
    toml_string,
)
from tests.placeholder_support import TILERT, find_python, host

REPO = Path(__file__).resolve().parent.parent


def tilert(**changes: Any) -> dict[str, Any]:
    data = placeholder_data(load_manifest(TILERT))
    data.update(changes)
    return data


def manifest(**changes: Any) -> Manifest:
    """The tilert manifest with fields replaced unchecked, for names and URLs that the
    manifest loader itself would refuse: the generator must refuse them too."""
    return replace(load_manifest(TILERT), **changes)


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Tilert",
        "til_ert",
        "til--ert",
        "-tilert",
        "tilert-",
        "../tilert",
        "til/ert",
        "",
        "tilért",
        "a b",
    ],
)
def test_bad_project_names_are_refused(name: str) -> None:
    with pytest.raises(UsageError, match=r"^package\.name: "):
        placeholder_data(manifest(name=name, wheels=()))


@pytest.mark.parametrize(
    ("version", "problem"),
    [
        ("1.0+local", "has a local label"),
        ("not a version", "is not a PEP 440 version"),
        ("../1", "is not a PEP 440 version"),
    ],
)
def test_bad_versions_are_refused(version: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        placeholder_data(manifest(), version)


def test_versions_are_normalised() -> None:
    assert placeholder_data(manifest(), "1.0.0-dev0")["version"] == "1.0.0.dev0"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://x.org/a", "uses ftp:, not https"),
        ("https://x.org/a b", "contains ' ': percent-encode it"),
        ('https://x.org/"a', "contains '\"': percent-encode it"),
        ("https://x.org/a\nProject-URL: evil", "contains '\\n': percent-encode it"),
        ("https://x.org/<a>", "contains '<': percent-encode it"),
        ("javascript:alert(1)", "uses javascript:, not https"),
    ],
)
def test_urls_that_could_break_out_are_refused(url: str, problem: str) -> None:
    with pytest.raises(UsageError, match=r"^package\.downloads: ") as info:
        placeholder_data(manifest(downloads=url))
    assert problem in str(info.value)


def test_a_placeholder_must_say_where_the_real_downloads_are() -> None:
    with pytest.raises(UsageError, match=r"^package\.downloads: missing"):
        placeholder_data(manifest(downloads=None, homepage=None))


def test_wheel_of_another_project_is_refused() -> None:
    with pytest.raises(
        UsageError, match=r"^wheel\[0\]\.url: .* names project 'tilert', not 'other'"
    ):
        placeholder_data(manifest(name="other"))


# --- safe rendering ----------------------------------------------------------------------


@given(st.text())
def test_toml_strings_read_back_exactly(text: str) -> None:
    assert tomllib.loads(f"x = {toml_string(text)}")["x"] == text


# RFC 3986 characters the URL policy keeps ($ ' ; are refused: resolver_hook/manifest/urls.py).
URL_TEXT = st.text(alphabet="abcXYZ019-._~:/?#[]@!&()*+,=%", max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(display=st.text(min_size=1, max_size=40), tail=URL_TEXT)
def test_manifest_strings_round_trip_through_the_generated_files(
    tmp_path_factory: pytest.TempPathFactory, display: str, tail: str
) -> None:
    downloads = "https://example.org/" + tail
    data = placeholder_data(manifest(display_name=display, downloads=downloads))
    root = render_project(data, tmp_path_factory.mktemp("p"))
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["urls"]["Download"] == downloads
    assert pyproject["build-system"] == {
        "requires": [],
        "build-backend": "placeholder_backend",
        "backend-path": ["_placeholder_backend"],
    }
    rt = runtime()
    back = rt.load_data(str(root / "src" / "tilert"))
    assert back == data
    text = rt.render_message(back, {**_HOST})
    assert f"\n{display} builds exist" in text
    assert f"\nReal downloads: {downloads}\n" in text
    # Nothing from the manifest is code: the Python files are the template's, verbatim.
    for name in ("__init__.py", "_placeholder.py"):
        assert (root / "src" / "tilert" / name).read_bytes() == (
            template_dir() / "package" / name
        ).read_bytes()


_HOST = host(nvidia_reason="none")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_generated_paths_never_leave_the_output_folder(name: str) -> None:
    try:
        data = placeholder_data(manifest(name=name, wheels=()))
    except UsageError:
        return
    for rel in render_files(data):
        parts = Path(rel).parts
        assert ".." not in parts
        assert not Path(rel).is_absolute()
        assert rel.startswith(("pyproject.toml", "README.md", "_placeholder_backend/", "src/"))


def test_the_portable_modules_are_embedded_verbatim() -> None:
    # Every module of resolver_hook/portable/ the runtime imports, byte for byte.
    files = render_files(tilert())
    for name in ("cuda", "overrides", "platforms", "visible"):
        original = (REPO / "resolver_hook" / "portable" / f"{name}.py").read_bytes()
        assert files[f"src/tilert/_placeholder_{name}.py"] == original


def test_readme_is_a_placeholder_page_with_the_matrix() -> None:
    text = render_files(tilert())["README.md"].decode()
    assert text.startswith(
        "# tilert: placeholder\n\n**This is a placeholder, not the real tilert.**"
    )
    assert (
        "| [tilert\\-0.1.5.post2\\-cp312\\-cp312\\-manylinux\\_2\\_28\\_x86\\_64.whl]"
        "(https://github.com/tile-ai/TileRT/releases/download/v0.1.5.post2/"
        "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl) | 0.1.5.post2 | "
        "Linux x86\\_64 \\(glibc 2.28 or newer\\) | CPython 3.12 | CUDA 13.0 or newer "
        "\\(driver 580 or newer\\) | sm\\_100f: NVIDIA B200/GB200, B300/GB300 |"
    ) in text
    assert (
        "### Linux x86\\_64 \\(glibc 2.28 or newer\\), CPython 3.12\n\n```sh\npip install "
        "https://github.com/tile-ai/TileRT/releases/download/v0.1.5.post2/"
        "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl\n```"
    ) in text


def test_markdown_cannot_be_injected_by_a_display_name() -> None:
    text = render_files(tilert(display_name="x](javascript:1) <b>|\n# h"))["README.md"].decode()
    assert text.startswith("# x\\]\\(javascript:1\\) \\<b\\>\\| \\# h: placeholder\n")


# --- the sdist ---------------------------------------------------------------------------


def _pkg_info(sdist: Path) -> Any:
    with tarfile.open(sdist) as tar:
        member = tar.extractfile("tilert-0.0.0.dev0/PKG-INFO")
        assert member is not None
        return email.parser.HeaderParser().parsestr(member.read().decode())


def test_sdist_has_static_metadata_and_truthful_classifiers(tmp_path: Path) -> None:
    sdist = build_placeholder(TILERT, tmp_path).sdist
    assert sdist == tmp_path / "tilert-0.0.0.dev0.tar.gz"
    info = _pkg_info(sdist)
    # Static metadata lets uv resolve without building (docs/facts.md section 4).
    assert tuple(int(x) for x in info["Metadata-Version"].split(".")) >= (2, 2)
    assert info.get_all("Dynamic") is None
    assert info.get_all("Requires-Dist") is None
    # No Requires-Python: a placeholder must reach every Python to explain itself.
    assert info.get_all("Requires-Python") is None
    assert info.get_all("Classifier") == [
        "Environment :: GPU :: NVIDIA CUDA",
        "Environment :: GPU :: NVIDIA CUDA :: 13",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: Implementation :: CPython",
    ]
    assert info.get_all("Project-URL") == [
        "Homepage, https://github.com/tile-ai/TileRT",
        "Download, https://github.com/tile-ai/TileRT/releases",
    ]
    assert info["Description-Content-Type"] == "text/markdown"


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    one = build_placeholder(TILERT, tmp_path / "one").sdist.read_bytes()
    two = build_placeholder(TILERT, tmp_path / "two").sdist.read_bytes()
    assert one == two


def test_source_date_epoch_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    sdist = build_placeholder(TILERT, tmp_path).sdist
    raw = sdist.read_bytes()
    assert int.from_bytes(raw[4:8], "little") == 1700000000  # gzip header MTIME (RFC 1952)
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {
        (1700000000, 0, 0, "", "")
    }
    assert {m.mode for m in members} == {0o644}


def test_output_folder_that_cannot_be_made_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "dist"
    taken.write_text("a file where the folder should be\n")
    assert main(["placeholder", "build", str(TILERT), "-o", str(taken), "--version", "0.0.1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {taken}: cannot make the output folder: "), err
    assert "Traceback" not in err


def test_twine_check_passes(tmp_path: Path) -> None:
    sdist = build_placeholder(TILERT, tmp_path).sdist
    out = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(sdist)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASSED" in out.stdout


# --- the in-tree backend -----------------------------------------------------------------


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("unpacked")
    sdist = build_placeholder(TILERT, tmp / "dist").sdist
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / "tilert-0.0.0.dev0"


OVERRIDES = {
    "RESOLVER_HOOK_OVERRIDE_ARCH": "aarch64",
    "RESOLVER_HOOK_OVERRIDE_SM": "12.1",
    "RESOLVER_HOOK_OVERRIDE_CUDA": "13.0",
    "RESOLVER_HOOK_OVERRIDE_GLIBC": "2.39",
}


def _hook(root: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TILERT_")}
    full.update(OVERRIDES, PYTHONPATH=str(root / "_placeholder_backend"), **env)
    return subprocess.run(
        [sys.executable, "-c", "import placeholder_backend as b; " + code],
        cwd=root,
        env=full,
        capture_output=True,
        text=True,
        check=False,
    )


def _expected_message() -> str:
    rt = runtime()
    return rt.render_message(placeholder_data(load_manifest(TILERT)), rt.detect(OVERRIDES))


@pytest.mark.parametrize(
    "hook", ["b.build_wheel('.')", "b.prepare_metadata_for_build_wheel('.')", "b.build_sdist('.')"]
)
def test_every_build_hook_refuses_with_the_message_and_no_traceback(
    unpacked: Path, hook: str
) -> None:
    out = _hook(unpacked, hook)
    assert out.returncode == 1
    assert out.stderr == _expected_message() + "\n"  # SystemExit(message): no traceback
    assert out.stdout == ""


def test_build_requirements_are_empty(unpacked: Path) -> None:
    out = _hook(
        unpacked, "print(b.get_requires_for_build_wheel(), b.get_requires_for_build_sdist())"
    )
    assert out.stdout == "[] []\n"


def test_escape_hatch_builds_a_reproducible_wheel_that_refuses_import(
    unpacked: Path, tmp_path: Path
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        out = _hook(
            unpacked,
            f"print(b.build_wheel({str(tmp_path / folder)!r}))",
            TILERT_ALLOW_PLACEHOLDER="1",
        )
        assert out.stdout == "tilert-0.0.0.dev0-py3-none-any.whl\n", out.stderr
    wheel = tmp_path / "a" / "tilert-0.0.0.dev0-py3-none-any.whl"
    assert wheel.read_bytes() == (tmp_path / "b" / wheel.name).read_bytes()
    with zipfile.ZipFile(wheel) as zf:
        assert zf.namelist() == [
            "tilert/__init__.py",
            "tilert/_placeholder.py",
            "tilert/_placeholder_cuda.py",
            "tilert/_placeholder_data.json",
            "tilert/_placeholder_overrides.py",
            "tilert/_placeholder_platforms.py",
            "tilert/_placeholder_visible.py",
            "tilert-0.0.0.dev0.dist-info/METADATA",
            "tilert-0.0.0.dev0.dist-info/WHEEL",
            "tilert-0.0.0.dev0.dist-info/RECORD",
        ]
        zf.extractall(tmp_path / "site")
    # Imported from the unpacked wheel: every way in fails with the same message.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILERT_")}
    env.update(OVERRIDES, PYTHONPATH=str(tmp_path / "site"))
    message = _expected_message()
    for argv in (
        ["-c", "import tilert"],
        ["-c", "import tilert.models.preprocess"],
        ["-c", "from tilert import __version__"],
    ):
        out = subprocess.run(
            [sys.executable, *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )
        assert out.returncode == 1
        assert out.stderr.endswith(f"tilert._placeholder.PlaceholderError: {message}\n")
        assert "ModuleNotFoundError" not in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "tilert.models.preprocess.weight_converter"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert (out.returncode, out.stderr) == (1, message + "\n")  # just the message
    probe = (
        "try:\n    import tilert\nexcept ImportError as e:\n"
        "    print(type(e).__mro__[1].__name__, e.name, isinstance(e, ModuleNotFoundError))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert out.stdout == "ImportError None False\n", out.stderr


def test_there_is_no_wheel_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pip and uv prefer a wheel and install it without running its code: a placeholder
    # wheel would install silently, so none is ever built (README, "Loud placeholders").
    with pytest.raises(SystemExit) as exc:
        main(["placeholder", "build", str(TILERT), "-o", str(tmp_path), "--wheel"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --wheel" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --- other interpreters and installs ---------------------------------------------------


@pytest.mark.skipif(find_python("3.8") is None, reason="no Python 3.8 on this machine")
def test_the_runtime_runs_on_python_3_8(unpacked: Path) -> None:
    python = find_python("3.8")
    assert python is not None
    env = dict(os.environ, **OVERRIDES)
    out = subprocess.run(
        [python, str(unpacked / "src" / "tilert" / "_placeholder.py")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "This machine: Linux aarch64, CPython 3.8, glibc 2.39, NVIDIA GB10" in out.stdout


@pytest.mark.integration
def test_template_is_found_in_an_installed_wheel(tmp_path: Path) -> None:
    # pyproject force-includes placeholder_template/ as resolver_hook/_placeholder_template.
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(REPO)).build(directory=str(tmp_path / "whl"), versions=["standard"])
    with zipfile.ZipFile(wheel) as zf:
        assert "resolver_hook/_placeholder_template/package/_placeholder.py" in zf.namelist()
        zf.extractall(tmp_path / "site")
    code = (
        "import sys; from resolver_hook.publish.placeholder import build_placeholder; "
        "from resolver_hook.publish.placeholder.render import template_dir; "
        "print(template_dir()); "
        "print(build_placeholder(sys.argv[1], sys.argv[2]).sdist.name)"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    out = subprocess.run(
        [sys.executable, "-c", code, str(TILERT), str(tmp_path / "dist")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        str(tmp_path / "site" / "resolver_hook" / "_placeholder_template"),
        "tilert-0.0.0.dev0.tar.gz",
    ]
    # The same bytes as a build from this checkout.
    here = build_placeholder(TILERT, tmp_path / "here").sdist
    assert (tmp_path / "dist" / here.name).read_bytes() == here.read_bytes()


# --- command line -------------------------------------------------------------------------


def test_cli_build_prints_path_and_sha256(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["placeholder", "build", str(TILERT), "-o", str(tmp_path), "--version", "0.0.1"]) == 0
    )
    sdist = tmp_path / "tilert-0.0.1.tar.gz"
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert capsys.readouterr().out == f"{sdist}  sha256={digest}\n"


def test_cli_build_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["placeholder", "build", str(TILERT), "-o", str(tmp_path), "--version", "1+x"]) == 2
    assert capsys.readouterr().err == (
        "error: --version: '1+x' has a local label, which PyPI refuses\n"
    )
    assert not list(tmp_path.iterdir())


def test_build_from_data_writes_only_the_sdist(tmp_path: Path) -> None:
    build_from_data(tilert(), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["tilert-0.0.0.dev0.tar.gz"]


def test_sdist_members_are_sorted_and_plain(tmp_path: Path) -> None:
    sdist = build_placeholder(TILERT, tmp_path).sdist
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    assert all(m.isfile() for m in members)
    names = [m.name for m in members]
    assert names[-1] == "tilert-0.0.0.dev0/PKG-INFO"
    with gzip.open(io.BytesIO(sdist.read_bytes())) as gz:
        assert gz.read(1)
    with tarfile.open(sdist) as tar:
        member = tar.extractfile("tilert-0.0.0.dev0/src/tilert/_placeholder_data.json")
        assert member is not None
        data = json.loads(member.read())
    assert data == tilert()


def test_a_failed_build_leaves_nothing_in_the_output_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that fails after the sdist was written leaves nothing in -o."""
    from resolver_hook.errors import OperationalError
    from resolver_hook.publish.placeholder import build

    def fail(artifact: Path, out: Path) -> Path:
        raise OperationalError("cannot publish: boom")

    monkeypatch.setattr(build, "_publish", fail)
    out = tmp_path / "dist"
    with pytest.raises(OperationalError, match="boom"):
        build.build_placeholder(TILERT, out)
    assert list(out.iterdir()) == []


# --- import names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("json", "import name 'json' would shadow the standard library module 'json'"),
        ("typing", "import name 'typing' would shadow the standard library module 'typing'"),
        ("3d-tools", "import name '3d_tools' is not a valid Python identifier"),
        ("class", "import name 'class' is not a valid Python identifier"),
    ],
)
def test_an_unimportable_or_shadowing_import_name_is_refused(
    name: str, problem: str, tmp_path: Path
) -> None:
    with pytest.raises(UsageError) as exc:
        build_from_data(placeholder_data(manifest(name=name, wheels=())), tmp_path)
    assert exc.value.message == f"package.name {name!r}: {problem}"
    assert exc.value.hint == "give the import name with --import-name NAME"


def test_import_name_option_overrides_and_is_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = placeholder_data(manifest(name="3d-tools", wheels=()), import_as="threed_tools")
    sdist = build_from_data(data, tmp_path).sdist
    with tarfile.open(sdist) as tar:
        assert "3d_tools-0.0.0.dev0/src/threed_tools/__init__.py" in tar.getnames()
    for bad, words in (("os", "would shadow"), ("a-b", "is not a valid Python identifier")):
        args = ["--import-name", bad]
        assert main(["placeholder", "build", str(TILERT), "-o", str(tmp_path / "x"), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --import-name: import name {bad!r} ")
        assert words in err
    assert not (tmp_path / "x").exists() or list((tmp_path / "x").iterdir()) == []
