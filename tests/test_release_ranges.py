"""Rules over release ranges: a label on a page over a version range (``versions`` +
``label``), every release the page or the snapshot's compact rows list inside it planned
with the range's rules (issue 40, items 1 and 2)."""

from __future__ import annotations

import datetime
import os
import re
import sys
from collections.abc import Iterable, Iterator

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from resolver_hook.ground.valueclass import replace
from resolver_hook.host import resolve_machine
from resolver_hook.index import IndexClient
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory.expand import release_versions, with_notes
from resolver_hook.inventory.snapshot import (
    SnapshotError,
    dump_snapshot,
    load_snapshot,
)
from resolver_hook.inventory.sources import SnapshotOnly
from resolver_hook.manifest import Manifest, ManifestError
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.manifest.model import IndexFlavour
from resolver_hook.publish.refresh import (
    ReleaseRow,
    Report,
    new_releases,
    releases_toml,
    render_snapshot,
)
from resolver_hook.resolve import Plan, resolve
from tests.indexreplica import File, PageServer, pytorch_html

TODAY = datetime.date(2026, 12, 3)
X86 = "manylinux_2_28_x86_64"
B200 = "linux-x86_64-py312-cuda13.0-sm100"
L40 = "linux-x86_64-py312-cuda12.8-sm89"


def _ranges(base: str) -> str:
    return f"""
schema = 1
[package]
name = "torch"

[[index]]
url = "{base}/whl/cu128/torch/"
versions = ">=2.7,<2.9"
label = "cu128"
cuda = ">=12.0"
cuda_runtime = "12.8"
gpu = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
platforms = ["{X86}"]

[[index]]
url = "{base}/whl/cu121/torch/"
versions = ">=2.1,<2.6"
label = "cu121"
cuda = ">=12.0"
cuda_runtime = "12.1"
gpu = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
platforms = ["{X86}"]

[[index]]
url = "{base}/whl/cu118/torch/"
versions = ">=2.1,<2.8"
label = "cu118"
cuda = ">=11.8"
cuda_runtime = "11.8"
gpu = ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
platforms = ["{X86}"]
"""


def _manifest(base: str) -> dict[str, Manifest]:
    return {"torch": loads_manifest(_ranges(base), source="test", allow_insecure=True)}


def _files(label: str, versions: tuple[str, ...]) -> list[File]:
    return [File(f"torch-{v}+{label}-cp312-cp312-{X86}.whl") for v in versions]


@pytest.fixture
def replica() -> Iterator[PageServer]:
    server = PageServer()
    with server.serving():
        cu128 = _files("cu128", ("2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0"))
        pytorch_html(server, "/whl/cu128/torch/", "/whl/cu128/", cu128)
        pytorch_html(server, "/whl/cu121/torch/", "/whl/cu121/", _files("cu121", ("2.2.2",)))
        yield server


def _plan(manifests: dict[str, Manifest], reqs: list[str], source: object, target: str) -> Plan:
    profile = resolve_machine(profile=None, target=target, flags={}, use_cache=False)
    done = expand_manifests(manifests, ["torch"], source)  # type: ignore[arg-type]
    return resolve(reqs, with_notes(done, done.notes), profile, today=TODAY)


def test_label_is_only_for_a_range() -> None:
    text = '\nschema = 1\n[package]\nname = "torch"\n[[index]]\nurl = "https://x.org/t/"\n'
    with pytest.raises(ManifestError, match=r"label.*only beside 'versions'"):
        loads_manifest(text + 'version = "2.7.1"\nlabel = "cu128"\n', source="t")
    with pytest.raises(ManifestError, match="'CU 128' is not a local label"):
        loads_manifest(text + 'versions = ">=2.7"\nlabel = "CU 128"\n', source="t")
    m = loads_manifest(text + 'versions = ">=2.7,<2.9"\nlabel = "cu128"\n', source="t")
    assert str(m.indexes[0].version) == "2.7+cu128"
    assert "+cu128" in m.indexes[0].describe()


