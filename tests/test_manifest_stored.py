"""A built-in manifest validated once and kept by its text: made again as validated."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from resolver_hook._data import data_path
from resolver_hook.ground import contentcache
from resolver_hook.ground.plain import plain
from resolver_hook.ground.valueclass import fields
from resolver_hook.manifest import ManifestError, load, loads_manifest, stored
from resolver_hook.manifest.document import document
from resolver_hook.manifest.model import IndexFlavour, Manifest, Needs, WheelFlavour
from resolver_hook.manifest.validate import parse_manifest


def _builtin_names() -> list[str]:
    return sorted(n for n in os.listdir(data_path("manifests")) if n.endswith(".toml"))


def _made_again(m: Manifest) -> Manifest:
    """``m`` through the cache's plain data and back, as a later process finds it."""
    stored._MADE.clear()
    return stored.rebuild(json.loads(json.dumps(stored.dump(m))))


def _same(made: Manifest, m: Manifest) -> None:
    assert made == m
    assert plain(made) == plain(m)
    # dump keeps what equality and plain do not: the specifiers' order, as iterated.
    assert stored.dump(made) == stored.dump(m)


@pytest.mark.parametrize("name", _builtin_names())
def test_each_builtin_manifest_is_made_again_as_validated(name: str) -> None:
    with open(data_path("manifests", name), encoding="utf-8") as f:
        text = f.read()
    source = f"built-in ({name})"
    m = parse_manifest(document(text, source), source=source)
    _same(_made_again(m), m)


def test_every_value_a_manifest_holds_is_made_again_from_its_text() -> None:
    """Each kind of value, in the orders written: specifiers (``str`` sorts them), a
    requirement's specifiers, extras and marker, cuda_floors, tags, dates, kernels."""
    wheel = "https://x.org/tilert-0.1.5-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" + "ab" * 32
    text = textwrap.dedent(f"""\
        [package]
        name = "tilert"
        homepage = "https://x.org"
        description = "a test"
        twins = ["tilert-gpu"]

        [[wheel]]
        url = "{wheel}"
        cuda = "<13.5,>=12.8"
        gpu = ["sm_90a", "compute_120", "sm_80"]
        cuda_floors = {{ sm_90a = ">=12.8", compute_120 = ">=12.9" }}
        requires = ["torch[opt,cuda]<3,>=2.7 ; sys_platform == 'linux'", "numpy"]
        cuda_runtime = "12.9"
        evidence = "https://x.org/notes"
        checked = "2026-11-30"
        cxx11abi = true

        [[index]]
        url = "https://x.org/whl/cu130/tilert/"
        versions = "<0.2,>=0.1.5"
        label = "cu130"
        cuda = ">=13.0"
        gpu = ["sm_100", "sm_120"]
        cpu = true
        arch_max = "12.0"
        platforms = ["manylinux_2_28_x86_64", "win_amd64"]
        python = ["3.12", "3.13t"]
        preference = 2

        [[index]]
        version = "0.1.4"
        kernels_until = "0.3"
        rocm = ">=6.2,<7"
        gfx = ["gfx942", "gfx90a"]
        install = "tilert-rocm[extra]"
        unjudged = "the kernel list"
        platforms = ["manylinux_2_28_x86_64"]

        [[index]]
        version = "0.1.4"
        l4t = ">=36,<37"
        platforms = ["manylinux_2_28_aarch64"]

        [[index]]
        url = "https://x.org/whl/torch-{{torch.minor}}.0+{{torch.local}}.html"
        version = "0.1.3"
        requires = ["torch>=2.6"]
        local_labels = ["cpu", "cu130"]

        [build]
        needs = ["nvcc>=12.8", "ninja"]
        """)
    m = loads_manifest(text, source="tilert.toml")
    made = _made_again(m)
    _same(made, m)
    (w,) = made.wheels
    assert [str(s) for s in w.needs.cuda or ()] == ["<13.5", ">=12.8"]
    (req, _) = w.needs.requires
    assert [str(s) for s in req.specifier] == ["<3", ">=2.7"]
    assert (req.extras, str(req.marker)) == ({"opt", "cuda"}, 'sys_platform == "linux"')
    assert made.indexes[0].version == m.indexes[0].version
    assert str(made.indexes[0].version) == "0.1.5+cu130"


def test_every_field_of_a_manifest_has_a_text_form() -> None:
    """A field added to the model with a type of no text form here fails this, not a
    plan: the kept result must hold every field."""
    for cls in (Manifest, WheelFlavour, IndexFlavour, Needs):
        for f in fields(cls):
            assert f.type in stored._FIELDS or f.type in stored._CLASSES or f.type == "Needs", (
                f"{cls.__name__}.{f.name}: {f.type}"
            )


