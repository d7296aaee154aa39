"""Which requests go through a proxy: as pip decides it (docs/facts.md section 3,
"Proxies as pip reads them"), checked against real pip through a dead proxy."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver_hook.index.errors import PageError
from resolver_hook.index.fetch import Given, Settings, Transport
from tests.installenv import clean_env
from tests.wheelfactory import LoopbackIndex, build_wheel

_PROXY_VARS = (
    "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "PIP_PROXY",
    "all_proxy", "ALL_PROXY",
)  # fmt: skip


def _dead() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_an_empty_lower_case_variable_turns_the_proxy_off() -> None:
    on = Settings.from_env({"HTTP_PROXY": "http://proxy:3128"})
    assert on.proxy_for("http://index.example/") == ("http://proxy:3128", "HTTP_PROXY")
    off = Settings.from_env({"HTTP_PROXY": "http://proxy:3128", "http_proxy": ""})
    assert off.proxy_for("http://index.example/") is None
    # An empty upper-case one does not hide the lower-case one (urllib's two passes).
    kept = Settings.from_env({"https_proxy": "http://p:1", "HTTPS_PROXY": ""})
    assert kept.proxy_for("https://index.example/") == ("http://p:1", "https_proxy")


def test_under_cgi_only_a_lower_case_http_proxy_counts() -> None:
    cgi = {"REQUEST_METHOD": "GET", "HTTP_PROXY": "http://from-a-header:1"}
    assert Settings.from_env(cgi).proxy_for("http://index.example/") is None
    mine = Settings.from_env({**cgi, "http_proxy": "http://p:1"})
    assert mine.proxy_for("http://index.example/") == ("http://p:1", "http_proxy")


@pytest.mark.parametrize(
    ("no_proxy", "url", "bypass"),
    [
        ("10.0.0.0/8", "https://10.1.2.3/simple/", True),
        ("10.0.0.0/8", "https://11.1.2.3/simple/", False),
        ("127.0.0.0/8", "http://127.0.0.1:8080/simple/", True),
        ("10.0.0.0/8", "https://ten.example/simple/", False),  # a name is not an address
        ("10.0.0.0/33", "https://10.1.2.3/simple/", False),  # not a network: no match
        ("10.1.2.3", "https://10.1.2.3/simple/", True),
        ("example.com", "https://index.example.com/simple/", True),
        ("example.com:8443", "https://index.example.com:8443/simple/", True),
    ],
)
def test_no_proxy_entries_as_pip_reads_them(no_proxy: str, url: str, bypass: bool) -> None:
    got = Settings.from_env({"https_proxy": "http://p:1", "http_proxy": "http://p:1",
                             "NO_PROXY": no_proxy}).proxy_for(url)  # fmt: skip
    assert (got is None) == bypass


def test_pips_proxy_setting_in_pips_order_for_every_host(tmp_path: Path) -> None:
    """``--proxy`` in the installer's arguments, then ``PIP_PROXY``, then pip's files;
    a value without a scheme is an http proxy (requests prepends ``http://``)."""
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nproxy = files:3128\n")
    env = {"PIP_CONFIG_FILE": str(conf), "NO_PROXY": "example.org", "https_proxy": "http://e:1"}
    url = "https://index.example.org/simple/"
    assert Settings.from_env(env).proxy_for(url) == ("http://files:3128", f"proxy in {conf}")
    env["PIP_PROXY"] = "http://variable:1"
    assert Settings.from_env(env).proxy_for(url) == ("http://variable:1", "PIP_PROXY")
    flag = Given(proxy=("http://flag:1", "pip's --proxy"))
    assert Settings.from_env(env, flag).proxy_for(url) == ("http://flag:1", "pip's --proxy")


def test_pips_cert_option_beats_its_variable_and_files() -> None:
    env = {"PIP_CERT": "/variable.pem", "SSL_CERT_FILE": "/openssl.pem"}
    assert Settings.from_env(env).cafile == ("/variable.pem", "PIP_CERT")
    flag = Given(cert=("/flag.pem", "pip's --cert"))
    assert Settings.from_env(env, flag).cafile == ("/flag.pem", "pip's --cert")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackIndex]:
    root = tmp_path_factory.mktemp("proxied")
    served = LoopbackIndex(root / "index")
    served.add(build_wheel(root / "wheels", "proxied", "1.0"))
    with served.serving():
        yield served


@pytest.mark.parametrize(
    ("variables", "direct"),
    [
        ({"NO_PROXY": "10.0.0.0/8,127.0.0.0/8"}, True),
        ({"NO_PROXY": "10.0.0.0/8"}, False),
        ({"HTTP_PROXY": "DEAD", "http_proxy": ""}, True),
        ({}, False),  # the control: the dead proxy is used, and fails
        # ALL_PROXY serves a scheme that has no proxy of its own.
        ({"http_proxy": "", "ALL_PROXY": "DEAD"}, False),
        ({"ALL_PROXY": "DEAD", "NO_PROXY": "127.0.0.0/8"}, True),
        # pip's own proxy setting: every host, whatever NO_PROXY or http_proxy say.
        ({"PIP_PROXY": "DEAD", "NO_PROXY": "127.0.0.0/8"}, False),
        ({"PIP_PROXY": "DEAD", "http_proxy": ""}, False),
    ],
)
def test_the_hook_goes_through_the_proxy_exactly_when_pip_does(
    index: LoopbackIndex, tmp_path: Path, variables: dict[str, str], direct: bool
) -> None:
    env = {k: v for k, v in clean_env(tmp_path).items() if k not in _PROXY_VARS}
    dead = _dead()
    env["http_proxy"] = dead
    env.update({k: dead if v == "DEAD" else v for k, v in variables.items()})
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "0",
         "--timeout", "5", "-d", str(tmp_path / "got"), "-i", index.simple_url,
         "proxied==1.0"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (pip.returncode == 0) == direct, pip.stdout + pip.stderr
    transport = Transport(allow_insecure=True, timeout=10, env=env)
    if direct:
        assert transport.get(f"{index.simple_url}proxied/").status == 200
    else:
        with pytest.raises(PageError, match="cannot reach the proxy"):
            transport.get(f"{index.simple_url}proxied/")
