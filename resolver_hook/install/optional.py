"""``--optional``: one package installed after the main set, import-checked, and rolled
back when it fails to install or import (:func:`optional_install`), what it replaced put
back from the files kept before (:mod:`resolver_hook.install.replaced`), else from the index.

Imported by the install session only when ``--optional`` is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from resolver_hook.errors import OperationalError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.install.args import InstallArgs, requirement_name
from resolver_hook.install.backends import Installer
from resolver_hook.install.launch import run_installer
from resolver_hook.install.replaced import Kept, keep_replaced, put_back
from resolver_hook.process.proc import Runner, capture

if TYPE_CHECKING:
    from resolver_hook.resolve import Plan

__all__ = ["OptionalOutcome", "installed_all", "installed_versions", "optional_install"]


# Each name with every version whose metadata is installed (more than one: a version an
# installer could not remove, beside the one it installed).
_LIST_SCRIPT = (
    "import importlib.metadata as m, json\n"
    "found = {}\n"
    "for d in m.distributions(): found.setdefault(d.metadata['Name'], []).append(d.version)\n"
    "print(json.dumps(found))\n"
)
# Import every top-level module the distribution installed.
_IMPORT_SCRIPT = (
    "import importlib, importlib.metadata as m, sys\n"
    "d = m.distribution(sys.argv[1])\n"
    "tops = set()\n"
    "for f in d.files or []:\n"
    "    top = f.parts[0] if f.parts else ''\n"
    "    if not top or top == '..' or top.endswith(('.dist-info', '.data', '.pth')):\n"
    "        continue\n"
    "    if len(f.parts) > 1 or top.endswith('.py'):\n"
    "        tops.add(top[:-3] if top.endswith('.py') else top)\n"
    "for top in sorted(tops):\n"
    "    importlib.import_module(top)\n"
)


# Seconds an optional package's import check may take: an import that initialises a
# GPU can block on a driver that does not answer.
IMPORT_TIMEOUT = 300.0
LIST_TIMEOUT = 120.0


@valueclass
class OptionalOutcome:
    ok: bool
    reason: str = ""
    restored: str = ""


def installed_versions(python: str, run: Runner = capture) -> dict[str, str]:
    """Canonical name -> version of every distribution in ``python``'s environment (of
    a name installed twice, the version read last, as before)."""
    return {n: vs[-1] for n, vs in installed_all(python, run).items()}


def installed_all(python: str, run: Runner = capture) -> dict[str, list[str]]:
    """Canonical name -> every version of it whose metadata is in ``python``'s
    environment."""
    done = run([python, "-c", _LIST_SCRIPT], timeout=LIST_TIMEOUT)
    if not done.ok:
        raise OperationalError(f"cannot list the packages of {python}: {done.reason()}")
    try:
        found = json.loads(done.stdout)
    except ValueError:
        raise OperationalError(f"cannot list the packages of {python}: not JSON") from None
    out: dict[str, list[str]] = {}
    for k, vs in found.items():
        out.setdefault(canonicalize_name(k), []).extend(str(v) for v in vs)
    return out


def optional_install(
    installer: Installer,
    parsed: InstallArgs,
    plan: Plan,
    requirement: str,
    *,
    folder: Path,
    env: dict[str, str],
    out: Callable[[str], None],
) -> OptionalOutcome:
    """Install one optional package; on failure to install or import, roll it back."""
    name = requirement_name(requirement) or requirement
    p = plan.package(name)
    if p is not None and p.action == "error":
        return OptionalOutcome(ok=False, reason=p.reason)
    line = p.line if p is not None and p.action == "rewrite" and p.line else requirement
    options = list(parsed.options)
    before = installed_versions(installer.python)
    argv = installer.argv([*options, line], installer.plan_options(plan, folder, env))
    # What it would replace is kept first: the index may no longer serve it.
    kept = keep_replaced(installer, argv, before, folder, env)
    code, _ = run_installer(argv, env, tee=False, out=out)
    if code == 0:
        check = capture([installer.python, "-c", _IMPORT_SCRIPT, name], timeout=IMPORT_TIMEOUT)
        if check.timed_out:
            reason = f"the import did not finish in {IMPORT_TIMEOUT:g} s"
        elif check.ok:
            return OptionalOutcome(ok=True)
        else:
            last = (check.stderr.strip().splitlines() or [check.error or "import failed"])[-1]
            reason = f"installed but does not import: {last}"
    else:
        reason = f"{installer.tool} exited with {code}"
    return OptionalOutcome(
        ok=False, reason=reason, restored=_roll_back(installer, options, before, kept, env, out)
    )


def _roll_back(  # noqa: PLR0917 - what the optional install changed, and how to undo it
    installer: Installer,
    options: list[str],
    before: dict[str, str],
    kept: Kept,
    env: dict[str, str],
    out: Callable[[str], None],
) -> str:
    every = installed_all(installer.python)
    after = {n: vs[-1] for n, vs in every.items()}
    # A version the installer could not remove (no RECORD) beside the one it installed:
    # the files are the new one's. Neither removed (that would take the new files and
    # leave the old metadata over nothing) nor said to be back.
    # Only one the dry run said it would replace (or all, when it could not be read).
    replaced = kept.missing.keys() | kept.files.keys()
    doubled = {
        n: vs
        for n, vs in every.items()
        if n in before and len(set(vs)) > 1 and (n in replaced or "*" in replaced)
    }
    added = sorted(n for n in after if n not in before)
    changed = sorted(n for n in before if after.get(n) != before[n] and n not in doubled)
    removable = sorted(set(added) | {n for n in changed if n in after})
    if removable:
        run_installer(installer.uninstall_argv(removable), env, tee=False, out=out)
    # Its own files first (kept before the install); the index for the rest.
    failed = put_back(kept, changed)
    pins = [f"{n}=={before[n]}" for n in changed if n not in kept.files or n in failed]
    if pins:
        run_installer(installer.argv([*options, "--no-deps", *pins], []), env, tee=False, out=out)
    # Said from what is installed now, not from what was asked: a put-back or a removal
    # that failed is named as failed, with what is there instead.
    now = installed_versions(installer.python) if removable or changed else after
    gone = [n for n in added if n not in now]
    stuck = [n for n in added if n in now]
    back = [n for n in changed if now.get(n) == before[n]]
    lost = [
        f"{n} {before[n]} ({_not_back(n, now, kept, failed)})" for n in changed if n not in back
    ]
    words = [f"removed {', '.join(gone)}"] if gone else []
    words += [f"put back {', '.join(f'{n} {before[n]}' for n in back)}"] if back else []
    words += [f"could not remove {', '.join(stuck)}"] if stuck else []
    lost += [
        f"{n} {before[n]} ({' and '.join(sorted(set(vs)))} are installed side by side: the "
        f"install put its files over {n} {before[n]}, whose files were not kept"
        f"{': ' + why if (why := kept.missing.get(n) or kept.missing.get('*')) else ''})"
        for n, vs in sorted(doubled.items())
    ]
    words += [f"could not put back {', '.join(lost)}"] if lost else []
    return "; ".join(words)


def _not_back(name: str, now: Mapping[str, str], kept: Kept, failed: Mapping[str, str]) -> str:
    """Why ``name`` is not back at its version: what is there, and why neither its kept
    files nor the index brought it back."""
    there = f"{now[name]} is installed" if name in now else "not installed"
    why = failed.get(name) or kept.missing.get(name) or kept.missing.get("*")
    kept_words = f"its files were not kept: {why}" if why else "its files were not kept"
    return f"{there}; {kept_words}; no index served it either"
