"""The inventory read from index pages: loopback replicas of both page forms.

A PyTorch-style HTML page (torch 2.12.1 to 2.15.0 +cu130, metadata files) and a
PyPI-style JSON page (a tilert-like package whose releases pin torch through
Requires-Dist) are served on 127.0.0.1; the manifests name only the rules (the
verified 2.13.0 kernel list), the files come from the pages.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename
from packaging.version import Version

from resolver_hook._data import data_path
from resolver_hook.ground import contentcache
from resolver_hook.ground.toml import loads as toml_loads
from resolver_hook.ground.valueclass import replace
from resolver_hook.host import resolve_machine
from resolver_hook.index import IndexClient, mirrors_from
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory import snapshot as snapshot_module
from resolver_hook.inventory.candidates import candidates
from resolver_hook.inventory.expand import with_notes
from resolver_hook.inventory.snapshot import (
    Snapshot,
    SnapshotError,
    builtin_names,
    builtin_snapshot,
    canonical_hash,
    dump_snapshot,
    link_table,
    load_snapshot,
)
from resolver_hook.inventory.sources import FallbackSource, SnapshotOnly
from resolver_hook.limits import parse_wheel_name
from resolver_hook.manifest import Manifest, ManifestError
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.manifest.model import IndexFlavour, Needs
from resolver_hook.resolve import Plan, resolve
from tests.clirun import cli
from tests.indexreplica import (
    File,
    PageServer,
    Response,
    metadata_text,
    pypi_json,
    pytorch_html,
)

ROOT = Path(__file__).resolve().parents[1]
TODAY = datetime.date(2026, 12, 1)
X86 = "manylinux_2_28_x86_64"


def _torch_files() -> list[File]:
    out = []
    for v in ("2.12.1", "2.13.0", "2.14.0", "2.15.0"):
        for py in ("cp312", "cp313"):
            fn = f"torch-{v}+cu130-{py}-{py}-{X86}.whl"
            out.append(File(fn, metadata=metadata_text("torch", f"{v}+cu130", ["filelock"])))
    out.append(File(f"torch-2.16.0.dev20261101+cu130-cp312-cp312-{X86}.whl"))  # a nightly
    out.append(File(f"torch-2.15.0+cu126-cp312-cp312-{X86}.whl"))  # another label
    return out


def _tilert_files() -> list[File]:
    def wheel(v: str, requires: list[str], **kw: str | None) -> File:
        return File(
            f"tilert-{v}-cp312-cp312-{X86}.whl",
            metadata=metadata_text("tilert", v, requires),
            **kw,  # type: ignore[arg-type]
        )

    return [
        wheel("0.1.5", ["torch==2.12.1"]),
        wheel("0.1.6", ["torch<2.14,>=2.12", "numpy; extra == 'test'"]),
        wheel("0.1.7", ["torch>=2.12"], yanked="broken upload"),
        wheel("0.1.8", ["torch>=2.12"], requires_python=">=3.13"),
    ]


TORCH_HEAD = '\nschema = 1\n[package]\nname = "torch"'
ALL_GPUS = '["sm_80", "sm_90", "sm_100", "sm_120"]'


def _torch_index(base: str, version: str, gpu: str, python: str, extra: str = "") -> str:
    return f"""
[[index]]
url = "{base}/whl/cu130/torch/"
version = "{version}"
cuda = ">=13.0"
gpu = {gpu}
platforms = ["{X86}"]
python = {python}
checked = "2026-11-30"
{extra}"""


def _tilert_text(base: str) -> str:
    return f"""
schema = 1
[package]
name = "tilert"
[[index]]
url = "{base}/simple/tilert/"
versions = ">=0.1.5"
cuda = ">=13.0"
gpu = ["sm_100"]
platforms = ["linux_x86_64"]
"""


def _torch_manifest(base: str, extra: str = "") -> Manifest:
    both = '["3.12", "3.13"]'
    return loads_manifest(
        TORCH_HEAD
        + _torch_index(base, "2.13.0+cu130", ALL_GPUS, both, extra)
        + _torch_index(base, "2.12.1+cu130", ALL_GPUS, both),
        source="test",
        allow_insecure=True,
    )


def _tilert_manifest(base: str) -> Manifest:
    return loads_manifest(_tilert_text(base), source="test", allow_insecure=True)


def _client(**kw: object) -> IndexClient:
    """The index client as a plan uses it, reading the loopback replica."""
    kw.setdefault("cache", "cache_dir" in kw)  # no page cache unless a folder is given
    return IndexClient(allow_insecure=True, **kw)  # type: ignore[arg-type]


@pytest.fixture
def replica() -> Iterator[PageServer]:
    server = PageServer()
    with server.serving():
        pytorch_html(server, "/whl/cu130/torch/", "/whl/cu130/", _torch_files())
        pypi_json(server, "/simple/tilert/", "/files/", _tilert_files())
        yield server


def _machine(py: str = "312") -> object:
    return resolve_machine(
        profile=None, target=f"linux-x86_64-py{py}-cuda13.0-sm100", flags={}, use_cache=False
    )


def _plan(manifests: dict[str, Manifest], reqs: list[str], source: object, py: str = "312") -> Plan:
    profile = _machine(py)
    names = [r.split("<")[0].split(">")[0].split("=")[0] for r in reqs]
    done = expand_manifests(manifests, names, source)  # type: ignore[arg-type]
    planned = with_notes(done, done.notes)
    return resolve(reqs, planned, profile, today=TODAY)  # type: ignore[arg-type]


def test_html_page_newest_first_pinned_and_marked(replica: PageServer) -> None:
    plan = _plan({"torch": _torch_manifest(replica.url)}, ["torch"], _client())
    torch = plan.package("torch")
    assert torch is not None
    assert torch.action == "rewrite"
    assert torch.version == "2.15.0+cu130"
    assert torch.url == f"{replica.url}/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-{X86}.whl"
    files = {f.filename: f for f in _torch_files()}
    assert torch.sha256 == files[f"torch-2.15.0+cu130-cp312-cp312-{X86}.whl"].digest()
    assert plan.constraints == (f"torch @ {torch.url}#sha256={torch.sha256}",)
    assert torch.kernels_assumed == "kernels assumed from 2.13.0+cu130, checked 2026-11-30"
    assert "kernels assumed from 2.13.0+cu130" in torch.reason
    assert plan.to_dict()["packages"][0]["kernels_assumed"] == torch.kernels_assumed
    assert not any("no sha256" in n for n in plan.notes)


def test_user_specifier_and_verified_release(replica: PageServer) -> None:
    manifests = {"torch": _torch_manifest(replica.url)}
    newer = _plan(manifests, ["torch>=2.14"], _client()).package("torch")
    assert newer is not None
    assert newer.version == "2.15.0+cu130"
    older = _plan(manifests, ["torch<2.14"], _client()).package("torch")
    assert older is not None
    assert older.version == "2.13.0+cu130"
    assert older.kernels_assumed is None  # the verified release
    assert "cp312" in (older.url or "")


def test_a_rule_that_says_the_list_changed_refuses_newer(replica: PageServer) -> None:
    manifests = {"torch": _torch_manifest(replica.url, 'kernels_until = "2.15"')}
    plan = _plan(manifests, ["torch"], _client())
    torch = plan.package("torch")
    assert torch is not None
    assert torch.version == "2.14.0+cu130"
    assert any("2.15.0+cu130" in n and "changed at 2.15" in n for n in plan.notes)
    pinned = _plan(manifests, ["torch==2.15.0"], _client()).package("torch")
    assert pinned is not None
    assert pinned.action != "rewrite"


def test_candidates_skip_other_labels_nightlies_and_yanked(replica: PageServer) -> None:
    source = _client()
    page = source.pages([f"{replica.url}/whl/cu130/torch/"])[f"{replica.url}/whl/cu130/torch/"]
    assert not isinstance(page, Exception)
    found = candidates(_torch_manifest(replica.url).indexes[0], page)
    versions = [str(c.version) for c in found]
    assert versions == sorted(versions, key=Version, reverse=True)
    assert "2.15.0+cu126" not in versions
    tilert_page = source.pages([f"{replica.url}/simple/tilert/"])
    page2 = tilert_page[f"{replica.url}/simple/tilert/"]
    assert not isinstance(page2, Exception)
    got = [str(c.version) for c in candidates(_tilert_manifest(replica.url).indexes[0], page2)]
    assert got == ["0.1.8", "0.1.6", "0.1.5"]  # 0.1.7 is yanked


def test_requires_python_honoured_and_requires_dist_couples(replica: PageServer) -> None:
    manifests = {"torch": _torch_manifest(replica.url), "tilert": _tilert_manifest(replica.url)}
    alone = _plan(manifests, ["torch"], _client()).package("torch")
    assert alone is not None
    assert alone.version == "2.15.0+cu130"
    plan = _plan(manifests, ["torch", "tilert"], _client())
    tilert, torch = plan.package("tilert"), plan.package("torch")
    assert tilert is not None
    assert torch is not None
    # 0.1.8 needs Python 3.13, 0.1.7 is yanked: 0.1.6, whose metadata says torch<2.14.
    assert tilert.version == "0.1.6"
    assert torch.version == "2.13.0+cu130"
    assert "torch<2.14,>=2.12" in tilert.reason
    rejected = {r.candidate: r for r in tilert.rejected}
    newest = next(r for c, r in rejected.items() if "0.1.8" in c)
    assert "python" in newest.rules
    assert "Requires-Python >=3.13" in newest.reason
    assert not any("0.1.7" in c for c in rejected)  # yanked: never a candidate
    on313 = _plan(manifests, ["torch", "tilert"], _client(), py="313").package("tilert")
    assert on313 is not None
    assert on313.version != "0.1.8"


def _snapshot_of(urls: list[str], date: datetime.date = TODAY) -> Snapshot:
    """A snapshot made of the replica's pages as read now (as make_snapshot does)."""
    pages = _client().pages(urls)
    tables = {
        u: [link_table(x, "https://example.invalid/read") for x in p.links]  # type: ignore[union-attr]
        for u, p in pages.items()
    }
    return load_snapshot(dump_snapshot(date, tables))


