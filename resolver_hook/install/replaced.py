"""The files of the distributions an optional install would replace, kept to put back.

An ``--optional`` package that fails to install or import is rolled back: what it added
is removed and what it replaced is put back
(:func:`resolver_hook.install.optional.optional_install`).
Putting back by installing ``name==version`` again needs an index that still serves that
version: a build installed from a file, from an index no longer configured, or yanked
and deleted since, is then lost. So before the optional package is installed, the
installer's dry run names what it would install; each installed distribution it would
replace with another version has its files (as its ``RECORD`` lists them) kept in the
session's private folder, hard-linked where the file system allows (a removal then
frees nothing), copied otherwise; a rollback copies them back where they were.

What cannot be kept is said, with why (the dry run failed, a distribution lists no
files): the rollback then tries the index, and the warning names what it could not
put back.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.install.backends import Installer
from resolver_hook.process.proc import Runner, capture

__all__ = ["Kept", "keep_replaced", "put_back"]

# Seconds the dry run and the listing of files may take.
DRY_RUN_TIMEOUT = 600.0
LIST_TIMEOUT = 120.0

# Each named distribution's files, as absolute paths (None: it lists none, no RECORD).
_FILES_SCRIPT = (
    "import importlib.metadata as m, json, os, sys\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        d = m.distribution(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        continue\n"
    "    fs = d.files\n"
    "    out[name] = None if fs is None else [os.path.abspath(str(d.locate_file(f))) for f in fs]\n"
    "print(json.dumps(out))\n"
)


@valueclass(kw_only=False, frozen=False)
class Kept:
    """What was kept: per distribution its version and (original path, kept path)
    pairs; per distribution that could not be kept, why."""

    files: dict[str, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def keep_replaced(
    installer: Installer,
    argv: Sequence[str],
    before: Mapping[str, str],
    folder: Path,
    env: Mapping[str, str],
    *,
    run: Runner = capture,
) -> Kept:
    """Ask the installer's dry run (``argv``: the install, without ``--dry-run``) what it
    would install, and keep the files of each installed distribution (``before``: name
    -> version) it would replace with another version."""
    # The proof's readers, imported by an optional install only: an unchecked install
    # (--no-proof) imports this module and never reads a dry run.
    from resolver_hook.install.proof import read_pip_report, read_uv_dry_run

    kept = Kept()
    n = len(installer.command)
    report = folder / "optional-report.json"
    flags = ["--dry-run", *(["--report", str(report)] if installer.tool == "pip" else [])]
    done = run([*argv[:n], *flags, *argv[n:]], timeout=DRY_RUN_TIMEOUT, env=env)
    if not done.ok:
        why = f"its dry run failed ({done.reason()})"
        return Kept(missing={"*": why})
    try:
        if installer.tool == "pip":
            resolution = read_pip_report(report.read_text(encoding="utf-8", errors="replace"))
        else:
            resolution = read_uv_dry_run(done.stdout + done.stderr)
    except OSError as exc:
        return Kept(missing={"*": f"its dry run wrote no report ({exc.strerror or exc})"})
    except OperationalError as exc:
        return Kept(missing={"*": f"its dry run could not be read ({exc.message})"})
    replaced = {
        r.name: before[r.name]
        for r in resolution.items
        if r.name in before and before[r.name] != r.version
    }
    if not replaced:
        return kept
    listed = run([installer.python, "-c", _FILES_SCRIPT, *replaced], timeout=LIST_TIMEOUT)
    try:
        files = json.loads(listed.stdout) if listed.ok else None
    except ValueError:
        files = None
    if not isinstance(files, dict):
        why = (
            f"their files could not be listed ({listed.reason() if not listed.ok else 'not JSON'})"
        )
        return Kept(missing=dict.fromkeys(replaced, why))
    store = folder / "replaced"
    for name, version in replaced.items():
        paths = files.get(name)
        if not isinstance(paths, list):
            kept.missing[name] = "it lists no files (no RECORD)"
            continue
        pairs: list[tuple[str, str]] = []
        try:
            for i, path in enumerate(p for p in paths if isinstance(p, str)):
                if not os.path.isfile(path):
                    continue  # a listed file that is not there (a .pyc never written)
                dest = store / name / str(i)
                dest.parent.mkdir(parents=True, exist_ok=True)
                _link_or_copy(path, dest)
                pairs.append((path, str(dest)))
        except OSError as exc:
            kept.missing[name] = f"its files could not be kept ({exc.strerror or exc})"
            continue
        kept.files[name] = (version, pairs)
    return kept


def _link_or_copy(src: str, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def put_back(
    kept: Kept, names: Sequence[str], *, exists: Callable[[str], bool] = os.path.exists
) -> dict[str, str]:
    """Copy the kept files of ``names`` back where they were (the replacing version
    removed first by the caller); name -> why, for each that could not be."""
    failed: dict[str, str] = {}
    for name in names:
        entry = kept.files.get(name)
        if entry is None:
            continue
        try:
            for original, copy in entry[1]:
                os.makedirs(os.path.dirname(original), exist_ok=True)
                if exists(original):
                    os.unlink(original)  # the other version left it: ours goes back
                shutil.copy2(copy, original)
        except OSError as exc:
            failed[name] = f"its files could not be copied back ({exc.strerror or exc})"
    return failed
