"""Mirrors stay mirrors: what a plan points at is the mirror's URL whether or not the
mirrored page could be read, a ``[[wheel]]`` file under a mirrored upstream included,
a mirror that lists another file than the upstream's for the same name refuses the plan
(or, with --trust-mirror-hashes, is pinned with a note), and a page a mirror answers
404 for lists nothing: no pin is made from it."""

from __future__ import annotations

import datetime
import urllib.parse
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError
from resolver_hook.index import IndexClient, mirrors_from
from resolver_hook.index.model import Link
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory.expand import with_notes
from resolver_hook.inventory.snapshot import dump_snapshot, link_table, load_snapshot
from resolver_hook.inventory.sources import FallbackSource
from resolver_hook.manifest.load import loads_manifest
from tests.clirun import cli
from tests.indexreplica import File, PageServer, Response, pytorch_html

UPSTREAM = "https://download.example/whl"
TARGET = "linux-x86_64-py312-cuda13.0-sm100"
X86 = "manylinux_2_28_x86_64"
TORCH = f"torch-2.13.0+cu130-cp312-cp312-{X86}.whl"
MANIFEST = f"""schema = 1
[package]
name = "torch"
[[index]]
url = "{UPSTREAM}/cu130/torch/"
version = "2.13.0+cu130"
cuda = ">=13.0"
gpu = ["sm_100"]
platforms = ["{X86}"]
python = ["3.12"]
"""
WHEEL = f"""schema = 1
[package]
name = "demo-gpu"
[[wheel]]
url = "{UPSTREAM}/files/demo_gpu-1.0+cu130-py3-none-any.whl"
sha256 = "{"ab" * 32}"
cuda = ">=13.0"
gpu = ["sm_100"]
"""


def _flags(tmp_path: Path, page_server: PageServer, *texts: str) -> list[str]:
    flags = ["--mirror", f"{UPSTREAM}={page_server.url}/mirror", "--allow-insecure-urls"]
    for i, text in enumerate(texts):
        path = tmp_path / f"m{i}.toml"
        path.write_text(text)
        flags += ["--manifest", str(path)]
    return [*flags, "--target", TARGET]


def test_a_mirrored_page_that_cannot_be_read_is_pointed_at_on_the_mirror(
    page_server: PageServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A server error (not a 404: that says the page does not exist, see below).
    page_server.responses["/mirror/cu130/torch/"] = Response(b"busy", "text/plain", 503)
    code, out, _ = cli(capsys, "plan", "torch", *_flags(tmp_path, page_server, MANIFEST))
    assert code == 0
    mirrored = f"{page_server.url}/mirror/cu130/torch/"
    assert f"torch==2.13.0+cu130 from {mirrored}\n" in out  # unread there: the page form
    assert f"find-links:\n  {mirrored}\n" in out
    assert UPSTREAM not in out


def test_offline_built_in_torch_points_at_the_mirror(capsys: pytest.CaptureFixture[str]) -> None:
    mirror = "https://mirror.example/pytorch"
    code, out, _ = cli(
        capsys, "plan", "torch", "--offline", "--target", "linux-x86_64-py313-cuda12.6-sm90",
        "--mirror", f"https://download.pytorch.org/whl={mirror}",
    )  # fmt: skip
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("  torch ")]
    # The snapshot has no copy of the cu126 page: the page form, on the mirror.
    assert line.endswith(f"torch==2.13.0+cu126 from {mirror}/cu126/torch/")
    assert "https://download.pytorch.org/whl/" not in out


def test_a_wheel_url_under_a_mirrored_upstream_is_mirrored(
    page_server: PageServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "plan", "demo-gpu", *_flags(tmp_path, page_server, WHEEL))
    assert code == 0
    assert f"demo-gpu @ {page_server.url}/mirror/files/demo_gpu-1.0+cu130-py3-none-any.whl" in out
    assert UPSTREAM not in out