def test_offline_reads_nothing(replica: PageServer, tmp_path: Path) -> None:
    torch_page = f"{replica.url}/whl/cu130/torch/"
    snap = _snapshot_of([torch_page])
    manifests = {"torch": _torch_manifest(replica.url), "tilert": _tilert_manifest(replica.url)}
    # A plan fills the page cache; offline, the cache and then the snapshot serve.
    _plan(manifests, ["tilert"], _client(cache_dir=tmp_path))
    assert any(p.endswith("/simple/tilert/") for p in replica.log)
    replica.log.clear()
    offline = _client(cache_dir=tmp_path / "empty", offline=True)
    source = FallbackSource(offline, snap, offline=True)
    plan = _plan(manifests, ["torch"], source)
    torch = plan.package("torch")
    assert torch is not None
    assert torch.version == "2.15.0+cu130"
    assert torch.sha256
    assert replica.log == []
    assert source.notes == [
        f"offline: 127.0.0.1 not in the page cache: {torch_page}; planned from the snapshot "
        "of 2026-12-01\n"
        f"  {torch_page}: not in the page cache, and --offline reads no network (planned "
        "from the snapshot of 2026-12-01)"
    ]
    cached = FallbackSource(_client(cache_dir=tmp_path, offline=True), snap, offline=True)
    tilert = _plan(manifests, ["tilert"], cached).package("tilert")
    assert tilert is not None
    assert tilert.version == "0.1.6"  # from the cached page and metadata files
    assert replica.log == []


def test_snapshot_only_says_what_it_lacks(replica: PageServer) -> None:
    snap = _snapshot_of([f"{replica.url}/whl/cu130/torch/"])
    source = SnapshotOnly(snap)
    manifests = {"torch": _torch_manifest(replica.url), "tilert": _tilert_manifest(replica.url)}
    _plan(manifests, ["torch", "tilert"], source)
    assert source.notes == [
        "offline: files and hashes from the shipped snapshot of 2026-12-01; "
        "releases since then are not seen",
        f"offline: {replica.url}/simple/tilert/ is not in the shipped snapshot: planned from "
        "the manifests alone, without files or hashes",
    ]


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        ("500", "500"),
        ("not an index", "not an index page"),
        ("timeout", "no complete answer within 0.5 s"),
    ],
)
def test_a_failed_page_is_one_note_and_the_snapshot_serves(
    replica: PageServer, failure: str, words: str
) -> None:
    page = f"{replica.url}/whl/cu130/torch/"
    snap = _snapshot_of([page], datetime.date(2026, 11, 2))
    client = _client()
    if failure == "500":
        replica.responses["/whl/cu130/torch/"] = Response(b"oops", "text/plain", 500)
    elif failure == "not an index":
        replica.responses["/whl/cu130/torch/"] = Response(b"\x89PNG\r\n", "image/png")
    else:
        replica.delay, client = 3.0, _client(timeout=0.5)
    source = FallbackSource(client, snap)
    plan = _plan({"torch": _torch_manifest(replica.url)}, ["torch"], source)
    torch = plan.package("torch")
    assert torch is not None
    assert torch.version == "2.15.0+cu130"
    assert len(source.notes) == 1
    assert page in source.notes[0]
    assert "2026-11-02" in source.notes[0]
    assert words in source.notes[0]


