"""Flavour manifests: validation of every key, the matrix form, sources and precedence."""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest
from packaging.tags import Tag
from packaging.version import Version

from resolver_hook.ground.plain import plain
from resolver_hook.manifest import (
    IndexFlavour,
    ManifestError,
    collect_manifests,
    load_manifest,
    loads_manifest,
    parse_manifest,
)
from resolver_hook.portable.cuda import parse_target

DATA = Path(__file__).parent / "data" / "manifests"

TILERT_URL = (
    "https://github.com/tile-ai/TileRT/releases/download/v0.1.5.post2/"
    "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl"
)


def tilert(**wheel: object) -> dict[str, object]:
    return {"schema": 1, "package": {"name": "tilert"}, "wheel": [{"url": TILERT_URL, **wheel}]}


def test_issue_example_is_accepted() -> None:
    text = textwrap.dedent(f"""\
        schema = 1
        [package]
        name = "tilert"
        homepage = "https://github.com/tile-ai/TileRT"
        downloads = "https://github.com/tile-ai/TileRT/releases"

        [[wheel]]
        url = "{TILERT_URL}"
        sha256 = "{"ab" * 32}"
        cuda = ">=13.0"
        gpu = ["sm_100f"]
        requires = ["torch==2.11.*"]

        [[index]]
        url = "https://download.pytorch.org/whl/cu130/torch/"
        version = "2.13.0+cu130"
        cuda = ">=13.0"
        gpu = ["sm_75", "compute_120"]
        platforms = ["manylinux_2_28_x86_64", "win_amd64"]
        """)
    m = loads_manifest(text, source="tilert.toml")
    assert m.name == "tilert"
    assert m.downloads.endswith("/releases")
    (w,) = m.wheels
    assert w.version == Version("0.1.5.post2")
    assert w.tags == frozenset({Tag("cp312", "cp312", "manylinux_2_28_x86_64")})
    assert w.sha256 == "ab" * 32
    assert w.python_versions == ("3.12",)
    assert w.needs.gpu == (parse_target("sm_100f"),)
    assert str(w.needs.cuda) == ">=13.0"
    assert [str(r) for r in w.needs.requires] == ["torch==2.11.*"]
    (i,) = m.indexes
    assert i.version == Version("2.13.0+cu130")
    assert i.platforms == ("manylinux_2_28_x86_64", "win_amd64")


def test_pep817_properties_mean_the_same_as_cuda_and_gpu() -> None:
    m = load_manifest(DATA / "tilert-user.toml")
    assert m.name == "tilert"
    assert m.display_name == "TileRT"
    first = m.wheels[0]
    assert str(first.needs.cuda) == ">=13.0"
    assert first.needs.gpu == (parse_target("sm_100f"),)


def test_matrix_expands_to_wheels() -> None:
    data = {
        "package": {"name": "flash-attn"},
        "matrix": [
            {
                "url": "https://x.org/{rel}/flash_attn-2.8.3+{cuda}torch2.13-{py}-{py}-{platform}.whl",
                "requires": ["torch==2.13.0+{cuda}"],
                "gpu": ["compute_80"],
                "axes": {
                    "py": ["cp311", "cp312"],
                    "cuda": [
                        {"value": "cu126", "cuda": ">=12.0"},
                        {"value": "cu130", "cuda": ">=13.0"},
                    ],
                    "platform": [{"value": "win_amd64", "rel": "v1"}],
                },
                "exclude": [{"py": "cp311", "cuda": "cu126"}],
            }
        ],
    }
    m = parse_manifest(data)
    assert [w.filename for w in m.wheels] == [
        "flash_attn-2.8.3+cu130torch2.13-cp311-cp311-win_amd64.whl",
        "flash_attn-2.8.3+cu126torch2.13-cp312-cp312-win_amd64.whl",
        "flash_attn-2.8.3+cu130torch2.13-cp312-cp312-win_amd64.whl",
    ]
    cu126 = m.wheels[1]
    assert str(cu126.needs.cuda) == ">=12.0"
    assert [str(r) for r in cu126.needs.requires] == ["torch==2.13.0+cu126"]
    assert cu126.url.startswith("https://x.org/v1/")