def test_a_mirror_listing_another_sha256_than_the_snapshots_refuses_the_plan(
    page_server: PageServer,
) -> None:
    page = f"{UPSTREAM}/cu130/torch/"
    upstream_file = f"{UPSTREAM}/cu130/{urllib.parse.quote(TORCH)}"
    link = Link(url=upstream_file, filename=TORCH, hashes={"sha256": "11" * 32})
    snapshot = load_snapshot(
        dump_snapshot(datetime.date(2026, 11, 2), {page: [link_table(link, page)]})
    )
    pytorch_html(
        page_server, "/mirror/cu130/torch/", f"{page_server.url}/mirror/cu130/",
        [File(TORCH, sha256="22" * 32)],
    )  # fmt: skip
    mirrors = mirrors_from({}, [f"{UPSTREAM}={page_server.url}/mirror"], allow_insecure=True)
    client = IndexClient(allow_insecure=True, mirrors=mirrors, cache=False)
    manifest = loads_manifest(MANIFEST, source="test")
    source = FallbackSource(client, snapshot, mirrors)
    with pytest.raises(OperationalError) as caught:
        expand_manifests({"torch": manifest}, ["torch"], source)
    said = (
        f"{page_server.url}/mirror/cu130/torch/ lists {TORCH} with sha256 {'22' * 32}; the "
        f"shipped snapshot of 2026-11-02 records {'11' * 32} for that file on {page}"
    )
    assert caught.value.message == f"{said}: the mirror does not serve the upstream's file"
    trusting = FallbackSource(client, snapshot, mirrors, trust_mirror_hashes=True)
    done = expand_manifests({"torch": manifest}, ["torch"], trusting)
    torch = with_notes(done, trusting.notes)["torch"]
    (kept,) = [w for w in torch.wheels if w.filename == TORCH]
    assert kept.sha256 == "22" * 32
    assert trusting.notes == [f"{said}: pinned with the mirror's sha256 (--trust-mirror-hashes)"]


def _two_pages(version_132: str, version_130: str) -> str:
    out = 'schema = 1\n[package]\nname = "torch"\n'
    for label, version in (("cu132", version_132), ("cu130", version_130)):
        out += f"""[[index]]
url = "{UPSTREAM}/{label}/torch/"
version = "{version}"
cuda = ">=13.0"
gpu = ["sm_100"]
platforms = ["{X86}"]
python = ["3.10"]
"""
    return out