def test_the_shipped_snapshot_is_read_only_when_a_page_needs_it() -> None:
    """Given as a function, the snapshot is read the first time a page fails or lacks
    the core metadata the snapshot could lend, once: pages that all answer with their
    metadata read none of it (~8 ms of a hook's run)."""
    page_url = "https://pypi.org/simple/tilert/"
    url = "https://files.example/tilert-0.1.6-cp312-cp312-manylinux_2_28_x86_64.whl"
    link = Link(
        url=url, filename=url.rsplit("/", 1)[1], hashes={"sha256": "a" * 64},
        core_metadata={"sha256": "b" * 64},
    )  # fmt: skip
    read: list[int] = []

    def snapshot() -> Snapshot:
        read.append(1)
        return load_snapshot(dump_snapshot(TODAY, {}))

    source = FallbackSource(_Served(Page(url=page_url, links=(link,))), snapshot)
    assert source.pages([page_url])[page_url] == Page(url=page_url, links=(link,))
    assert (source.notes, read) == ([], [])
    gone = "https://pypi.org/simple/gone/"
    assert isinstance(source.pages([gone])[gone], LookupError)
    source.pages([gone, page_url])
    assert len(source.notes) == 1
    assert read == [1]


def test_credentials_in_a_failed_url_are_never_shown(replica: PageServer) -> None:
    host = replica.url.split("://", 1)[1]
    pair = f"{replica.url}/whl=http://user:s3cret@{host}/gone"
    mirrors = mirrors_from({}, [pair], allow_insecure=True)
    client = _client(mirrors=mirrors)
    source = FallbackSource(client, load_snapshot(dump_snapshot(TODAY, {})), mirrors)
    plan = _plan({"torch": _torch_manifest(replica.url)}, ["torch"], source)
    assert source.notes
    assert all("s3cret" not in n for n in [*source.notes, *plan.notes, *client.notes])


def test_mirror_pins_the_mirror(replica: PageServer) -> None:
    pair = f"https://download.example/whl={replica.url}/whl"
    mirrors = mirrors_from({}, [pair], allow_insecure=True)
    upstream = _torch_manifest("https://download.example")
    client = _client(mirrors=mirrors)
    source = FallbackSource(client, load_snapshot(dump_snapshot(TODAY, {})), mirrors)
    torch = _plan({"torch": upstream}, ["torch"], source).package("torch")
    assert torch is not None
    assert (torch.url or "").startswith(f"{replica.url}/whl/cu130/")
    assert source.notes == []


def test_metadata_that_does_not_match_its_hash_is_not_used(replica: PageServer) -> None:
    tilert = next(f for f in _tilert_files() if f.filename.startswith("tilert-0.1.6"))
    path = "/files/" + tilert.filename.replace("+", "%2B") + ".metadata"
    replica.responses[path] = Response(metadata_text("tilert", "0.1.6", ["torch<2.0"]).encode())
    manifests = {"torch": _torch_manifest(replica.url), "tilert": _tilert_manifest(replica.url)}
    plan = _plan(manifests, ["torch", "tilert"], _client())
    (note,) = [n for n in plan.notes if "metadata" in n]
    assert "the page gives" in note
    assert "Requires-Dist is not used" in note
    tilert_plan = plan.package("tilert")
    assert tilert_plan is not None
    assert "torch<2.0" not in tilert_plan.reason


# --- the shipped snapshot ------------------------------------------------------------


def test_shipped_snapshot_is_what_the_script_generates() -> None:
    script = ROOT / "scripts" / "make_snapshot.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    snap = builtin_snapshot()
    # Dated by the newest row it keeps; every file cites the public source it was read
    # from (a project's record of it, or the page itself, by scripts/refresh_data.py).
    rows = toml_loads((ROOT / "scripts" / "data" / "snapshot_links.toml").read_text())
    assert snap.date.isoformat() in {r["read"] for r in rows["link"]}
    assert all(e.startswith("https://") for e in snap.evidence.values())
    assert all(x.sha256 for p in snap.pages.values() for x in p.links)


def test_a_snapshot_edited_by_hand_is_refused() -> None:
    text = (ROOT / "resolver_hook" / "inventory" / "data" / "snapshot.json").read_text()
    edited = text.replace("95bdbad2", "95bdbad3", 1)
    assert edited != text
    with pytest.raises(SnapshotError, match="does not match"):
        load_snapshot(edited)


def test_the_shipped_snapshots_hash_is_checked_in_full_once_per_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The user cache keeps the sha256 of each text whose hash matched: a text it keeps
    is not hashed again (shown by one it was made to keep that does not match), an
    edited one is checked in full, with the same error, and is not kept."""
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path))
    checked = tmp_path / "snapshot-checked.json"
    assert builtin_snapshot() == load_snapshot(
        snapshot_module._builtin_text(), where="shipped snapshot"
    )
    assert checked.stat().st_mode & 0o777 == 0o600
    text = snapshot_module._builtin_text()
    edited = text.replace("95bdbad2", "95bdbad3", 1)
    kept = checked.read_text()
    with pytest.raises(SnapshotError, match=r"^snapshot: its sha256 does not match its pages"):
        load_snapshot(edited, checked=str(checked))
    assert checked.read_text() == kept
    assert builtin_snapshot().date == load_snapshot(text).date  # read from the cache
    digest = hashlib.sha256(edited.encode()).hexdigest()
    checked.write_text(kept.replace(hashlib.sha256(text.encode()).hexdigest(), digest))
    assert load_snapshot(edited, checked=str(checked)).pages  # believed: not hashed again
    with pytest.raises(SnapshotError, match="does not match"):
        load_snapshot(edited)  # without the cache file: hashed


def test_the_shipped_snapshot_is_read_once_per_text_and_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A later process with the same text and tool makes the snapshot again from the
    user cache, as read (pages, links, metadata, evidence, in their order), without
    reading the text (shown by a kept value made to differ); other code reads it."""
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path))
    read = load_snapshot(snapshot_module._builtin_text(), where="shipped snapshot")
    first = builtin_snapshot()
    again = builtin_snapshot()
    assert first == again == read
    for field in ("pages", "metadata", "evidence", "release_evidence"):
        assert list(getattr(again, field)) == list(getattr(read, field))
    path = tmp_path / "snapshots" / "snapshot.json"
    assert path.stat().st_mode & 0o777 == 0o600
    entry = json.loads(path.read_text())
    entry["value"]["links"]["filename"][0] = "kept.whl"
    path.write_text(json.dumps(entry))
    names = {x.filename for p in builtin_snapshot().pages.values() for x in p.links}
    assert "kept.whl" in names
    monkeypatch.setattr(contentcache, "_code", lambda: ["another tool"])
    assert builtin_snapshot() == read


def test_a_kept_snapshot_is_found_without_decoding_its_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Kept by the sha256 of the file's bytes: a later process that finds it kept reads
    them and does not decode them (a third of a read's time); a new file is read."""
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path))
    first = builtin_snapshot()

    def not_decoded() -> str:
        raise AssertionError("decoded")

    monkeypatch.setattr(snapshot_module, "_builtin_text", not_decoded)
    assert builtin_snapshot() == first
    edited = snapshot_module._builtin_bytes().replace(b'"about"', b' "about"', 1)
    monkeypatch.setattr(snapshot_module, "_builtin_bytes", lambda: edited)
    with pytest.raises(AssertionError, match="decoded"):
        builtin_snapshot()


