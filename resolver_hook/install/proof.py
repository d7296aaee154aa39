"""What the installer would install, read before it installs anything, and judged.

pip's ``install --dry-run --report FILE`` (pip 22.2 and newer) writes the resolution it
would install as JSON: each item's name, version, the file (``download_info``: URL and
``archive_info.hashes``), whether the user asked for it (``requested``) and its
``requires_dist`` (docs/facts.md section 3, "The installer's resolution"). uv's
``pip install --dry-run`` prints one ``+ name==version`` (or ``+ name @ url``) line per
package it would install. This module reads both into a :class:`Resolution`, judges it
against the plan (:func:`judge`: every package that has a manifest must resolve to the
file or version the plan approved; packages without a manifest are not judged), reads
an installer's conflict explanation (:func:`conflicts`) and writes the resolved set as
exact requirement lines (:func:`pinned_lines`), hash-pinned where every file's sha256 is
known, so that the install that follows cannot diverge from what was judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urldefrag

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from resolver_hook.errors import OperationalError
from resolver_hook.ground.cache import load_json
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_INSTALL_REPORT_BYTES

if TYPE_CHECKING:
    from resolver_hook.manifest import Manifest
    from resolver_hook.resolve import PackagePlan, Plan

__all__ = [
    "REPORT_PIP",
    "Conflict",
    "Pin",
    "Problem",
    "Resolution",
    "Resolved",
    "Twins",
    "conflicts",
    "judge",
    "pinned_lines",
    "pip_reports",
    "read_pip_report",
    "read_uv_dry_run",
    "requirers",
    "unplanned",
]

# pip wrote the first installation report in 22.2 (docs/facts.md section 3).
REPORT_PIP = (22, 2)

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
YOUR_REQUIREMENT = "your requirement"  # who pulls a package the user asked for
_SPEC = r"(?:[<>=!~]=?=?|===)[^\s,;]+(?:,\s*(?:[<>=!~]=?=?)[^\s,;]+)*"


@valueclass
class Resolved:
    """One package the installer would install."""

    name: NormalizedName
    version: str
    url: str | None = None  # the file (pip: download_info.url; uv: a direct URL only)
    sha256: str | None = None
    direct: bool = False  # a URL requirement or constraint chose it
    requested: bool = False  # pip: the user asked for it (not only a dependency)
    editable: bool = False
    local: bool = False  # a folder or file on this machine
    requires: tuple[str, ...] = ()  # Requires-Dist (pip only)

    def label(self) -> str:
        return f"{self.name} {self.version}"


@valueclass
class Resolution:
    """What the installer would install, as it said so."""

    tool: str
    items: tuple[Resolved, ...] = ()
    environment: Mapping[str, str] | None = None  # pip: the marker environment

    def get(self, name: str) -> Resolved | None:
        key = canonicalize_name(name)
        return next((r for r in self.items if r.name == key), None)


@valueclass
class Problem:
    """A package with a manifest that would not resolve to what the plan approved."""

    name: NormalizedName
    got: str  # "ktil 0.1.3"
    approved: str  # "ktil 0.1.4" or a file URL
    pulled_by: tuple[str, ...] = ()  # "app 1.0 (requires demo-gpu==1.0+cu126)", "you"

    def text(self) -> str:
        who = f", pulled in by {'; '.join(self.pulled_by)}" if self.pulled_by else ""
        return f"{self.got} would be installed{who}, but the plan approved {self.approved}"


@valueclass
class Conflict:
    """``who`` requires ``name`` ``spec`` (from an installer's conflict explanation)."""

    who: str  # "app 1.0", "ktil>=0.1.4"
    name: NormalizedName
    spec: str  # "==1.0+cu126", "<2.13"

    @property
    def who_name(self) -> NormalizedName:
        """The requiring project's name ("app" of "app==1.0")."""
        m = re.match(_NAME, self.who)
        return canonicalize_name(m.group(0) if m else self.who)

    def text(self) -> str:
        return f"{self.who} requires {self.name}{self.spec}"


@valueclass
class Twins:
    """Distributions of one family (they install the same import package) that would
    be installed together: ``keep`` is the one the plan chose (or the user asked for),
    ``others`` the rest, each with who pulls it in."""

    keep: Resolved
    others: tuple[tuple[Resolved, tuple[str, ...]], ...]
    imports: str = ""

    @property
    def dependents(self) -> tuple[NormalizedName, ...]:
        """The packages whose Requires-Dist pulls the others in (pip's report names them)."""
        found = (re.match(_NAME, w) for _, who in self.others for w in who if w != YOUR_REQUIREMENT)
        return tuple(dict.fromkeys(canonicalize_name(m.group(0)) for m in found if m))

    def text(self) -> str:
        what = f"the same import package, {self.imports}," if self.imports else "the same files"
        labels = [r.label() for r in (self.keep, *(r for r, _ in self.others))]
        names = f"{', '.join(labels[:-1])} and {labels[-1]}"
        pulled = "; ".join(
            f"{r.name} is pulled in by {'; '.join(who)}"
            if who
            else f"{r.name} is pulled in by a dependency (the installer did not say which)"
            for r, who in self.others
        )
        every = "both" if len(self.others) == 1 else "all"
        return (
            f"{names} would {every} be installed: they install {what} and the one "
            f"unpacked last overwrites the other's files; {pulled}"
        )


# --- reading what the installer said -------------------------------------------------


def pip_reports(version_text: str) -> tuple[int, int] | None:
    """The pip version in ``pip --version`` output when it writes ``--report``; None if not."""
    m = re.match(r"pip (\d+)\.(\d+)", version_text.strip())
    if m is None:
        return None
    found = int(m.group(1)), int(m.group(2))
    return found if found >= REPORT_PIP else None


def _bad(why: str) -> OperationalError:
    return OperationalError(
        f"cannot read pip's installation report: {why}",
        hint="run again with --no-proof to install without checking pip's resolution first",
    )


def read_pip_report(text: str) -> Resolution:
    """Read pip's ``--report`` JSON (versions "0" and "1" of the format)."""
    try:
        data = load_json(text, limit=MAX_INSTALL_REPORT_BYTES)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    if not isinstance(data, dict) or str(data.get("version")) not in ("0", "1"):
        found = data.get("version") if isinstance(data, dict) else None
        raise _bad(f"report version {found!r}, not 0 or 1")
    install = data.get("install")
    if not isinstance(install, list):
        raise _bad("no 'install' list")
    items = [_pip_item(i, item) for i, item in enumerate(install)]
    env = data.get("environment")
    environment = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else None
    return Resolution(tool="pip", items=tuple(items), environment=environment)


def _pip_item(i: int, item: Any) -> Resolved:
    if not isinstance(item, dict):
        raise _bad(f"install[{i}] is not an object")
    meta, info = item.get("metadata"), item.get("download_info")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise _bad(f"install[{i}].metadata.name is missing")
    if not isinstance(meta.get("version"), str):
        raise _bad(f"install[{i}].metadata.version is missing")
    info = info if isinstance(info, dict) else {}
    url = info.get("url") if isinstance(info.get("url"), str) else None
    archive = info.get("archive_info") if isinstance(info.get("archive_info"), dict) else None
    folder = info.get("dir_info") if isinstance(info.get("dir_info"), dict) else None
    vcs = info.get("vcs_info") if isinstance(info.get("vcs_info"), dict) else None
    if vcs is not None and url and isinstance(vcs.get("vcs"), str):
        # PEP 610 keeps the VCS apart from the URL: the line names both, and the commit.
        commit = vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{commit}" if isinstance(commit, str) else "")
    sha = None
    if archive is not None:
        hashes = archive.get("hashes")
        if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
            sha = hashes["sha256"].lower()
        elif isinstance(archive.get("hash"), str) and archive["hash"].startswith("sha256="):
            sha = archive["hash"][len("sha256=") :].lower()  # the older, single field
    requires = meta.get("requires_dist")
    return Resolved(
        name=canonicalize_name(meta["name"]),
        version=meta["version"],
        url=url,
        sha256=sha,
        direct=bool(item.get("is_direct")) or vcs is not None,
        requested=bool(item.get("requested")),
        editable=bool(folder and folder.get("editable")),
        local=folder is not None or bool(url and url.startswith("file:")),
        requires=tuple(r for r in requires if isinstance(r, str))
        if isinstance(requires, list)
        else (),
    )


# uv: " + name==1.0", " + name @ https://...", " + name==0.1 (from file:///...)". Both
# patterns are kept as text, compiled when first used (re's cache): a pip install never
# reads uv's lines.
_UV_LINE = (
    r"^\s*\+\s+(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:==(?P<version>\S+?)(?:\s+\(from\s+(?P<source>\S+)\))?|\s+@\s+(?P<url>\S+))\s*$"
)
_WHEEL_VERSION = r"^[^-/]+-(?P<version>[^-/]+)-[^/]*\.whl$"


def read_uv_dry_run(text: str) -> Resolution:
    """Read the ``+`` lines of ``uv pip install --dry-run`` (what it would install)."""
    items = []
    for line in text.splitlines():
        m = re.match(_UV_LINE, line)
        if m is None:
            continue
        name = canonicalize_name(m.group("name"))
        # ``name @ URL``, or ``name==version (from URL)``: how uv 0.13.9 shows a URL's
        # distribution it has in its cache (docs/facts.md section 3).
        where = m.group("url") or m.group("source")
        if where is None:
            items.append(Resolved(name=name, version=m.group("version")))
            continue
        url, fragment = urldefrag(where)
        sha = fragment[len("sha256=") :].lower() if fragment.startswith("sha256=") else None
        version = m.group("version")
        if version is None:
            w = re.match(_WHEEL_VERSION, unquote(url.rsplit("/", 1)[-1]))
            version = w.group("version") if w else ""
        local = url.startswith("file:")
        direct = m.group("url") is not None or not local  # a folder "(from file:...)": no
        items.append(
            Resolved(name=name, version=version, url=url, sha256=sha, direct=direct, local=local)
        )
    return Resolution(tool="uv", items=tuple(items))


# pip: "    app 1.0 depends on demo-gpu==1.0+cu126"
# uv:  "Because app==1.0 depends on demo-gpu==1.0+cu126 and ...", "all versions of app
#       depend on ...", "ktil>=0.1.4 depends on ktorch<2.13, we can conclude ..."
# Compiled on first use (re's own cache): only a failed or retried run reads conflicts.
_CONFLICT = (
    rf"(?:all versions of |only )?(?P<who>{_NAME}(?: [0-9][^\s]*|{_SPEC})?) "
    rf"depends? on (?P<name>{_NAME})(?P<spec>{_SPEC})"
)


def conflicts(output: str) -> list[Conflict]:
    """Every "X depends on NAME SPEC" an installer printed while failing, once each."""
    found: dict[tuple[str, str, str], Conflict] = {}
    for m in re.finditer(_CONFLICT, output):
        spec = m.group("spec").rstrip(".")
        c = Conflict(who=m.group("who"), name=canonicalize_name(m.group("name")), spec=spec)
        found.setdefault((c.who, c.name, c.spec), c)
    return list(found.values())


# --- judging ------------------------------------------------------------------------


def _approved_words(p: PackagePlan) -> str:
    if p.url is not None and p.wheel:
        return f"{p.name} {p.version} ({p.url})"
    if p.versions:
        return f"{p.name}{p.versions}"
    return f"{p.name} {p.entry_version}"


def _approves(p: PackagePlan, r: Resolved) -> bool:
    """Whether the plan's choice for ``p`` is the file or version ``r``."""

    if p.wheel:
        if p.sha256 and r.sha256:
            return p.sha256.lower() == r.sha256
        return (
            r.url is not None and p.url is not None and urldefrag(r.url)[0] == urldefrag(p.url)[0]
        )
    try:
        got = Version(r.version)
    except InvalidVersion:
        return False
    if p.versions:
        try:
            return SpecifierSet(p.versions).contains(got, prereleases=True)
        except InvalidSpecifier:
            return False
    # A plain build left to the installer is held to the version its entry describes.
    return p.entry_version is not None and got == Version(p.entry_version)


def _judged(p: PackagePlan | None) -> bool:
    """A plan entry the installer's choice is held to: a build chosen for this machine."""
    if p is None or p.flavour is None:
        return False
    return p.action == "rewrite" or (p.action == "pass" and p.cause == "fit")


def _requirements(resolution: Resolution) -> Iterator[tuple[Resolved, Requirement]]:
    """Every Requires-Dist entry of the resolution that applies in its environment."""
    for r in resolution.items:
        for text in r.requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if _holds(req, resolution):
                yield r, req


def requirers(resolution: Resolution, name: str) -> list[str]:
    """Who pulls ``name`` in: "your requirement" (pip: requested) and each item whose
    Requires-Dist names it, with that requirement ("app 1.0 (requires demo-gpu==...)")."""
    key = canonicalize_name(name)
    out = []
    target = resolution.get(key)
    if target is not None and target.requested:
        out.append(YOUR_REQUIREMENT)
    for r, req in _requirements(resolution):
        if canonicalize_name(req.name) == key:
            out.append(f"{r.label()} (requires {req})")
    return out


def judge(resolution: Resolution, plan: Plan, manifests: Mapping[str, Manifest]) -> list[Problem]:
    """Every package with a manifest that resolves to a file or version the plan did not
    approve. Packages without a manifest, and those the plan leaves to the installer
    (a version its manifest does not describe, a source build), are not judged."""
    names = _manifest_names(manifests)
    # A flavour that is another distribution (onnxruntime as onnxruntime-gpu) is held
    # to the plan under that name; the plain one beside it is a twin (checked.py).
    other = {p.distribution: p for p in plan.packages if p.distribution != p.name}
    problems = []
    p: PackagePlan | None
    for r in resolution.items:
        if r.name in other:
            p = other[r.name]
        elif r.name not in names or r.name in {q.name for q in other.values()}:
            continue
        else:
            p = plan.package(r.name)
        if p is None or not _judged(p) or _approves(p, r):
            continue
        problems.append(
            Problem(
                name=r.name,
                got=r.label() if r.version else f"{r.name} from {r.url}",
                approved=_approved_words(p),
                pulled_by=tuple(requirers(resolution, r.name)),
            )
        )
    return problems


def unplanned(
    resolution: Resolution, plan: Plan, manifests: Mapping[str, Manifest]
) -> dict[NormalizedName, list[str]]:
    """Packages with a manifest that arrive only as a dependency the plan never saw:
    name -> the requirements on it in the resolution's Requires-Dist (pip; none for uv)."""
    names = _manifest_names(manifests)
    out: dict[NormalizedName, list[str]] = {
        r.name: [] for r in resolution.items if r.name in names and plan.package(r.name) is None
    }
    for _, req in _requirements(resolution):
        key = canonicalize_name(req.name)
        if key in out and req.url is None and str(req.specifier):
            out[key].append(str(req.specifier))
    return out


def _holds(req: Requirement, resolution: Resolution) -> bool:
    """Whether a Requires-Dist entry applies in the resolution's environment (extras are
    not known: a requirement behind an extra is taken to apply)."""
    if req.marker is None or resolution.environment is None:
        return True
    env = dict(resolution.environment)
    return any(req.marker.evaluate({**env, "extra": x}) for x in ("", *_extras_of(req)))


def _extras_of(req: Requirement) -> list[str]:
    return re.findall(r"extra\s*==\s*[\"']([^\"']+)[\"']", str(req.marker))


def _manifest_names(manifests: Mapping[str, Manifest]) -> frozenset[NormalizedName]:
    return frozenset(canonicalize_name(k) for k in manifests)


# --- installing exactly what was judged -------------------------------------------------


def pinned_lines(
    resolution: Resolution,
    *,
    option_lines: Sequence[str] = (),
    known: Mapping[str, Sequence[str]] | None = None,
    files: Mapping[str, Path] | None = None,
    always: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The resolved set as requirement lines: ``name==version``, ``name @ url`` for a
    direct or local file, ``-e URL`` for an editable; each with ``--hash`` when every
    file's hash is known (pip's and uv's hash-checking is all or nothing), none otherwise.
    ``known``: ``sha256:hex`` hashes by name from elsewhere (the user's own ``--hash``
    lines; uv's dry run names no hashes). ``option_lines`` (index options from the user's
    requirement files) come first. ``files``: wheels already downloaded (and read), by
    name: their line names that very file. ``always``: hashes by name that go on their
    line even when others have none (uv checks each hash it is given)."""
    known = known or {}
    always = always or {}
    files = files or {}

    def hashes(r: Resolved) -> list[str]:
        return [f"sha256:{r.sha256}"] if r.sha256 else list(known.get(r.name, ()))

    # A wheel downloaded (and read) is a file of known sha256: pip and uv check it too.
    hashed = all(
        hashes(r) and not r.editable and (not r.local or r.name in files) for r in resolution.items
    )
    lines = list(option_lines)
    for r in resolution.items:
        if r.editable and r.url:
            lines.append(f"-e {r.url}")
            continue
        if r.name in files:
            # The fragment travels into the installed direct_url.json (uv records
            # no hash of its own there): 'doctor' finds the scan by it.
            fragment = f"#sha256={r.sha256}" if r.sha256 else ""
            line = f"{r.name} @ {files[r.name].resolve().as_uri()}{fragment}"
        elif (r.direct or r.local) and r.url:
            fragment = f"#sha256={r.sha256}" if r.sha256 and "#" not in r.url else ""
            line = f"{r.name} @ {r.url}{fragment}"
        else:
            line = f"{r.name}=={r.version}"
        if hashed:
            line += "".join(f" --hash={h}" for h in hashes(r))
        elif r.name in always:
            line += "".join(f" --hash={h}" for h in always[r.name])
        lines.append(line)
    return lines


class Pin(Protocol):
    """One of the plan's pins (:attr:`~resolver_hook.resolve.Plan.pins`), as the words for
    a failed install read it: a :class:`~resolver_hook.resolve.PackagePlan`, or on a
    replay the fields a stored plan kept (:data:`~resolver_hook.install.launch.PIN_FIELDS`)."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def find_links(self) -> str | None: ...
    @property
    def url(self) -> str | None: ...


def same_build_pins(
    found: Iterable[Conflict], pins: Iterable[Pin]
) -> tuple[list[Conflict], list[Conflict]]:
    """Split conflicts on the plan's pins (:attr:`~resolver_hook.resolve.Plan.pins`): (a
    dependency's exact pin on another build of the very version the plan pins: what uv's
    ``--overrides`` exist for; everything else on a pinned package: a version range or
    another version, never overridden)."""
    pinned = {p.name: p.version for p in pins}
    same: list[Conflict] = []
    other: list[Conflict] = []
    for c in found:
        version = pinned.get(c.name)
        if version is None:
            continue
        if c.who_name == c.name:
            continue  # the package's own line, not a dependency's
        spec = c.spec[2:] if c.spec.startswith("==") and "," not in c.spec else None
        try:
            same_version = spec is not None and Version(spec).public == Version(version).public
        except InvalidVersion:
            same_version = False
        if same_version:
            same.append(c)
        else:
            other.append(c)
    return same, other


def override_lines(plan: Plan, names: Iterable[str]) -> list[str]:
    """The plan's constraint lines for ``names`` only (uv's --overrides file)."""
    keys = {canonicalize_name(n) for n in names}
    return [p.constraint for p in plan.packages if p.name in keys and p.constraint]
