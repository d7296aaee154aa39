"""Twin distributions: the manifest field, the built-in families, the proof's refusal."""

from __future__ import annotations

import pytest

from resolver_hook.manifest import ManifestError
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.manifest.twins import builtin_families, families, twins_among

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
