"""One settings value: the command line and the environment, combined once per command.

Every use case (plan, explain, lock, install, sync, env, enable) takes a
:class:`Settings` made when the command starts, instead of reading flags and
``os.environ`` where it needs them. What each field means:

- ``env``: the environment the command runs in, as it was when the command started
  (the installer's and the page client's too: proxies, pip's ``cert``, netrc are read
  from it when a connection is first opened, :mod:`resolver_hook.index.fetch`);
- ``allow_insecure``: ``--allow-insecure-urls`` or ``RESOLVER_HOOK_ALLOW_INSECURE_URLS``
  (loopback http and ``file:`` URLs accepted, :mod:`resolver_hook.manifest.urls`);
- ``offline``: ``--offline`` or ``RESOLVER_HOOK_OFFLINE``; ``refresh``: ``--refresh``;
- ``mirrors``: ``RESOLVER_HOOK_MIRRORS``, then ``--mirror`` (:mod:`resolver_hook.index.mirrors`);
  ``trust_mirror_hashes``: ``--trust-mirror-hashes`` (a mirror's file whose sha256 is not
  the shipped snapshot's for that file is pinned, with a note, instead of refused:
  :mod:`resolver_hook.inventory.sources`);
- ``timeout``: ``--timeout`` or ``RESOLVER_HOOK_TIMEOUT`` (seconds, default 10), one
  meaning everywhere: the most one index page or metadata file may take in all, and
  the most any one wait for the server may take (a file downloaded whole to hash it:
  that plus a second per 128 KiB; :class:`resolver_hook.index.fetch.Transport`);
- ``indexes``: the index settings (:class:`IndexSettings`): the command's own
  ``--index-url``, ``--extra-index-url`` and ``--find-links`` (``lock``), and the user's
  index, the one the installer reads by default, with where it was set
  (:func:`resolver_hook.index.userindex.user_index`: the installer's own arguments, its
  environment variables, then its configuration files, in its order); a plan reads a
  flavour on the default index there, not on pypi.org, and the lock resolves the rest
  with the flags and the environment (:mod:`resolver_hook.lock.indexes`); ``given``:
  pip's ``--cert`` and ``--proxy`` among the installer's arguments, which the page
  client takes before ``PIP_CERT``/``PIP_PROXY`` and pip's files (those are read when a
  connection is first opened: a plan the page cache answers reads no pip.conf,
  :mod:`resolver_hook.index.fetch`).

A flag turns a setting on; so does a variable set to ``1``, ``true``, ``yes``, ``on``,
``y`` or ``t`` (any case: the spellings pip and uv take for their own yes/no variables).
``0``, ``false``, ``no``, ``off``, ``n``, ``f`` or empty leave it off; any other value is
a usage error (:func:`env_flag`, the one reader of our yes/no variables).

``resolver-hook uv pip install --offline`` (and ``UV_OFFLINE`` on, or ``offline = true`` in
uv's uv.toml, as uv reads them) plans
offline too: the installer is told to open no connection, so the plan opens none
(:func:`installer_offline`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from resolver_hook.errors import UsageError
from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.index.mirrors import Mirror, mirrors_from
from resolver_hook.index.pipconfig import Given, PipFiles
from resolver_hook.index.userindex import UserIndex, UvConfig, no_index, user_index
from resolver_hook.limits import MAX_NETWORK_SECONDS, NETWORK_DEADLINE
from resolver_hook.manifest import ENV_INSECURE

__all__ = [
    "ENV_OFFLINE",
    "ENV_TIMEOUT",
    "IndexSettings",
    "InstallerSettings",
    "Settings",
    "combine",
    "env_flag",
    "installer_offline",
    "seconds_problem",
    "yes_no",
]

ENV_OFFLINE = "RESOLVER_HOOK_OFFLINE"
ENV_TIMEOUT = "RESOLVER_HOOK_TIMEOUT"


def seconds_problem(text: str) -> str | None:
    """What is wrong with ``text`` as a timeout (a positive, finite number of seconds, at
    most MAX_NETWORK_SECONDS: 0 would wait forever), or None."""
    try:
        value = float(text)
    except ValueError:
        return f"{text!r} is not a number of seconds"
    if not value > 0:
        return f"{text!r}: the timeout must be more than 0 seconds"
    if not value <= MAX_NETWORK_SECONDS:  # also inf; nan failed above
        return f"{text!r}: the timeout must be at most {MAX_NETWORK_SECONDS:g} seconds"
    return None


# pip's strtobool and uv's clap BoolishValueParser take these, in any case (docs/facts.md
# section 3, "Yes/no variables").
_YES = frozenset(("1", "true", "yes", "on", "y", "t"))
_NO = frozenset(("0", "false", "no", "off", "n", "f"))


def yes_no(text: str) -> bool | None:
    """``text`` as pip and uv read a yes/no value: True, False, or None (not one)."""
    value = text.strip().lower()
    return True if value in _YES else False if value in _NO else None


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """Whether our yes/no variable ``name`` is on in ``env`` (:func:`yes_no`; empty or
    unset: off). Any other value is a UsageError: a ``True`` that silently meant off
    would be worse than a refusal."""
    text = env.get(name, "")
    found = yes_no(text) if text.strip() else False
    if found is None:
        raise UsageError(
            f"{name}={text!r} is not a yes/no value",
            hint=f"set {name} to 1, true, yes or on (0, false, no, off or empty: off)",
        )
    return found


def installer_offline(
    tool: str, options: Sequence[str], env: Mapping[str, str], uv: UvConfig | None = None
) -> str | None:
    """Why the installer itself is offline, or None: uv's ``--offline`` among the
    ``uv pip install`` options (a later ``--no-offline`` undoes it), else ``UV_OFFLINE``
    as uv reads it (a value uv refuses is uv's to refuse), else ``offline`` in uv's
    configuration files (``uv``: those files; default: read here). pip has no such option:
    its ``--no-index`` still reads ``--find-links`` pages, the plan's flavour pages
    among them, so it does not make the plan offline."""
    if tool != "uv":
        return None
    flags = [o for o in options if o in ("--offline", "--no-offline")]
    if flags:
        return "uv's --offline" if flags[-1] == "--offline" else None
    if env.get("UV_OFFLINE", "").strip():
        return "UV_OFFLINE" if yes_no(env["UV_OFFLINE"]) else None
    return (uv or UvConfig(env)).offline()


@valueclass
class InstallerSettings:
    """The installer a command runs, and what its own arguments say of the pages."""

    tool: str  # "pip" or "uv"
    index_url: str | None = None  # the default index they name
    no_index: bool = False  # --no-index
    cert: str | None = None  # pip's --cert
    proxy: str | None = None  # pip's --proxy
    isolated: bool = False  # pip's --isolated: no user pip.conf, no PIP_* variable
    config_file: str | None = None  # uv's --config-file
    no_config: bool = False  # uv's --no-config

    def uv_env(self, env: Mapping[str, str]) -> Mapping[str, str]:
        """``env`` as uv's configuration files are found under it with these arguments:
        uv's ``--config-file`` takes the place of ``UV_CONFIG_FILE`` (the flag wins),
        ``--no-config`` that of ``UV_NO_CONFIG`` (seen with uv 0.13.9, docs/facts.md
        section 3)."""
        if self.config_file:
            return {**env, "UV_CONFIG_FILE": self.config_file}
        return {**env, "UV_NO_CONFIG": "1"} if self.no_config else env


@valueclass
class IndexSettings:
    """The indexes a command was given (its flags) and the user's default index."""

    index_url: str | None = None  # --index-url
    extra_index_urls: tuple[str, ...] = ()  # --extra-index-url
    find_links: tuple[str, ...] = ()  # --find-links
    default: UserIndex | None = None  # the installer's default index (None: PyPI)
    installer: str | None = None  # whose order it was found in (None: plan's and lock's)
    no_index: str | None = None  # where the installer was told to read no index
    given: Given = field(
        default_factory=Given
    )  # pip's --cert and --proxy in the installer's arguments


@valueclass
class Settings:
    """What a command was asked to do it with (see the module's docstring)."""

    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    allow_insecure: bool = False
    offline: bool = False
    refresh: bool = False
    mirrors: tuple[Mirror, ...] = ()
    trust_mirror_hashes: bool = False
    timeout: float = NETWORK_DEADLINE
    indexes: IndexSettings = IndexSettings()


def combine(
    env: Mapping[str, str],
    *,
    allow_insecure_urls: bool = False,
    offline: bool = False,
    refresh: bool = False,
    mirror: Iterable[str] | None = None,
    timeout: float | None = None,
    index_url: str | None = None,
    trust_mirror_hashes: bool = False,
    extra_index_urls: Sequence[str] = (),
    find_links: Sequence[str] = (),
    installer: InstallerSettings | None = None,
    record: Recorder = NOWHERE,
    uv: UvConfig | None = None,
) -> Settings:
    """The settings of a command run in ``env`` with these flags. ``mirror``: the
    ``--mirror`` values of a command that reads index pages (None: it reads none, so
    neither ``RESOLVER_HOOK_MIRRORS`` nor ``RESOLVER_HOOK_TIMEOUT`` is read). A mirror
    that is not ``UPSTREAM=MIRROR`` under the URL policy, or a timeout variable that is
    no number of seconds, is a UsageError. ``installer``: the installer a command runs,
    whose default index the plan reads (None: the order of a command that runs no one
    installer). Files read are declared to ``record``. ``uv``: uv's files as ``installer``
    finds them in ``env``, where the caller has them already (it asked
    :func:`installer_offline`); default: read here, when needed."""
    insecure = allow_insecure_urls or env_flag(env, ENV_INSECURE)
    tool = installer.tool if installer else None
    own = installer or InstallerSettings(tool="")
    mirrors = () if mirror is None else mirrors_from(env, mirror, allow_insecure=insecure)
    # Read once, when no_index or user_index needs them.
    uv = uv or UvConfig(own.uv_env(env), record=record)
    pip = PipFiles(env, record=record, isolated=own.isolated)
    if timeout is None and mirror is not None and env.get(ENV_TIMEOUT):
        problem = seconds_problem(env[ENV_TIMEOUT])
        if problem is not None:
            raise UsageError(
                f"{ENV_TIMEOUT}: {problem}", hint="set it to a number of seconds, or unset it"
            )
        timeout = float(env[ENV_TIMEOUT])
    return Settings(
        env=MappingProxyType(dict(env)),
        allow_insecure=insecure,
        offline=offline or env_flag(env, ENV_OFFLINE),
        refresh=refresh,
        mirrors=mirrors,
        trust_mirror_hashes=trust_mirror_hashes,
        timeout=NETWORK_DEADLINE if timeout is None else timeout,
        indexes=IndexSettings(
            index_url=index_url,
            extra_index_urls=tuple(extra_index_urls),
            find_links=tuple(find_links),
            installer=tool,
            no_index=None
            if mirror is None
            else no_index(
                env,
                tool=tool,
                flag=own.no_index,
                record=record,
                uv=uv,
                isolated=own.isolated,
                pip=pip,
            ),
            default=None
            if mirror is None
            else user_index(
                env,
                tool=tool,
                given=own.index_url,
                flag=index_url,
                record=record,
                uv=uv,
                isolated=own.isolated,
                pip=pip,
            ),
            given=Given(
                cert=(own.cert, "pip's --cert") if own.cert else None,
                proxy=(own.proxy, "pip's --proxy") if own.proxy else None,
                isolated=own.isolated,
            ),
        ),
    )
