"""Candidates as installers see them: one ranking, tags read as ``packaging`` reads them.

Loopback replicas of the real page shapes (PyPI's JSON pages; a PyTorch-style HTML
page for torch) are planned with the built-in manifests (their default index pointed
at the replica) both online (the index client) and offline (a snapshot of the same
pages), and the two answers are held side by side.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence

import pytest

from resolver_hook.host import resolve_machine
from resolver_hook.index import IndexClient
from resolver_hook.index.metadata import Metadata
from resolver_hook.index.model import Link, Page
from resolver_hook.inventory import expand_manifests
from resolver_hook.inventory.expand import with_notes
from resolver_hook.inventory.snapshot import dump_snapshot, link_table, load_snapshot
from resolver_hook.inventory.sources import SnapshotOnly
from resolver_hook.manifest import Manifest, ManifestError, builtin_manifests
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.resolve import PackagePlan, Plan, resolve
from tests.clirun import cli
from tests.indexreplica import File, PageServer, metadata_text, pypi_json, pytorch_html

TODAY = datetime.date(2026, 12, 3)
MANY = "manylinux_2_27_x86_64.manylinux_2_28_x86_64"  # triton's, tilelang's, faiss's
OLD = "manylinux_2_17_x86_64.manylinux2014_x86_64"  # triton 3.0-3.2's
B200 = "linux-x86_64-py{py}-cuda13.0-sm100"
H100 = "linux-x86_64-py312-cuda12.8-sm90"

# The built-in manifests of triton, tilelang and faiss-gpu, with the real pages' shapes.
pytestmark = pytest.mark.builtin_data


def _triton_files() -> list[File]:
    out = [File(f"triton-3.8.0-cp312-cp312-{MANY}.whl", requires_python="<3.15,>=3.10")]
    out += [
        File(f"triton-3.9.0-{tag}-{MANY}.whl", requires_python=">=3.11,<3.16")
        for tag in ("cp311-cp311", "cp312-abi3")
    ]
    out += [File(f"triton-3.{m}.0-cp312-cp312-{OLD}.whl") for m in (0, 1, 2)]
    return out


# torch 2.5.1's own METADATA: its triton pin carries a marker (docs/facts.md section 6.11).
TRITON_251 = (
    'triton==3.1.0; platform_system == "Linux" and platform_machine == "x86_64" '
    'and python_version < "3.13"'
)


def _torch_files() -> list[File]:
    return [
        File(
            f"torch-{v}+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
            metadata=metadata_text("torch", f"{v}+cu130", ["filelock"]),
        )
        for v in ("2.14.0", "2.15.0")
    ]


PAGES = {
    "triton": _triton_files(),
    # tilelang 0.1.15 ships one abi3 wheel per platform, from CPython 3.8 on.
    "tilelang": [File(f"tilelang-0.1.15-cp38-abi3-{MANY}.whl", requires_python=">=3.8")],
    # Meta's own faiss-gpu on PyPI (docs/facts.md section 6.5).
    "faiss-gpu": [
        File(f"faiss_gpu-{v}-cp310-abi3-{MANY}.whl", requires_python=">=3.10")
        for v in ("1.15.0", "1.15.1")
    ],
    # natten on PyPI: source distributions (and old wheels, yanked); its CUDA builds
    # are on its own find-links page.
    "natten": [
        File("natten-0.14.1-cp39-cp39-manylinux2014_x86_64.whl", yanked="Deprecated"),
        *(File(f"natten-{v}.tar.gz", requires_python=">=3.9") for v in ("0.21.6", "0.21.7")),
    ],
    # A plain package whose newest release is a py3 wheel, an older one per CPython.
    # One release of "pk" on the publisher's page (a py3 wheel) and on a community one
    # (a cp312 wheel, the more specific tag); "fg" on PyPI and as another distribution.
    "pk": [File("pk-1.0-py3-none-any.whl")],
    "community/pk": [File("pk-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")],
    "fg": [File("fg-1.1-py3-none-any.whl")],
    "plainpkg": [
        File("plainpkg-0.29.1-cp312-cp312-macosx_14_0_arm64.whl"),
        File("plainpkg-0.29.2-py3-none-macosx_14_0_arm64.whl", requires_python=">=3.10"),
    ],
}


def _torch_manifest(base: str) -> Manifest:
    return loads_manifest(
        f"""