def test_the_shipped_snapshot_is_opened_once_when_it_is_not_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A process that finds nothing kept reads the file once: its bytes key what is
    kept, and the text parsed is those bytes decoded, not a second read."""
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path))
    snapshot_module._builtin_text.cache_clear()
    snapshot_module._builtin_bytes.cache_clear()
    opened: list[str] = []

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(path).name)
        return open(path, *args, **kwargs)

    monkeypatch.setattr(snapshot_module, "open", counted, raising=False)
    read = builtin_snapshot()
    assert opened.count("snapshot.json") == 1
    monkeypatch.undo()
    shipped = Path(data_path("inventory", "data", "snapshot.json"))
    assert read == load_snapshot(shipped.read_text(encoding="utf-8"), where="shipped snapshot")


def test_a_snapshot_kept_as_data_is_made_again_as_read() -> None:
    """Its tables in their order, a file two pages list (its evidence and metadata
    given by a later one, and then the order of the tables) included."""
    row = {"url": "https://h.org/f/x-1-py3-none-any.whl", "filename": "x-1-py3-none-any.whl"}
    first = {**row, "sha256": "a" * 64, "evidence": "https://h.org/a"}
    later = {**row, "evidence": "https://h.org/b", "metadata": "Name: x"}
    tables: dict[str, list[dict[str, Any]]] = {
        "https://h.org/a/": [{"url": "https://h.org/f/y.whl", "filename": "y.whl"}, row],
        "https://h.org/b/": [first, {**row, "yanked": "bad", "requires_python": ">=3"}],
        "https://h.org/c/": [
            later,
            {**row, "core_metadata": {"sha256": "b" * 64}},
            {"url": "https://h.org/f/y.whl", "filename": "y.whl", "evidence": "https://h.org/y"},
        ],
    }
    releases: Any = {"https://h.org/c/": [
        {"version": "2", "evidence": "https://h.org/r", "requires": ["y>=1"]},
        {"version": "1", "evidence": "https://h.org/s"},
        {"version": "2", "evidence": "https://h.org/t"},
    ]}  # fmt: skip
    read = load_snapshot(dump_snapshot(TODAY, tables, releases))
    made = snapshot_module._rebuild_read(json.loads(json.dumps(snapshot_module._dump_read(read))))
    assert made == read
    for field in ("pages", "metadata", "evidence", "release_evidence"):
        assert list(getattr(made, field).items()) == list(getattr(read, field).items())


@pytest.mark.parametrize("cache", ["a-file", "no-folder/below-a-file"], ids=["file", "below"])
def test_the_shipped_snapshot_without_a_usable_cache_is_hashed_every_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cache: str
) -> None:
    (tmp_path / "a-file").write_text("")
    (tmp_path / "no-folder").write_text("")
    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path / cache))
    assert builtin_snapshot() == load_snapshot(
        snapshot_module._builtin_text(), where="shipped snapshot"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "no-folder"]


def test_the_texts_whose_hash_matched_are_kept_to_a_bound(tmp_path: Path) -> None:
    """The newest first, to eight (one per snapshot shipped, and room)."""
    checked = tmp_path / "checked.json"
    texts = [dump_snapshot(datetime.date(2026, 1, day), {}) for day in range(1, 11)]
    for text in texts:
        load_snapshot(text, checked=str(checked))
    kept = json.loads(checked.read_text())["value"]
    assert kept == [hashlib.sha256(t.encode()).hexdigest() for t in reversed(texts)][:8]
    assert load_snapshot(texts[-1], checked=str(checked)).date == datetime.date(2026, 1, 10)


SNAP_PAGE = "https://download.example.org/whl/cu130/demo/"
SNAP_WHEEL = "https://download.example.org/whl/cu130/demo-1.0-py3-none-any.whl"


def _snap_row(i: int, **more: object) -> dict[str, object]:
    return {"url": f"{SNAP_WHEEL}?{i}", "filename": f"demo-1.{i}-py3-none-any.whl", **more}


def test_a_snapshots_link_rows_are_read_field_by_field() -> None:
    """What a link row gives its link: a sha256, ``requires_python`` and ``yanked`` only
    where they are text (an empty ``requires_python`` is none), ``core_metadata`` where
    it is a table; its ``evidence`` and ``metadata`` where they are text."""
    rows = [
        _snap_row(0, sha256="a" * 64, requires_python=">=3.10", yanked="broken",
                  core_metadata={"sha256": "b" * 64}, evidence="https://example.org/e",
                  metadata="Name: demo\n"),
        _snap_row(1, sha256=5, requires_python="", yanked=True, core_metadata="x",
                  evidence=["https://example.org/e"], metadata=None),
        _snap_row(2, yanked="", core_metadata={}),
    ]  # fmt: skip
    snap = load_snapshot(dump_snapshot(TODAY, {SNAP_PAGE: rows}))
    urls = [f"{SNAP_WHEEL}?{i}" for i in range(3)]
    names = [f"demo-1.{i}-py3-none-any.whl" for i in range(3)]
    assert snap.pages[SNAP_PAGE].links == (
        Link(url=urls[0], filename=names[0], hashes={"sha256": "a" * 64},
             requires_python=">=3.10", yanked="broken", core_metadata={"sha256": "b" * 64}),
        Link(url=urls[1], filename=names[1]),
        Link(url=urls[2], filename=names[2], yanked="", core_metadata={}),
    )  # fmt: skip
    assert snap.evidence == {urls[0]: "https://example.org/e"}
    assert snap.metadata == {urls[0]: "Name: demo\n"}


@pytest.mark.parametrize("row", [0, 1, 2], ids=["first", "middle", "last"])
@pytest.mark.parametrize(
    ("key", "bad"), [("url", None), ("url", 1), ("filename", ["f"]), ("filename", None)]
)
def test_a_snapshot_link_row_without_url_and_filename_is_refused(
    row: int, key: str, bad: object
) -> None:
    rows = [_snap_row(i) for i in range(3)]
    rows[row][key] = bad
    if bad is None:
        del rows[row][key]
    with pytest.raises(SnapshotError, match="a link without 'url' and 'filename'"):
        load_snapshot(dump_snapshot(TODAY, {SNAP_PAGE: rows}))


@pytest.mark.parametrize("links", ["a row", ["a row"], [{}, 1], None])
def test_a_snapshot_page_whose_links_are_not_a_list_of_tables_is_refused(links: object) -> None:
    doc = json.loads(dump_snapshot(TODAY, {SNAP_PAGE: [_snap_row(0)]}))
    doc["pages"][SNAP_PAGE]["links"] = links
    doc["sha256"] = canonical_hash(doc["pages"])
    with pytest.raises(SnapshotError, match="a page without a 'links' list"):
        load_snapshot(json.dumps(doc))


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (None, "more than 4 links"),  # 2 releases, then the third link is past the bound
        (1, "a link without"),  # a bad link before the bound: that error first
        (2, "more than 4 links"),  # the bound is reached before the bad link is read
    ],
)
def test_a_snapshot_past_its_bound_of_links_is_refused(
    monkeypatch: pytest.MonkeyPatch, bad: int | None, error: str
) -> None:
    monkeypatch.setattr(snapshot_module, "MAX_PAGE_LINKS", 4)
    rows = [_snap_row(i) for i in range(3)]
    releases = [{"version": f"1.{i}", "evidence": "https://example.org/r"} for i in range(2)]
    at_bound = load_snapshot(dump_snapshot(TODAY, {SNAP_PAGE: rows[:2]}, {SNAP_PAGE: releases}))
    assert len(at_bound.pages[SNAP_PAGE].links) == 2
    if bad is not None:
        del rows[bad]["url"]
    with pytest.raises(SnapshotError, match=error):
        load_snapshot(dump_snapshot(TODAY, {SNAP_PAGE: rows}, {SNAP_PAGE: releases}))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('kernels_until = "2.12"', "not after"),
        ('kernels_until = "two"', "not a public version"),
        ('kernels_until = "2.16+cu130"', "not a public version"),
    ],
)
def test_kernels_until_is_validated(extra: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        _torch_manifest("https://download.example", extra)


UNREAD = 'unjudged = "its kernel list (no source read gives it)"'


def test_an_entry_that_names_a_fact_no_source_gave_plans_its_files_unjudged(
    replica: PageServer,
) -> None:
    """Builds a source shows exist, whose kernel list none gives: the file is planned
    (its CUDA floor and tags hold) and said UNJUDGED, neither judged to run nor refused."""
    both = '["3.12", "3.13"]'
    text = TORCH_HEAD + _torch_index(replica.url, "2.13.0+cu130", "[]", both, UNREAD)
    manifests = {"torch": loads_manifest(text, source="test", allow_insecure=True)}
    torch = _plan(manifests, ["torch==2.13.0"], _client()).package("torch")
    assert torch is not None
    assert (torch.action, torch.cause) == ("rewrite", "unjudged")
    assert torch.version == "2.13.0+cu130"
    assert torch.unjudged == "its kernel list (no source read gives it)"
    assert "UNJUDGED: whether torch 2.13.0+cu130 runs on this machine's GPU" in torch.reason
    # The same entry without the key is judged: no kernel list means any GPU.
    plain = loads_manifest(text.replace(UNREAD, ""), source="test", allow_insecure=True)
    judged = _plan({"torch": plain}, ["torch==2.13.0"], _client()).package("torch")
    assert judged is not None
    assert (judged.action, judged.cause) == ("rewrite", "fit")


@pytest.mark.parametrize(
    ("gpu", "extra"),
    [(ALL_GPUS, UNREAD), ("[]", 'unjudged = " "'), ("[]", "unjudged = 3")],
)
def test_unjudged_is_a_text_on_an_entry_without_a_kernel_list(gpu: str, extra: str) -> None:
    text = TORCH_HEAD + _torch_index("https://download.example", "2.13.0", gpu, "[]", extra)
    with pytest.raises(ManifestError, match="unjudged"):
        loads_manifest(text, source="test")


# --- the CLI ----------------------------------------------------------------------


def test_cli_offline_plan_pins_the_snapshot_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "plan", "torch", "--offline", "--target", "linux-x86_64-py313-cuda13.0-sm100"
    )
    assert code == 0
    snap = builtin_snapshot()
    urls = {x.url: x.sha256 for p in snap.pages.values() for x in p.links}
    pinned = next(u for u in urls if "cp313-cp313-manylinux_2_28_x86_64" in u and "/torch-" in u)
    assert f"torch @ {pinned}#sha256={urls[pinned]}" in out
    date = snap.date.isoformat()
    (note,) = [x for x in out.splitlines() if "offline: download.pytorch.org not in" in x]
    assert re.search(rf"pages; \d+ from the snapshot of {date},", note), note
    code, out, _ = cli(
        capsys, "plan", "torch", "--offline", "-v", "--target", "linux-x86_64-py313-cuda13.0-sm100"
    )
    (page,) = [x for x in out.splitlines() if "/whl/cu130/torch/:" in x]
    assert page.endswith(f"(planned from the snapshot of {date})")


def test_cli_bad_mirror_is_one_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "plan", "torch", "--offline", "--mirror", "nothing-here")
    assert code == 2
    assert err.startswith("error: --mirror 'nothing-here': expected UPSTREAM=MIRROR")
    code, _, err = cli(
        capsys, "plan", "torch", "--offline", "--mirror", "https://a.example/=http://b.example/"
    )
    assert code == 2
    assert err.startswith("error: --mirror: mirror 'http://b.example/' is plain http")


def _write_manifests(replica: PageServer, folder: Path) -> list[str]:
    torch = folder / "torch.toml"
    torch.write_text(
        TORCH_HEAD + _torch_index(replica.url, "2.13.0+cu130", '["sm_100"]', '["3.12"]')
    )
    tilert = folder / "tilert.toml"
    tilert.write_text(_tilert_text(replica.url))
    return ["--manifest", str(torch), "--manifest", str(tilert), "--allow-insecure-urls"]


@pytest.fixture
def live_flags(replica: PageServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CLI flags naming manifests on the replica and an sm_100 target; the replica is read."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)  # read the replica
    return [*_write_manifests(replica, tmp_path), "--target", "linux-x86_64-py312-cuda13.0-sm100"]


def test_explain_marks_a_carried_release(
    replica: PageServer, live_flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """explain reads the replica through the index client and marks the carried list."""
    code, out, _ = cli(capsys, "explain", "torch", *live_flags)
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("*"))
    assert "2.15.0+cu130" in lines[at]
    # The reason, on its own indented line under the row: why it is chosen, and how.
    assert lines[at + 1] == "      chosen; kernels assumed from 2.13.0+cu130, checked 2026-11-30"
    assert "/whl/cu130/torch/" in "".join(replica.log)


def test_cli_plan_json_and_offline(
    replica: PageServer, live_flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    flags = live_flags
    code, out, _ = cli(capsys, "plan", "torch", "--json", *flags)
    assert code == 0
    (torch,) = json.loads(out)["packages"]
    assert torch["version"] == "2.15.0+cu130"
    assert torch["kernels_assumed"] == "kernels assumed from 2.13.0+cu130, checked 2026-11-30"
    code, out, _ = cli(capsys, "plan", "torch", "tilert", "--json", *flags)
    versions = {p["name"]: p["version"] for p in json.loads(out)["packages"]}
    assert versions == {"torch": "2.13.0+cu130", "tilert": "0.1.6"}
    replica.log.clear()
    code, out, _ = cli(capsys, "plan", "torch", "tilert", "--offline", *flags)
    assert replica.log == []  # --offline reads nothing: the page cache serves
    assert code == 0
    assert f"torch @ {replica.url}/whl/cu130/torch-2.13.0%2Bcu130-cp312" in out
    assert "#sha256=" in out


# Wheel names of every kind a page may list: Pythons, ABIs (free-threaded, abi3, none),
# dotted tag sets, build tags, upper case, other platforms, and names that are no
# wheel's (too few fields, a number past the bounds).
_ODD_NAMES = [
    f"torch-2.13.0+cu130-cp3{m}-cp3{m}{t}-{plat}.whl"
    for m in ("8", "9", "12", "13")
    for t in ("", "t")
    for plat in (X86, "manylinux_2_28_aarch64", "win_amd64", "macosx_14_0_arm64")
] + [
    f"torch-2.13.0+cu130-py3-none-{X86}.whl",
    f"torch-2.13.0+cu130-cp310-abi3-{X86}.whl",
    f"torch-2.13.0+cu130-cp311.cp312-cp311.cp312-{X86}.whl",
    "torch-2.13.0+cu130-cp312-cp312-manylinux1_x86_64.win_amd64.whl",
    f"torch-2.13.0+cu130-1build-cp312-cp312-{X86}.whl",
    f"Torch-2.13.0+CU130-CP312-CP312-{X86.upper()}.whl",
    "torch-2.13.0+cu130-cp312-cp312.whl",
    f"torch-2.13.0+cu130-cp312-cp312-manylinux_{'9' * 40}_28_x86_64.whl",
    "torch-2.13.0+cu130-py3-none-any.whl",
]


@pytest.mark.parametrize(
    ("platforms", "python"),
    [
        (f'["{X86}"]', '["3.12", "3.13"]'),
        ('["win_amd64", "macosx_14_0_arm64"]', '["3.13t"]'),
        ("[]", "[]"),
    ],
)
def test_names_left_unparsed_are_names_the_checks_refuse(
    platforms: str, python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's wheel names are judged by their tag fields, and a name whose platforms
    or Pythons are not the flavour's is never parsed: the candidates are the ones every
    name parsed and checked on its tags gives, and no parsed tag set is read again."""
    text = (
        f'{TORCH_HEAD}\n[[index]]\nurl = "https://download.pytorch.org/whl/cu130/torch/"\n'
        f'version = "2.13.0+cu130"\ncuda = ">=13.0"\ngpu = {ALL_GPUS}\n'
        f'platforms = {platforms}\npython = {python}\nchecked = "2026-11-30"\n'
    )
    flavour = loads_manifest(text, source="test").indexes[0]
    page = Page(
        url="https://download.pytorch.org/whl/cu130/torch/",
        links=tuple(Link(url=f"https://x.org/{n}", filename=n) for n in _ODD_NAMES),
    )
    module = sys.modules["resolver_hook.inventory.candidates"]
    places = module.flavour_places(flavour)
    pairs = module._python_pairs(frozenset(flavour.python)) if flavour.python else None
    want = []
    for filename in _ODD_NAMES:
        try:
            name, version, _build, tags = parse_wheel_name(filename)
        except InvalidWheelFilename:
            continue
        if name != "torch" or version.local != "cu130":
            continue
        if places and places.isdisjoint(module.place_of(t.platform) for t in tags):
            continue
        if pairs is None or not pairs.isdisjoint((t.interpreter, t.abi) for t in tags):
            want.append(filename)
    read: list[object] = []
    monkeypatch.setattr(module, "_read_tags", read.append)
    quick = candidates(flavour, page)
    assert sorted(c.filename for c in quick) == sorted(want)
    assert quick  # the table has names the flavour takes
    assert read == []


