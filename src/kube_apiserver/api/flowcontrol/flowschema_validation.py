"""ValidateFlowSchema and its parts (pkg/apis/flowcontrol/validation/validation.go, v1.34)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from . import structs
from .bootstrap import MANDATORY_FLOW_SCHEMAS, mandatory_spec
from .common import EXEMPT, WILDCARD, as_dict, as_list, as_str, has_wildcard

Object = dict[str, Any]
MAX_MATCHING_PRECEDENCE = 10000
DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch")
NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def validate_spec(name: str, spec: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaSpec, then the fixed spec of a mandatory schema."""
    errs = _validate_precedence(name, spec.get("matchingPrecedence"), path.child("matchingPrecedence"))
    method = spec.get("distinguisherMethod")
    if isinstance(method, dict) and method.get("type") not in DISTINGUISHER_METHODS:
        errs.append(field.not_supported(path.child("distinguisherMethod", "type"),
                                        structs.distinguisher_struct(method), DISTINGUISHER_METHODS))
    errs += _validate_level_reference(as_str(as_dict(spec.get("priorityLevelConfiguration")).get("name")),
                                      path.child("priorityLevelConfiguration", "name"))
    for i, rule in enumerate(as_list(spec.get("rules"))):
        errs += validate_rule(as_dict(rule), path.child("rules").index(i))
    return errs + _validate_mandatory(name, spec, path)