schema = 1
[package]
name = "torch"
[[index]]
url = "{base}/whl/cu130/torch/"
version = "2.15.0+cu130"
cuda = ">=13.0"
gpu = ["sm_90", "sm_100"]
platforms = ["manylinux_2_28_x86_64"]
python = ["3.12"]
[[index]]
url = "{base}/whl/cu124/torch/"
version = "2.5.1+cu124"
cuda = ">=12.4"
gpu = ["sm_80", "sm_90"]
platforms = ["linux_x86_64"]
python = ["3.12"]
""",
        source="test",
        allow_insecure=True,
    )


PLAIN = loads_manifest(
    """
schema = 1
[package]
name = "plainpkg"
[[index]]
versions = ">=0.29"
platforms = ["macosx_14_0_arm64"]
python = ["3.10", "3.11", "3.12", "3.13", "3.14"]
""",
    source="test",
)


@pytest.fixture(scope="module")
def replica() -> Iterator[PageServer]:
    server = PageServer()
    with server.serving():
        for name, files in PAGES.items():
            pypi_json(server, f"/simple/{name}/", "/files/", files)
        pytorch_html(server, "/whl/cu130/torch/", "/whl/cu130/", _torch_files())
        torch_251 = "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl"
        meta = metadata_text("torch", "2.5.1+cu124", ["filelock", TRITON_251])
        pytorch_html(server, "/whl/cu124/torch/", "/whl/cu124/", [File(torch_251, metadata=meta)])
        yield server


def _preferring(replica: PageServer) -> dict[str, Manifest]:
    """Manifests that state a preference (``preference``, lower first)."""
    pk = f"""
schema = 1
[package]
name = "pk"
[[index]]
versions = ">=1.0"
[[index]]
url = "{replica.url}/simple/community/pk/"
versions = ">=1.0"
preference = 1
"""
    fg = """
schema = 1
[package]
name = "fg"
[[index]]
versions = ">=1.0"
preference = 1
[[index]]
install = "fg-cu12"
versions = ">=1.0"
preference = 0
"""
    return {
        n: loads_manifest(t, source="test", allow_insecure=True)
        for n, t in (("pk", pk), ("fg", fg))
    }


def _manifests(replica: PageServer) -> dict[str, Manifest]:
    built_in = builtin_manifests()
    return {
        **{n: built_in[n] for n in ("triton", "tilelang", "faiss-gpu", "natten")},
        "torch": _torch_manifest(replica.url),
        "plainpkg": PLAIN,
    }


def _client() -> IndexClient:
    return IndexClient(allow_insecure=True, cache=False)


class _ReplicaOnly:
    """The index client for the replica's pages; any other page (natten's find-links
    page, PyTorch's) is not read: the internet is faked as unreachable."""

    def __init__(self, base: str) -> None:
        self._client, self._base = _client(), base

    def pages(self, urls: Sequence[str]) -> Mapping[str, Page | Exception]:
        got = self._client.pages([u for u in urls if u.startswith(self._base)])
        return {u: got.get(u, LookupError(f"{u}: not reachable")) for u in urls}

    def metadata(self, link: Link) -> Metadata:
        return self._client.metadata(link)


def _row(replica: PageServer, link: Link) -> dict[str, object]:
    """A snapshot row of a link, with its metadata text (as make_snapshot keeps it)."""
    row = link_table(link, "https://example.invalid/read")
    if link.core_metadata is not None:
        path = urllib.parse.urlsplit(link.url).path + ".metadata"
        row["metadata"] = replica.responses[path].body.decode()
    return row


