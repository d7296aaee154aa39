"""Placeholders for retired or renamed names: data, files, command line.

Their install and import against real pip and uv are in test_placeholder_check.py.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.publish.placeholder import build_placeholder, build_retired
from resolver_hook.publish.placeholder.data import retired_data
from resolver_hook.publish.placeholder.render import render_files


def _members(sdist: Path) -> dict[str, bytes]:
    with tarfile.open(sdist) as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
        }


def test_the_sdist_is_static_reproducible_and_fails_always(tmp_path: Path) -> None:
    a = build_retired("sklearn", "scikit-learn", tmp_path / "a").sdist
    b = build_retired("sklearn", "scikit-learn", tmp_path / "b").sdist
    assert a.read_bytes() == b.read_bytes()
    files = _members(a)
    pkg_info = files["PKG-INFO"].decode()
    version = pkg_info.split("\n", 1)[0].removeprefix("Metadata-Version: ")
    assert tuple(map(int, version.split("."))) >= (2, 2)  # static metadata (PEP 643)
    assert "Dynamic:" not in pkg_info
    assert "Summary: Retired name: install scikit-learn instead;" in pkg_info
    assert "Classifier: Development Status :: 7 - Inactive" in pkg_info
    data = json.loads(files["src/sklearn/_placeholder_data.json"])
    assert (data["kind"], data["replacement"], data["flavours"]) == ("retired", "scikit-learn", [])
    # No brownout: nothing in the data or the runtime reads a date or a counter.
    assert "brownout" not in files["src/sklearn/_placeholder.py"].decode().lower()


@pytest.mark.parametrize(
    "replacement",
    [
        "scikit-learn; rm -rf /",
        "scikit-learn[all]",
        "scikit-learn==1.5",
        "`x`",
        "a b",
        "[x](http://evil)",
        "",
        "-x",
    ],
)
def test_a_replacement_is_a_bare_project_name(replacement: str) -> None:
    with pytest.raises(UsageError, match=r"^replacement: .* is not a valid project name$"):
        retired_data("sklearn", replacement)


@pytest.mark.parametrize("name", ["../x", "a b", "", "x\n"])
def test_a_retired_name_must_be_a_project_name(name: str) -> None:
    with pytest.raises(UsageError, match="is not a valid project name"):
        retired_data(name, "new")


def test_names_reach_the_readme_escaped() -> None:
    data = retired_data("Old_Name", "new_thing")
    readme = render_files(data)["README.md"].decode()
    # Outside code the names are Markdown-escaped; in code they are literal.
    assert readme.startswith("# old\\-name: retired name\n")
    assert "install [new\\_thing](https://pypi.org/project/new-thing/) instead" in readme
    assert "```sh\npip install new_thing\nuv pip install new_thing\n```" in readme


def test_the_replacement_cannot_be_the_name_itself() -> None:
    with pytest.raises(UsageError, match="is the retired name itself"):
        retired_data("sklearn", "SKLearn")


def test_a_retired_toml_file_builds_the_same_sdist(tmp_path: Path) -> None:
    spec = tmp_path / "sklearn.toml"
    spec.write_text(
        '[retired]\nname = "sklearn"\nreplacement = "scikit-learn"\n'
        'homepage = "https://scikit-learn.org"\n'
    )
    from_file = build_placeholder(spec, tmp_path / "a").sdist
    from_args = build_retired(
        "sklearn", "scikit-learn", tmp_path / "b", homepage="https://scikit-learn.org"
    ).sdist
    assert from_file.read_bytes() == from_args.read_bytes()


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[retired]\nname = "sklearn"\n', "retired.replacement: missing or not a string"),
        ('[retired]\nname = "x"\nreplacement = "y"\nextra = 1\n', "retired: unknown key 'extra'"),
        ('retired = 5\n', "retired: expected a table"),
        ('[retired]\nname = "json"\nreplacement = "y"\n',
         "retired.name 'json': import name 'json' would shadow the standard library module "
         "'json'"),
    ],
)  # fmt: skip
def test_a_bad_retired_file_is_one_error_line(
    tmp_path: Path, text: str, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "r.toml"
    spec.write_text(text)
    assert main(["placeholder", "build", str(spec), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.splitlines()[0] == f"error: {spec}: {error}"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--retired-name", "sklearn"], "error: --retired-name and --replacement go together"),
        (["x.toml", "--retired-name", "a", "--replacement", "b"],
         "error: give a MANIFEST or --retired-name/--replacement, not both"),
        ([], "error: nothing to build"),
        (["--retired-name", "sklearn", "--replacement", "x", "--version", ""],
         "error: --version '': an empty version; leave it out to choose one from the index"),
        (["--retired-name", "json", "--replacement", "x"],
         "error: --retired-name 'json': import name 'json' would shadow the standard library "
         "module 'json'"),
    ],
)  # fmt: skip
def test_command_line_misuse_exits_2(
    tmp_path: Path, args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["placeholder", "build", "-o", str(tmp_path / "out"), *args]) == 2
    assert capsys.readouterr().err.splitlines()[0] == error
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_command_line_builds_with_an_import_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--retired-name", "3d-old", "--replacement", "threed", "--import-name", "old3d"]
    assert (
        main(["placeholder", "build", "-o", str(tmp_path), *args, "--version", "0.0.0.dev0"]) == 0
    )
    sdist = tmp_path / "3d_old-0.0.0.dev0.tar.gz"
    assert capsys.readouterr().out.startswith(f"{sdist}  sha256=")
    assert "src/old3d/__init__.py" in _members(sdist)


def test_a_failed_build_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # what TMPDIR sets
    out = tmp_path / "out"
    # A name whose sdist file name is longer than a file system allows: hatchling fails.
    code = main(["placeholder", "build", "--retired-name", "a" * 250, "--replacement", "b",
                 "-o", str(out)])  # fmt: skip
    assert code == 1
    assert capsys.readouterr().err.count("error:") == 1
    assert list(scratch.iterdir()) == []
    assert list(out.iterdir()) == []
    assert tempfile.tempdir == str(scratch)  # put back
