"""A ValidatingAdmissionPolicy compiled once per stored version (validating/plugin.go compilePolicy and
pkg/admission/plugin/cel compile.go / composition.go): its variables, match conditions, validations,
message expressions and audit annotations, each with the variables it may read.

Compile errors are kept, not raised: they fail (or, under failurePolicy Ignore, skip) the evaluation
that needs the expression, as in Kubernetes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import cel
from ...cel.errors import issue
from ...cel.fields import WHOLE, field_paths
from ...cel.lexer import IDENT, PUNCT, tokenize

Object = dict[str, Any]
BASE_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "variables")
AUTHORIZER = "authorizer"
PARAMS = "params"
VARIABLES = "variables"


@dataclass
class Expression:
    """One compiled expression: a program, or the compile error it failed with."""

    text: str
    program: Any = None
    error: str = ""  # apiservercel.Error detail, "compilation failed: ..."
    # the composited variables it reads directly, in declaration order
    reads: tuple[str, ...] = ()


def _variable_reads(text: str, declared: list[str]) -> tuple[tuple[str, ...], str]:
    """(the declared variables `text` reads, an "undefined field" error for any other it reads)."""
    tokens = tokenize(text)
    trie = field_paths(tokens, [VARIABLES], ()).get(VARIABLES, {})
    if trie is WHOLE or not all(isinstance(name, str) for name in trie):  # read whole, or iterated
        return tuple(declared), ""
    for i, token in enumerate(tokens[:-2]):
        dot, name = tokens[i + 1], tokens[i + 2]
        if (token.kind == IDENT and token.text == VARIABLES and (dot.kind, dot.text) == (PUNCT, ".")
                and name.kind == IDENT and name.text not in declared):
            # cel-go's checker: `variables` is an object type with one field per earlier variable
            return (), "compilation failed: " + issue(text, dot.pos, f"undefined field '{name.text}'")
    return tuple(name for name in declared if name in trie), ""


def compile_expression(text: str, declared: tuple[str, ...], variables: list[str]) -> Expression:
    try:
        program = cel.compile(text, variables=declared)
    except cel.CompileError as err:
        return Expression(text, error=str(err))
    reads, error = _variable_reads(text, variables) if VARIABLES in program.variables else ((), "")
    return Expression(text, None if error else program, error, reads)


@dataclass
class Validation:
    expression: Expression
    message: str
    reason: str | None
    message_expression: Expression | None


@dataclass
class AuditAnnotation:
    key: str
    value_expression: Expression


@dataclass
class CompiledPolicy:
    failure_policy: str
    variables: dict[str, Expression] = field(default_factory=dict)
    match_conditions: list[tuple[str, Expression]] = field(default_factory=list)
    validations: list[Validation] = field(default_factory=list)
    audit_annotations: list[AuditAnnotation] = field(default_factory=list)


def _dicts(value: Any) -> list[Object]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def compile_policy(policy: Object) -> CompiledPolicy:
    spec = policy.get("spec") or {}
    params = (PARAMS,) if spec.get("paramKind") is not None else ()
    with_authorizer = BASE_VARIABLES + params + (AUTHORIZER,)
    without_authorizer = BASE_VARIABLES + params  # messageExpression has no authorizer
    compiled = CompiledPolicy(spec.get("failurePolicy") or "Fail")
    declared: list[str] = []
    for variable in _dicts(spec.get("variables")):
        name = str(variable.get("name") or "")
        compiled.variables[name] = compile_expression(str(variable.get("expression") or ""), with_authorizer,
                                                      list(declared))
        declared.append(name)

    def expression(text: Any, names: tuple[str, ...] = with_authorizer) -> Expression:
        return compile_expression(str(text or ""), names, declared)

    compiled.match_conditions = [(str(c.get("name") or ""), expression(c.get("expression")))
                                 for c in _dicts(spec.get("matchConditions"))]
    for rule in _dicts(spec.get("validations")):
        message_expression = rule.get("messageExpression")
        compiled.validations.append(Validation(
            expression(rule.get("expression")), str(rule.get("message") or ""), rule.get("reason"),
            expression(message_expression, without_authorizer) if message_expression else None))
    compiled.audit_annotations = [AuditAnnotation(str(a.get("key") or ""), expression(a.get("valueExpression")))
                                  for a in _dicts(spec.get("auditAnnotations"))]
    return compiled