def _validate_precedence(name: str, precedence: Any, path: field.Path) -> field.ErrorList:
    value = precedence if isinstance(precedence, int) else 0
    errs: field.ErrorList = []
    if value <= 0:
        errs.append(field.invalid(path, value, "must be a positive value"))
    if value > MAX_MATCHING_PRECEDENCE:
        errs.append(field.invalid(path, value, f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if value == 1 and name != EXEMPT:
        errs.append(field.invalid(path, value, "only the schema named 'exempt' may have matchingPrecedence 1"))
    return errs


def _validate_level_reference(level: str, path: field.Path) -> field.ErrorList:
    if not level:
        return [field.required(path, "must reference a priority level")]
    return [field.invalid(path, level, msg) for msg in validation.name_is_dns_subdomain(level, False)]


def _validate_mandatory(name: str, spec: Object, path: field.Path) -> field.ErrorList:
    fixed = mandatory_spec(MANDATORY_FLOW_SCHEMAS, name)
    have = structs.flow_schema_spec(spec)
    if fixed is None or structs.semantic_equal(have, structs.flow_schema_spec(fixed)):
        return []
    return [field.invalid(path, have, f"spec of '{name}' must equal the fixed value")]


def validate_rule(rule: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaPolicyRulesWithSubjects."""
    subjects = as_list(rule.get("subjects"))
    errs: field.ErrorList = []
    for i, subject in enumerate(subjects):
        errs += validate_subject(as_dict(subject), path.child("subjects").index(i))
    if not subjects:
        errs.append(field.required(path.child("subjects"), "subjects must contain at least one value"))
    resource_rules, non_resource_rules = as_list(rule.get("resourceRules")), as_list(rule.get("nonResourceRules"))
    if not resource_rules and not non_resource_rules:
        errs.append(field.required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
    for i, item in enumerate(resource_rules):
        errs += validate_resource_rule(as_dict(item), path.child("resourceRules").index(i))
    for i, item in enumerate(non_resource_rules):
        errs += validate_non_resource_rule(as_dict(item), path.child("nonResourceRules").index(i))
    return errs


_SUBJECT_FIELDS = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}
# In the order Kubernetes reports them.
_FORBIDDEN = {"serviceAccount": "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
              "user": "user is forbidden when subject kind is not 'User'",
              "group": "group is forbidden when subject kind is not 'Group'"}


def validate_subject(subject: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaSubject: the member its kind names, and no other."""
    kind = as_str(subject.get("kind"))
    own = _SUBJECT_FIELDS.get(kind)
    if own is None:
        return [field.not_supported(path.child("kind"), kind, SUBJECT_KINDS)]
    errs = _validate_subject_member(kind, subject.get(own), path.child(own))
    for other in _FORBIDDEN:
        if other != own and subject.get(other) is not None:
            errs.append(field.forbidden(path.child(other), _FORBIDDEN[other]))
    return errs


def _validate_subject_member(kind: str, member: Any, path: field.Path) -> field.ErrorList:
    if not isinstance(member, dict):
        label = _SUBJECT_FIELDS[kind]
        return [field.required(path, f"{label} is required when subject kind is '{kind}'")]
    if kind == "ServiceAccount":
        return _validate_service_account(member, path)
    return [] if member.get("name") else [field.required(path.child("name"), "")]


def _validate_service_account(account: Object, path: field.Path) -> field.ErrorList:
    """ValidateServiceAccountSubject."""
    errs: field.ErrorList = []
    name, namespace = as_str(account.get("name")), as_str(account.get("namespace"))
    if not name:
        errs.append(field.required(path.child("name"), ""))
    elif name != WILDCARD:
        errs += [field.invalid(path.child("name"), name, m)
                 for m in validation.validate_service_account_name(name, False)]
    if not namespace:
        errs.append(field.required(path.child("namespace"), "must specify namespace for service account"))
    else:
        errs += [field.invalid(path.child("namespace"), namespace, m)
                 for m in validation.validate_namespace_name(namespace, False)]
    return errs


def _validate_verbs(verbs: list[Any], path: field.Path) -> field.ErrorList:
    if not verbs:
        return [field.required(path, "verbs must contain at least one value")]
    if has_wildcard(verbs):
        return [field.invalid(path, verbs, "if '*' is present, must not specify other verbs")] if len(verbs) > 1 else []
    if any(verb not in VERBS for verb in verbs):
        return [field.not_supported(path, verbs, VERBS)]
    return []


def _validate_list(values: list[Any], path: field.Path, what: str, plural: str) -> field.ErrorList:
    if not values:
        return [field.required(path, f"resource rules must supply at least one {what}")]
    if len(values) > 1 and has_wildcard(values):
        return [field.invalid(path, values, f"if '*' is present, must not specify other {plural}")]
    return []


def validate_resource_rule(rule: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaResourcePolicyRule."""
    errs = _validate_verbs(as_list(rule.get("verbs")), path.child("verbs"))
    errs += _validate_list(as_list(rule.get("apiGroups")), path.child("apiGroups"), "api group", "api groups")
    errs += _validate_list(as_list(rule.get("resources")), path.child("resources"), "resource", "resources")
    return errs + _validate_namespaces(as_list(rule.get("namespaces")), rule.get("clusterScope") is True,
                                       path.child("namespaces"))


def _validate_namespaces(namespaces: list[Any], cluster_scope: bool, path: field.Path) -> field.ErrorList:
    if not namespaces and not cluster_scope:
        return [field.required(path, "resource rules that are not cluster scoped must supply at least one namespace")]
    if has_wildcard(namespaces):
        if len(namespaces) > 1:
            return [field.invalid(path, namespaces, "if '*' is present, must not specify other namespaces")]
        return []
    return [field.invalid(path.index(i), ns, NS_ERR_INTRO + msg) for i, ns in enumerate(namespaces)
            for msg in validation.validate_namespace_name(as_str(ns), False)]


def validate_non_resource_rule(rule: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaNonResourcePolicyRule."""
    errs = _validate_verbs(as_list(rule.get("verbs")), path.child("verbs"))
    urls = as_list(rule.get("nonResourceURLs"))
    url_path = path.child("nonResourceURLs")
    if not urls:
        errs.append(field.required(url_path, "nonResourceURLs must contain at least one value"))
    elif has_wildcard(urls):
        if len(urls) > 1:
            errs.append(field.invalid(url_path, urls, "if '*' is present, must not specify other non-resource URLs"))
    else:
        errs += [err for i, url in enumerate(urls) if (err := validate_url(as_str(url), url_path.index(i)))]
    return errs


def validate_url(url: str, path: field.Path) -> field.FieldError | None:
    """ValidateNonResourceURLPath."""
    if not url:
        return field.invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return field.invalid(path, url, "must start with slash")
    if " " in url:
        return field.invalid(path, url, "must not contain white-space")
    if "//" in url:
        return field.invalid(path, url, "must not contain double slash")
    wildcards = url.count(WILDCARD)
    if wildcards > 1 or (wildcards == 1 and url[-2:] != "/*"):
        return field.invalid(path, url, "wildcard can only do suffix matching")
    return None
