"""scripts/refresh_data.py against a loopback replica of download.pytorch.org.

The replica serves the cu130 torch page as download.pytorch.org writes it (PEP 503
HTML, absolute hrefs to download-r2 with ``#sha256=``, ``data-core-metadata`` with the
``.metadata`` file beside each wheel) and small real-format wheels carrying the
nvcc-built fatbins of tests/data/cuda/; where a test needs it, tilert's PyPI page too
(PEP 691 JSON, files on files.pythonhosted.org). ``--mirror`` points the script's
index client at it, so the data it writes cites the upstream URLs. The manifests are
the frozen ones (torch 2.13.0+cu130 verified; newer releases carried forward). Every
other page the torch manifest names is absent from the replica: "not read".
"""

from __future__ import annotations

import datetime
import hashlib
import os
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.binaries.scan import scan_wheel
from resolver_hook.ground.toml import loads
from resolver_hook.host import resolve_machine
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory.expand import with_notes
from resolver_hook.inventory.kernels import (
    KernelRecord,
    KernelRecords,
    KernelRecordsError,
    builtin_kernels,
    dump_kernels,
    load_kernels,
)
from resolver_hook.inventory.snapshot import load_snapshot
from resolver_hook.inventory.sources import SnapshotOnly
from resolver_hook.manifest import Manifest, load, loads_manifest
from resolver_hook.publish.refresh import MetaRow, Row, render_snapshot
from resolver_hook.resolve import resolve
from tests.cudawheels import KERNELS, PTX, binary_wheel
from tests.frozen import frozen_manifests, frozen_sources
from tests.indexreplica import File, PageServer, Response, metadata_text, pypi_json, pytorch_html
from tests.paths import script

ROOT = Path(__file__).resolve().parents[1]
PAGE = "https://download.pytorch.org/whl/cu130/torch/"
FILES = "https://download-r2.pytorch.org/whl/cu130/"
X86 = "manylinux_2_28_x86_64"
READ = "2026-12-05"


REFRESH = script("refresh_data")


class Replica:
    """The cu130 torch page (the shipped table's files plus what a test adds) and the
    wheels it links to, on 127.0.0.1."""

    def __init__(self, server: PageServer, folder: Path) -> None:
        self.server = server
        self.folder = folder
        table = loads((ROOT / "scripts" / "data" / "snapshot_links.toml").read_text())
        self.listed = [
            File(r["filename"], sha256=r["sha256"], metadata=_torch_metadata(r["filename"]))
            for r in table["link"]
            if r["page"] == PAGE
        ]
        self.extra: list[File] = []
        self.publish()

    def add(
        self, filename: str, lib: bytes, *, served: bytes | None = None, metadata: bool = False
    ) -> Path:
        """A wheel of ``filename`` holding ``lib``, listed with its sha256; ``served``:
        other bytes served in its place (a file that does not match its page);
        ``metadata``: its ``.metadata`` file offered beside it (else only in the wheel)."""
        wheel = binary_wheel(
            self.folder, filename, {"torch/__init__.py": b"", "torch/lib/libtorch_cuda.so": lib}
        )
        data = wheel.read_bytes()
        meta = _torch_metadata(filename) if metadata else None
        self.extra.append(File(filename, sha256=hashlib.sha256(data).hexdigest(), metadata=meta))
        path = "/r2/whl/cu130/" + urllib.parse.quote(filename)
        self.server.responses[path] = Response(served or data, "application/octet-stream")
        self.publish()
        return wheel

    def publish(self) -> None:
        files = [*self.listed, *self.extra]
        pytorch_html(self.server, "/whl/cu130/torch/", FILES, files, served_at="/r2/whl/cu130/")

    def gone(self) -> None:
        del self.server.responses["/whl/cu130/torch/"]


def _torch_metadata(filename: str) -> str:
    version = filename.split("-")[1]
    return metadata_text("torch", version, ["filelock", "sympy>=1.13.3", "numpy; extra == 'opt'"])


@pytest.fixture
def replica(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Replica]:
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # the script reads the replica
    server = PageServer()
    folder = tmp_path / "wheels"
    folder.mkdir()
    with server.serving():
        yield Replica(server, folder)


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    """A copy of the shipped table, the snapshot it gives for the frozen manifests (what
    ``make_snapshot.py`` would write with them) and no kernel records, for the script
    to write."""
    table = ROOT / "scripts" / "data" / "snapshot_links.toml"
    copies = {k: tmp_path / n for k, n in LINKS_SNAPSHOT_KERNELS.items()}
    copies["links"].write_text(table.read_text())
    doc = loads(table.read_text())
    rows = [Row.from_table(r) for r in doc["link"]]
    metas = [MetaRow.from_table(m) for m in doc.get("metadata", [])]
    copies["snapshot"].write_text(render_snapshot(rows, frozen_manifests(), metadata=metas))
    copies["kernels"].write_text(dump_kernels(KernelRecords()))
    return copies