# Fields a wheel name is made of, good and bad as ``packaging`` reads them: names with
# escapes, upper case, dots or bad characters; versions with labels, epochs, bad text;
# build tags; dotted tag sets, empty parts, upper case.
_FIELD = {
    "name": ["torch", "Torch", "torch_x", "a.b", "a__b", "", "to-rch", "t\u00e9", "9"],
    "version": ["2.13.0+cu130", "1.0", "1!2.0", "01.2", "1.0.dev1", "1+X_y", "bad!", "", "v1"],
    "build": ["1", "1build", "b1", "", "12_x"],
    "interp": ["cp312", "cp313", "py3", "cp311.cp312", "CP312", "", "3x", "cp312."],
    "abi": ["cp312", "cp313t", "abi3", "none", "cp311.cp312", "", "A.B"],
    "plat": [X86, "win_amd64", "any", "linux_x86_64.win_amd64", "", "MACOSX_14_0_ARM64"],
}


def _wheel_names() -> st.SearchStrategy[str]:
    field = {k: st.one_of(st.sampled_from(v), st.text("aZ09._+!-t", max_size=6))
             for k, v in _FIELD.items()}  # fmt: skip
    build = st.one_of(st.just(None), field["build"])
    return st.builds(
        lambda n, v, b, i, a, p, ext: "-".join([n, v, *([b] if b is not None else []), i, a, p])
        + ext,
        field["name"], field["version"], build, field["interp"], field["abi"], field["plat"],
        st.sampled_from([".whl", ".whl", ".WHL", ".zip"]),
    )  # fmt: skip


