"""The tokenizer behind the static passes: string literals and comments never leak tokens."""

from __future__ import annotations

from kube_apiserver.cel.lexer import IDENT, NUMBER, STRING, line_column, matching, tokenize


def kinds(source: str) -> list[tuple[str, str]]:
    return [(token.kind, token.text) for token in tokenize(source)]


def test_strings_hide_their_content() -> None:
    assert kinds("'a.?b' + \"x(y\" + r'\\d' + b'\\xff' + '''t\n'q'''") == [
        (STRING, "'a.?b'"), ("punct", "+"), (STRING, '"x(y"'), ("punct", "+"), (STRING, "r'\\d'"),
        ("punct", "+"), (STRING, "b'\\xff'"), ("punct", "+"), (STRING, "'''t\n'q'''"),
    ]


def test_escaped_quotes_stay_inside_strings() -> None:
    assert kinds(r"'it\'s' == x") == [(STRING, r"'it\'s'"), ("punct", "=="), (IDENT, "x")]


def test_comments_and_numbers() -> None:
    assert kinds("a // c.all(\n + 0x1F + 1.5e3 + 2u") == [
        (IDENT, "a"), ("punct", "+"), (NUMBER, "0x1F"), ("punct", "+"), (NUMBER, "1.5e3"), ("punct", "+"),
        (NUMBER, "2u"),
    ]


def test_positions_and_brackets() -> None:
    tokens = tokenize("f(a[1], {b: (c)})\n  .x")
    assert matching(tokens, 1) == len(tokens) - 3
    assert line_column("f(a)\n  .x", 7) == (2, 2)