@pytest.mark.parametrize(
    ("req", "version"),
    [("torch==2.7.1", "2.7.1+cu128"), ("torch", "2.8.0+cu128"), ("torch<2.8", "2.7.1+cu128")],
)
def test_every_release_of_the_page_in_the_range_is_a_candidate(
    replica: PageServer, req: str, version: str
) -> None:
    client = IndexClient(allow_insecure=True, cache=False)
    torch = _plan(_manifest(replica.url), [req], client, B200).package("torch")
    assert torch is not None
    assert torch.action == "rewrite"
    assert torch.version == version  # 2.9.0 and 2.6.0 are outside the range
    quoted = version.replace("+", "%2B")
    assert torch.url == f"{replica.url}/whl/cu128/torch-{quoted}-cp312-cp312-{X86}.whl"
    assert torch.sha256


def test_an_explicit_label_is_judged_by_its_range(replica: PageServer) -> None:
    client = IndexClient(allow_insecure=True, cache=False)
    plan = _plan(_manifest(replica.url), ["torch==2.2.2+cu121"], client, B200)
    torch = plan.package("torch")
    assert torch is not None
    assert torch.action == "error"
    assert "sm_100" in " ".join(x.reason for r in torch.rejected for x in r.failures)
    kept = _plan(_manifest(replica.url), ["torch==2.2.2+cu121"], client, L40).package("torch")
    assert kept is not None
    assert kept.version == "2.2.2+cu121"  # not the cu118 range, which holds 2.2.2 too
    assert kept.url == f"{replica.url}/whl/cu121/torch-2.2.2%2Bcu121-cp312-cp312-{X86}.whl"


def _compact(url: str, rows: list[tuple[str, str]]) -> str:
    releases = {u: [{"version": v, "evidence": "https://example.org/list"}] for u, v in rows}
    return dump_snapshot(TODAY, {url: []}, releases)


def test_offline_a_release_known_without_files_is_planned_in_page_form() -> None:
    base = "https://download.example.org"
    page = f"{base}/whl/cu128/torch/"
    snap = load_snapshot(_compact(page, [(page, "2.7.1+cu128")]))
    assert snap.pages[page].releases == ("2.7.1+cu128",)
    plan = _plan(_manifest(base), ["torch==2.7.1"], SnapshotOnly(snap), B200)
    torch = plan.package("torch")
    assert torch is not None
    assert (torch.line, torch.find_links, torch.sha256) == ("torch==2.7.1+cu128", page, None)
    assert torch.versions is None


def test_a_compact_row_needs_its_version_and_source() -> None:
    page = "https://download.example.org/whl/cu128/torch/"
    doc = dump_snapshot(TODAY, {page: []}, {page: [{"version": "2.7.1+cu128"}]})
    with pytest.raises(SnapshotError, match="release row without 'version' and 'evidence'"):
        load_snapshot(doc)


@pytest.mark.parametrize(
    ("requires", "error"),
    [("triton==3.1.0", "is not a list of strings"), (["triton=="], "is not a requirement")],
)
def test_a_compact_rows_requires_is_a_list_of_requirements(requires: object, error: str) -> None:
    page = "https://download.example.org/whl/cu128/torch/"
    row = {"version": "2.7.1+cu128", "evidence": "https://example.org/l", "requires": requires}
    with pytest.raises(SnapshotError, match=error):
        load_snapshot(dump_snapshot(TODAY, {page: []}, {page: [row]}))


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        # The first row that is not one gives the error, whatever a later row lacks.
        ([{"requires": ["triton=="]}, {"version": "2.x"}], "'triton==' is not a requirement"),
        ([{"version": "2.x"}, {"requires": ["triton=="]}], "'2.x' is not a version"),
        ([{"version": "2.x"}, {"evidence": None}], "'2.x' is not a version"),
        ([{"evidence": None}, {"version": "2.x"}], "without 'version' and 'evidence'"),
        ([{"requires": "x"}, {"version": "2.x"}], "'requires' is not a list of strings"),
        # A release number past int()'s digits is no InvalidVersion; the row before first.
        ([{"requires": ["triton=="]}, {"version": "1." + "0" * 5000}], "'triton=='"),
    ],
)
def test_a_snapshots_release_rows_are_refused_at_the_first_that_is_not_one(
    rows: list[dict[str, object]], error: str
) -> None:
    page = "https://download.example.org/whl/cu128/torch/"
    base = {"version": "2.7.1+cu128", "evidence": "https://example.org/l", "requires": []}
    doc = dump_snapshot(TODAY, {page: []}, {page: [{**base, **row} for row in rows]})
    with pytest.raises(SnapshotError, match=re.escape(error)):
        load_snapshot(doc)