def _read_name(filename: str) -> object:
    """A wheel name read as the candidates read a page's names: cut into its fields,
    then read field by field (None: no wheel's name)."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    cut = module._cut(filename, bounded=False) if filename.endswith(".whl") else None
    return None if cut is None else module._cut_fields(cut)


@settings(max_examples=500)
@given(_wheel_names())
def test_a_name_read_field_by_field_is_the_name_read_whole(filename: str) -> None:
    """The candidates' parser reads each field of a wheel name once per run (a page's
    names share a few versions and tag sets): it gives what ``packaging`` gives for the
    whole name, and refuses what it refuses."""
    try:
        name, version, _build, tags = parse_wheel_name(filename)
        whole: object = (name, version, tags)
    except InvalidWheelFilename:
        whole = None
    assert _read_name(filename) == whole


def test_a_names_version_and_tags_are_read_by_their_own_parsers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wheel name's version and tag fields are read by ``Version`` and ``parse_tag``
    alone (each once per text): ``packaging``'s whole-name parser reads only the made
    names of the fields it alone checks (the project name, a build tag)."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    for read in (
        module._name_field,
        module._version_field,
        module._build_field,
        module._tags_field,
    ):
        read.cache_clear()
    whole: list[str] = []
    parse = module.parse_wheel_filename

    def spy(filename: str) -> object:
        whole.append(filename)
        return parse(filename)

    monkeypatch.setattr(module, "parse_wheel_filename", spy)
    names = [f"fieldpkg-7.{i}-cp31{i}-cp31{i}-{X86}.whl" for i in range(3)]
    names.append(f"fieldpkg-7.0-1b-cp38-abi3-{X86}.whl")
    found = [_read_name(n) for n in names]
    assert [str(x[1]) for x in found] == ["7.0", "7.1", "7.2", "7.0"]
    assert whole == ["fieldpkg-0-py3-none-any.whl", "x-0-1b-py3-none-any.whl"]


def test_a_long_version_field_is_read_as_the_whole_name_reads_it() -> None:
    """The version field is read by ``Version`` alone, as ``packaging`` reads it in the
    whole name: a name within the length bound is not refused because its version field
    is long (a name made to read the field alone was past the bound)."""
    version = "1" + ".0" * 119
    filename = f"x-{version}-a-b-c.whl"
    name, parsed, _build, tags = parse_wheel_name(filename)
    assert _read_name(filename) == (name, parsed, tags)


def _history(versions: Sequence[str]) -> Page:
    """A page of ``pkg`` listing one file of each release, as PyPI lists them."""
    names = [f"pkg-{v}-cp312-cp312-{X86}.whl" for v in versions]
    return Page(
        url="https://x.org/simple/pkg/",
        links=tuple(Link(url=f"https://files.x.org/{n}", filename=n) for n in names),
    )


def test_a_pages_releases_are_ordered_once_for_all_its_flavours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every flavour of a page lists its files newest first: the page's releases are
    put in order once, when their files are first read, not again for each flavour
    (a flavour ordering its own 30 releases compares at least 29 pairs)."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    compared: list[str] = []

    class Counted(Version):
        def __lt__(self, other: object) -> bool:
            compared.append(str(self))
            return super().__lt__(other)  # type: ignore[operator]

    module._version_field.cache_clear()
    monkeypatch.setattr(module, "Version", Counted)
    releases = [f"3.{i}" for i in range(30)]
    page = _history(releases)
    found = [
        candidates(
            IndexFlavour(
                url=page.url,
                name="pkg",  # type: ignore[arg-type]
                version=Version("3.0"),
                platforms=platforms,
                python=python,
            ),
            page,
        )
        for platforms, python in (((), ()), ((X86,), ()), ((X86,), ("3.12",)), ((), ("3.12",)))
    ]
    module._version_field.cache_clear()
    assert all([str(c.version) for c in x] == releases[::-1] for x in found)
    assert 0 < len(compared) < 2 * (len(releases) - 1)


def test_a_page_without_wheels_reads_nothing_of_a_flavour() -> None:
    """A page of the snapshot's compact rows lists no wheel: a flavour's candidates there
    are none, found without listing the tags of its Pythons or reading its platforms
    (entries of old releases name Pythons and platforms no other entry does)."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    flavour = IndexFlavour(
        url="https://x.org/whl/cu118/pkg/",
        name="pkg",  # type: ignore[arg-type]
        version=Version("2.0+cu118"),
        platforms=("linux_x86_64",),
        python=("3.8", "3.9"),
    )
    rows = Page(url=flavour.url or "", links=(), source="snapshot", releases=("2.0.1+cu118",))
    module._pairs_of.cache_clear()
    module.place_of.cache_clear()
    assert candidates(flavour, rows) == []
    assert module.narrow(flavour, []) == []
    assert module._pairs_of.cache_info().currsize == module.place_of.cache_info().currsize == 0


