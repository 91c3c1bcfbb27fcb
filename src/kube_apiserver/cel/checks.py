"""Static passes over an expression's tokens, standing in for what cel-go's parser and checker do
and the interpreter does not: undeclared variables and functions are compile errors (reported as
cel-go's checker words them), constant regex/duration/timestamp arguments are validated, the optional
syntax `x.?f` / `x[?k]` is rewritten into calls."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from kube_apiserver.cel.errors import issue
from kube_apiserver.cel.interpreter import interpreter
from kube_apiserver.cel.lexer import IDENT, NUMBER, PUNCT, STRING, Token, matching
from kube_apiserver.cel.library import FUNCTIONS, KNOWN, NAMESPACES, optional

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
KEYWORDS = frozenset({"true", "false", "null", "in"})
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "type",
                        "null_type", "dyn", "optional_type"})


@dataclass
class Analysis:
    """What the token pass learned about an expression."""

    functions: set[str] = field(default_factory=set)  # registered library functions it calls
    variables: set[str] = field(default_factory=set)  # free identifiers
    issues: list[tuple[int, str]] = field(default_factory=list)  # (offset, message)


def _text(tokens: list[Token], index: int) -> str:
    return tokens[index].text if 0 <= index < len(tokens) and tokens[index].kind == PUNCT else ""


def bound_names(tokens: list[Token]) -> set[str]:
    """Comprehension variables: `.all(x, ...)`, `.map(x, ...)`, ..."""
    names = set()
    for i in range(1, len(tokens) - 3):
        if (tokens[i].text in MACROS and _text(tokens, i - 1) == "." and _text(tokens, i + 1) == "("
                and tokens[i + 2].kind == IDENT and _text(tokens, i + 3) == ","):
            names.add(tokens[i + 2].text)
    return names


def _two_variable(tokens: list[Token], i: int) -> bool:
    """`.all(k, v, ...)`: cel-go's two-variable comprehensions, which the interpreter cannot run."""
    return (i + 5 < len(tokens) and _text(tokens, i - 1) == "." and _text(tokens, i + 1) == "("
            and tokens[i + 2].kind == IDENT and _text(tokens, i + 3) == "," and tokens[i + 4].kind == IDENT
            and _text(tokens, i + 5) == ",")


def analyze(tokens: list[Token], declared: Collection[str] | None) -> Analysis:
    """Calls and free identifiers; `declared` None skips the check of variables."""
    result = Analysis()
    bound = bound_names(tokens)
    skip: set[int] = set()
    for i, token in enumerate(tokens):
        if token.kind != IDENT or i in skip:
            continue
        # `a.?b`: the optional selection is a member too
        member = _text(tokens, i - 1) == "." or (_text(tokens, i - 1) == "?" and _text(tokens, i - 2) == ".")
        if _text(tokens, i + 1) == "(":
            _call(tokens, i, member, result)
        elif not member and (qualified := _qualified(tokens, i)):
            if qualified in FUNCTIONS:
                result.functions.add(qualified)
            skip.add(i + 2)
        elif not member and token.text not in KEYWORDS | TYPE_NAMES | bound:
            result.variables.add(token.text)
            if declared is not None and token.text not in declared:
                result.issues.append((token.pos, f"undeclared reference to '{token.text}' (in container '')"))
    return result


def _qualified(tokens: list[Token], i: int) -> str | None:
    """`sets.contains(`: the known qualified function name called at tokens[i], if any."""
    if tokens[i].text not in NAMESPACES or _text(tokens, i + 1) != "." or _text(tokens, i + 3) != "(":
        return None
    name = f"{tokens[i].text}.{tokens[i + 2].text}"
    return name if name in KNOWN else None


def _call(tokens: list[Token], i: int, member: bool, result: Analysis) -> None:
    name = tokens[i].text
    if name in MACROS and _two_variable(tokens, i):
        result.issues.append((tokens[i + 1].pos, "two-variable comprehensions are not supported"))
    elif name in FUNCTIONS:
        result.functions.add(name)
    elif name not in KNOWN:
        result.issues.append((tokens[i + 1].pos, f"undeclared reference to '{name}' (in container '')"))


# ---- literal arguments validated at compile time (cel-go ValidateRegexLiterals & co.) ----

_LITERAL_CHECKS = {"matches": "''.matches({})", "duration": "duration({})", "timestamp": "timestamp({})"}


def literal_issues(tokens: list[Token]) -> list[tuple[int, str]]:
    """`x.matches('(')`, `duration('1x')`, `timestamp('now')`: constant arguments that cannot work."""
    found = []
    for i, token in enumerate(tokens[:-3]):
        probe = _LITERAL_CHECKS.get(token.text) if token.kind == IDENT else None
        member = _text(tokens, i - 1) == "."
        if (probe is None or member != (token.text == "matches") or _text(tokens, i + 1) != "("
                or tokens[i + 2].kind != STRING or _text(tokens, i + 3) != ")"):
            continue
        try:
            interpreter().compile(probe.format(tokens[i + 2].text)).execute()
        except Exception:  # any failure of the literal is the issue cel-go reports
            found.append((tokens[i + 2].pos, f"invalid {token.text} argument"))
    return found


def report(source: str, issues: list[tuple[int, str]]) -> str:
    """cel-go's Issues.String(): every issue in source order."""
    return "\n".join(issue(source, pos, message) for pos, message in sorted(issues))


# ---- the optional syntax ----

_OPERAND_END = {IDENT, NUMBER, STRING}


def rewrite_optionals(source: str, tokens: list[Token]) -> str | None:
    """`a.?b` -> `a._optSelect('b')`, `a[?k]` -> `a._optIndex(k)`; None when there is neither."""
    edits: list[tuple[int, int, str]] = []
    for i, token in enumerate(tokens[:-1]):
        if _text(tokens, i + 1) != "?":
            continue
        if token.text == "." and token.kind == PUNCT and i + 2 < len(tokens) and tokens[i + 2].kind == IDENT:
            name = tokens[i + 2]
            edits.append((token.pos, name.pos + len(name.text), f".{optional.SELECT}('{name.text}')"))
        elif token.text == "[" and token.kind == PUNCT and i > 0 and _indexable(tokens[i - 1]):
            close = matching(tokens, i)
            if close < len(tokens):
                edits.append((token.pos, tokens[i + 1].pos + 1, f".{optional.INDEX}("))
                edits.append((tokens[close].pos, tokens[close].pos + 1, ")"))
    if not edits:
        return None
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _indexable(previous: Token) -> bool:
    return previous.kind in _OPERAND_END or previous.text in (")", "]", "}")
