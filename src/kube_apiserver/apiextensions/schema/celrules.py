"""Evaluation of ``x-kubernetes-validations`` rules (pkg/apiserver/schema/cel/validation.go).

:func:`new_rule_validator` builds, once per CRD version, a tree of :class:`RuleValidator` nodes that
mirrors the schema where rules exist (including ``allOf`` branches). ``validate`` walks the object
once: each node's value is converted for CEL as UnstructuredToVal does (``to_cel``), ``oldSelf``
is bound when the old value correlates (object keys, ``map`` list keys), transition rules are
skipped without it unless ``optionalOldSelf``. Error texts, reasons, ``fieldPath``,
``messageExpression`` and the cost budget errors follow upstream; costs are estimates (celcompile).
"""

from __future__ import annotations

from typing import Any

from ... import cel
from ...apimachinery import field
from ...apimachinery.field import ErrorList, FieldError, Path, go_quote
from ...cel.interpreter import interpreter
from .celcompile import CompiledRule, cel_schema, compile_node
from .celcost import RuntimeCost
from .correlation import Correlation, Ratchet, correlated_item_finder
from .structural import Structural, ValidationRule, nested_to_structural

PER_CALL_LIMIT = 1_000_000
RUNTIME_CEL_COST_BUDGET = 10_000_000
MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024
_BUDGET_EXCEEDED = "validation failed due to running out of cost budget, no further validation rules will be run"
_CALL_LIMIT = "operation cancelled: actual cost limit exceeded"


def has_x_validations(s: Structural | None) -> bool:
    """Whether the schema has rules outside allOf/anyOf/oneOf/not (``hasXValidations``)."""
    if s is None:
        return False
    if s.x_validations or has_x_validations(s.items):
        return True
    if s.additional_properties is not None and has_x_validations(s.additional_properties.structural):
        return True
    return any(has_x_validations(p) for p in (s.properties or {}).values())


def new_rule_validator(s: Structural | None, is_resource_root: bool = True,
                       per_call_limit: int = PER_CALL_LIMIT) -> RuleValidator | None:
    """``NewValidator``: None when the schema has no rules."""
    validator = RuleValidator(s, is_resource_root, per_call_limit)
    return validator if validator.root is not None else None


class RuleValidator:
    """The compiled ``x-kubernetes-validations`` of a schema (``cel.Validator``); without rules
    it validates nothing."""

    def __init__(self, s: Structural | None, is_resource_root: bool = True,
                 per_call_limit: int = PER_CALL_LIMIT) -> None:
        has_rules = s is not None and has_x_validations(s)
        self.root = _build(s, s, is_resource_root, per_call_limit) if has_rules else None

    def validate(self, obj: Any, old_obj: Any = None, path: Path | None = None, *, ratcheting: bool = True,
                 warnings: list[str] | None = None) -> ErrorList:
        """Rule errors for ``obj`` (an update when ``old_obj`` is given, ratcheted by default:
        errors of non-transition rules on unchanged values go to ``warnings``)."""
        if self.root is None:
            return []
        ratchet = Ratchet(Correlation(obj, old_obj), None) if ratcheting and old_obj is not None else Ratchet.none()
        return self.root.validate(path, obj, old_obj, ratchet, _Run(RUNTIME_CEL_COST_BUDGET, warnings))

    def validate_with_budget(self, obj: Any, old_obj: Any, path: Path | None, budget: int
                             ) -> tuple[ErrorList, int]:
        """``Validate(ctx, path, s, obj, old, budget)`` without ratcheting: (errors, budget left)."""
        if self.root is None:
            return [], budget
        run = _Run(budget, None)
        errs = self.root.validate(path, obj, old_obj, Ratchet.none(), run)
        return errs, run.budget


def _build(validation: Structural | None, node: Structural | None, is_root: bool,
           limit: int = PER_CALL_LIMIT) -> RuleNode | None:
    if validation is None or node is None:
        return None
    rules = compile_node(node, validation.x_validations, is_root)
    items = None
    if validation.items is not None and node.items is not None:
        items = _build(validation.items, node.items, node.items.x_embedded_resource, limit)
    props = {}
    for key, prop in (validation.properties or {}).items():
        node_prop = (node.properties or {}).get(key)
        sub = _build(prop, node_prop, node_prop.x_embedded_resource, limit) if node_prop is not None else None
        if sub is not None:
            props[key] = sub
    additional = None
    va, na = validation.additional_properties, node.additional_properties
    if va is not None and va.structural is not None and na is not None and na.structural is not None:
        additional = _build(va.structural, na.structural, na.structural.x_embedded_resource, limit)
    all_of = []
    for nested in (validation.value_validation.all_of if validation.value_validation else None) or ():
        sub = _build(nested_to_structural(nested), node, is_root, limit)
        if sub is not None:
            all_of.append(sub)
    if rules or items or props or additional or all_of:
        validator = RuleNode(node, rules, is_root, items, props, additional, all_of)
        validator.per_call_limit = limit
        return validator
    return None