# Each malformed manifest gives one problem naming the key path (and a near miss).
BAD = [
    ("unknown-top", {**tilert(), "wheels": []}, "wheels: unknown key; did you mean 'wheel'?"),
    (
        "unknown-wheel-key",
        tilert(sha265="0" * 64),
        "wheel[0].sha265: unknown key; did you mean 'sha256'?",
    ),
    ("sha-short", tilert(sha256="abc"), "wheel[0].sha256: 'abc' is not 64 hex digits"),
    ("sha-type", tilert(sha256=5), "wheel[0].sha256: expected a string, got an integer"),
    ("cuda-bad", tilert(cuda="13"), "wheel[0].cuda: '13' is not a version specifier"),
    ("gpu-bad", tilert(gpu=["sm_1000x"]), "wheel[0].gpu[0]: 'sm_1000x' is not a kernel target"),
    ("gpu-type", tilert(gpu=[100]), "wheel[0].gpu[0]: expected a string, got an integer"),
    (
        "requires-bad",
        tilert(requires=["torch=2"]),
        "wheel[0].requires[0]: 'torch=2' is not a requirement",
    ),
    ("requires-self", tilert(requires=["tilert>1"]), "cannot be coupled with itself"),
    ("requires-url", tilert(requires=["torch @ https://x.org/t.whl"]), "not a URL"),
    (
        "prop-syntax",
        tilert(properties=["nvidia:sm_arch:100_real"]),
        "is not 'namespace :: feature :: value'",
    ),
    (
        "prop-feature",
        tilert(properties=["nvidia :: driver :: 580"]),
        "feature 'driver' is not understood",
    ),
    ("prop-namespace", tilert(properties=["amd :: gfx :: gfx942"]), "namespace 'amd'"),
    (
        "prop-twice",
        tilert(cuda=">=13", properties=["nvidia :: cuda_version_lower_bound :: 13"]),
        "gives the CUDA range twice",
    ),
    ("no-package", {"wheel": []}, "package: missing"),
    ("no-name", {"package": {}, "wheel": []}, "package.name: missing"),
    ("bad-name", {"package": {"name": "til ert"}}, "package.name: 'til ert' is not a valid"),
    ("no-flavours", {"package": {"name": "tilert"}}, "no flavours"),
    ("schema", {**tilert(), "schema": 2}, "schema: 2 is not a schema this tool reads"),
    ("http", tilert(url=TILERT_URL.replace("https", "http")), "is plain http: only https"),
    (
        "loopback",
        tilert(url="http://127.0.0.1:8000/tilert-1.0-py3-none-any.whl"),
        "need --allow-insecure-urls",
    ),
    ("file", tilert(url="file:///tmp/tilert-1.0-py3-none-any.whl"), "is a file: URL"),
    ("ftp", tilert(url="ftp://x.org/tilert-1.0-py3-none-any.whl"), "uses ftp:, not https"),
    # A URL goes into requirement and constraint files: a line break or space in it
    # would smuggle in another line or option (--extra-index-url) for pip to read.
    (
        "url-newline",
        tilert(
            url="https://x.org/a\n--extra-index-url https://evil.org/tilert-1.0-py3-none-any.whl"
        ),
        "contains '\\n'",
    ),
    (
        "url-space",
        tilert(url="https://x.org/a --hash=sha256:0/tilert-1.0-py3-none-any.whl"),
        "contains ' ': percent-encode",
    ),
    (
        "url-line-separator",
        tilert(url="https://x.org/a\u2028/tilert-1.0-py3-none-any.whl"),
        "contains '\\u2028': percent-encode",
    ),
    (
        "homepage-tab",
        {**tilert(), "package": {"name": "tilert", "homepage": "https://x.org/\t"}},
        "package.homepage: 'https://x.org/\\t' contains '\\t'",
    ),
    ("not-wheel", tilert(url="https://x.org/tilert-1.0.tar.gz"), "is not a wheel filename"),
    # docs/facts.md section 3: pip 26.3 crashes on a wheel URL naming another project.
    (
        "other-project",
        tilert(url="https://x.org/torch-2.0-py3-none-any.whl"),
        "wheel 'torch-2.0-py3-none-any.whl' is for project 'torch', not 'tilert'",
    ),
    (
        "no-url",
        {"package": {"name": "tilert"}, "wheel": [{"cuda": ">=13"}]},
        "wheel[0].url: missing",
    ),
    (
        "wheel-not-table",
        {"package": {"name": "tilert"}, "wheel": ["x"]},
        "wheel[0]: expected a table",
    ),
    (
        "index-version",
        {"package": {"name": "torch"}, "index": [{"version": "2.x+"}]},
        "index[0].version: '2.x+' is not a PEP 440 version",
    ),
    (
        "index-python",
        {"package": {"name": "torch"}, "index": [{"version": "2", "python": ["312"]}]},
        "index[0].python[0]: '312' is not a Python version",
    ),
    (
        "index-platform",
        {"package": {"name": "torch"}, "index": [{"version": "2", "platforms": ["Linux x86"]}]},
        "is not a wheel platform tag",
    ),
    (
        "matrix-no-axes",
        {"package": {"name": "tilert"}, "matrix": [{"url": TILERT_URL}]},
        "matrix[0].axes: missing",
    ),
    (
        "matrix-placeholder",
        {
            "package": {"name": "tilert"},
            "matrix": [
                {"url": "https://x.org/tilert-1-{py}-{py}-{plat}.whl", "axes": {"py": ["cp312"]}}
            ],
        },
        "placeholder {plat} has no axis",
    ),
    (
        "duplicate-url",
        {"package": {"name": "tilert"}, "wheel": [{"url": TILERT_URL}, {"url": TILERT_URL}]},
        "wheel[1].url: the same wheel URL as wheel[0]",
    ),
    (
        "evidence-http",
        tilert(evidence="http://x.org/notes"),
        "wheel[0].evidence: 'http://x.org/notes' is plain http",
    ),
    ("evidence-type", tilert(evidence=["https://x.org"]), "wheel[0].evidence: expected a string"),
    (
        "checked-unreal",
        tilert(checked="2026-02-30"),
        "wheel[0].checked: '2026-02-30' is not a real",
    ),
    ("checked-words", tilert(checked="last week"), "wheel[0].checked: 'last week' is not a date"),
    ("checked-int", tilert(checked=20261130), "wheel[0].checked: 20261130 is not a date"),
    (
        "runtime-bad",
        tilert(cuda=">=13.0", cuda_runtime="13"),
        "wheel[0].cuda_runtime: '13' is not a CUDA version like '13.2'",
    ),
    ("runtime-alone", tilert(cuda_runtime="13.2"), "wheel[0].cuda_runtime: needs 'cuda' too"),
    (
        "gfx-bad",
        tilert(rocm=">=7.2", gfx=["gfx942", "MI300"]),
        "wheel[0].gfx[1]: 'MI300' is not an AMD GPU name like 'gfx942'",
    ),
    ("gfx-alone", tilert(gfx=["gfx942"]), "wheel[0].gfx: needs 'rocm' too"),
    (
        "index-twins",
        {
            "package": {"name": "tilert"},
            "index": [
                {"url": "https://x.org/t/", "version": "1.0+cu130", "platforms": ["a_b", "c_d"]},
                {"url": "https://x.org/t/", "version": "1.0+cu130", "platforms": ["c_d"]},
            ],
        },
        "index[1]: the same version 1.0+cu130 from the same page as index[0], for the same",
    ),
    (
        "homepage-http",
        {**tilert(), "package": {"name": "tilert", "homepage": "http://x.org"}},
        "package.homepage",
    ),
]


