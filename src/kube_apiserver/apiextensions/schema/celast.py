"""A CEL parser producing cel-go's AST, macros expanded as cel-go's parser expands them
(parser/macro.go), for the checks and the cost estimate the interpreter does not do.

It runs only on expressions the interpreter has already parsed, so it assumes valid syntax.
Each node keeps the source offset cel-go reports for it: an operator's token, a call's ``(``, a
selection's ``.``, a macro's ``(`` for every node the expansion creates.
"""

from __future__ import annotations

import ast as pyast
from dataclasses import dataclass, field
from typing import Any

from ...cel.lexer import IDENT, NUMBER, PUNCT, STRING, Token, tokenize
from ...cel.library import KNOWN, NAMESPACES

ACCU = "@result"  # parser.AccumulatorName
_RELATIONS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}
_ADDITIVE = {"+": "_+_", "-": "_-_"}
_MULTIPLICATIVE = {"*": "_*_", "/": "_/_", "%": "_%_"}
_QUANTIFIERS = frozenset({"all", "exists", "exists_one"})


@dataclass(eq=False)
class Expr:
    pos: int


@dataclass(eq=False)
class Literal(Expr):
    value: Any
    kind: str  # int, uint, double, string, bytes, bool, null


@dataclass(eq=False)
class Ident(Expr):
    name: str