def test_a_page_that_answered_404_is_not_served_from_the_snapshot(
    page_server: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 49: a mirror of the PyTorch index that serves only /cu130/. The snapshot
    # lists a newer release on /cu132/; the mirror answers 404 there. A pin is made
    # only from a page that lists it: the live cu130 page's release, never the
    # snapshot's row of a page that does not exist.
    new, old = "torch-2.14.1+cu132", "torch-2.14.0+cu130"
    page_132 = f"{UPSTREAM}/cu132/torch/"
    snap_file = f"{UPSTREAM}/cu132/{urllib.parse.quote(new)}-cp310-cp310-{X86}.whl"
    link = Link(
        url=snap_file, filename=f"{new}-cp310-cp310-{X86}.whl", hashes={"sha256": "11" * 32}
    )
    snapshot = load_snapshot(
        dump_snapshot(datetime.date(2026, 12, 2), {page_132: [link_table(link, page_132)]})
    )
    monkeypatch.setattr("resolver_hook.planner.builtin_snapshot", lambda: snapshot)
    pytorch_html(
        page_server, "/mirror/cu130/torch/", f"{page_server.url}/mirror/cu130/",
        [File(f"{old}-cp310-cp310-{X86}.whl", sha256="22" * 32)],
    )  # fmt: skip
    flags = _flags(tmp_path, page_server, _two_pages("2.14.1+cu132", "2.14.0+cu130"))
    flags[-1] = "linux-x86_64-py310-cuda13.0-sm100"
    code, out, _ = cli(capsys, "plan", "torch", *flags)
    assert code == 0, out
    assert "/mirror/cu132/torch/" in page_server.log  # asked, and answered 404
    wheel = f"{page_server.url}/mirror/cu130/{urllib.parse.quote(old)}-cp310-cp310-{X86}.whl"
    assert f"requirements:\n  torch @ {wheel}#sha256={'22' * 32}\n" in out
    assert "2.14.1" not in out
    # Offline afterwards: the page cache answers as the mirror did, the 404 included;
    # the snapshot's row for the page that answered 404 is still not used.
    code, out, _ = cli(capsys, "plan", "torch", *flags, "--offline")
    assert code == 0, out
    assert f"requirements:\n  torch @ {wheel}#sha256={'22' * 32}\n" in out
    assert "2.14.1" not in out
    said = "offline: 127.0.0.1 had no such page when last read (HTTP 404): "
    assert said + f"{page_server.url}/mirror/cu132/torch/; no build planned from it" in out
    code, out, _ = cli(capsys, "plan", "torch", *flags, "--offline", "-v")
    assert f"{page_server.url}/mirror/cu132/torch/: HTTP 404 Not Found when last read (" in out


@pytest.fixture
def other_file_on_the_mirror(
    page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """The snapshot records TORCH on the upstream page with sha256 11..., its file on
    PyTorch's file host (another host than the page's, as download-r2.pytorch.org is);
    the mirror lists a file of that name with sha256 22..., under its own path. The
    mirrored page's URL and the file's URL, as the plan would pin it."""
    page = f"{UPSTREAM}/cu130/torch/"
    on_host = f"https://files.example/whl/cu130/{urllib.parse.quote(TORCH)}"
    link = Link(url=on_host, filename=TORCH, hashes={"sha256": "11" * 32})
    snapshot = load_snapshot(
        dump_snapshot(datetime.date(2026, 11, 2), {page: [link_table(link, page)]})
    )
    monkeypatch.setattr("resolver_hook.planner.builtin_snapshot", lambda: snapshot)
    pytorch_html(
        page_server, "/mirror/cu130/torch/", f"{page_server.url}/mirror/cu130/",
        [File(TORCH, sha256="22" * 32)],
    )  # fmt: skip
    mirror = f"{page_server.url}/mirror/cu130"
    return f"{mirror}/torch/", f"{mirror}/{quote(TORCH)}"


def quote(name: str) -> str:
    return urllib.parse.quote(name)


def test_a_mirror_file_with_another_sha256_than_the_snapshots_is_refused(
    page_server: PageServer,
    other_file_on_the_mirror: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page, _ = other_file_on_the_mirror
    code, out, err = cli(capsys, "plan", "torch", *_flags(tmp_path, page_server, MANIFEST))
    assert code == 1, out + err
    assert out == ""
    assert err == (
        f"error: {page} lists {TORCH} with sha256 {'22' * 32}; the shipped snapshot of "
        f"2026-11-02 records {'11' * 32} for that file on {UPSTREAM}/cu130/torch/: the "
        "mirror does not serve the upstream's file\n"
        "hint: fix the mirror, or give --trust-mirror-hashes to pin the mirror's file "
        "with the mirror's sha256\n"
    )


def test_trust_mirror_hashes_pins_the_mirrors_file_and_says_so(
    page_server: PageServer,
    other_file_on_the_mirror: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page, wheel = other_file_on_the_mirror
    flags = _flags(tmp_path, page_server, MANIFEST)
    code, out, err = cli(capsys, "plan", "torch", "--trust-mirror-hashes", *flags)
    assert code == 0, err
    assert f"requirements:\n  torch @ {wheel}#sha256={'22' * 32}\n" in out
    assert (
        f"  {page} lists {TORCH} with sha256 {'22' * 32}; the shipped snapshot of "
        f"2026-11-02 records {'11' * 32} for that file on {UPSTREAM}/cu130/torch/: "
        "pinned with the mirror's sha256 (--trust-mirror-hashes)\n"
    ) in out


def test_a_mirror_file_listed_without_a_sha256_is_pinned_with_the_snapshots(
    page_server: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mirror (a proxy that drops the fragment) lists the snapshot's file with no
    sha256: the pin carries the sha256 the snapshot records for the upstream's file,
    so the installer checks that the mirror serves those bytes, and a note says so;
    never a pin with no hash at all."""
    page = f"{UPSTREAM}/cu130/torch/"
    on_host = f"https://files.example/whl/cu130/{quote(TORCH)}"
    link = Link(url=on_host, filename=TORCH, hashes={"sha256": "11" * 32})
    snapshot = load_snapshot(
        dump_snapshot(datetime.date(2026, 11, 2), {page: [link_table(link, page)]})
    )
    monkeypatch.setattr("resolver_hook.planner.builtin_snapshot", lambda: snapshot)
    wheel = f"{page_server.url}/mirror/cu130/{quote(TORCH)}"
    body = f'<html><body><a href="{wheel}">{TORCH}</a><br/></body></html>\n'
    page_server.responses["/mirror/cu130/torch/"] = Response(body.encode())
    flags = _flags(tmp_path, page_server, MANIFEST)
    code, out, err = cli(capsys, "plan", "torch", *flags)
    assert code == 0, err
    assert f"requirements:\n  torch @ {wheel}#sha256={'11' * 32}\n" in out
    mirrored = f"{page_server.url}/mirror/cu130/torch/"
    assert (
        f"  {mirrored} lists 1 file with no sha256 that the shipped snapshot of 2026-11-02 "
        f"records on {page}: pinned with the snapshot's sha256, which the installer checks\n"
    ) in out
    lock = tmp_path / "requirements.txt"
    code, _, err = cli(capsys, "lock", "torch", "--flavoured-only", *flags, "-o", str(lock))
    assert code == 0, err
    assert f"torch @ {wheel}#sha256={'11' * 32}" in lock.read_text().splitlines()


@pytest.mark.parametrize("offline", [True, False], ids=["offline", "mirror-down"])
def test_a_snapshot_file_on_a_host_no_mirror_covers_is_not_pinned_past_the_mirror(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, offline: bool
) -> None:
    """The built-in torch page read through a mirror, which cannot be read (offline, or
    the mirror is down): the shipped snapshot lists that page's files on PyTorch's file
    host (download-r2.pytorch.org), which the mirror of download.pytorch.org/whl does
    not cover. The plan points at the mirror's page, never at the file host it bypasses
    (an air-gapped machine reaches only the mirror)."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    mirror = "http://127.0.0.1:9/pytorch"  # nothing listens on port 9
    code, out, _ = cli(
        capsys, "plan", "torch==2.13.0", "--target", "linux-x86_64-py313-cuda13.0-sm100",
        "--mirror", f"https://download.pytorch.org/whl={mirror}", "--allow-insecure-urls",
        *(["--offline"] if offline else ["--timeout", "2"]),
    )  # fmt: skip
    assert code == 0, out
    (line,) = [x for x in out.splitlines() if x.startswith("  torch  rewrite ")]
    assert line.endswith(f"torch==2.13.0+cu130 from {mirror}/cu130/torch/")
    plan, notes = out.split("\nnotes:\n")
    assert "pytorch.org" not in plan  # no row, requirement, constraint or page past it
    assert (
        f"  the shipped snapshot's files of {mirror}/cu130/torch/ are on "
        "download-r2.pytorch.org, which no mirror covers: not pinned there"
    ) in notes


@pytest.mark.parametrize(
    "upstream",
    [
        "https://Download.PyTorch.org/whl",
        "HTTPS://download.pytorch.org/whl",
        "https://download.pytorch.org:443/whl/",
    ],
)
def test_an_upstream_spelled_another_way_is_the_same_upstream(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, upstream: str
) -> None:
    """A URL's scheme and host are case-insensitive and https's port is 443 (RFC 3986,
    6.2.2.1 and 6.2.3): RESOLVER_HOOK_MIRRORS written so still names PyTorch's index, and
    the plan points at the mirror, never silently at the upstream."""
    mirror = "https://mirror.example/pytorch"
    monkeypatch.setenv("RESOLVER_HOOK_MIRRORS", f"{upstream}={mirror}")
    code, out, _ = cli(
        capsys, "plan", "torch", "--offline", "--target", "linux-x86_64-py313-cuda12.6-sm90"
    )
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("  torch  ")]
    assert line.endswith(f"from {mirror}/cu126/torch/")
    assert "download.pytorch.org" not in out.lower()
