"""Planning cost does not grow with history: the checks made cheap stay exact."""

from __future__ import annotations

import pytest

from resolver_hook.manifest.urls import FORBIDDEN_URL_CHARACTERS, url_problem

# Every character a URL may not hold, ASCII or not, each where the whole-URL check of
# an ASCII URL and the walk of any other URL must both find it (first, by position).
BAD = [*FORBIDDEN_URL_CHARACTERS, " ", "\t", "\n", "\x00", "\x7f", "\x85", "\u00a0", "\u3000"]


@pytest.mark.parametrize("ch", BAD)
def test_each_bad_character_is_named(ch: str) -> None:
    problem = url_problem(f"https://x.org/a{ch}b")
    assert problem is not None
    assert f"contains {ch!r}: percent-encode it" in problem


def test_the_first_bad_character_is_named() -> None:
    problem = url_problem("https://x.org/\u00e9/a$b c")
    assert problem is not None
    assert "contains '$'" in problem


@pytest.mark.parametrize(
    "url", ["https://download.pytorch.org/whl/cu128/torch/", "https://x.org/caf\u00e9/a%20b"]
)
def test_clean_urls_pass(url: str) -> None:
    assert url_problem(url) is None