def _sources(replica: PageServer) -> dict[str, object]:
    """The replica read online, and offline: a snapshot of the same pages."""
    urls = [f"{replica.url}/simple/{n}/" for n in PAGES]
    urls += [f"{replica.url}/whl/{label}/torch/" for label in ("cu130", "cu124")]
    pages = _client().pages(urls)
    tables = {
        u: [_row(replica, x) for x in p.links]  # type: ignore[union-attr]
        for u, p in pages.items()
    }
    return {
        "online": _ReplicaOnly(replica.url),
        "offline": SnapshotOnly(load_snapshot(dump_snapshot(TODAY, tables))),
    }


def _plan(replica: PageServer, source: object, reqs: Sequence[str], target: str) -> Plan:
    profile = resolve_machine(profile=None, target=target, flags={}, use_cache=False)
    names = [r.split("<")[0].split(">")[0].split("=")[0] for r in reqs]
    manifests: Mapping[str, Manifest] = {**_manifests(replica), **_preferring(replica)}
    done = expand_manifests(
        manifests,
        names,
        source,  # type: ignore[arg-type]
        default_index=f"{replica.url}/simple",
    )
    return resolve(list(reqs), with_notes(done, done.notes), profile, today=TODAY)


def _both(replica: PageServer, reqs: Sequence[str], target: str) -> dict[str, Plan]:
    """The plan online and offline, for the same pages."""
    return {k: _plan(replica, s, reqs, target) for k, s in _sources(replica).items()}


def _pkg(plan: Plan, name: str) -> PackagePlan:
    p = plan.package(name)
    assert p is not None, plan
    return p


def _file(p: PackagePlan) -> str:
    return (p.url or "").rsplit("/", 1)[-1]


def test_newest_version_before_the_more_specific_tag(replica: PageServer) -> None:
    # pip and uv take 3.9.0 (cp312-abi3) over 3.8.0 (cp312-cp312): the newest that fits.
    for how, plan in _both(replica, ["torch", "triton"], B200.format(py="312")).items():
        assert _file(_pkg(plan, "triton")) == f"triton-3.9.0-cp312-abi3-{MANY}.whl", how
        assert _pkg(plan, "torch").version == "2.15.0+cu130", how
        older = [r for r in _pkg(plan, "triton").rejected if r.candidate.startswith("triton 3.8.0")]
        assert [r.failures[0].reason for r in older] == [
            "fits, ranked below the chosen build: the chosen build is a newer version"
        ], how


def test_within_a_version_the_more_specific_tag(replica: PageServer) -> None:
    # On 3.11 the cp311-cp311 file of 3.9.0 is the one that fits (abi3 starts at 3.12).
    for how, plan in _both(replica, ["triton"], B200.format(py="311")).items():
        assert _file(_pkg(plan, "triton")) == f"triton-3.9.0-cp311-cp311-{MANY}.whl", how


def test_the_publishers_build_before_the_community_one(replica: PageServer) -> None:
    for how, plan in _both(replica, ["faiss-gpu"], B200.format(py="312")).items():
        faiss = _pkg(plan, "faiss-gpu")
        assert _file(faiss) == f"faiss_gpu-1.15.1-cp310-abi3-{MANY}.whl", how
        assert faiss.sha256, how
        (community,) = [r for r in faiss.rejected if "faiss-gpu-cu12" in r.candidate]
        assert community.failures[0].reason == (
            "fits, ranked below the chosen build: the manifest prefers faiss-gpu, the "
            "chosen build's distribution"
        ), how


def test_a_newer_py3_wheel_before_an_older_cpython_one(replica: PageServer) -> None:
    for how, plan in _both(replica, ["plainpkg"], "macos-arm64-py312").items():
        chosen = _pkg(plan, "plainpkg")
        assert _file(chosen) == "plainpkg-0.29.2-py3-none-macosx_14_0_arm64.whl", how