def test_the_snapshot_keeps_every_covered_release_and_no_other() -> None:
    base = "https://download.example.org"
    page = f"{base}/whl/cu128/torch/"
    rows = [
        ReleaseRow(page=page, version=v, evidence="https://example.org/l", read="2026-12-03")
        for v in ("2.6.0+cu128", "2.7.0+cu128", "2.7.1+cu128", "2.8.0+cu128", "2.8.0+cu126")
    ]
    snap = load_snapshot(render_snapshot([], _manifest(base), TODAY, releases=rows))
    assert snap.pages[page].releases == ("2.7.0+cu128", "2.7.1+cu128", "2.8.0+cu128")


def test_a_pinned_label_is_not_planned_by_another_labels_range() -> None:
    # A driver with CUDA 11.8: the cu121 range cannot run, the cu118 range could; a pin
    # of 2.2.2+cu121 is refused rather than planned from the cu118 page.
    base = "https://download.example.org"
    snap = load_snapshot(dump_snapshot(TODAY, {}))
    target = "linux-x86_64-py312-cuda11.8-sm80"
    torch = _plan(_manifest(base), ["torch==2.2.2+cu121"], SnapshotOnly(snap), target)
    assert torch.package("torch") is not None
    assert torch.package("torch").action == "error"  # type: ignore[union-attr]
    ok = _plan(_manifest(base), ["torch==2.2.2"], SnapshotOnly(snap), target).package("torch")
    assert ok is not None
    assert (ok.line, ok.find_links) == ("torch==2.2.2+cu118", f"{base}/whl/cu118/torch/")


def test_a_range_outside_the_users_bounds_is_not_a_candidate() -> None:
    base = "https://download.example.org"
    snap = load_snapshot(dump_snapshot(TODAY, {}))
    plan = _plan(_manifest(base), ["torch>=2.9"], SnapshotOnly(snap), B200)
    torch = plan.package("torch")
    assert torch is not None
    assert torch.action == "pass"  # no range reaches 2.9: not planned from the cu128 page
    assert torch.cause == "unjudged"


def test_with_compact_rows_an_unlisted_release_is_not_planned_from_the_range() -> None:
    base = "https://download.example.org"
    page = f"{base}/whl/cu128/torch/"
    snap = load_snapshot(_compact(page, [(page, "2.7.1+cu128")]))
    torch = _plan(_manifest(base), ["torch==2.8.1"], SnapshotOnly(snap), B200).package("torch")
    assert torch is not None
    assert torch.action != "rewrite"  # the rows name 2.7.1 only: 2.8.1 is not made up


class _Asked(set[Version]):
    """A set of versions that records what it is asked for."""

    def __init__(self, *args: Iterable[Version]) -> None:
        super().__init__(*args)
        self.asked: list[str] = []

    def __contains__(self, v: object) -> bool:
        self.asked.append(str(v))
        return super().__contains__(v)


@pytest.mark.parametrize("planned", [(), ("2.7.1+cu128",)], ids=["no-file", "a-file"])
def test_a_range_plans_its_rows_not_planned_as_files_each_looked_up_only_then(
    planned: tuple[str, ...],
) -> None:
    """A range's page-form releases are the rows in its range with its label, those
    planned from files left out: with no file planned, no row is looked up (the page
    forms of a snapshot page that lists no file are most of them); with one, only the
    rows in the range are."""
    url = "https://download.example.org/whl/cu128/torch/"
    rows = ("2.6.0+cu128", "2.7.1+cu128", "2.8.0+cu128", "2.7.0+cu126")
    page = Page(url=url, links=(), source="snapshot", releases=rows)
    (f,) = _manifest("https://download.example.org")["torch"].indexes[:1]
    have = _Asked(map(Version, planned))
    left = [] if planned else ["2.7.1+cu128"]
    assert [str(v) for v in release_versions(f, page, have)] == [*left, "2.8.0+cu128"]
    assert have.asked == (["2.7.1+cu128", "2.8.0+cu128"] if planned else [])


