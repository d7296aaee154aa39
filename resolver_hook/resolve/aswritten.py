"""The user's own lines judged by the plan's rules (cause ``as-written``): a wheel named
by URL or path, and an index line that names a flavour page."""

from __future__ import annotations

from collections.abc import Mapping

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from resolver_hook.ground.valueclass import replace
from resolver_hook.manifest.model import Flavour, IndexFlavour, Manifest
from resolver_hook.reqfile import ReqEntry, ReqFile
from resolver_hook.resolve.model import (
    PackagePlan,
    Rejection,
    flavour_platforms,
    os_arch_of,
    pinned_release,
)
from resolver_hook.resolve.rules import Machine, flavour_failures, version_ok
from resolver_hook.resolve.words import (
    as_written_refusal,
    as_written_runs_reason,
    index_line_held_note,
    index_line_refusal,
    unjudged_reason,
)

__all__ = [
    "judge_index_lines",
    "judge_wheel",
    "nearest_that_runs",
]


def judge_wheel(e: ReqEntry, manifest: Manifest, m: Machine) -> PackagePlan | None:
    """A wheel path or URL for a package with a manifest, judged by the same rules as
    the planner's own choices (issue 40, item 4): its file name's version and local
    label name the builds it is (``torch-2.12.0+cu130-...-manylinux_2_28_x86_64.whl``:
    the cu130 range, on Linux x86_64). Refused (action ``error``) when none of them runs
    here, naming every rule that failed and the nearest build that runs; kept, saying
    why, when one does; UNJUDGED on an accelerated machine when the rules do not know
    its label. None: not a wheel, or nothing to say (no accelerator)."""
    where = (e.url or e.text).split("#", 1)[0].split("?", 1)[0]
    filename = where.rstrip("/").rsplit("/", 1)[-1]
    if "%" in filename:  # what unquote changes (urllib.parse: ~2 ms to import, with ipaddress)
        from urllib.parse import unquote

        filename = unquote(filename)
    if not filename.endswith(".whl"):
        return None
    try:
        _, version, _, tags = parse_wheel_filename(filename)
    except ValueError:
        return None
    places = {os_arch_of(t.platform) for t in tags}
    builds = [f for f in manifest.flavours if _is_build_of(f, version, places)]
    # A file a page lists under that very name is judged by its own entry.
    builds = [f for f in builds if getattr(f, "filename", None) == filename] or builds
    name = NormalizedName(e.name or e.text)
    if not builds:
        if not m.runs_accelerated(manifest):
            return None
        label = "" if version.local else " (no local label)"
        missing = (
            f"what {filename} needs: {manifest.display_name} {version}{label} "
            "is not a build its manifest's rules describe"
        )
        return PackagePlan(
            action="pass",
            cause="unjudged",
            reason=unjudged_reason(manifest, missing),
            unjudged=missing,
            line=e.as_line(),
            name=name,
            requested=e.text,
            where=e.where,
        )
    failures = [flavour_failures(f, m, SpecifierSet(), manifest)[0] for f in builds]
    fits = [f for f, fails in zip(builds, failures, strict=True) if not fails]
    if fits:
        return PackagePlan(
            action="pass",
            cause="as-written",
            reason=as_written_runs_reason(filename, fits[0]),
            line=e.as_line(),
            name=name,
            requested=e.text,
            where=e.where,
        )
    runs = nearest_that_runs(manifest, m, version)
    return PackagePlan(
        action="error",
        cause="as-written",
        reason=as_written_refusal(filename, manifest, runs),
        rejected=tuple(
            Rejection(candidate=f.describe(), failures=tuple(fails), where=f.where)
            for f, fails in zip(builds, failures, strict=True)
        ),
        name=name,
        requested=e.text,
        where=e.where,
    )


def _is_build_of(f: Flavour, version: Version, places: set[tuple[str, str]]) -> bool:
    """Whether ``f`` describes a build of ``version`` (its local label included) for
    one of ``places`` (the wheel's OS and architecture)."""
    if isinstance(f, IndexFlavour) and f.versions is not None:
        if f.version.local != version.local:
            return False
        if not f.versions.contains(Version(version.public), prereleases=True):
            return False
    elif f.version != version:
        return False
    mine = {os_arch_of(x) for x in flavour_platforms(f)}
    return not mine or bool(mine & places)


