"""Where a pod may run: node affinity, pod (anti-)affinity, tolerations, topology spread constraints,
scheduling and readiness gates."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions

Object = dict[str, Any]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def qualified_name(value: str, path: Path) -> ErrorList:
    return [field.invalid(path, value, m).with_origin("format=qualified-name") for m in validation.is_qualified_name(value)]


def _node_requirement(req: Object, path: Path, allow_invalid_value: bool) -> ErrorList:
    errs: ErrorList = []
    operator, values = req.get("operator") or "", req.get("values") or []
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(field.required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(field.forbidden(path.child("values"), "may not be specified when `operator` is 'Exists' or "
                                                              "'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(field.required(path.child("values"), "must be specified single value when `operator` is 'Lt' "
                                                             "or 'Gt'"))
    else:
        errs.append(field.invalid(path.child("operator"), operator, "not a valid selector operator"))
    errs += validation.validate_label_name(req.get("key") or "", path.child("key"))
    if not allow_invalid_value:
        for i, value in enumerate(values):
            errs += [field.invalid(path.child("values").index(i), value, m) for m in validation.is_valid_label_value(value)]
    return errs


def _field_requirement(req: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    values = req.get("values") or []
    if req.get("operator") in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(field.required(path.child("values"), "must be only one value when `operator` is 'In' or "
                                                             "'NotIn' for node field selector"))
    else:
        errs.append(field.invalid(path.child("operator"), req.get("operator") or "", "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        errs.append(field.invalid(path.child("key"), req.get("key") or "", "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs += [field.invalid(path.child("values").index(i), value, m)
                     for m in validation.name_is_dns_subdomain(value, False)]
    return errs


def validate_node_selector_term(term: Object, path: Path, allow_invalid_value: bool) -> ErrorList:
    errs: ErrorList = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs += _node_requirement(req, path.child("matchExpressions").index(j), allow_invalid_value)
    for j, req in enumerate(term.get("matchFields") or []):
        errs += _field_requirement(req, path.child("matchFields").index(j))
    return errs


def _node_affinity(affinity: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        terms_path = path.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            errs.append(field.required(terms_path, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            errs += validate_node_selector_term(term, terms_path.index(i),
                                                opts.allow_invalid_label_value_in_required_node_affinity)
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        term_path = path.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
        weight = term.get("weight") or 0
        if not 0 < weight <= 100:
            errs.append(field.invalid(term_path.child("weight"), weight, "must be in the range 1-100"))
        errs += validate_node_selector_term(term.get("preference") or {}, term_path.child("preference"), True)
    return errs


def _label_keys(term: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    match, mismatch = term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
    if (match or mismatch) and term.get("labelSelector") is None:
        errs.append(field.forbidden(path.child("matchLabelKeys" if match else "mismatchLabelKeys"),
                                    "must not be specified when labelSelector is not set"))
    for key_path, keys in ((path.child("matchLabelKeys"), match), (path.child("mismatchLabelKeys"), mismatch)):
        for i, key in enumerate(keys):
            errs += validation.validate_label_name(key, key_path.index(i))
    overlap = set(match) & set(mismatch)
    for i, key in enumerate(mismatch):
        if key in overlap:
            errs.append(field.invalid(path.child("mismatchLabelKeys").index(i), key,
                                      "exists in both matchLabelKeys and mismatchLabelKeys"))
    return errs


def _pod_affinity_term(term: Object, path: Path, allow_invalid_value: bool) -> ErrorList:
    errs = validation.validate_label_selector(term.get("labelSelector"), path.child("labelSelector"),
                                              allow_invalid_value)
    errs += validation.validate_label_selector(term.get("namespaceSelector"), path.child("namespaceSelector"),
                                               allow_invalid_value)
    for name in term.get("namespaces") or []:
        errs += [field.invalid(path.child("namespace"), name, m) for m in validation.name_is_dns_label(name, False)]
    errs += _label_keys(term, path)
    if not term.get("topologyKey"):
        errs.append(field.required(path.child("topologyKey"), "can not be empty"))
    return errs + validation.validate_label_name(term.get("topologyKey") or "", path.child("topologyKey"))


def _pod_affinity(affinity: Object, path: Path, allow_invalid_value: bool) -> ErrorList:
    errs: ErrorList = []
    for i, term in enumerate(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
        errs += _pod_affinity_term(term, path.child("requiredDuringSchedulingIgnoredDuringExecution").index(i),
                                   allow_invalid_value)
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        term_path = path.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
        weight = term.get("weight") or 0
        if not 0 < weight <= 100:
            errs.append(field.invalid(term_path.child("weight"), weight, "must be in the range 1-100"))
        errs += _pod_affinity_term(term.get("podAffinityTerm") or {}, term_path.child("podAffinityTerm"),
                                   allow_invalid_value)
    return errs


def validate_affinity(affinity: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
    if not isinstance(affinity, dict):
        return []
    errs: ErrorList = []
    if isinstance(affinity.get("nodeAffinity"), dict):
        errs += _node_affinity(affinity["nodeAffinity"], path.child("nodeAffinity"), opts)
    for key in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(key), dict):
            errs += _pod_affinity(affinity[key], path.child(key), opts.allow_invalid_label_value_in_selector)
    return errs


def _toleration_struct(toleration: Object) -> field.OrderedStruct:
    """The whole internal core.Toleration is the bad value there (JSON with Go field names)."""
    return field.OrderedStruct((
        ("Key", toleration.get("key") or ""), ("Operator", toleration.get("operator") or ""),
        ("Value", toleration.get("value") or ""), ("Effect", toleration.get("effect") or ""),
        ("TolerationSeconds", toleration.get("tolerationSeconds"))))


def validate_tolerations(tolerations: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, toleration in enumerate(tolerations if isinstance(tolerations, list) else []):
        idx = path.index(i)
        key, operator = toleration.get("key") or "", toleration.get("operator") or ""
        value, effect = toleration.get("value") or "", toleration.get("effect") or ""
        if key:
            errs += validation.validate_label_name(key, idx.child("key"))
        if not key and operator != "Exists":
            errs.append(field.invalid(idx.child("operator"), operator, 'operator must be Exists when `key` is empty, '
                                                                       'which means "match all values and all keys"'))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(field.invalid(idx.child("effect"), effect, "effect must be 'NoExecute' when "
                                                                   "`tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            msgs = validation.is_valid_label_value(value)
            if msgs:
                errs.append(field.invalid(idx.child("operator"), value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                errs.append(field.invalid(idx.child("operator"), _toleration_struct(toleration),
                                          "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(field.not_supported(idx.child("operator"), operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(field.not_supported(idx.child("effect"), effect, TAINT_EFFECTS))
    return errs


def _spread(constraint: Object, rest: list[Object], path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    skew, key = constraint.get("maxSkew") or 0, constraint.get("topologyKey") or ""
    action = constraint.get("whenUnsatisfiable") or ""
    if skew <= 0:
        errs.append(field.invalid(path.child("maxSkew"), skew, "must be greater than zero"))
    if not key:
        errs.append(field.required(path.child("topologyKey"), "can not be empty"))
    if action not in WHEN_UNSATISFIABLE:
        errs.append(field.not_supported(path.child("whenUnsatisfiable"), action, WHEN_UNSATISFIABLE))
    if any(other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == action for other in rest):
        errs.append(field.duplicate(path.child("{topologyKey, whenUnsatisfiable}"), f"{{{key}, {action}}}"))
    min_domains = constraint.get("minDomains")
    if min_domains is not None:
        if min_domains <= 0:
            errs.append(field.invalid(path.child("minDomains"), min_domains, "must be greater than zero"))
        if action != "DoNotSchedule":
            errs.append(field.invalid(path.child("minDomains"), min_domains,
                                      f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = constraint.get(policy)
        if value is not None and value not in NODE_INCLUSION_POLICIES:
            errs.append(field.not_supported(path.child(policy), value, NODE_INCLUSION_POLICIES))
    if not opts.allow_invalid_topology_spread_constraint_label_selector:
        errs += validation.validate_label_selector(constraint.get("labelSelector"), path.child("labelSelector"))
    return errs


def validate_topology_spread(constraints: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
    constraints = constraints if isinstance(constraints, list) else []
    errs: ErrorList = []
    for i, constraint in enumerate(constraints):
        errs += _spread(constraint, constraints[i + 1:], path.index(i), opts)
    return errs


def validate_gates(spec: Object, path: Path) -> ErrorList:
    """Readiness gates and scheduling gates."""
    errs: ErrorList = []
    for i, gate in enumerate(spec.get("readinessGates") or []):
        errs += qualified_name(gate.get("conditionType") or "", path.child("readinessGates").index(i)
                               .child("conditionType"))
    seen: set[str] = set()
    for i, gate in enumerate(spec.get("schedulingGates") or []):
        name, gate_path = gate.get("name") or "", path.child("schedulingGates").index(i)
        errs += qualified_name(name, gate_path)
        if name in seen:
            errs.append(field.duplicate(gate_path, name))
        seen.add(name)
    return errs
