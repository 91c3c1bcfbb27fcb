"""Kubernetes' regex library: find and findAll with Go RE2 semantics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_apiserver.cel.library.regex import translate


@pytest.mark.parametrize(("expression", "expected"), [
    ("'abc 123'.find('[0-9]+')", "123"), ("'abc 123'.find('xyz')", ""),
    ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]), ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
    ("'123 abc 456'.findAll('[0-9]+', 0)", []), ("'123 abc 456'.findAll('xyz')", []),
    ("'baaab'.findAll('a*')", ["", "aaa", ""]),  # Go skips the empty match right after "aaa"
    ("'abc\\n'.find('c$')", ""), ("'abc'.find('c\\\\z')", "c"), ("'a\\nb'.find('(?m)a$')", "a"),
    ("'x1٣'.findAll('\\\\d')", ["1"]), ("'k8s-io'.find('(?<name>[a-z]+)')", "k"),
    ("'a.b'.find('\\\\Q.\\\\E')", "."), ("'ab12'.find('[[:digit:]]+')", "12"),
])
def test_find(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


def test_illegal_regex(err: Callable[..., str]) -> None:
    assert err("'abc'.find('[')").startswith("Illegal regex: error parsing regexp: ")
    assert err("'abc'.find(1)") == "no such overload"


def test_translation() -> None:
    assert translate("^a$") == r"^a\Z"
    assert translate("[$]") == "[$]"
    assert translate("[]a]") == r"[\]a]"