def test_cli_offline_triton_takes_the_newest_release(capsys: pytest.CaptureFixture[str]) -> None:
    # The shipped snapshot holds triton 3.8.0 cp312-cp312 and 3.9.0 cp312-abi3.
    code, out, _ = cli(capsys, "plan", "triton", "--offline", "--target", B200.format(py="312"))
    assert code == 0
    assert f"triton-3.9.0-cp312-abi3-{MANY}.whl" in out


@pytest.mark.parametrize("py", ["310", "311", "312", "313", "314"])
def test_an_abi3_wheel_from_cp38_is_planned_on_every_newer_python(
    replica: PageServer, py: str
) -> None:
    for how, plan in _both(replica, ["tilelang"], B200.format(py=py)).items():
        tilelang = _pkg(plan, "tilelang")
        assert _file(tilelang) == f"tilelang-0.1.15-cp38-abi3-{MANY}.whl", how
        assert tilelang.sha256, how


@pytest.mark.parametrize("target", [B200.format(py="312"), H100, "linux-x86_64-py312"])
def test_triton_before_3_3_is_judged_by_the_newest_gpu_its_compiler_knows(
    replica: PageServer, target: str
) -> None:
    # 3.0.0-3.2.0 compile for GPUs up to compute capability 9.0 (Blackwell came in
    # 3.3): refused on a B200, planned on an H100 and without a GPU, online as offline.
    plans = _both(replica, ["triton<=3.2.0,>=3.0.0"], target)
    for how, plan in plans.items():
        triton = _pkg(plan, "triton")
        if target.endswith("sm100"):
            assert triton.action == "error", (how, triton.reason)
            reasons = [f.reason for r in triton.rejected for f in r.failures]
            assert any("compiler knows GPUs up to compute capability 9.0" in r for r in reasons)
            continue
        assert triton.action == "rewrite", (how, triton.reason)
        assert _file(triton) == f"triton-3.2.0-cp312-cp312-{OLD}.whl", how
        assert triton.sha256, how
        assert triton.cause == "fit", how
    assert plans["online"].requirements == plans["offline"].requirements


def test_releases_no_rule_covers_rank_below_those_a_rule_judged(replica: PageServer) -> None:
    for how, plan in _both(replica, ["triton"], B200.format(py="312")).items():
        triton = _pkg(plan, "triton")
        assert _file(triton) == f"triton-3.9.0-cp312-abi3-{MANY}.whl", how
        assert not [n for n in plan.notes if n.startswith("unjudged: ")], how


def test_natten_without_an_nvidia_gpu_gets_the_plain_build(replica: PageServer) -> None:
    # PyPI has natten's sources only: the plain entry is what such a machine needs,
    # left to the installer (it builds the sdist), online as offline.
    for how, plan in _both(replica, ["natten"], "linux-x86_64-py312").items():
        natten = _pkg(plan, "natten")
        assert (natten.action, natten.line) == ("pass", "natten"), (how, natten.reason)
        assert natten.reason.startswith("the plain build from your index fits"), how


def test_a_pinned_release_couples_through_its_marked_requires_dist(replica: PageServer) -> None:
    # torch 2.5.1 requires triton==3.1.0 on Linux x86_64 below Python 3.13: the marker
    # holds on this target, so the plan takes triton 3.1.0 beside it.
    for how, plan in _both(replica, ["torch==2.5.1"], H100).items():
        assert _pkg(plan, "torch").version == "2.5.1+cu124", how
        assert _file(_pkg(plan, "triton")) == f"triton-3.1.0-cp312-cp312-{OLD}.whl", how


def test_a_pinned_pair_that_cannot_go_together_is_refused(replica: PageServer) -> None:
    for how, plan in _both(replica, ["torch==2.5.1", "triton==3.0.0"], H100).items():
        torch = _pkg(plan, "torch")
        assert torch.action == "error", (how, torch.reason)
        # Refused before the installer runs: the user's triton line, the release it
        # rules out and the build of torch that needs it.
        assert "your requirement triton==3.0.0 rules out triton 3.1.0" in torch.hint, how
        (pinned,) = [r for r in torch.rejected if r.candidate.startswith("torch 2.5.1+cu124")]
        assert pinned.failures[0].reason.startswith(f"needs {TRITON_251}; "), how