def test_an_entry_of_one_release_passes_over_the_history_below_it_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entry of one release covers it and the newer ones: the page's releases older
    than it (most of a page's history) are passed over at once, not judged one by one
    (not even the first of them: the entry reads the head of its list); the files
    planned are the same."""
    page = _history([f"1.{i}" for i in range(10)] + ["2.0", "2.1"])
    man = loads_manifest(
        '\nschema = 1\n[package]\nname = "pkg"\n[[index]]\nurl = "https://x.org/simple/pkg/"'
        f'\nversion = "2.0"\ncuda = ">=13.0"\ngpu = ["sm_100"]\nplatforms = ["{X86}"]\n',
        source="test",
    )
    module = sys.modules["resolver_hook.inventory.expand"]
    judged: list[str] = []
    passed_over = module._Context._passed_over

    def spy(self: object, f: object, v: Version, page: Page) -> bool:
        judged.append(str(v))
        return passed_over(self, f, v, page)  # type: ignore[no-any-return]

    monkeypatch.setattr(module._Context, "_passed_over", spy)
    done = expand_manifests({"pkg": man}, ["pkg"], _Served(page))
    wheels = done.manifests["pkg"].wheels
    assert [(str(w.version), str(w.assumed_from)) for w in wheels] == [
        ("2.1", "2.0"),
        ("2.0", "None"),
    ]
    assert set(judged) == {"2.1", "2.0"}


def test_an_entry_of_one_release_parses_only_the_head_of_its_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The files of the releases older than an entry of one release (most of a page's
    history) are never parsed when its release has a file that is not yanked; where
    it has only yanked ones, the older releases are planned with its rules, as before
    (pip installs one of them in its place)."""
    module = sys.modules["resolver_hook.inventory.candidates"]
    parsed: list[str] = []
    fields = module._cut_fields

    def spy(cut: list[str]) -> object:
        parsed.append(cut[1])
        return fields(cut)

    monkeypatch.setattr(module, "_cut_fields", spy)
    entry = (
        '\nschema = 1\n[package]\nname = "pkg"\n[[index]]\nurl = "https://x.org/simple/pkg/"'
        f'\nversion = "2.0"\ncuda = ">=13.0"\ngpu = ["sm_100"]\nplatforms = ["{X86}"]\n'
    )
    man = loads_manifest(entry, source="test")
    page = _history([f"1.{i}" for i in range(10)] + ["2.0", "2.1"])
    done = expand_manifests({"pkg": man}, ["pkg"], _Served(page))
    assert [str(w.version) for w in done.manifests["pkg"].wheels] == ["2.1", "2.0"]
    assert sorted(parsed) == ["2.0", "2.1"]
    yanked = replace(
        page, links=tuple(replace(x, yanked="") if "-2.0-" in x.filename else x for x in page.links)
    )
    parsed.clear()
    done = expand_manifests({"pkg": man}, ["pkg"], _Served(yanked))
    older = [f"1.{i}" for i in range(9, -1, -1)]
    assert [str(w.version) for w in done.manifests["pkg"].wheels] == ["2.1", *older]
    assert set(older) <= set(parsed)


def test_the_entries_of_a_page_and_label_are_found_once_for_all_of_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Which entries' rules may cover a page's files (those of its page and label) is the
    same for every entry there: found once, each entry's places read once, whichever
    entry's files ask; the files planned are each entry's own."""
    page = _history(["1.0", "1.1", "1.2"])
    entries = "".join(
        f'[[index]]\nurl = "https://x.org/simple/pkg/"\nversion = "1.{i}"\ncuda = ">=13.0"'
        f'\ngpu = ["sm_100"]\nplatforms = ["{X86}"]\n'
        for i in range(3)
    )
    man = loads_manifest(f'\nschema = 1\n[package]\nname = "pkg"\n{entries}', source="test")
    module = sys.modules["resolver_hook.inventory.expand"]
    read: list[str] = []
    places = module.flavour_places

    def spy(f: IndexFlavour) -> object:
        read.append(str(f.version))
        return places(f)

    monkeypatch.setattr(module, "flavour_places", spy)
    done = expand_manifests({"pkg": man}, ["pkg"], _Served(page))
    wheels = done.manifests["pkg"].wheels
    assert [(str(w.version), w.assumed_from) for w in wheels] == [
        ("1.0", None),
        ("1.1", None),
        ("1.2", None),
    ]
    assert sorted(read) == ["1.0", "1.1", "1.2"]


def test_a_range_finds_its_releases_on_a_page_in_one_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entry of a release range (``versions``) plans every file of the page's releases
    in it: they are found in one filter of the page's releases (``packaging`` reads the
    range's bounds once), not by asking the range about each release."""
    page = _history([f"1.{i}" for i in range(10)] + ["2.0rc1", "2.0"])
    man = loads_manifest(
        '\nschema = 1\n[package]\nname = "pkg"\n[[index]]\nurl = "https://x.org/simple/pkg/"'
        f'\nversions = ">=1.5,!=1.7"\ncuda = ">=13.0"\ngpu = ["sm_100"]\nplatforms = ["{X86}"]\n',
        source="test",
    )
    asked: list[str] = []
    contains = SpecifierSet.contains

    def spy(self: SpecifierSet, item: Version, prereleases: bool | None = None) -> bool:
        if prereleases is False:
            asked.append(str(item))
        return contains(self, item, prereleases=prereleases)

    monkeypatch.setattr(SpecifierSet, "contains", spy)
    done = expand_manifests({"pkg": man}, ["pkg"], _Served(page))
    judged = [str(w.version) for w in done.manifests["pkg"].wheels if w.unjudged is None]
    assert judged == ["2.0", "1.9", "1.8", "1.6", "1.5"]
    assert asked == []


def test_the_releases_below_every_range_share_their_empty_rules() -> None:
    """A page's releases that no entry's rule covers are planned unjudged, with none of
    the entry's rules: one value (one object) serves them all."""
    page = _history([f"1.{i}" for i in range(8)])
    man = loads_manifest(
        '\nschema = 1\n[package]\nname = "pkg"\n[[index]]\nurl = "https://x.org/simple/pkg/"'
        f'\nversions = ">=1.5"\ncuda = ">=13.0"\ngpu = ["sm_100"]\nplatforms = ["{X86}"]\n',
        source="test",
    )
    wheels = expand_manifests({"pkg": man}, ["pkg"], _Served(page)).manifests["pkg"].wheels
    below = [w for w in wheels if w.unjudged is not None]
    assert [str(w.version) for w in below] == ["1.4", "1.3", "1.2", "1.1", "1.0"]
    assert all(w.needs == Needs() for w in below)
    assert len({id(w.needs) for w in below}) == 1


class _Served:
    """A primary source that gives one page as read (no core metadata on its links)."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        return {u: self.page if u == self.page.url else LookupError(u) for u in urls}

    def metadata(self, link: Link) -> Metadata:
        raise AssertionError(f"the primary was asked for {link.url}'s metadata")


@pytest.mark.parametrize("same_bytes", [True, False])
def test_a_page_without_core_metadata_borrows_the_snapshots_for_the_same_file(
    same_bytes: bool,
) -> None:
    page_url = "https://pypi.org/simple/tilert/"
    url = "https://files.example/tilert-0.1.6-cp312-cp312-manylinux_2_28_x86_64.whl"
    name = url.rsplit("/", 1)[1]
    text = "Metadata-Version: 2.1\nName: tilert\nVersion: 0.1.6\nRequires-Dist: torch<2.13\n"
    row = {
        "url": url,
        "filename": name,
        "sha256": "a" * 64,
        "core_metadata": {"sha256": "b" * 64},
        "metadata": text,
    }
    snap = load_snapshot(dump_snapshot(TODAY, {page_url: [row]}))
    read = Page(
        url=page_url,
        links=(
            Link(url=url, filename=name, hashes={"sha256": "a" * 64 if same_bytes else "c" * 64}),
        ),
    )
    source = FallbackSource(_Served(read), snap, offline=True)
    (link,) = source.pages([page_url])[page_url].links  # type: ignore[union-attr]
    if not same_bytes:  # another file under the same name: nothing is borrowed
        assert link.core_metadata is None
        return
    assert link.core_metadata == {"sha256": "b" * 64}
    assert [str(r) for r in source.metadata(link).requires_dist] == ["torch<2.13"]


def test_a_page_on_a_host_the_snapshot_never_read_does_not_read_it() -> None:
    """A page whose files lack core metadata borrows from the snapshot: it is read for
    that only when its text holds the start (scheme and host) of one of those files'
    URLs; an index it never read (a local or private one) costs no read (~8 ms of a
    hook's first run). The answer is the same either way."""
    page_url = "https://pypi.org/simple/tilert/"
    name = "tilert-0.1.6-cp312-cp312-manylinux_2_28_x86_64.whl"
    url = f"https://files.example/{name}"
    text = "Metadata-Version: 2.1\nName: tilert\nVersion: 0.1.6\nRequires-Dist: torch<2.13\n"
    row = {"url": url, "filename": name, "sha256": "a" * 64,
           "core_metadata": {"sha256": "b" * 64}, "metadata": text}  # fmt: skip
    document = dump_snapshot(TODAY, {page_url: [row]})
    read: list[int] = []

    def snapshot() -> Snapshot:
        read.append(1)
        return load_snapshot(document)

    def names(start: str) -> bool:
        return start in document

    def served(*hosts: str) -> list[Link]:
        links = [Link(url=f"https://{h}/{name}", filename=name, hashes={"sha256": "a" * 64})
                 for h in hosts]  # fmt: skip
        page = Page(url=page_url, links=tuple(links))
        source = FallbackSource(_Served(page), snapshot, offline=True, names=names)
        return list(source.pages([page_url])[page_url].links)  # type: ignore[union-attr]

    elsewhere = served("127.0.0.1:8080", "files.example.org")
    assert read == []
    assert all(x.core_metadata is None for x in elsewhere)
    assert [x.core_metadata for x in served("127.0.0.1:8080", "files.example")] == [
        None,
        {"sha256": "b" * 64},
    ]
    assert read == [1]
    # Past eight hosts, the snapshot is read rather than its text searched host by host.
    served(*(f"h{i}.example" for i in range(9)))
    assert read == [1, 1]


def test_the_shipped_snapshot_text_holds_each_of_its_urls() -> None:
    """builtin_names answers from the document's text: every link and page URL of the
    shipped snapshot is there as its JSON writes it (a snapshot written with other
    escapes would make pages borrow nothing: this test fails first)."""
    snap = builtin_snapshot()
    urls = [u for page in snap.pages.values() for u in (page.url, *(x.url for x in page.links))]
    assert urls
    assert all(builtin_names(u) for u in urls)
    assert not builtin_names("http://127.0.0.1:8080/")


def test_a_url_is_looked_for_in_the_shipped_snapshot_without_decoding_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plan over an index the snapshot never read asks whether the snapshot lists its
    hosts (builtin_names): the file's bytes answer, not its decoded text (a few hundred
    kB decoded for nothing), and the answers are the text's."""
    text = snapshot_module._builtin_text()
    asked = ["http://127.0.0.1:8080/", "https://download.pytorch.org", "https://pypi.org",
             "https://files.pythonhosted.org", "https://h\u00f6st.example", "\r\n"]  # fmt: skip

    def not_decoded() -> str:
        raise AssertionError("decoded")

    monkeypatch.setattr(snapshot_module, "_builtin_text", not_decoded)
    said = [builtin_names(u) for u in asked]
    assert said == [json.dumps(u)[1:-1] in text for u in asked]
    assert said[1:4] == [True, True, True]