LINKS_SNAPSHOT_KERNELS = {
    "links": "snapshot_links.toml",
    "snapshot": "snapshot.json",
    "kernels": "kernels.json",
}


def _args(replica: Replica, data: dict[str, Path]) -> list[str]:
    base = replica.server.url
    return [
        "--package", "torch",
        "--mirror", f"https://download.pytorch.org/whl={base}/whl",
        "--mirror", f"https://download-r2.pytorch.org/whl={base}/r2/whl",
        "--mirror", f"https://pypi.org/simple={base}/simple",
        "--allow-insecure-urls",
        "--date", READ,
        *(f"--{k}={v}" for k, v in data.items()),
    ]  # fmt: skip


def _refresh(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str]:
    code = REFRESH.main([*_args(replica, data), *extra])
    out, err = capsys.readouterr()
    assert not err, err
    return code, out


def _texts(data: dict[str, Path]) -> dict[str, str]:
    return {k: p.read_text() for k, p in data.items()}


def _plan_torch(data: dict[str, Path], kernels: KernelRecords | None = None) -> object:
    snapshot = load_snapshot(data["snapshot"].read_text())
    records = kernels if kernels is not None else load_kernels(data["kernels"].read_text())
    done = expand_manifests(frozen_manifests(), ["torch"], SnapshotOnly(snapshot), kernels=records)
    profile = resolve_machine(
        profile=None, target="linux-x86_64-py313-cuda13.0-sm100", flags={}, use_cache=False
    )
    plan = resolve(
        ["torch"], with_notes(done, done.notes), profile, today=datetime.date(2026, 12, 5)
    )
    return plan.package("torch")