def nearest_that_runs(manifest: Manifest, m: Machine, version: Version | None) -> str | None:
    """The build of ``manifest`` nearest to ``version`` that runs here (the same release
    with another label, else the first newer release, else the newest older one), as a
    pin; None when none does."""
    runs = []
    for f in manifest.flavours:
        if isinstance(f, IndexFlavour) and f.versions is not None:
            continue  # a range names no release
        if f.unjudged is not None:
            continue  # planned by its tags alone: whether it runs here is not known
        if not flavour_failures(f, m, SpecifierSet(), manifest)[0]:
            runs.append(f.version)
    if not runs:
        return None
    if version is None:
        return f"{manifest.display_name}=={max(runs)}"
    asked = Version(version.public)
    newer = sorted(v for v in runs if Version(v.public) >= asked)
    best = newer[0] if newer else max(runs)
    return f"{manifest.display_name}=={best}"


_INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "-f", "--find-links")


def judge_index_lines(
    reqs: ReqFile,
    packages: list[PackagePlan],
    manifests: Mapping[str, Manifest],
    m: Machine,
    notes: list[str],
) -> list[PackagePlan]:
    """An index or find-links line that names a flavour page (``--extra-index-url
    https://download.pytorch.org/whl/cu130``) judged with the same rules as the plan's
    own choices (issue 40, item 4): for each package of the plan with builds on that
    page, when none of them runs here, a package the plan pins is said to be held to
    its pin (a note), and one left to the installer is refused, naming the rule that
    failed and the nearest build that runs."""
    # A plain build the rules judged to run here (cause "fit") is the installer's own
    # right choice, whatever page a line names beside it.
    lines = [o for o in reqs.options if o.option in _INDEX_OPTIONS and o.value]
    if not lines:
        return packages
    by_name = {canonicalize_name(k): v for k, v in manifests.items()}
    out = []
    for p in packages:
        man = by_name.get(p.name) if p.action == "rewrite" or p.cause != "fit" else None
        verdict = None
        for o in lines if man is not None else ():
            assert man is not None
            assert o.value is not None
            verdict = _page_verdict(o, man, p, m) or verdict
        if verdict is None:
            out.append(p)
            continue
        o, fails, runs = verdict
        what = f"{o.where}: {o.option} {o.value} names {man.display_name}'s page" if man else ""
        if p.constraint or p.action == "error":
            notes.append(index_line_held_note(what, fails, p.constraint or p.reason))
            out.append(p)
            continue
        out.append(
            replace(
                p,
                action="error",
                cause="as-written",  # the user's own line: no change of machine is hinted
                reason=index_line_refusal(what, runs),
                rejected=tuple(fails),
                line=None,
            )
        )
    return out


def _page_verdict(
    o: ReqEntry, man: Manifest, p: PackagePlan, m: Machine
) -> tuple[ReqEntry, list[Rejection], str | None] | None:
    """When every build of ``man`` on the page ``o`` names (within the user's
    specifier) fails on this machine: the line, those builds' failures and the nearest
    build that runs; None when one runs or the page is none of ``man``'s."""
    assert o.value is not None
    base = o.value.rstrip("/") + "/"
    # A page's own entries (page form) and the files read from it (their URLs are
    # under the page's folder on download.pytorch.org).
    on_page = [f for f in man.flavours if ((f.url or "").rstrip("/") + "/").startswith(base)]
    if not on_page:
        return None
    spec = SpecifierSet()
    if p.requested:
        try:
            spec = Requirement(p.requested).specifier
        except ValueError:
            spec = SpecifierSet()
    mine = [f for f in on_page if version_ok(spec, f)] or on_page
    fails = [(f, flavour_failures(f, m, SpecifierSet(), man)[0]) for f in mine]
    if any(not x for _, x in fails):
        return None
    nearest = nearest_that_runs(man, m, pinned_release(spec))
    rejected = [
        Rejection(candidate=f.describe(), failures=tuple(x), where=f.where) for f, x in fails
    ]
    return o, rejected, nearest