def test_the_rows_in_a_range_are_found_once_then_read_from_the_user_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Which of a page's rows a range holds (its label's, no pre-release) is packaging's
    answer, found once and kept in the user cache when the expansion is done: a later
    process reads the same releases, in their order, without asking packaging, for
    these ranges, labels and rows only."""
    module = sys.modules["resolver_hook.inventory.expand"]
    base = "https://download.example.org"
    url = f"{base}/whl/cu128/torch/"
    rows = ("2.6.0+cu128", "2.7.1+CU128", "2.8.0rc1+cu128", "2.8.0+cu128", "2.7.0+cu126")
    said = [{"version": r, "evidence": "https://example.org/list"} for r in rows]
    snap = load_snapshot(dump_snapshot(TODAY, {url: []}, {url: said}))
    ranges = [">=2.7,<2.9", "==2.7.1", ">=2.8.0rc1", "<2.7", ">=3", ""]
    labels = ["cu128", "cu126", None]

    def entry(spec: str, label: str | None) -> IndexFlavour:
        return IndexFlavour(
            url=url,
            name="torch",  # type: ignore[arg-type]
            version=Version("2.0" if label is None else f"2.0+{label}"),
            versions=SpecifierSet(spec),
        )

    entries = {(spec, label): entry(spec, label) for spec in ranges for label in labels}
    page = snap.pages[url]
    found = {k: release_versions(f, page, set()) for k, f in entries.items()}
    assert [str(v) for v in found[">=2.7,<2.9", "cu128"]] == ["2.7.1+cu128", "2.8.0+cu128"]
    assert found[">=2.8.0rc1", "cu128"] == [Version("2.8.0+cu128")]
    assert found["", "cu126"] == [Version("2.7.0+cu126")]
    assert found[">=3", "cu128"] == found["<2.7", None] == []
    kept = os.path.join(os.environ["RESOLVER_HOOK_CACHE_DIR"], "snapshots", "ranges.json")
    assert not os.path.exists(kept)
    expand_manifests(_manifest(base), ["torch"], SnapshotOnly(snap))  # done: kept
    assert os.path.exists(kept)
    module._kept_ranges.cache_clear()  # a later process

    def unasked(*_: object, **__: object) -> list[object]:
        raise AssertionError("the rows were filtered again")

    monkeypatch.setattr(SpecifierSet, "filter", unasked)
    for k, f in entries.items():
        assert release_versions(f, page, set()) == found[k]
    first = entries[">=2.7,<2.9", "cu128"]
    assert release_versions(first, page, {Version("2.7.1+cu128")}) == [Version("2.8.0+cu128")]
    with pytest.raises(AssertionError, match="filtered again"):  # other rows: filtered
        release_versions(first, replace(page, releases=rows[:2]), set())


def test_a_range_on_a_page_of_rows_only_filters_the_rows_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A range entry whose page lists no file (the snapshot's compact rows only) filters
    the rows for its page forms, and no list of files: there is none."""
    base = "https://download.example.org"
    url = f"{base}/whl/cu128/torch/"
    snap = load_snapshot(_compact(url, [(url, "2.7.1+cu128")]))
    filtered: list[list[str]] = []
    keep = SpecifierSet.filter

    def spy(self: SpecifierSet, iterable: Iterable[Version], **kw: object) -> object:
        items = list(iterable)
        filtered.append([str(v) for v in items])
        return keep(self, items, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(SpecifierSet, "filter", spy)
    done = expand_manifests(_manifest(base), ["torch"], SnapshotOnly(snap))
    forms = [f for f in done.manifests["torch"].indexes if f.url == url]
    assert [str(f.version) for f in forms] == ["2.7.1+cu128"]
    assert filtered == [["2.7.1+cu128"]]


def test_a_page_of_rows_only_is_never_read_for_files() -> None:
    """A page that lists no file (the snapshot's compact rows, most pages of a plan)
    has none for any flavour: its files are never looked for, for the range's own
    platforms or for every platform (the releases no rule covers), and the range is
    planned from its rows alone."""
    base = "https://download.example.org"
    url = f"{base}/whl/cu128/torch/"
    snap = load_snapshot(_compact(url, [(url, "2.7.1+cu128")]))
    read = sys.modules["resolver_hook.inventory.candidates"]._PAGES
    read.clear()
    done = expand_manifests(_manifest(base), ["torch"], SnapshotOnly(snap))
    forms = [f for f in done.manifests["torch"].indexes if f.url == url]
    assert [str(f.version) for f in forms] == ["2.7.1+cu128"]
    assert not done.manifests["torch"].wheels
    assert not read  # no page's files were made


def test_a_page_form_release_couples_as_its_row_says() -> None:
    """A release the snapshot lists without files is planned in page form with the
    range's rules and its row's ``Requires-Dist`` couplings on packages with a manifest
    (not its own, not others); a release without such a row keeps the range's own."""
    base = "https://download.example.org"
    url = f"{base}/whl/cu128/torch/"
    lines = ['triton==3.3.1; platform_system == "Linux"', "filelock", "torch>=2"]
    rows = [{"version": "2.7.1+cu128", "evidence": "https://example.org/l", "requires": lines},
            {"version": "2.8.0+cu128", "evidence": "https://example.org/l"}]  # fmt: skip
    snap = load_snapshot(dump_snapshot(TODAY, {url: []}, {url: rows}))
    triton = loads_manifest(
        f'\nschema = 1\n[package]\nname = "triton"\n[[index]]\nurl = "{base}/simple/triton/"'
        '\nversion = "3.3.1"\n',
        source="test",
    )
    done = expand_manifests({**_manifest(base), "triton": triton}, ["torch"], SnapshotOnly(snap))
    forms = [f for f in done.manifests["torch"].indexes if f.url == url]
    assert [(str(f.version), f.versions) for f in forms] == [
        ("2.7.1+cu128", None),
        ("2.8.0+cu128", None),
    ]
    assert [str(r) for r in forms[0].needs.requires] == [lines[0]]
    assert forms[1].needs == _manifest(base)["torch"].indexes[0].needs


def test_a_page_computed_from_a_range_is_not_guessed() -> None:
    base = "https://download.example.org"
    scatter = loads_manifest(
        """
schema = 1
[package]
name = "torch-scatter"
[[index]]
url = "https://data.example.org/whl/torch-{torch.minor}.0+{torch.local}.html"
versions = ">=2.1.2"
requires = ["torch>=2.7,<2.9"]
local_labels = ["cu128"]
""",
        source="test",
    )
    manifests = {**_manifest(base), "torch-scatter": scatter}
    profile = resolve_machine(profile=None, target=B200, flags={}, use_cache=False)
    plan = resolve(["torch", "torch-scatter"], manifests, profile, today=TODAY)
    got = plan.package("torch-scatter")
    assert got is not None
    assert got.action == "error"  # which 2.x the range gives, and so its page, is unknown
    why = " ".join(x.reason for r in got.rejected for x in r.failures)
    assert "a range, none of its releases known" in why


def test_a_labelled_range_couples_with_the_same_label_only() -> None:
    base = "https://download.example.org"
    vision = loads_manifest(
        f"""
schema = 1
[package]
name = "torchvision"
[[index]]
url = "{base}/whl/cu118/torchvision/"
versions = "==0.17.2"
label = "cu118"
cuda = ">=11.0"
requires = ["torch==2.2.2"]
""",
        source="test",
    )
    manifests = {**_manifest(base), "torchvision": vision}
    profile = resolve_machine(profile=None, target=L40, flags={}, use_cache=False)
    plan = resolve(["torchvision", "torch==2.2.2+cu121"], manifests, profile, today=TODAY)
    got = plan.package("torchvision")
    assert got is not None
    assert got.action == "error"  # a cu118 torchvision never goes with a cu121 torch
    why = " ".join(x.reason for r in got.rejected for x in r.failures)
    assert "needs torch==2.2.2" in why
    ok = resolve(["torchvision", "torch==2.2.2"], manifests, profile, today=TODAY)
    assert ok.package("torch").version == "2.2.2+cu118"  # type: ignore[union-attr]


def test_a_refresh_records_every_covered_release_a_page_names() -> None:
    base = "https://download.example.org"
    page_url = f"{base}/whl/cu128/torch/"
    names = [f"torch-{v}+cu128-cp312-cp312-{X86}.whl" for v in ("2.6.0", "2.7.0", "2.8.0")]
    page = Page(
        url=page_url,
        links=tuple(Link(url=f"{base}/whl/cu128/{n}", filename=n) for n in names),
    )
    known = [ReleaseRow(page=page_url, version="2.7.0+cu128", evidence="x", read="2026-12-01")]
    report = Report()
    rows = new_releases(_manifest(base), {page_url: page}, known, TODAY, report)
    assert [(r.page, r.version, r.evidence) for r in rows] == [
        (page_url, "2.8.0+cu128", page_url)  # 2.6.0: in no range; 2.7.0: in the table
    ]
    assert 'version = "2.8.0+cu128"' in releases_toml(rows, TODAY)
    assert report.count("new") == 1
