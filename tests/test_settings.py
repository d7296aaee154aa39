"""The one settings value: flags and the environment combined once, at the command's start."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.index.fetch import Given
from resolver_hook.install.args import parse_install_args
from resolver_hook.limits import NETWORK_DEADLINE
from resolver_hook.settings import InstallerSettings, Settings, combine


def test_flags_or_variables_turn_settings_on() -> None:
    assert combine({}) == Settings()
    on = {"RESOLVER_HOOK_OFFLINE": "1", "RESOLVER_HOOK_ALLOW_INSECURE_URLS": "yes"}
    got = combine(on)
    assert (got.offline, got.allow_insecure) == (True, True)
    got = combine({"RESOLVER_HOOK_OFFLINE": "0"}, offline=True, allow_insecure_urls=True)
    assert (got.offline, got.allow_insecure) == (True, True)
    assert combine({"RESOLVER_HOOK_OFFLINE": "0"}).offline is False


def test_environment_is_a_copy_taken_once() -> None:
    env = {"HOME": "/h"}
    got = combine(env)
    env["HOME"] = "/other"
    assert got.env["HOME"] == "/h"
    with pytest.raises(TypeError):
        got.env["HOME"] = "/x"  # type: ignore[index]


def test_mirrors_from_the_environment_then_the_flags() -> None:
    env = {"RESOLVER_HOOK_MIRRORS": "https://a.example/=https://m.example/a/"}
    got = combine(env, mirror=["https://b.example/=https://m.example/b/"])
    assert [m.upstream for m in got.mirrors] == ["https://a.example", "https://b.example"]
    # A command that reads no index page does not read (nor refuse) the mirrors.
    assert combine({"RESOLVER_HOOK_MIRRORS": "nonsense"}).mirrors == ()
    with pytest.raises(UsageError):
        combine({"RESOLVER_HOOK_MIRRORS": "nonsense"}, mirror=[])


def test_timeout_and_index_url() -> None:
    assert combine({}).timeout == NETWORK_DEADLINE
    assert combine({"RESOLVER_HOOK_TIMEOUT": "5"}, mirror=[]).timeout == 5.0
    assert combine({"RESOLVER_HOOK_TIMEOUT": "5"}, mirror=[], timeout=2.0).timeout == 2.0
    # A command that reads no page does not read (nor refuse) the variable.
    assert combine({"RESOLVER_HOOK_TIMEOUT": "soon"}).timeout == NETWORK_DEADLINE
    with pytest.raises(UsageError, match="RESOLVER_HOOK_TIMEOUT: 'soon'"):
        combine({"RESOLVER_HOOK_TIMEOUT": "soon"}, mirror=[])
    got = combine({}, timeout=5.0, index_url="https://i.example/simple/")
    assert (got.timeout, got.indexes.index_url) == (5.0, "https://i.example/simple/")


def test_pips_cert_and_proxy_in_the_installers_arguments_reach_the_page_client() -> None:
    """``resolver-hook pip install --cert C --proxy P ...``: the plan's pages are read
    with them, as pip reads its own (they beat PIP_CERT, PIP_PROXY and pip's files)."""
    parsed = parse_install_args("pip", ["--cert", "/c.pem", "--proxy=p:1", "torch"])
    installer = InstallerSettings(tool="pip", cert=parsed.cert, proxy=parsed.proxy)
    given = combine({}, installer=installer).indexes.given
    assert given == Given(cert=("/c.pem", "pip's --cert"), proxy=("p:1", "pip's --proxy"))
    # uv has neither option: a value after the name is uv's to refuse.
    assert parse_install_args("uv", ["--proxy", "p:1", "torch"]).proxy is None
    assert combine({}).indexes.given == Given()


def test_pips_files_are_read_once_for_the_index_and_no_index(tmp_path: Path) -> None:
    """A command's default index and its no-index come from one reading of pip's files:
    a pip.conf that changes between the two answers (here, while uv's files are asked
    for no-index) neither gives the index of another text than the one declared nor
    makes the run refuse to be stored."""
    from resolver_hook.ground.record import Recorder
    from resolver_hook.index.userindex import UvConfig

    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://first.example/simple\n")
    env = {"HOME": str(tmp_path), "PIP_CONFIG_FILE": str(conf), "UV_NO_CONFIG": "1"}

    class Rewriting(UvConfig):
        def no_index(self) -> str | None:
            conf.write_text("[global]\nindex-url = https://second.example/simple\n")
            return None

    record = Recorder(cwd=str(tmp_path))
    got = combine(env, mirror=[], record=record, uv=Rewriting(env))
    assert got.indexes.default is not None
    assert got.indexes.default.url == "https://first.example/simple"
    assert record.refused is None
