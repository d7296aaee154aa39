"""Wheel variants (PEP 825 draft, docs/facts.md section 2) in and out of manifests.

A loopback index publishes variant wheels of ``demo-var`` 1.0 and the index-level
``demo_var-1.0-variants.json``; ``manifest import`` reads them, the plan checks every
GPU of a two-GPU target (sm_80 + sm_90) where NVIDIA's highest-CC-only rule would pick
the sm_90-only build, uv installs the chosen variant (preview flag; docs/facts.md
section 3) and pip refuses it. ``manifest export --variants`` and import round-trip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.ground.plain import plain
from resolver_hook.ground.valueclass import replace
from resolver_hook.host.detect import parse_target
from resolver_hook.manifest import load_manifest
from resolver_hook.manifest.variantname import split_variant_label
from resolver_hook.publish.variants import (
    SCHEMA_URL,
    nvidia_needs,
    parse_variants_json,
    scan_properties,
)
from resolver_hook.resolve import resolve
from tests.installenv import PY, clean_env, installed, make_venv
from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

TWO_GPUS = f"linux-x86_64-py{PY}-cuda13.0-sm80,90"  # A100 + H100 in one host
H100_ONLY = f"linux-x86_64-py{PY}-cuda13.0-sm90"  # what the highest-CC-only rule sees

# label -> properties (PEP 825 "variants" entries)
VARIANTS: dict[str, dict[str, dict[str, list[str]]]] = {
    "cu13_sm90": {"nvidia": {"cuda_version_lower_bound": ["13.0"], "sm_arch": ["90_real"]}},
    "cu128_sm80_90": {
        "nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["80_real", "90_real"]}
    },
    "x86_64_v3": {"x86_64": {"level": ["v3"]}},
    "null": {},
}
# uv 0.13 reads a wheel's variant.json only when it also names the provider of each
# namespace (the PEP 817 "providers" table); PEP 825 0.1.1 files have none. The wheels
# here carry it so that real uv installs them (docs/facts.md section 3).
# uv also wants that table to name exactly the namespaces of default-priorities.
PROVIDERS = {
    "nvidia": {
        "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
        "requires": ["nvidia-variant-provider"],
    },
    "x86_64": {
        "plugin-api": "provider_variant_x86_64.plugin:X8664Plugin",
        "requires": ["provider-variant-x86-64"],
    },
}


def variants_json(labels: dict[str, Any], *, providers: bool = False) -> dict[str, Any]:
    used = ["nvidia", *(["x86_64"] if any("x86_64" in p for p in labels.values()) else [])]
    doc: dict[str, Any] = {
        "$schema": SCHEMA_URL,
        "default-priorities": {"namespace": used},
        "variants": labels,
    }
    if providers:
        doc["providers"] = {ns: PROVIDERS[ns] for ns in used}
    return doc


@dataclass
class VariantIndex:
    index: LoopbackIndex
    root: Path
    wheels: dict[str, BuiltWheel]
    plain: BuiltWheel

    def page(self, name: str) -> str:
        return f"{self.index.url}/pages/{name}/"


def _publish(root: Path, page: str, files: list[str]) -> None:
    d = root / "pages" / page
    d.mkdir(parents=True, exist_ok=True)
    links = "".join(f'<a href="../../files/{f}">{f}</a><br/>\n' for f in files)
    (d / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")


@pytest.fixture(scope="module")
def vindex(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VariantIndex]:
    root = tmp_path_factory.mktemp("variants")
    out = root / "built"
    wheels = {}
    for label, props in VARIANTS.items():
        text = json.dumps(variants_json({label: props}, providers=True))
        wheels[label] = build_wheel(
            out, "demo-var", "1.0", variant=(label, text), code=f"LABEL = {label!r}\n"
        )
    plain = build_wheel(out, "demo-var", "1.0", code="LABEL = 'plain'\n")
    index = LoopbackIndex(root / "index")
    index.add(plain, simple=False)
    for w in wheels.values():  # LoopbackIndex.add reads filenames with packaging: no labels
        (index.files / w.filename).write_bytes(w.path.read_bytes())
    (index.files / "demo_var-1.0-variants.json").write_text(json.dumps(variants_json(VARIANTS)))
    names = [w.filename for w in wheels.values()]
    _publish(index.root, "variants", [*names, "demo_var-1.0-variants.json"])
    _publish(index.root, "mixed", [*names, plain.filename, "demo_var-1.0-variants.json"])
    _publish(index.root, "nojson", names)
    with index.serving():
        yield VariantIndex(index=index, root=root, wheels=wheels, plain=plain)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        capture_output=True,
        text=True,
        env=clean_env(**(env or {})),
        timeout=600,
        check=False,
    )


def import_page(
    vi: VariantIndex, page: str, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return cli("manifest", "import", vi.page(page), "--allow-insecure-urls", "-o", str(out),
               *extra)  # fmt: skip


def _flavours(path: Path) -> list[dict[str, Any]]:
    """Each wheel entry as JSON data, less its place in the file."""
    m = load_manifest(path, allow_insecure=True)
    wheels = ({k: v for k, v in plain(w).items() if k != "where"} for w in m.wheels)
    return sorted(wheels, key=lambda d: d["url"])


# --- pure parts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "plain", "label"),
    [
        ("a-1.0-py3-none-any.whl", "a-1.0-py3-none-any.whl", None),
        ("a-1.0-1-py3-none-any.whl", "a-1.0-1-py3-none-any.whl", None),  # build tag
        ("a-1.0-py3-none-any-cu13.whl", "a-1.0-py3-none-any.whl", "cu13"),
        ("a-1.0-1-py3-none-any-null.whl", "a-1.0-1-py3-none-any.whl", "null"),
        ("a-1.0-py3-none-any-BAD.whl", "a-1.0-py3-none-any-BAD.whl", None),
        # A percent-decoded "%0A" is no label ("$" would have matched before it).
        ("a-1.0-py3-none-any-cu13\n.whl", "a-1.0-py3-none-any-cu13\n.whl", None),
    ],
)
def test_split_variant_label(filename: str, plain: str, label: str | None) -> None:
    assert split_variant_label(filename) == (plain, label)


def test_nvidia_properties_become_needs_and_others_are_kept() -> None:
    cuda, gpu, others = nvidia_needs(
        {
            "nvidia": {
                "cuda_version_lower_bound": ("12.8", "13.0"),  # ORed: the lower holds
                "cuda_version_upper_bound": ("14",),
                "sm_arch": ("120_virtual", "90_real"),
            },
            "x86_64": {"level": ("v3",)},
        }
    )
    assert cuda == ">=12.8,<14"
    assert gpu == ("compute_120", "sm_90")
    assert others == ("x86_64 :: level :: v3",)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param(
            {**variants_json({}), "$schema": "https://x/v1.0.0.json"}, "format 1.0.0", id="major"
        ),
        pytest.param({**variants_json({}), "default-priorities": {}}, "namespace", id="no-ns"),
        pytest.param(variants_json({"Bad": {}}), "not a variant label", id="label"),
        pytest.param(variants_json({"cu13\n": {}}), "not a variant label", id="label-newline"),
        pytest.param(
            variants_json({"null": {"nvidia": {"sm_arch": ["90_real"]}}}), "null variant", id="null"
        ),
        pytest.param(
            variants_json({"a": {"amd": {"gfx": ["x"]}}}), "not in default-prio", id="ns-missing"
        ),
    ],
)
def test_variants_json_refusals(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_variants_json(doc, "x.json")


def test_scan_properties_vocabulary() -> None:
    assert scan_properties(">=13.0", ("sm_90a", "compute_120")) == [
        "nvidia :: cuda_version_lower_bound :: 13.0",
        "nvidia :: sm_arch :: 90a_real",
        "nvidia :: sm_arch :: 120_virtual",
    ]


def test_scan_prints_variant_properties(tmp_path: Path) -> None:
    from tests.cudawheels import binary_wheel

    wheel = binary_wheel(tmp_path, "kern-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    proc = cli("scan", str(wheel))
    assert proc.returncode == 0, proc.stderr
    assert "variant properties (PEP 825):" in proc.stdout
    # libkernels.so links libcudart.so.13 and carries sm_100f (tests/cudawheels.py).
    assert "nvidia :: cuda_version_lower_bound :: 13.0" in proc.stdout
    assert "nvidia :: sm_arch :: 100f_real" in proc.stdout


# --- import, plan, install ----------------------------------------------------------------


def test_import_skips_a_variant_link_with_a_5000_digit_version() -> None:
    from resolver_hook.index.model import Link
    from resolver_hook.publish.variants import import_variant_links

    name = f"demo-1.{'9' * 5000}-py3-none-any-cu130.whl"
    link = Link(url=f"https://example.org/{name}", filename=name)
    done = import_variant_links([link], lambda url: b"")
    assert done.wheels == ()
    assert [n[:13] for n in done.notes] == ["skipped demo-"]
    assert "not a valid variant wheel filename" in done.notes[0]


def test_import_reads_variants(vindex: VariantIndex, tmp_path: Path) -> None:
    out = tmp_path / "demo-var.toml"
    proc = import_page(vindex, "variants", out)
    assert proc.returncode == 0, proc.stderr
    wheels = {w["variant"]: w for w in _flavours(out)}
    assert set(wheels) == set(VARIANTS)
    assert wheels["cu13_sm90"]["cuda"] == ">=13.0"
    assert wheels["cu13_sm90"]["gpu"] == ["sm_90"]
    assert wheels["cu128_sm80_90"]["gpu"] == ["sm_80", "sm_90"]
    assert wheels["x86_64_v3"]["other_properties"] == ["x86_64 :: level :: v3"]
    assert wheels["null"]["cuda"] is None
    assert "kept x86_64 :: level :: v3" in proc.stderr  # reported


def test_import_without_variants_json_skips_the_variant_wheels(
    vindex: VariantIndex, tmp_path: Path
) -> None:
    proc = import_page(vindex, "nojson", tmp_path / "m.toml")
    assert proc.returncode == 1
    assert "no demo_var-1.0-variants.json on the page" in proc.stderr


def test_plan_checks_every_gpu_not_only_the_highest(vindex: VariantIndex, tmp_path: Path) -> None:
    out = tmp_path / "demo-var.toml"
    assert import_page(vindex, "variants", out).returncode == 0
    manifests = {"demo-var": load_manifest(out, allow_insecure=True)}

    def chosen(spec: str) -> str | None:
        p = resolve(["demo-var"], manifests, parse_target(spec)).package("demo-var")
        assert p is not None
        assert p.action == "rewrite", p.reason
        return getattr(p.flavour, "variant", None)

    # Highest CC only (what NVIDIA's provider sees): the newest CUDA build, sm_90 only.
    assert chosen(H100_ONLY) == "cu13_sm90"
    # Both GPUs: the sm_90-only build would fail on the A100.
    assert chosen(TWO_GPUS) == "cu128_sm80_90"
    plan = resolve(["demo-var"], manifests, parse_target(TWO_GPUS))
    reasons = {r.candidate: r.reason for r in plan.packages[0].rejected}
    assert any("not run on" in r and "sm_80" in r for r in reasons.values())
    assert any("checks only nvidia properties" in r for r in reasons.values()), reasons


@pytest.mark.integration
def test_uv_installs_the_chosen_variant(vindex: VariantIndex, tmp_path: Path) -> None:
    out = tmp_path / "demo-var.toml"
    assert import_page(vindex, "variants", out).returncode == 0
    venv = tmp_path / "venv"
    py = make_venv(venv, with_pip=False)
    proc = cli(
        "uv", "--manifest", str(out), "--allow-insecure-urls", "--target", TWO_GPUS,
        "pip", "install", "--python", str(py), "demo-var",
        env={"UV_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cu128_sm80_90" in proc.stdout + proc.stderr
    code = "import demo_var; print(demo_var.LABEL)"
    label = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True)
    assert label.stdout.strip() == "cu128_sm80_90"
    assert installed(py)["demo-var"] == "1.0"


@pytest.mark.integration
def test_pip_refuses_a_variant_and_offers_the_plain_build(
    vindex: VariantIndex, tmp_path: Path
) -> None:
    out = tmp_path / "demo-var.toml"
    # The plain wheel carries kernels for both GPUs (what the publisher knows).
    proc = import_page(vindex, "mixed", out, "--gpu", "*=sm_80,sm_90")
    assert proc.returncode == 0, proc.stderr
    venv = tmp_path / "venv"
    py = make_venv(venv)
    e = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{clean_env()['PATH']}"}
    proc = cli("pip", "--manifest", str(out), "--allow-insecure-urls", "--target", TWO_GPUS,
               "install", "demo-var", env=e)  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pip cannot install variant wheels" in proc.stderr
    assert "resolver-hook uv pip install" in proc.stderr
    assert vindex.index.wheel_url(vindex.plain) in proc.stderr  # the build pip can use
    assert "the null variant demo_var-1.0-py3-none-any-null.whl" in proc.stderr
    assert "demo-var" not in installed(py)


# --- export ---------------------------------------------------------------------------------


def test_export_then_import_gives_an_equal_manifest(vindex: VariantIndex, tmp_path: Path) -> None:
    first = tmp_path / "first.toml"
    assert import_page(vindex, "variants", first).returncode == 0
    outdir = tmp_path / "variants"
    proc = cli("manifest", "export", "--variants", str(first), "-o", str(outdir),
               "--allow-insecure-urls")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    index_file = json.loads((outdir / "demo_var-1.0-variants.json").read_text())
    assert index_file["$schema"] == SCHEMA_URL
    assert set(index_file["variants"]) == set(VARIANTS)
    one = json.loads((outdir / "demo_var-1.0-cu13_sm90.variant.json").read_text())
    assert list(one["variants"]) == ["cu13_sm90"]
    assert one["variants"]["cu13_sm90"] == VARIANTS["cu13_sm90"]
    # Publish the exported file beside the same wheels and import again.
    names = [w.filename for w in vindex.wheels.values()]
    page = vindex.index.root / "pages" / "exported"
    page.mkdir()
    (page / "demo_var-1.0-variants.json").write_text(
        (outdir / "demo_var-1.0-variants.json").read_text()
    )
    links = "".join(f'<a href="../../files/{f}">{f}</a>\n' for f in names)
    links += '<a href="demo_var-1.0-variants.json">demo_var-1.0-variants.json</a>\n'
    (page / "index.html").write_text(f"<html><body>{links}</body></html>")
    second = tmp_path / "second.toml"
    assert import_page(vindex, "exported", second).returncode == 0
    assert _flavours(second) == _flavours(first)


def test_export_labels_plain_wheels_by_their_properties(tmp_path: Path) -> None:
    manifest = tmp_path / "torch.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "torch"\n[[wheel]]\n'
        'url = "https://example.org/torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl"\n'
        'cuda = ">=12.8,<14"\ngpu = ["sm_80", "compute_90"]\n'
    )
    proc = cli("manifest", "export", "--variants", str(manifest), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    label = "cu128_sm80_ptx90"
    assert f"manylinux_2_28_x86_64-{label}.whl" in proc.stdout
    doc = json.loads((tmp_path / "out" / f"torch-2.10.0-{label}.variant.json").read_text())
    assert doc["variants"] == {
        label: {
            "nvidia": {
                "cuda_version_lower_bound": ["12.8"],
                "cuda_version_upper_bound": ["14"],
                "sm_arch": ["80_real", "90_virtual"],
            }
        }
    }
    parse_variants_json(doc, "exported")  # valid by our own reading of format 0.1.1


def test_variants_rank_before_null_before_plain_wheels(tmp_path: Path) -> None:
    base = "https://example.org/demo_var-1.0-py3-none-any"
    manifest = tmp_path / "demo-var.toml"
    suffixes = ("", "-null", "-cu13")
    manifest.write_text(
        'schema = 1\n[package]\nname = "demo-var"\n'
        + "".join(f'[[wheel]]\nurl = "{base}{suffix}.whl"\n' for suffix in suffixes)
    )
    m = {"demo-var": load_manifest(manifest)}
    cpu_only = parse_target(f"linux-x86_64-py{PY}")

    def chosen(manifests: dict[str, Any]) -> str | None:
        p = resolve(["demo-var"], manifests, cpu_only).package("demo-var")
        assert p is not None
        return getattr(p.flavour, "variant", None)

    assert chosen(m) == "cu13"  # same needs: the variant first (PEP 825 ordering)
    full = m["demo-var"]
    without = tuple(w for w in full.wheels if w.variant != "cu13")
    m2 = {"demo-var": replace(full, wheels=without)}
    assert chosen(m2) == "null"