def test_a_new_release_is_added_scanned_and_planned_verified(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl"
    wheel = replica.add(name, KERNELS)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    before = _texts(data)

    code, out = _refresh(replica, data, capsys, "--check")
    assert code == 1, out
    assert f"new: torch 2.14.0+cu130: 1 file on {PAGE}" in out
    assert f"scan: {name}: kernels assumed from 2.13.0+cu130" in out
    assert "a refresh is due" in out
    assert _texts(data) == before  # --check writes nothing
    assert not any(p.startswith("/r2/") for p in replica.server.log)  # nor downloads

    code, out = _refresh(replica, data, capsys)
    assert code == 0, out
    scanned = scan_wheel(wheel).gpu
    assert f"recorded: {name}: {', '.join(scanned)} (sha256 {digest})" in out
    assert "unread: https://download.pytorch.org/whl/cu126/torch/ (read as " in out  # not there
    # The shipped files' .metadata files and the new wheel's own METADATA (its page
    # offers no .metadata file for it).
    assert f"metadata: {name}: from {FILES}{urllib.parse.quote(name)} (sha256 " in out
    kept = load_snapshot(data["snapshot"].read_text()).pages[PAGE].links
    assert out.splitlines()[-1] == (
        "summary: new releases: 1, pages not read: 4, kernel lists recorded: 1, "
        f"metadata recorded: {len(kept)}, differ from their manifest: 1"
    )
    assert all(x.core_metadata is not None for x in kept)

    (row,) = [r for r in loads(data["links"].read_text())["link"] if r["filename"] == name]
    assert row == {
        "page": PAGE,
        "url": FILES + urllib.parse.quote(name),
        "filename": name,
        "sha256": digest,
        "evidence": PAGE,
        "read": READ,
    }
    assert data["links"].read_text().startswith(before["links"])  # rows only appended
    snapshot = load_snapshot(data["snapshot"].read_text())
    assert snapshot.date == datetime.date.fromisoformat(READ)
    assert any(x.filename == name and x.sha256 == digest for x in snapshot.pages[PAGE].links)
    record = load_kernels(data["kernels"].read_text()).files[digest]
    assert (record.url, record.gpu, record.read.isoformat()) == (row["url"], scanned, READ)
    (meta,) = [m for m in loads(data["links"].read_text())["metadata"] if m["file"] == row["url"]]
    with zipfile.ZipFile(wheel) as zf:
        inside = zf.read("torch-2.14.0+cu130.dist-info/METADATA")
    assert meta == {
        "file": row["url"],
        "source": row["url"],  # the wheel itself, its sha256 checked first
        "sha256": hashlib.sha256(inside).hexdigest(),
        "read": READ,
        "text": "Metadata-Version: 2.1\nName: torch\nVersion: 2.14.0+cu130\n",
    }

    # The planner: assumed before the record, verified (the file as evidence) after it.
    assumed = _plan_torch(data, KernelRecords())
    assert getattr(assumed, "version", None) == "2.14.0+cu130"
    assert getattr(assumed, "kernels_assumed", None) == "kernels assumed from 2.13.0+cu130"
    verified = _plan_torch(data)
    assert getattr(verified, "version", None) == "2.14.0+cu130"
    assert getattr(verified, "kernels_assumed", "?") is None
    assert "assumed" not in getattr(verified, "reason", "assumed")

    # Up to date now: a second check finds nothing to do.
    code, out = _refresh(replica, data, capsys, "--check")
    assert code == 0, out
    assert "the data is up to date" in out


def test_the_table_and_the_snapshot_are_written_both_or_neither(
    replica: Replica,
    data: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refresh that fails to write the snapshot (a full disk at its rename) leaves the
    cited table as it was: the snapshot is built from the table's rows."""
    replica.add(f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl", KERNELS)
    before = _texts(data)
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        if os.path.basename(dst) == data["snapshot"].name:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert REFRESH.main(_args(replica, data)) == 1
    assert "cannot write: No space left on device" in capsys.readouterr().err
    assert _texts(data) == before


def test_a_page_gone_is_reported_and_nothing_is_removed(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    replica.gone()
    before = _texts(data)
    code, out = _refresh(replica, data, capsys)
    assert code == 0, out
    read_as = f"{replica.server.url}/whl/cu130/torch/"
    assert (
        f"unread: {PAGE} (read as {read_as}): HTTP 404 Not Found: nothing of it is removed" in out
    )
    assert _texts(data) == before
    shipped = load_snapshot(before["snapshot"])
    assert (
        load_snapshot(data["snapshot"].read_text()).pages[PAGE].links == shipped.pages[PAGE].links
    )


@pytest.mark.parametrize(
    "href",
    [
        "http://download-r2.pytorch.org/whl/cu130/",  # plain http to another host
        "{base}/elsewhere/",  # loopback http that no mirror maps back to a public URL
    ],
)
def test_a_plain_http_link_is_neither_downloaded_nor_cited(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str], href: str
) -> None:
    name = f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl"
    replica.add(name, KERNELS)
    page = replica.server.responses["/whl/cu130/torch/"]
    https = f'href="{FILES}{urllib.parse.quote(name)}'
    quote = urllib.parse.quote
    insecure = f'href="{href.format(base=replica.server.url)}{urllib.parse.quote(name)}'
    assert https.encode() in page.body
    page.body = page.body.replace(https.encode(), insecure.encode())
    code, out = _refresh(replica, data, capsys)
    assert code == 1, out  # a person looks at it
    (line,) = [x for x in out.splitlines() if x.startswith("review: ")]
    assert "plain http" in line
    assert quote(name) in line
    assert name not in data["links"].read_text()
    assert name not in data["snapshot"].read_text()


def test_a_file_that_does_not_match_its_page_is_refused(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl"
    other = binary_wheel(replica.folder, f"torch-9.0-cp313-cp313-{X86}.whl").read_bytes()
    listed = replica.add(name, KERNELS, served=other)
    code, out = _refresh(replica, data, capsys)
    assert code == 1, out
    page_sha = hashlib.sha256(listed.read_bytes()).hexdigest()
    served_sha = hashlib.sha256(other).hexdigest()
    assert (
        f"refused: {name}: its bytes have sha256 {served_sha}, its page gives {page_sha}: "
        "not scanned, nothing recorded"
    ) in out
    assert load_kernels(data["kernels"].read_text()).files == {}
    plan = _plan_torch(data)
    assert getattr(plan, "kernels_assumed", None) == "kernels assumed from 2.13.0+cu130"


def test_a_wheel_over_the_size_bound_is_skipped(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl"
    replica.add(name, KERNELS)
    code, out = _refresh(replica, data, capsys, "--max-wheel-bytes", "1000")
    assert code == 0, out
    assert f"skipped: {name}: larger than 1000 bytes (raise it with --max-wheel-bytes)" in out
    assert load_kernels(data["kernels"].read_text()).files == {}


def test_a_differing_list_for_a_verified_release_is_for_review(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = replica.add(f"torch-2.14.0+cu130-cp312-cp312-{X86}.whl", PTX)
    code, out = _refresh(replica, data, capsys)
    assert code == 0, out
    recorded = load_kernels(data["kernels"].read_text())
    assert list(recorded.files) == [hashlib.sha256(first.read_bytes()).hexdigest()]

    name = f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl"
    replica.add(name, KERNELS)  # the same release, label and platform, other kernels
    code, out = _refresh(replica, data, capsys)
    assert code == 1, out
    (line,) = [x for x in out.splitlines() if x.startswith("review: ")]
    assert line.startswith(
        f"review: {name}: carries {', '.join(scan_wheel(replica.folder / name).gpu)}"
    )
    assert f"torch 2.14.0+cu130 {X86} is recorded with {', '.join(scan_wheel(first).gpu)}" in line
    assert line.endswith("not recorded")
    assert load_kernels(data["kernels"].read_text()) == recorded  # not applied


def test_offline_is_refused(
    data: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_HOOK_OFFLINE", "1")
    code = REFRESH.main([f"--{k}={v}" for k, v in data.items()])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: RESOLVER_HOOK_OFFLINE is set")


def test_kernel_records_are_checked_when_read() -> None:
    for sha, shipped in builtin_kernels().files.items():  # the shipped file loads, and
        assert shipped.sha256 == sha  # each record names the file it was read from
        assert shipped.url.startswith("https://")
        assert shipped.url.endswith(urllib.parse.quote(shipped.filename))
        assert shipped.distribution == shipped.release[0]
    record = KernelRecord(
        distribution="torch",
        filename=f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl",
        url=FILES + "torch-2.14.0%2Bcu130-cp313-cp313-manylinux_2_28_x86_64.whl",
        sha256="a" * 64,
        gpu=("sm_100",),
        read=datetime.date(2026, 12, 5),
    )
    text = dump_kernels(KernelRecords({record.sha256: record}))
    assert load_kernels(text).get("a" * 64, record.filename) == record
    assert load_kernels(text).get("a" * 64, "other.whl") is None
    with pytest.raises(KernelRecordsError, match="edited by hand"):
        load_kernels(text.replace('"sm_100"', '"sm_120"'))


def test_only_each_flavours_newest_releases_are_kept(
    replica: Replica, data: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for version in ("2.14.0", "2.14.1", "2.15.0", "2.16.0"):
        replica.add(f"torch-{version}+cu130-cp313-cp313-{X86}.whl", KERNELS)
    code, out = _refresh(replica, data, capsys, "--check")
    assert code == 1, out
    new = [line for line in out.splitlines() if line.startswith("new: ")]
    assert new == [
        f"new: torch {v}+cu130: 1 file on {PAGE}" for v in ("2.14.1", "2.15.0", "2.16.0")
    ]
    code, out = _refresh(replica, data, capsys, "--max-scans=0")
    snapshot = load_snapshot(data["snapshot"].read_text())
    kept = {x.filename.split("-")[1] for x in snapshot.pages[PAGE].links}
    assert kept == {"2.14.1+cu130", "2.15.0+cu130", "2.16.0+cu130"}


# A tilert manifest shaped as the shipped one: the plain build from PyPI, one release
# verified (one the snapshot keeps files of, so no page form stands beside them); newer
# releases carried forward, their couplings from their own Requires-Dist.
TILERT = """schema = 1
[package]
name = "tilert"
[[index]]
version = "0.1.6.post3"
cuda = ">=13.0"
gpu = ["sm_100f"]
platforms = ["linux_x86_64"]
evidence = "https://github.com/tile-ai/TileRT/issues/60"
checked = "2026-11-30"
"""
PYPI_FILES = "https://files.pythonhosted.org/packages/"
TILERT_NEW = f"tilert-0.1.7-cp313-cp313-{X86}.whl"
TILERT_PAGE = "https://pypi.org/simple/tilert/"


def _with_tilert(monkeypatch: pytest.MonkeyPatch) -> dict[str, Manifest]:
    tilert = loads_manifest(TILERT, source="built-in (tilert.toml)")
    sources = {**frozen_sources(), "tilert": (tilert.source, lambda: tilert)}
    monkeypatch.setattr(load, "_builtin_sources", lambda: sources)
    return {**frozen_manifests(), "tilert": tilert}


def _tilert_page(replica: Replica, metadata: str, *, served: str | None = None) -> None:
    """tilert's PyPI page: the table's files and a new 0.1.7 (whose ``.metadata`` is
    ``metadata``; ``served``: other bytes served in its place)."""
    table = loads((ROOT / "scripts" / "data" / "snapshot_links.toml").read_text())
    files = [
        File(r["filename"], sha256=r["sha256"], url=r["url"])
        for r in table["link"]
        if r["page"] == TILERT_PAGE
    ]
    base = f"{replica.server.url}/pypi-files/"
    pypi_json(
        replica.server, "/simple/tilert/", base, [*files, File(TILERT_NEW, metadata=metadata)]
    )
    if served is not None:
        replica.server.responses[f"/pypi-files/{TILERT_NEW}.metadata"] = Response(served.encode())


def _plan(manifests: dict[str, Manifest], data: dict[str, Path], names: list[str]) -> object:
    snapshot = load_snapshot(data["snapshot"].read_text())
    done = expand_manifests(manifests, names, SnapshotOnly(snapshot), kernels=KernelRecords())
    profile = resolve_machine(
        profile=None, target="linux-x86_64-py313-cuda13.0-sm100", flags={}, use_cache=False
    )
    return resolve(names, with_notes(done, done.notes), profile, today=datetime.date(2026, 12, 5))


def test_new_metadata_is_recorded_and_an_offline_plan_honours_its_pin(
    replica: Replica,
    data: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifests = _with_tilert(monkeypatch)
    pin = ["torch>=2.11,<2.14", "pytest; extra == 'test'", "numpy>=2; python_version >= '3.12'"]
    _tilert_page(replica, metadata_text("tilert", "0.1.7", pin))
    replica.add(f"torch-2.14.0+cu130-cp313-cp313-{X86}.whl", KERNELS, metadata=True)
    mirror = ["--mirror", f"{PYPI_FILES[:-1]}={replica.server.url}/pypi-files"]
    code, out = _refresh(replica, data, capsys, "--package=tilert", "--max-scans=0", *mirror)
    assert code == 0, out
    url = PYPI_FILES + TILERT_NEW
    full = metadata_text("tilert", "0.1.7", pin).encode()
    sha = hashlib.sha256(full).hexdigest()
    assert f"metadata: {TILERT_NEW}: from {url}.metadata (sha256 {sha})" in out
    (meta,) = [m for m in loads(data["links"].read_text())["metadata"] if m["file"] == url]
    assert meta == {
        "file": url,
        "source": f"{url}.metadata",
        "sha256": sha,
        "read": READ,
        # What the planner uses: no extra's requirement, no description.
        "text": "Metadata-Version: 2.1\nName: tilert\nVersion: 0.1.7\n"
        "Requires-Dist: torch>=2.11,<2.14\n"
        "Requires-Dist: numpy>=2; python_version >= '3.12'\n",
    }
    (link,) = [
        x
        for x in load_snapshot(data["snapshot"].read_text()).pages[TILERT_PAGE].links
        if x.url == url
    ]
    assert link.core_metadata == {"sha256": sha}
    _, out = _refresh(replica, data, capsys, "--check", "--package=tilert", *mirror)
    assert not [x for x in out.splitlines() if x.startswith("meta: ")]  # nothing left to read
    assert "metadata to read" not in out

    # Offline, from the snapshot alone: torch alone is 2.14; beside tilert 0.1.7 (which
    # accepts torch < 2.14 only), the plan takes 2.13.
    alone = _plan(manifests, data, ["torch"]).package("torch")  # type: ignore[attr-defined]
    assert alone.version == "2.14.0+cu130"
    plan = _plan(manifests, data, ["tilert", "torch"])
    assert plan.package("tilert").version == "0.1.7"  # type: ignore[attr-defined]
    assert plan.package("torch").version == "2.13.0+cu130"  # type: ignore[attr-defined]


def test_a_metadata_file_that_does_not_match_its_page_is_refused(
    replica: Replica,
    data: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_tilert(monkeypatch)
    listed = metadata_text("tilert", "0.1.7", ["torch>=2.11,<2.14"])
    served = metadata_text("tilert", "0.1.7", ["torch"])
    _tilert_page(replica, listed, served=served)
    mirror = ["--mirror", f"{PYPI_FILES[:-1]}={replica.server.url}/pypi-files"]
    code, out = _refresh(replica, data, capsys, "--package=tilert", "--max-scans=0", *mirror)
    assert code == 1, out
    want, got = (hashlib.sha256(t.encode()).hexdigest() for t in (listed, served))
    assert (
        f"refused: {TILERT_NEW}: {replica.server.url}/pypi-files/{TILERT_NEW}.metadata: its "
        f"sha256 is {got}, not the {want} the page gives: its metadata not recorded"
    ) in out
    url = PYPI_FILES + TILERT_NEW
    assert all(m["file"] != url for m in loads(data["links"].read_text()).get("metadata", []))
    snapshot = load_snapshot(data["snapshot"].read_text())
    assert url not in snapshot.metadata