@dataclass(eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(eq=False)
class Call(Expr):
    function: str
    args: list[Expr]
    target: Expr | None = None


@dataclass(eq=False)
class ListExpr(Expr):
    elements: list[Expr]


@dataclass(eq=False)
class MapExpr(Expr):
    entries: list[tuple[Expr, Expr]]


@dataclass(eq=False)
class StructExpr(Expr):
    name: str
    fields: list[tuple[str, Expr]] = field(default_factory=list)


@dataclass(eq=False)
class Comprehension(Expr):
    iter_range: Expr
    iter_var: str
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = tokenize(source)
        self.i = 0

    # ---- token helpers ----

    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def at(self, text: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.text == text and token.kind in (PUNCT, IDENT)

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def expect(self, text: str) -> Token:
        token = self.take()
        if token.text != text:
            raise SyntaxError(f"expected {text!r} at {token.pos}")
        return token

    # ---- grammar (CEL.g4) ----

    def expr(self) -> Expr:
        cond = self.logical("||", self.conditional_and)
        if self.at("?"):
            op = self.take()
            then = self.logical("||", self.conditional_and)
            self.expect(":")
            otherwise = self.expr()
            return Call(op.pos, "_?_:_", [cond, then, otherwise])
        return cond

    def conditional_and(self) -> Expr:
        return self.logical("&&", self.relation)

    def logical(self, op: str, operand: Any) -> Expr:
        """cel-go balances a chain of one logical operator (logicManager); the cost is the same."""
        terms, ops = [operand()], []
        while self.at(op):
            ops.append(self.take())
            terms.append(operand())
        return _balance(terms, ops, "_||_" if op == "||" else "_&&_")

    def relation(self) -> Expr:
        left = self.binary(_ADDITIVE, self.multiplicative)
        while (token := self.peek()) is not None and token.text in _RELATIONS and token.kind in (PUNCT, IDENT):
            self.take()
            left = Call(token.pos, _RELATIONS[token.text], [left, self.binary(_ADDITIVE, self.multiplicative)])
        return left

    def multiplicative(self) -> Expr:
        return self.binary(_MULTIPLICATIVE, self.unary)

    def binary(self, ops: dict[str, str], operand: Any) -> Expr:
        left = operand()
        while (token := self.peek()) is not None and token.kind == PUNCT and token.text in ops:
            self.take()
            left = Call(token.pos, ops[token.text], [left, operand()])
        return left

    def unary(self) -> Expr:
        if self.at("!") or self.at("-"):
            first = self.peek()
            assert first is not None
            ops = []
            while self.at(first.text):
                ops.append(self.take())
            if first.text == "-" and len(ops) == 1 and (nxt := self.peek()) is not None and nxt.kind == NUMBER:
                member = self.member()
                if isinstance(member, Literal) and member.kind in ("int", "double"):
                    member.value = -member.value
                    member.pos = first.pos
                    return member
                return Call(first.pos, "-_", [member])
            member = self.member()
            if len(ops) % 2 == 0:  # cel-go drops an even run of negations
                return member
            return Call(ops[0].pos, "!_" if first.text == "!" else "-_", [member])
        return self.member()

    def member(self) -> Expr:
        operand = self.primary()
        while True:
            if self.at("."):
                dot = self.take()
                optional = self.at("?")
                if optional:
                    self.take()
                name = self.take()
                if self.at("(") and not optional:
                    open_ = self.take()
                    operand = self.member_call(name.text, operand, open_.pos, self.arguments(")"))
                elif optional:
                    operand = Call(dot.pos, "_?._", [operand, Literal(name.pos, name.text, "string")])
                else:
                    operand = Select(dot.pos, operand, name.text)
            elif self.at("["):
                open_ = self.take()
                optional = self.at("?")
                if optional:
                    self.take()
                index = self.expr()
                self.expect("]")
                operand = Call(open_.pos, "_[?_]" if optional else "_[_]", [operand, index])
            elif self.at("{") and isinstance(operand, Ident):
                operand = self.struct(operand)
            else:
                return operand

    def member_call(self, name: str, target: Expr, pos: int, args: list[Expr]) -> Expr:
        if isinstance(target, Ident) and target.name in NAMESPACES and f"{target.name}.{name}" in KNOWN:
            return Call(pos, f"{target.name}.{name}", args)  # a qualified function, not a member
        if name in _QUANTIFIERS and len(args) == 2 and isinstance(args[0], Ident):
            return _quantifier(name, pos, target, args[0].name, args[1])
        if name in ("map", "filter") and len(args) in (2, 3) and isinstance(args[0], Ident):
            return _map_filter(name, pos, target, args[0].name, args[1:])
        return Call(pos, name, args, target)

    def primary(self) -> Expr:
        token = self.take()
        if token.kind == PUNCT and token.text == "." and (nxt := self.peek()) is not None and nxt.kind == IDENT:
            token = self.take()  # a leading dot: the identifier from the root scope
        if token.kind == IDENT:
            return self.identifier(token)
        if token.kind == NUMBER:
            return _number(token)
        if token.kind == STRING:
            return _string(token)
        if token.text == "(":
            inner = self.expr()
            self.expect(")")
            return inner
        if token.text == "[":
            return ListExpr(token.pos, self.arguments("]"))
        if token.text == "{":
            return MapExpr(token.pos, self.entries())
        raise SyntaxError(f"unexpected {token.text!r} at {token.pos}")

    def identifier(self, token: Token) -> Expr:
        if token.text in ("true", "false"):
            return Literal(token.pos, token.text == "true", "bool")
        if token.text == "null":
            return Literal(token.pos, None, "null")
        if self.at("("):
            open_ = self.take()
            args = self.arguments(")")
            if token.text == "has" and len(args) == 1 and isinstance(args[0], Select):
                return Select(open_.pos, args[0].operand, args[0].field, test_only=True)
            return Call(open_.pos, token.text, args)
        return Ident(token.pos, token.text)

    def arguments(self, close: str) -> list[Expr]:
        args: list[Expr] = []
        while not self.at(close):
            if self.at("?"):  # an optional list entry [?x]
                self.take()
            args.append(self.expr())
            if self.at(","):
                self.take()
        self.expect(close)
        return args

    def entries(self) -> list[tuple[Expr, Expr]]:
        entries = []
        while not self.at("}"):
            if self.at("?"):
                self.take()
            key = self.expr()
            self.expect(":")
            entries.append((key, self.expr()))
            if self.at(","):
                self.take()
        self.expect("}")
        return entries

    def struct(self, name: Ident) -> Expr:
        self.take()
        fields = []
        while not self.at("}"):
            key = self.take()
            self.expect(":")
            fields.append((key.text, self.expr()))
            if self.at(","):
                self.take()
        self.expect("}")
        return StructExpr(name.pos, name.name, fields)


def parse(source: str) -> Expr:
    """The AST of a (syntactically valid) expression; SyntaxError if this parser cannot read it."""
    parser = _Parser(source)
    result = parser.expr()
    if parser.peek() is not None:
        raise SyntaxError(f"unexpected {parser.peek()}")
    return result


def _balance(terms: list[Expr], ops: list[Token], function: str) -> Expr:
    if len(terms) == 1:
        return terms[0]
    mid = len(ops) // 2
    left = _balance(terms[:mid + 1], ops[:mid], function)
    right = _balance(terms[mid + 1:], ops[mid + 1:], function)
    return Call(ops[mid].pos, function, [left, right])


def _number(token: Token) -> Literal:
    text = token.text
    if text[-1] in "uU":
        return Literal(token.pos, int(text[:-1], 0), "uint")
    if text.lower().startswith("0x"):
        return Literal(token.pos, int(text, 16), "int")
    if any(c in text for c in ".eE"):
        return Literal(token.pos, float(text), "double")
    return Literal(token.pos, int(text), "int")


def _string(token: Token) -> Literal:
    text = token.text
    prefix = ""
    while text[0] in "rRbB":
        prefix += text[0].lower()
        text = text[1:]
    quote = text[:3] if text[:3] in ("'''", '"""') else text[0]
    body = text[len(quote):-len(quote)]
    if "r" not in prefix:
        try:
            body = pyast.literal_eval(f"'''{body}'''" if "'''" not in body else f'"""{body}"""')
        except (SyntaxError, ValueError):
            pass  # sizes only; an odd escape keeps its raw length
    if "b" in prefix:
        return Literal(token.pos, body.encode() if isinstance(body, str) else body, "bytes")
    return Literal(token.pos, body, "string")


# ---- macros (parser/macro.go) ----


def _quantifier(kind: str, pos: int, target: Expr, var: str, predicate: Expr) -> Comprehension:
    def accu() -> Ident:
        return Ident(pos, ACCU)
    if kind == "all":
        init: Expr = Literal(pos, True, "bool")
        condition: Expr = Call(pos, "@not_strictly_false", [accu()])
        step: Expr = Call(pos, "_&&_", [accu(), predicate])
        result: Expr = accu()
    elif kind == "exists":
        init = Literal(pos, False, "bool")
        condition = Call(pos, "@not_strictly_false", [Call(pos, "!_", [accu()])])
        step = Call(pos, "_||_", [accu(), predicate])
        result = accu()
    else:
        init = Literal(pos, 0, "int")
        condition = Literal(pos, True, "bool")
        step = Call(pos, "_?_:_", [predicate, Call(pos, "_+_", [accu(), Literal(pos, 1, "int")]), accu()])
        result = Call(pos, "_==_", [accu(), Literal(pos, 1, "int")])
    return Comprehension(pos, target, var, ACCU, init, condition, step, result)


def _map_filter(kind: str, pos: int, target: Expr, var: str, args: list[Expr]) -> Comprehension:
    accu = Ident(pos, ACCU)
    if kind == "filter":
        element: Expr = Ident(pos, var)
        predicate: Expr | None = args[0]
    else:
        element = args[-1]
        predicate = args[0] if len(args) == 2 else None
    step: Expr = Call(pos, "_+_", [accu, ListExpr(pos, [element])])
    if predicate is not None:
        step = Call(pos, "_?_:_", [predicate, step, Ident(pos, ACCU)])
    return Comprehension(pos, target, var, ACCU, ListExpr(pos, []), Literal(pos, True, "bool"), step,
                         Ident(pos, ACCU))