@pytest.mark.parametrize(("data", "expected"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_manifest_gives_one_clear_problem(data: dict[str, object], expected: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, source="tilert.toml")
    assert len(info.value.problems) == 1, info.value.problems
    assert info.value.problems[0].startswith("tilert.toml: ")
    assert expected in info.value.problems[0]
    assert info.value.exit_code == 2


def test_every_problem_is_reported_at_once() -> None:
    data = {
        "package": {"name": "tilert"},
        "wheel": [
            {"url": TILERT_URL, "sha256": "x"},
            {"url": TILERT_URL.replace("x86_64", "aarch64"), "gpu": ["bogus"], "cdua": ">=13"},
        ],
    }
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, source="m.toml")
    assert info.value.problems == (
        "m.toml: wheel[0].sha256: 'x' is not 64 hex digits",
        "m.toml: wheel[1].cdua: unknown key; did you mean 'cuda'?",
        "m.toml: wheel[1].gpu[0]: 'bogus' is not a kernel target (expected sm_XY, sm_XYa, "
        "sm_XYf, compute_XY, XY_real or XY_virtual)",
    )
    assert info.value.message.startswith("3 problems in manifests:\n  m.toml: wheel[0].sha256")


def test_loopback_allowed_when_asked() -> None:
    url = "http://127.0.0.1:8123/tilert-1.0-py3-none-any.whl"
    m = parse_manifest(tilert(url=url), allow_insecure=True)
    assert m.wheels[0].url == url
    f = parse_manifest(tilert(url="file:///srv/tilert-1.0-py3-none-any.whl"), allow_insecure=True)
    assert f.wheels[0].filename == "tilert-1.0-py3-none-any.whl"
    with pytest.raises(ManifestError, match="only https"):
        parse_manifest(
            tilert(url="http://example.org/tilert-1.0-py3-none-any.whl"), allow_insecure=True
        )


def test_bad_toml(tmp_path: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_text("schema = = 1\n")
    with pytest.raises(ManifestError, match=r"x.toml: not valid TOML"):
        load_manifest(p)
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(tmp_path / "missing.toml")


def _write(path: Path, name: str, wheel: str) -> Path:
    path.write_text(f'[package]\nname = "{name}"\n[[wheel]]\nurl = "https://x.org/{wheel}"\n')
    return path


class FakeEntryPoint:
    def __init__(self, name: str, value: object) -> None:
        self.name, self.value, self._obj = name, f"plugin:{name}", value

    def load(self) -> object:
        return self._obj


def test_sources_and_precedence(tmp_path: Path) -> None:
    # Lowest to highest: built-in, entry point, RESOLVER_HOOK_MANIFESTS, pyproject, --manifest.
    ep_text = '[package]\nname = "natten"\n[[index]]\nversion = "1.0"\n'
    folder = tmp_path / "env"
    folder.mkdir()
    _write(folder / "a.toml", "natten", "natten-2.0-py3-none-any.whl")
    _write(folder / "b.toml", "tilert", "tilert-2.0-py3-none-any.whl")
    project = tmp_path / "proj"
    project.mkdir()
    _write(project / "t.toml", "tilert", "tilert-3.0-py3-none-any.whl")
    (project / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [tool.resolver-hook]
        manifests = ["t.toml"]
        [[tool.resolver-hook.manifest]]
        package = { name = "mypkg" }
        index = [{ version = "1.0" }]
        """)
    )
    cli = _write(tmp_path / "cli.toml", "tilert", "tilert-4.0-py3-none-any.whl")
    ms = collect_manifests(
        [cli],
        env={"RESOLVER_HOOK_MANIFESTS": str(folder)},
        cwd=project,
        entry_points=lambda: [
            FakeEntryPoint("natten-plugin", ep_text),
            FakeEntryPoint("plain", {"package": {"name": "plainpkg"}, "index": [{"version": "1"}]}),
        ],
    )
    assert ms["torch"].source == "built-in (torch.toml)"
    assert ms["natten"].source == str(folder / "a.toml")
    assert ms["natten"].replaced == (
        "built-in (natten.toml)",
        "entry point natten-plugin (plugin:natten-plugin)",
    )
    assert ms["tilert"].source == str(cli)
    assert str(ms["tilert"].wheels[0].version) == "4.0"
    assert len(ms["tilert"].replaced) == 3
    assert ms["mypkg"].source.endswith("[[tool.resolver-hook.manifest]][0]")
    assert ms["plainpkg"].source.startswith("entry point plain")
    assert isinstance(ms["mypkg"].indexes[0], IndexFlavour)


def test_entry_point_paths(tmp_path: Path) -> None:
    _write(tmp_path / "n.toml", "natten", "natten-2.0-py3-none-any.whl")
    ms = collect_manifests(
        cwd=tmp_path,
        env={},
        builtin=False,
        entry_points=lambda: [FakeEntryPoint("p", lambda: tmp_path)],
    )
    assert list(ms) == ["natten"]
    with pytest.raises(ManifestError, match=r"entry point p .*: resolved to int"):
        collect_manifests(cwd=tmp_path, env={}, entry_points=lambda: [FakeEntryPoint("p", 5)])


def test_same_level_duplicates_and_all_problems(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.toml", "tilert", "tilert-2.0-py3-none-any.whl")
    b = _write(tmp_path / "b.toml", "tilert", "tilert-3.0-py3-none-any.whl")
    bad = tmp_path / "bad.toml"
    bad.write_text('[package]\nname = "x"\n[[wheel]]\nurl = "http://x.org/x-1-py3-none-any.whl"\n')
    with pytest.raises(ManifestError) as info:
        collect_manifests([a, b, bad], cwd=tmp_path, env={}, entry_points=None)
    assert len(info.value.problems) == 2
    assert "only https" in info.value.problems[0]
    assert "also described by" in info.value.problems[1]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.2:8000/a-1.0-py3-none-any.whl", True),  # all of 127.0.0.0/8 is loopback
        ("http://localhost/a-1.0-py3-none-any.whl", True),
        ("http://[::1]/a-1.0-py3-none-any.whl", True),
        ("http://10.0.0.1/a-1.0-py3-none-any.whl", False),
        ("http://127.0.0.1.example.org/a-1.0-py3-none-any.whl", False),
    ],
)
def test_loopback_is_one_rule_for_manifests_and_index_pages(url: str, ok: bool) -> None:
    # One URL policy (resolver_hook/manifest/urls.py) serves manifests and index pages.
    from resolver_hook.manifest.urls import url_problem

    assert (url_problem(url, allow_insecure=True) is None) is ok


def test_evidence_checked_and_runtime_are_read() -> None:
    # A TOML date (checked = 2026-11-30, unquoted) and a string both work.
    import datetime

    for checked in ("2026-11-30", datetime.date(2026, 11, 30)):
        m = parse_manifest(
            tilert(
                cuda=">=13.0",
                cuda_runtime="13.2",
                evidence="https://x.org/build.py",
                checked=checked,
            )
        )
        (w,) = m.wheels
        assert (str(w.needs.cuda_runtime), w.needs.evidence, w.needs.checked) == (
            "13.2",
            "https://x.org/build.py",
            datetime.date(2026, 11, 30),
        )
        d = plain(w)  # the flavour as JSON
        assert (d["cuda_runtime"], d["evidence"], d["checked"]) == (
            "13.2",
            "https://x.org/build.py",
            "2026-11-30",
        )
    # Optional in user manifests.
    (w,) = parse_manifest(tilert()).wheels
    assert (w.needs.cuda_runtime, w.needs.evidence, w.needs.checked) == (None, None, None)


def test_matrix_entries_inherit_evidence_unless_an_axis_value_gives_one() -> None:
    m = parse_manifest(
        {
            "package": {"name": "tilert"},
            "matrix": [
                {
                    "url": "https://x.org/tilert-1.0+{cu}-cp312-cp312-{plat}.whl",
                    "evidence": "https://x.org/all",
                    "checked": "2026-11-30",
                    "axes": {
                        "cu": [
                            {"value": "cu130", "cuda": ">=13.0", "cuda_runtime": "13.0"},
                            {"value": "cu132", "cuda": ">=13.0", "cuda_runtime": "13.2"},
                        ],
                        "plat": [
                            "linux_x86_64",
                            {"value": "win_amd64", "evidence": "https://x.org/win"},
                        ],
                    },
                }
            ],
        }
    )
    got = {(w.filename, str(w.needs.cuda_runtime), w.needs.evidence) for w in m.wheels}
    assert got == {
        ("tilert-1.0+cu130-cp312-cp312-linux_x86_64.whl", "13.0", "https://x.org/all"),
        ("tilert-1.0+cu132-cp312-cp312-linux_x86_64.whl", "13.2", "https://x.org/all"),
        ("tilert-1.0+cu130-cp312-cp312-win_amd64.whl", "13.0", "https://x.org/win"),
        ("tilert-1.0+cu132-cp312-cp312-win_amd64.whl", "13.2", "https://x.org/win"),
    }
    assert all(str(w.needs.checked) == "2026-11-30" for w in m.wheels)


def test_one_release_per_platform_is_two_entries_told_apart_by_platform() -> None:
    m = parse_manifest(
        {
            "package": {"name": "torch"},
            "index": [
                {
                    "url": "https://x.org/cu130/torch/",
                    "version": "2.13.0+cu130",
                    "platforms": ["manylinux_2_28_x86_64"],
                    "cuda": ">=13.0",
                    "gpu": ["sm_75"],
                },
                {
                    "url": "https://x.org/cu130/torch/",
                    "version": "2.13.0+cu130",
                    "platforms": ["manylinux_2_28_aarch64"],
                    "cuda": ">=13.0",
                    "gpu": ["sm_80"],
                },
                {"url": "https://x.org/cpu/torch/", "version": "2.13.0+cpu"},
            ],
        }
    )
    assert [i.describe() for i in m.indexes] == [
        "torch 2.13.0+cu130 (x.org/cu130/torch/ for manylinux_2_28_x86_64)",
        "torch 2.13.0+cu130 (x.org/cu130/torch/ for manylinux_2_28_aarch64)",
        "torch 2.13.0+cpu (x.org/cpu/torch/)",
    ]


def test_pins_only_must_be_a_boolean() -> None:
    from resolver_hook.manifest.tables import ManifestError
    from resolver_hook.manifest.validate import parse_manifest

    doc = {
        "schema": 1,
        "package": {"name": "p", "pins_only": "yes"},
        "index": [{"versions": "==1"}],
    }
    with pytest.raises(ManifestError, match=r"package\.pins_only: expected true or false"):
        parse_manifest(doc, source="test")
    doc["package"]["pins_only"] = True  # type: ignore[index]
    assert parse_manifest(doc, source="test").pins_only


def test_arch_max_is_a_compute_capability() -> None:
    from resolver_hook.manifest.tables import ManifestError
    from resolver_hook.manifest.validate import parse_manifest

    doc = {
        "schema": 1,
        "package": {"name": "p"},
        "index": [{"versions": "==1", "arch_max": "sm_90"}],
    }
    with pytest.raises(ManifestError, match=r"'sm_90' is not a compute capability like '9.0'"):
        parse_manifest(doc, source="test")
    doc["index"][0]["arch_max"] = "9.0"  # type: ignore[index]
    assert parse_manifest(doc, source="test").indexes[0].needs.arch_max == (9, 0)


def test_entries_of_one_release_on_one_page_differ_in_platform_or_python() -> None:
    """Entries with the same page and version are one release whose kernel lists differ
    per platform: each is told apart by its platforms; two that overlap in platform and
    Python are ambiguous, each pair said once, in the manifest's order."""
    page = "https://download.pytorch.org/whl/cu130/torch/"

    def entry(
        platforms: list[str], python: list[str] | None = None, version: str = "2.13.0+cu130"
    ) -> dict[str, object]:
        t: dict[str, object] = {"url": page, "version": version, "platforms": platforms}
        if python is not None:
            t["python"] = python
        return t

    good = {
        "package": {"name": "torch"},
        "index": [
            entry(["manylinux_2_28_x86_64"]),
            entry(["win_amd64"]),
            entry(["manylinux_2_28_aarch64"], version="2.12.0+cu130"),
        ],
    }
    m = parse_manifest(good, source="t")
    assert [f.qualifier for f in m.indexes] == ["manylinux_2_28_x86_64", "win_amd64", ""]
    assert m.indexes[0].describe().endswith("for manylinux_2_28_x86_64)")
    bad = {
        "package": {"name": "torch"},
        "index": [
            entry(["manylinux_2_28_x86_64", "win_amd64"], ["3.12"]),
            entry(["win_amd64"], ["3.13"]),  # another Python: not ambiguous
            entry(["manylinux_2_28_x86_64"]),  # every Python: overlaps index[0]
            entry(["win_amd64"], ["3.12", "3.13"]),  # overlaps all three
        ],
    }
    with pytest.raises(ManifestError) as exc:
        parse_manifest(bad, source="t")
    same = "the same platform and Python: which one holds is ambiguous"
    assert exc.value.problems == (
        f"t: index[2]: the same version 2.13.0+cu130 from the same page as index[0], for {same}",
        f"t: index[3]: the same version 2.13.0+cu130 from the same page as index[0], for {same}",
        f"t: index[3]: the same version 2.13.0+cu130 from the same page as index[1], for {same}",
    )


def test_a_value_entries_share_is_read_once_and_its_problems_said_at_each() -> None:
    """Entries repeat their kernel lists, Python lists and dates: a good one is one value
    for all; a bad one is said at every entry that holds it, in the manifest's order."""
    page = "https://x.org/t/"
    gpu = ["sm_80", "sm_90"]

    def entry(version: str, **more: object) -> dict[str, object]:
        return {"url": page, "version": version, "cuda": ">=12.0", "gpu": gpu, **more}

    good = {
        "package": {"name": "torch"},
        "index": [
            entry("1.0", python=["3.12"], checked="2026-12-01"),
            entry("1.1", python=["3.12"], checked="2026-12-01"),
            entry("1.2", gpu=["sm_80", "sm_90", "sm_80"]),
        ],
    }
    m = parse_manifest(good, source="t")
    first, second, third = (f.needs for f in m.indexes)
    assert first.gpu == (parse_target("sm_80"), parse_target("sm_90"))
    assert first.gpu is second.gpu  # one kernel list for both
    assert third.gpu == first.gpu  # written twice, held once
    assert first.checked == second.checked == datetime.date(2026, 12, 1)
    assert m.indexes[0].python == m.indexes[1].python == ("3.12",)
    bad = {
        "package": {"name": "torch"},
        "index": [
            entry("1.0", gpu=["sm_80", "bogus"], python=["3.x"], checked="2026-02-30"),
            entry("1.1"),
            entry("1.2", gpu=["sm_80", "bogus"], python=["3.x"], checked="2026-02-30"),
        ],
    }
    with pytest.raises(ManifestError) as info:
        parse_manifest(bad, source="t")
    target = (
        "'bogus' is not a kernel target (expected sm_XY, sm_XYa, sm_XYf, compute_XY, "
        "XY_real or XY_virtual)"
    )
    python = "'3.x' is not a Python version like 3.12 (3.13t: free-threaded)"
    assert info.value.problems == tuple(
        f"t: index[{i}].{what}"
        for i in (0, 2)
        for what in (
            f"python[0]: {python}",
            f"gpu[1]: {target}",
            "checked: '2026-02-30' is not a real date",
        )
    )


def test_a_value_manifests_share_is_read_once_in_a_process() -> None:
    """The manifests of one plan repeat each other's values (torch's kernel lists, CUDA
    ranges and dates in torchvision's): a good one is one value for all of them."""

    def manifest(name: str) -> dict[str, object]:
        entry = {
            "url": f"https://x.org/{name}/",
            "versions": ">=0.5.1,<0.6",
            "label": "cu129",
            "cuda": ">=12.8.1",
            "cuda_runtime": "12.9",
            "gpu": ["sm_80", "sm_89", "sm_121a"],
            "python": ["3.12", "3.13t"],
            "evidence": "https://x.org/notes/0.5.1",
            "checked": "2026-11-29",
        }
        return {"package": {"name": name}, "index": [entry]}

    (a,) = parse_manifest(manifest("alpha"), source="a").indexes
    (b,) = parse_manifest(manifest("beta"), source="b").indexes
    assert (a.version, a.versions, a.python) == (b.version, b.versions, b.python)
    for field in ("version", "versions", "python"):
        assert getattr(a, field) is getattr(b, field), field
    for field in ("cuda", "cuda_runtime", "gpu", "checked"):
        assert getattr(a.needs, field) is getattr(b.needs, field), field


def test_a_url_read_under_one_url_policy_is_judged_again_under_the_other() -> None:
    url = "http://127.0.0.1:8123/tilert-1.0-py3-none-any.whl"
    assert parse_manifest(tilert(url=url), allow_insecure=True).wheels[0].url == url
    with pytest.raises(ManifestError, match="is plain http, not https"):
        parse_manifest(tilert(url=url))


@pytest.mark.parametrize(
    ("versions", "label", "version"),
    [
        (">=2.7,<2.9", "cu128", "2.7+cu128"),
        (">=2.7.0", "cu12_8", "2.7.0+cu12.8"),
        ("==2.8+cpu", "cu118", "2.8+cu118"),
        ("==2.8+cu118", "cu118", "2.8+cu118"),
        (">=1!2.0rc1.post2.dev3", "rocm7.2", "1!2.0rc1.post2.dev3+rocm7.2"),
        (">=2.6,>=2.7.1", "cpu", "2.7.1+cpu"),
    ],
)
def test_a_labelled_range_starts_at_its_floor_with_the_label(
    versions: str, label: str, version: str
) -> None:
    """The release of a labelled range is its floor with that local label: the version
    parsed from the floor's public part and the label."""
    data = {
        "package": {"name": "torch"},
        "index": [{"url": "https://x.org/t/", "versions": versions, "label": label}],
    }
    got = parse_manifest(data, source="t").indexes[0].version
    assert str(got) == version
    assert got == Version(version)
    assert hash(got) == hash(Version(version))
    assert (got.epoch, got.release, got.pre, got.post, got.dev, got.local) == (
        (v := Version(version)).epoch,
        v.release,
        v.pre,
        v.post,
        v.dev,
        v.local,
    )


def test_a_bad_coupling_is_said_at_every_entry_and_in_every_manifest() -> None:
    page = "https://x.org/t/"
    data = {
        "package": {"name": "torchvision"},
        "index": [
            {"url": page, "version": "1.0", "requires": ["torch==2.14.0", "torch=2.14"]},
            {"url": page, "version": "1.1", "requires": ["torch==2.14.0", "torch=2.14"]},
            {"url": page, "version": "1.2", "requires": ["torch==2.14.0", "torchvision"]},
        ],
    }
    for _ in range(2):  # a second manifest with the same texts says them again
        with pytest.raises(ManifestError) as info:
            parse_manifest(data, source="t")
        problems = info.value.problems
        assert [p.split(": ")[1] for p in problems] == [
            "index[0].requires[1]",
            "index[1].requires[1]",
            "index[2].requires[1]",
        ]
        assert problems[0].startswith("t: index[0].requires[1]: 'torch=2.14' is not a requirement")
        assert problems[0].removeprefix("t: index[0]") == problems[1].removeprefix("t: index[1]")
        assert problems[2].endswith("'torchvision': a package cannot be coupled with itself")
    entry = {"url": page, "version": "1.0", "requires": ["torch==2.14.0"]}
    good = {"package": {"name": "torchaudio"}, "index": [entry]}
    (req,) = parse_manifest(good, source="u").indexes[0].needs.requires
    assert str(req) == "torch==2.14.0"