def rule_error_string(rule: ValidationRule) -> str:
    return rule.message.strip() if rule.message else rule.rule.strip()


def rule_message_or_default(rule: ValidationRule) -> str:
    return rule.message.strip() if rule.message else f"failed rule: {rule_error_string(rule)}"


def field_error_for_reason(path: Path | None, value: Any, detail: str, reason: str | None) -> FieldError:
    if reason == "FieldValueForbidden":
        return field.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return field.required(path, detail)
    if reason == "FieldValueDuplicate":
        return field.duplicate(path, value)
    return field.invalid(path, value, detail)


class _Run:
    """State of one validation: budget left, collected errors and ratcheted warnings."""

    __slots__ = ("budget", "warnings")

    def __init__(self, budget: int, warnings: list[str] | None) -> None:
        self.budget = budget
        self.warnings = warnings


class RuleNode:
    """One schema node's compiled rules and the validators of its children."""

    def __init__(self, schema: Structural, rules: list[CompiledRule], is_resource_root: bool,
                 items: RuleNode | None, properties: dict[str, RuleNode],
                 additional: RuleNode | None, all_of: list[RuleNode]) -> None:
        self.schema = schema
        self.rules = rules
        self.is_resource_root = is_resource_root
        self.items = items
        self.properties = properties
        self.additional = additional
        self.all_of = all_of
        self.cel_schema = cel_schema(schema)
        self.uses_old_self = any(r.uses_old_self for r in rules)
        self.costs = {id(r): RuntimeCost(r.rule.rule, r.constant_cost) for r in rules if r.program is not None}
        self.find_old_item = correlated_item_finder(schema)
        self.per_call_limit = PER_CALL_LIMIT

    def validate(self, path: Path | None, obj: Any, old: Any, ratchet: Ratchet, run: _Run) -> ErrorList:
        if obj is None:
            return []
        errs = self._expressions(path, obj, old, ratchet, run) if self.rules else []
        if run.budget < 0:
            return errs
        for sub in self.all_of:
            errs += sub.validate(path, obj, old, ratchet.for_all_of(), run)
            if run.budget < 0:
                return errs
        if isinstance(obj, list) and self.items is not None:
            errs += self._array(path, obj, old if isinstance(old, list) else None, ratchet, run)
        elif isinstance(obj, dict):
            errs += self._map(path, obj, old if isinstance(old, dict) else None, ratchet, run)
        return errs

    def _map(self, path: Path | None, obj: dict[str, Any], old: dict[str, Any] | None, ratchet: Ratchet,
             run: _Run) -> ErrorList:
        errs: ErrorList = []
        if self.additional is not None:
            for k, v in obj.items():
                old_v = old.get(k) if old is not None else None
                errs += self.additional.validate(_key(path, k), v, old_v, ratchet.key(k), run)
                if run.budget < 0:
                    return errs
        for k, sub in self.properties.items():
            if k in obj:
                old_v = old.get(k) if old is not None else None
                errs += sub.validate(field.child_of(path, k), obj[k], old_v, ratchet.key(k), run)
                if run.budget < 0:
                    return errs
        return errs

    def _array(self, path: Path | None, obj: list[Any], old: list[Any] | None, ratchet: Ratchet,
               run: _Run) -> ErrorList:
        assert self.items is not None
        errs: ErrorList = []
        find = self.find_old_item(old)
        for i, item in enumerate(obj):
            errs += self.items.validate(_index(path, i), item, find(item), ratchet.index(i, find), run)
            if run.budget < 0:
                return errs
        return errs

    # --- the rules of this node ------------------------------------------------------------

    def _activations(self, obj: Any, old: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        schema, root = self.cel_schema, self.is_resource_root
        self_value = cel.to_cel(obj, schema, root=root)
        activation = {"self": self_value}
        optional = {"self": self_value, "oldSelf": interpreter().OptionalValue.none()}
        if old is not None and self.uses_old_self:
            old_value = cel.to_cel(old, schema, root=root)
            activation["oldSelf"] = old_value
            optional["oldSelf"] = interpreter().OptionalValue.of(old_value)
        return activation, optional

    def _expressions(self, path: Path | None, obj: Any, old: Any, ratchet: Ratchet, run: _Run) -> ErrorList:
        type_name = self.schema.type
        if run.budget <= 0:
            run.budget = -1
            return [field.invalid(path, type_name, _BUDGET_EXCEEDED)]
        errs: ErrorList = []
        activations: tuple[dict[str, Any], dict[str, Any]] | None = None
        for compiled in self.rules:
            rule = compiled.rule
            if compiled.error is not None:
                errs.append(field.invalid(path, type_name, f"rule compile error: {compiled.error}"))
                continue
            if compiled.program is None:
                continue
            optional = rule.optional_old_self is True
            if compiled.uses_old_self and old is None and not optional:
                continue
            if activations is None:
                activations = self._activations(obj, old)
            stop = self._evaluate(compiled, path, activations, ratchet, run, errs)
            if stop:
                return errs
        return errs

    def _evaluate(self, compiled: CompiledRule, path: Path | None, activations: tuple[dict[str, Any], dict[str, Any]],
                  ratchet: Ratchet, run: _Run, errs: ErrorList) -> bool:
        """Evaluate one rule; True when no further rule may run."""
        rule, type_name = compiled.rule, self.schema.type
        activation = activations[1] if rule.optional_old_self is True else activations[0]
        cost = self.costs[id(compiled)].of(activation)
        if cost > run.budget:
            errs.append(field.invalid(path, type_name, _BUDGET_EXCEEDED))
            run.budget = -1
            return True
        if cost > self.per_call_limit:
            errs.append(field.invalid(path, type_name, f"'{_CALL_LIMIT}': no further validation rules will be run "
                                                       f"due to call cost exceeds limit for rule: {rule_error_string(rule)}"))
            run.budget = -1
            return True
        run.budget -= cost
        assert compiled.program is not None
        try:
            result = compiled.program.evaluate(activation)
        except cel.EvaluationError as err:
            text = str(err)
            if text.startswith("no such overload"):
                detail = (f"'{text}': call arguments did not match a supported operator, function or macro "
                          f"signature for rule: {rule_error_string(rule)}")
            else:
                detail = f"{text} evaluating rule: {rule_error_string(rule)}"
            errs.append(field.invalid(path, type_name, detail))
            return False
        if result is True:
            return False
        err_path = field.child_of(path, compiled.normalized_field_path) if compiled.normalized_field_path else path
        err, stop = self._failure(compiled, err_path, activations[0], run)
        if not compiled.uses_old_self and ratchet.should_ratchet():
            if run.warnings is not None:
                run.warnings.append(str(err))
        else:
            errs.append(err)
        return stop

    def _failure(self, compiled: CompiledRule, path: Path | None, activation: dict[str, Any], run: _Run
                 ) -> tuple[FieldError, bool]:
        """The error of a failed rule, with its messageExpression evaluated when it has one."""
        rule, type_name = compiled.rule, self.schema.type
        fallback = field_error_for_reason(path, type_name, rule_message_or_default(rule), rule.reason)
        program = compiled.message_program
        if program is None:
            return fallback, False
        cost = RuntimeCost(rule.message_expression, None).of(activation)
        if cost > run.budget:
            run.budget = -1
            return field.invalid(path, type_name, "messageExpression evaluation failed due to running out of cost "
                                                  "budget, no further validation rules will be run"), True
        if cost > self.per_call_limit:
            run.budget = -1
            return field.invalid(path, type_name, "no further validation rules will be run due to call cost exceeds "
                                                  f"limit for messageExpression: {go_quote(rule.message_expression)}"), True
        run.budget -= cost
        try:
            message = program.evaluate(activation)
        except cel.EvaluationError:
            return fallback, False
        if not isinstance(message, str):
            return fallback, False
        message = message.strip()
        if not message or len(message.encode()) > MAX_MESSAGE_EXPRESSION_BYTES or "\n" in message:
            return fallback, False
        return field_error_for_reason(path, type_name, message, rule.reason), False


def _key(path: Path | None, key: str) -> Path:
    return path.key(key) if path is not None else field._node("", key, None)


def _index(path: Path | None, i: int) -> Path:
    return path.index(i) if path is not None else field._node("", str(i), None)
