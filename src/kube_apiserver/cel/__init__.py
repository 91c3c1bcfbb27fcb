"""CEL as Kubernetes uses it (k8s.io/apiserver/pkg/cel): expressions compiled once, evaluated against
plain JSON values, with the Kubernetes CEL libraries. The interpreter is the `common-expression-language`
package (cel-rust): it parses and evaluates; this package adds the libraries (kube_apiserver.cel.library),
cel-go's error wording, the checks cel-go does at compile time that need no types, and a cost estimate.

    program = compile("self.replicas <= self.maxReplicas", variables=["self", "oldSelf"])
    program.evaluate({"self": to_cel(obj, schema, root=True)})          # -> True

`compile` raises CompileError ("compilation failed: ERROR: <input>:1:6: ..."), `evaluate` raises
EvaluationError ("no such key: replicas"); kube_apiserver.cel.messages words rule outcomes as
apiextensions does. `estimate_cost` / `schema_sizes` give the static cost of a rule.

Not supported, compared with cel-go in kube-apiserver 1.34:
- static type checking: type errors surface at run time as "no such overload", and a rule's result
  type (bool for a validation rule, string for a messageExpression) is only known once evaluated;
- runtime cost tracking: nothing stops an expensive evaluation; `estimate_cost` gives the static bound;
- two-variable comprehensions (`all(k, v, ...)`, transformList/transformMap), `sortBy`, `cel.bind`
  are macros the interpreter cannot be taught (rejected at compile time or "undeclared reference");
- optional list/map literal entries (`[?x]`, `{?k: v}`); `x.?f` and `x[?k]` do work (rewritten);
- opaque values (quantity, url, ip, cidr, semver, format) are tagged maps: `type(ip('::1'))` is `map`,
  not `net.IP`, and the type identifiers (`net.IP`) are undeclared;
- equality of x-kubernetes-list-type set/map lists ignoring order; it compares as plain lists;
- maps mixing `true` and `1` as keys collapse when they cross into Python (True == 1 there);
- `matches()` is the interpreter's (Rust regex, RE2-like); find/findAll use Python `re`, translated.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from kube_apiserver.cel import checks, fields, library
from kube_apiserver.cel.activation import escape, to_cel
from kube_apiserver.cel.cost import (
    PER_CALL_LIMIT,
    STATIC_ESTIMATED_COST_LIMIT,
    CostEstimate,
    cost_error_message,
    estimate_cost,
    schema_sizes,
)
from kube_apiserver.cel.errors import CompileError, EvaluationError, parse_message, runtime_message
from kube_apiserver.cel.interpreter import interpreter
from kube_apiserver.cel.lexer import tokenize
from kube_apiserver.cel.values import Opaque, from_cel

__all__ = [
    "PER_CALL_LIMIT", "STATIC_ESTIMATED_COST_LIMIT", "Activation", "CompileError", "CostEstimate",
    "EvaluationError", "Opaque", "Program", "compile", "cost_error_message", "escape", "estimate_cost",
    "from_cel", "schema_sizes", "to_cel",
]

# The interpreter logs a warning for every exception a registered function raises; those are
# ordinary CEL errors (a failed quantity() parse), reported to the caller as EvaluationError.
logging.getLogger("cel").setLevel(logging.ERROR)

CACHE_SIZE = 4096
_PLAIN = (bool, int, float, str, bytes, type(None))


class Activation:
    """Variables bound once and shared by many evaluations: the interpreter converts the values whole,
    at the first evaluation only (and registers every library function). Pays off when many rules
    read much of one value; otherwise a plain dict, of which each program passes only the fields it
    reads, is cheaper. Not thread-safe."""

    def __init__(self, variables: Mapping[str, Any]):
        self.variables = dict(variables)
        self.context = interpreter().Context(variables=self.variables, functions=library.FUNCTIONS)


class Program:
    """A compiled expression; `evaluate` may be called any number of times, from any thread."""

    def __init__(self, expression: str, program: Any, functions: dict[str, Any], reads: dict[str, Any],
                 variables: frozenset[str]):
        self.expression = expression
        self.variables = variables  # the free identifiers it reads
        self._program = program
        self._functions = functions  # only the library functions it calls
        # what it reads of each variable: an evaluation passes only that (see fields.py)
        self._fields = reads

    def evaluate(self, activation: Mapping[str, Any] | Activation) -> Any:
        """The expression's value for `activation` (name -> value, see `to_cel`), as plain Python."""
        if isinstance(activation, Activation):
            context: Any = activation.context
        else:
            context = {name: fields.prune(activation[name], trie)
                       for name, trie in self._fields.items() if name in activation}
            context.update(self._functions)
        try:
            result = self._program.execute(context)
        except Exception as err:  # the interpreter raises builtin exception types
            raise EvaluationError(runtime_message(err)) from None
        return result if type(result) in _PLAIN else from_cel(result)


def compile(expression: str, variables: Iterable[str] | None = None) -> Program:  # noqa: A001 - the CEL verb
    """Compile `expression`; with `variables`, any other free identifier is a compile error.
    Programs are cached by expression and declared variables."""
    declared = None if variables is None else frozenset(variables)
    return _compile(expression, declared)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile(expression: str, declared: frozenset[str] | None) -> Program:
    tokens = tokenize(expression)
    source = checks.rewrite_optionals(expression, tokens) or expression
    try:
        program = interpreter().compile(source)
    except Exception as err:  # ValueError for syntax errors; guard against anything else too
        raise CompileError(parse_message(source, str(err))) from None
    analysis = checks.analyze(tokens, declared)
    analysis.issues += checks.literal_issues(tokens)
    if analysis.issues:
        raise CompileError(checks.report(expression, analysis.issues))
    if source is not expression:
        analysis.functions |= {library.optional.SELECT, library.optional.INDEX}
    functions = {name: library.FUNCTIONS[name] for name in sorted(analysis.functions)}
    bound = checks.bound_names(tokens)
    # a comprehension variable may also be the name of a variable elsewhere: such ones go whole
    reads = fields.field_paths(tokens, analysis.variables | bound, bound)
    return Program(expression, program, functions, reads, frozenset(analysis.variables))