def test_within_a_version_the_manifests_preference_before_the_tag(replica: PageServer) -> None:
    # The community page's cp312 wheel has the more specific tag; the manifest prefers
    # the publisher's page.
    for how, plan in _both(replica, ["pk"], "linux-x86_64-py312").items():
        pk = _pkg(plan, "pk")
        assert _file(pk) == "pk-1.0-py3-none-any.whl", how
        (other,) = [r for r in pk.rejected if "cp312" in r.candidate]
        assert other.failures[0].reason == (
            "fits, ranked below the chosen build: the manifest prefers the chosen build "
            "among those of this version"
        ), how


def test_the_manifest_can_prefer_another_distribution(replica: PageServer) -> None:
    for how, plan in _both(replica, ["fg"], "linux-x86_64-py312").items():
        fg = _pkg(plan, "fg")
        assert fg.line == "fg-cu12>=1.0", how
        (own,) = [r for r in fg.rejected if r.candidate.startswith("fg 1.1")]
        assert own.failures[0].reason == (
            "fits, ranked below the chosen build: the manifest prefers fg-cu12, the chosen "
            "build's distribution"
        ), how


@pytest.mark.parametrize("value", ['"first"', "-1", "10", "true", "1.5"])
def test_a_bad_preference_names_the_key(value: str) -> None:
    text = f'schema = 1\n[package]\nname = "x"\n[[index]]\nversions = ">=1"\npreference = {value}\n'
    with pytest.raises(
        ManifestError, match=r"index\[0\]\.preference: expected an integer from 0 to 9"
    ):
        loads_manifest(text, source="test")


def test_cli_plans_the_replica_online_then_the_same_pages_offline(
    replica: PageServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command as a user runs it, PyPI and PyTorch's pages read from the replica
    # (mirrors); then --offline, from the page cache the first run filled.
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE")
    argv = ["plan", "triton", "tilelang", "--target", B200.format(py="312")]
    argv += ["--allow-insecure-urls", "--mirror", f"https://pypi.org/simple={replica.url}/simple"]
    argv += ["--mirror", f"https://download.pytorch.org/whl={replica.url}/whl"]
    # The replica's files have the real names but made-up hashes: not the ones the
    # shipped snapshot records for them, which a mirror is refused for without this.
    argv += ["--trust-mirror-hashes"]
    outs = {}
    for how, extra in (("online", []), ("offline", ["--offline"])):
        code, out, err = cli(capsys, *argv, *extra)
        assert code == 0, (how, err)
        outs[how] = out.split("notes:")[0]
        assert f"{replica.url}/files/triton-3.9.0-cp312-abi3-{MANY}.whl" in out, how
        assert f"{replica.url}/files/tilelang-0.1.15-cp38-abi3-{MANY}.whl" in out, how
    assert outs["online"] == outs["offline"]


def test_an_abi3_wheel_on_a_free_threaded_python_is_refused_in_abi3_words(
    replica: PageServer,
) -> None:
    # abi3 does not install on a free-threaded CPython (packaging lists no cp38-abi3 tag
    # for 3.13t); the reason says what the tag means, not "Python 3.8".
    for how, plan in _both(replica, ["tilelang"], "linux-x86_64-py313t-cuda13.0-sm100").items():
        tilelang = _pkg(plan, "tilelang")
        assert "Python 3.8+ (abi3)" in tilelang.reason, how
        (wheel,) = [r for r in tilelang.rejected if r.candidate.startswith("tilelang 0.1.15")]
        assert [f.reason for f in wheel.failures] == [
            "built for Python 3.8+ (abi3); this machine has Python 3.13 (free-threaded)"
        ], how
