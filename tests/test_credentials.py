"""resolver_hook.ground.credentials: credentials split off, kept by host, shown as ``****@``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from resolver_hook.ground import credentials as creds
from resolver_hook.ground import userinfo
from resolver_hook.manifest.urls import url_problem


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pw@host/simple/", "https://****@host/simple/"),
        ("https://user:p@ss@host:8443/x", "https://****@host:8443/x"),  # "@" unencoded
        ("https://token@host/x?a=b@c", "https://****@host/x?a=b@c"),  # "@" in the query
        ("https://host/a@b", "https://host/a@b"),  # "@" in the path: no userinfo
        (
            "--index-url=https://u:t@h/s/ -f http://v:w@[::1]:1/",
            "--index-url=https://****@h/s/ -f http://****@[::1]:1/",
        ),
        ("no url here: user@example.org", "no url here: user@example.org"),
    ],
)
def test_redact_text_shows_every_userinfo_as_stars(text: str, shown: str) -> None:
    assert userinfo.redact_text(text) == shown
    assert userinfo.has_credentials(text) == (shown != text)
    assert not userinfo.has_credentials(shown)


def test_a_text_is_searched_for_userinfo_as_the_whole_pattern_finds_it() -> None:
    # The quick look for "://...@" first never changes an answer: texts made of the
    # pieces a URL's userinfo is found by (and missed by) agree with the pattern alone.
    import random

    pieces = [
        "https",
        "://",
        "u",
        ":",
        "pw",
        "@",
        "****",
        "/",
        "?",
        "#",
        " ",
        "\n",
        "9",
        "h.x",
        "-",
    ]
    rng = random.Random(51)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))
        found = [m.group(2) for m in re.finditer(userinfo._USERINFO, text)]
        assert userinfo.redact_text(text) == re.sub(userinfo._USERINFO, userinfo._SHOWN, text)
        assert userinfo.has_credentials(text) == any(
            g != "****" and not g.endswith(":****") for g in found
        )


def test_pips_own_redaction_is_not_a_credential() -> None:
    assert not userinfo.has_credentials("Looking in indexes: https://user:****@host/simple/")


def test_keep_splits_them_off_and_keeps_them_for_the_host_only() -> None:
    assert creds.keep("https://us%40er:p%3Aw@Host.Example:8443/simple/") == (
        "https://Host.Example:8443/simple/"
    )
    assert creds.kept("https://host.example:8443/other/") == ("us@er", "p:w")
    assert creds.kept("https://host.example/simple/") is None  # another port
    creds.forget()
    assert creds.kept("https://host.example:8443/") is None


def test_with_nothing_kept_no_url_has_credentials_not_even_one_that_does_not_parse() -> None:
    """Each page read asks for its host's credentials: with none kept (the rule), the
    answer is None without the URL parsed, for any URL; once kept, its host's."""
    creds.forget()
    assert creds.kept("https://host.example/simple/") is None
    assert creds.kept("https://[::1/simple/") is None  # urlsplit: ValueError
    creds.keep("https://u:p@host.example/simple/")
    assert creds.kept("https://host.example/other/") == ("u", "p")
    assert creds.kept("https://[::1/simple/") is None
    creds.forget()


def test_a_refused_url_is_named_without_its_password() -> None:
    problem = url_problem("http://user:hunter2@files.example.org/x.whl")
    assert (
        problem
        == "'http://****@files.example.org/x.whl' is plain http: only https URLs are allowed"
    )


def test_the_installer_netrc_holds_what_only_the_hook_was_given(tmp_path: Path) -> None:
    """An entry per host kept here that the user's netrc lacks (the index's own host
    left to the installer), the user's file whole after them; a credential a netrc cannot
    hold is refused up front, naming the host and not the password."""
    from resolver_hook.errors import UsageError

    own = tmp_path / ".netrc"
    own.write_text("machine known.example login me password mine\n")
    env = {"HOME": str(tmp_path)}
    assert creds.installer_netrc(env, tool="pip") is None  # nothing kept
    creds.keep("https://tok@pages.example:8443/links/")
    creds.keep("https://u:p@known.example/links/")
    creds.keep("https://i:j@index.example/simple/")
    got = creds.installer_netrc(env, tool="pip", given=("index.example",))
    assert got == (
        "machine pages.example login tok\nmachine known.example login me password mine\n",
        ("pages.example",),
    )
    creds.keep("https://user:two%20words@spaced.example/")
    with pytest.raises(UsageError) as caught:
        creds.installer_netrc(env, tool="uv")
    assert "spaced.example cannot be handed to uv" in caught.value.message
    assert "two words" not in str(caught.value) + caught.value.message


def test_a_word_the_command_line_does_not_take_is_named_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """argparse names what it did not take: a URL there is shown as ``****@``."""
    from resolver_hook.cli import main

    with pytest.raises(SystemExit) as done:
        main(["plan", "torch", "--index-url", "https://user:hunter2@index.example/simple"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "hunter2" not in err
    assert "unrecognized arguments: --index-url https://****@index.example/simple" in err