def test_a_builtin_manifest_is_validated_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A later process with the same text and tool makes the validated manifest again
    from the user cache instead of validating it; a new text is validated."""
    load._parse_builtin.cache_clear()
    first = load._parse_builtin("torch.toml")
    load._parse_builtin.cache_clear()  # as a new process finds it

    def not_again(*args: Any, **kwargs: Any) -> Manifest:
        raise AssertionError("validated again")

    monkeypatch.setattr(load, "parse_manifest", not_again)
    stored._MADE.clear()
    again = load._parse_builtin("torch.toml")
    _same(again, first)
    load._parse_builtin.cache_clear()
    with open(data_path("manifests", "torch.toml"), encoding="utf-8") as f:
        edited = f.read().replace('homepage = "https://pytorch.org"', 'homepage = "https://x.org"')
    seen: list[str] = []

    def validate() -> Manifest:
        seen.append("validated")
        return parse_manifest(document(edited, "x"), source="x")

    assert stored.kept_builtin("torch.toml", edited, validate).homepage == "https://x.org"
    assert stored.kept_builtin("torch.toml", edited, validate).homepage == "https://x.org"
    assert seen == ["validated"]


def test_a_text_kept_by_other_code_is_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version of the tool, of its files (a checkout edited in place), of
    packaging or of Python validates the same text again."""
    m = loads_manifest('[package]\nname = "x"\n[[index]]\nversion = "1.0"\n', source="f")
    seen: list[str] = []

    def validate() -> Manifest:
        seen.append("validated")
        return m

    stored.kept_builtin("code.toml", "text", validate)
    stored.kept_builtin("code.toml", "text", validate)
    assert seen == ["validated"]
    monkeypatch.setattr(contentcache, "_code", lambda: ["another tool"])
    stored.kept_builtin("code.toml", "text", validate)
    assert seen == ["validated", "validated"]


def test_a_bad_text_is_said_every_time_and_never_kept(tmp_path: Path) -> None:
    def validate() -> Manifest:
        return loads_manifest(
            '[package]\nname = "x"\n[[wheel]]\nurl = "http://x.org/"\n', source="b"
        )

    for _ in range(2):
        with pytest.raises(ManifestError, match="plain http"):
            stored.kept_builtin("bad.toml", "text", validate)
    cache = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"])
    assert not (cache / "manifests" / "bad.toml.json").exists()


def test_a_text_with_credentials_is_never_kept() -> None:
    """Reading a URL's credentials hands them to the index client: such a text is read
    each time, never made again from the cache."""
    text = 'url = "https://user:secret@x.org/simple/"'
    m = loads_manifest('[package]\nname = "x"\n[[index]]\nversion = "1.0"\n', source="c")
    seen: list[str] = []

    def validate() -> Manifest:
        seen.append("validated")
        return m

    stored.kept_builtin("creds.toml", text, validate)
    stored.kept_builtin("creds.toml", text, validate)
    assert seen == ["validated", "validated"]
    for _ in range(2):  # given as the bytes read
        contentcache.kept(
            "manifests",
            "creds.toml",
            text.encode(),
            make=validate,
            dump=stored.dump,
            rebuild=stored.rebuild,
            code=stored.CODE,
        )
    assert seen == ["validated"] * 4


def test_a_kept_entry_that_is_not_a_manifest_is_validated_again() -> None:
    text = "some text"
    m = loads_manifest('[package]\nname = "x"\n[[index]]\nversion = "1.0"\n', source="d")
    assert stored.kept_builtin("odd.toml", text, lambda: m) == m
    path = Path(os.environ["RESOLVER_HOOK_CACHE_DIR"]) / "manifests" / "odd.toml.json"
    entry = json.loads(path.read_text())
    entry["value"]["columns"]["indexes"] = [{"url": [None]}]
    path.write_text(json.dumps(entry))
    seen: list[str] = []

    def validate() -> Manifest:
        seen.append("validated")
        return m

    assert stored.kept_builtin("odd.toml", text, validate) == m
    assert seen == ["validated"]
    assert json.loads(path.read_text())["value"] == stored.dump(m)


def test_a_text_the_entries_repeat_is_kept_once() -> None:
    """Entries of one manifest repeat their ranges, kernel lists and dates: each text is
    written once, and made into a value once."""
    entry = 'version = "{}"\ncuda = ">=13.0"\ngpu = ["sm_90", "sm_100"]\nchecked = "2026-11-30"\n'
    text = '[package]\nname = "x"\n' + "".join(
        f"[[index]]\n{entry.format(v)}" for v in ("1.0", "1.1", "1.2")
    )
    m = loads_manifest(text, source="e")
    written = json.dumps(stored.dump(m))
    for repeated in ('">=13.0"', '"sm_100"', '"2026-11-30"'):
        assert written.count(repeated) == 1, repeated
    made = _made_again(m)
    _same(made, m)
    assert made.indexes[0].needs.cuda is made.indexes[2].needs.cuda
