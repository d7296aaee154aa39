"""The one table reader (resolver_hook.manifest.tables): every problem with its key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.appenv.declaration import parse_declaration
from resolver_hook.lock.sets import INDEX_NAME, read_index
from resolver_hook.manifest import ManifestError
from resolver_hook.manifest.load import collect_manifests
from resolver_hook.manifest.tables import Problem, TableReader


def test_each_problem_names_its_key_path_and_what_is_wrong() -> None:
    r = TableReader("m.toml")
    assert r.string({"cuda": 13}, "cuda", "index[2]") is None
    assert r.strings({"gpu": ["sm_90", 1]}, "gpu", "wheel[0]") is None
    r.keys({"cdua": ">=13"}, ("cuda", "gpu"), "index[3]")
    assert r.found == [
        Problem(source="m.toml", path="index[2].cuda", what="expected a string, got an integer"),
        Problem(source="m.toml", path="wheel[0].gpu[1]", what="expected a string, got an integer"),
        Problem(source="m.toml", path="index[3].cdua", what="unknown key; did you mean 'cuda'?"),
    ]
    assert r.problems[0] == "m.toml: index[2].cuda: expected a string, got an integer"


def test_a_problem_of_the_whole_document_has_no_key_path() -> None:
    r = TableReader("m.toml")
    r.bad("", "no flavours")
    assert r.problems == ["m.toml: no flavours"]


def test_pyproject_table_problems_come_from_the_reader(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.resolver-hook]\nmanifests = "x"\nmanifest = 1\nbogus = 1\n'
    )
    with pytest.raises(ManifestError) as info:
        collect_manifests(cwd=tmp_path, env={}, entry_points=None, builtin=False)
    where = f"{tmp_path / 'pyproject.toml'} [tool.resolver-hook]"
    assert info.value.problems == (
        f"{where}: bogus: unknown key (known: manifests, manifest, env)",
        f"{where}: manifests: expected a list of paths",
        f"{where}: manifest: expected [[tool.resolver-hook.manifest]] tables",
    )


def test_the_app_env_declaration_speaks_as_the_manifest_reader(tmp_path: Path) -> None:
    table = {"stak": ["torch"], "cpu": "refuse", "notes": [{"txt": "x", "text": 1}]}
    with pytest.raises(ManifestError) as info:
        parse_declaration(table, source="decl", root=tmp_path)
    assert info.value.problems == (
        "decl: stak: unknown key; did you mean 'stack'?",
        "decl: notes[0].txt: unknown key; did you mean 'text'?",
        "decl: notes[0].text: expected a non-empty string, got an integer",
        "decl: stack: missing or empty: name the packages the environment is built around",
    )


def test_a_lock_index_names_every_problem_at_once(tmp_path: Path) -> None:
    hex64 = "ab" * 32
    (tmp_path / INDEX_NAME).write_text(
        "schema = 1\n"
        '[[lock]]\nfile = "a.txt"\nsha256 = "0"\ntarget = "t"\nmachine = "m"\ngpus = ["fast"]\n'
        f'[[lock]]\nfile = "b.txt"\nsha256 = "{hex64}"\ntarget = "t"\nmachine = "m"\n'
        '[[lock.package]]\nname = "pkg"\n[[lock.package.index]]\nversion = "1.0"\ncuda = "13"\n'
    )
    with pytest.raises(ManifestError) as info:
        read_index(tmp_path)
    src = str(tmp_path / INDEX_NAME)
    assert info.value.problems == (
        f"{src}: lock[0].sha256: '0' is not a sha256 (64 hex digits)",
        f"{src}: lock[0].gpus[0]: 'fast' is not a compute capability such as \"9.0\"",
        f"{src}: lock[1].package[0]: index[0].cuda: '13' is not a version specifier such as "
        "'>=13.0'",
    )
    assert info.value.message.startswith(f"3 problems in {src}:\n")
