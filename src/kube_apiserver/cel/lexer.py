"""A small CEL tokenizer. The interpreter parses expressions itself; this lexer only serves the static
passes it lacks (undeclared references, the `.?` optional syntax, cost estimation), which need to
see identifiers, calls and brackets without being fooled by string literals."""

from __future__ import annotations

import re
from typing import NamedTuple

IDENT, NUMBER, STRING, PUNCT = "ident", "number", "string", "punct"


class Token(NamedTuple):
    kind: str
    text: str
    pos: int  # offset in the source


# One alternative per token class; strings first so quotes never split into punctuation.
_STRING = r"""(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
_NUMBER = r"(?:0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?[uU]?)"
_TOKEN = re.compile(
    rf"(?P<ws>\s+|//[^\n]*)|(?P<string>{_STRING})|(?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)"
    rf"|(?P<number>{_NUMBER})|(?P<punct>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{{}}=&|`])",
    re.DOTALL,
)


def tokenize(source: str) -> list[Token]:
    """Tokens of `source`; characters the grammar does not know become single PUNCT tokens so
    that a later parse by the interpreter reports them."""
    tokens: list[Token] = []
    pos, end = 0, len(source)
    while pos < end:
        match = _TOKEN.match(source, pos)
        if match is None:
            tokens.append(Token(PUNCT, source[pos], pos))
            pos += 1
            continue
        kind = match.lastgroup or PUNCT
        text = match.group()
        if kind != "ws":
            tokens.append(Token(kind, text, pos))
        pos += len(text)
    return tokens


def line_column(source: str, pos: int) -> tuple[int, int]:
    """1-based line and 0-based column (in code points) of an offset, as cel-go's Location."""
    line = source.count("\n", 0, pos) + 1
    start = source.rfind("\n", 0, pos) + 1
    return line, pos - start


def matching(tokens: list[Token], open_index: int) -> int:
    """Index of the bracket closing tokens[open_index], or len(tokens) when unbalanced."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for index in range(open_index, len(tokens)):
        text = tokens[index].text
        if tokens[index].kind != PUNCT:
            continue
        if text in pairs:
            stack.append(pairs[text])
        elif stack and text == stack[-1]:
            stack.pop()
            if not stack:
                return index
    return len(tokens)
