"""Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration, and the rules,
selectors and match conditions ValidatingAdmissionPolicies share with them
(pkg/apis/admissionregistration/validation and k8s.io/apiserver/pkg/util/webhook/validation.go, v1.34)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...admission.webhook.validation import validate_webhook_service, validate_webhook_url
from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from .defaults import as_dict, as_list, dicts

Object = dict[str, Any]
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun", "Some", "Unknown")
NO_SIDE_EFFECT_CLASSES = ("None", "NoneOnDryRun")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
REINVOCATION_POLICIES = ("IfNeeded", "Never")
SCOPES = ("*", "Cluster", "Namespaced")
MAX_MATCH_CONDITIONS = 64
# What a match condition may read (a policy's also reads params when it has a paramKind).
MATCH_CONDITION_VARIABLES = ("object", "oldObject", "request", "authorizer")


@dataclass(frozen=True)
class Options:
    """validationOptions: creation is strict; an update keeps what the stored object already had."""

    ignore_match_conditions: bool = False
    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_webhook_names: bool = True
    allow_invalid_label_value_in_selector: bool = False


def has_wildcard(values: list[Any]) -> bool:
    return "*" in values


def validate_resources(resources: list[Any], path: Path) -> ErrorList:
    """validateResources: `res`, `res/sub`, `res/*`, `*/sub`, `*` and `*/*`, without overlaps."""
    errs: ErrorList = [] if resources else [field.required(path, "")]
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_res: set[str] = set()
    double_wildcard = single_wildcard = without_sub = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(field.required(path.index(i), ""))
            continue
        double_wildcard = double_wildcard or res_sub == "*/*"
        single_wildcard = single_wildcard or res_sub == "*"
        res, slash, sub = str(res_sub).partition("/")
        if not slash:
            without_sub = res_sub != "*"  # Go assigns (the last one wins), it does not accumulate
            continue
        if res in with_wildcard_sub:
            errs.append(field.invalid(path.index(i), res_sub, f"if '{res}/*' is present, must not specify {res_sub}"))
        if sub in sub_with_wildcard_res:
            errs.append(field.invalid(path.index(i), res_sub, f"if '*/{sub}' is present, must not specify {res_sub}"))
        if sub == "*":
            with_wildcard_sub.add(res)
        if res == "*":
            sub_with_wildcard_res.add(sub)
    if len(resources) > 1 and double_wildcard:
        errs.append(field.invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single_wildcard and without_sub:
        errs.append(field.invalid(path, resources,
                                  "if '*' is present, must not specify other resources without subresources"))
    return errs


def validate_rule(rule: Object, path: Path) -> ErrorList:
    """validateRule (subresources allowed, as for every v1 rule)."""
    errs: ErrorList = []
    groups, versions = as_list(rule.get("apiGroups")), as_list(rule.get("apiVersions"))
    if not groups:
        errs.append(field.required(path.child("apiGroups"), ""))
    if len(groups) > 1 and has_wildcard(groups):
        errs.append(field.invalid(path.child("apiGroups"), groups,
                                  "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(field.required(path.child("apiVersions"), ""))
    if len(versions) > 1 and has_wildcard(versions):
        errs.append(field.invalid(path.child("apiVersions"), versions,
                                  "if '*' is present, must not specify other API versions"))
    errs += [field.required(path.child("apiVersions").index(i), "") for i, v in enumerate(versions) if v == ""]
    errs += validate_resources(as_list(rule.get("resources")), path.child("resources"))
    if rule.get("scope") is not None and rule["scope"] not in SCOPES:
        errs.append(field.not_supported(path.child("scope"), rule["scope"], SCOPES))
    return errs


def validate_rule_with_operations(rule: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    operations = as_list(rule.get("operations"))
    if not operations:
        errs.append(field.required(path.child("operations"), ""))
    if len(operations) > 1 and has_wildcard(operations):
        errs.append(field.invalid(path.child("operations"), operations,
                                  "if '*' is present, must not specify other operations"))
    errs += [field.not_supported(path.child("operations").index(i), op, OPERATIONS)
             for i, op in enumerate(operations) if op not in OPERATIONS]
    return errs + validate_rule(rule, path)


def validate_review_versions(versions: list[Any], require_recognized: bool, path: Path) -> ErrorList:
    """validateAdmissionReviewVersions."""
    accepted = ", ".join(ACCEPTED_REVIEW_VERSIONS)
    if not versions:
        return [field.required(path, f"must specify one of {accepted}")]
    errs: ErrorList = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(field.invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [field.invalid(path.index(i), version, m) for m in validation.is_dns1035_label(version)]
    if require_recognized and not seen.intersection(ACCEPTED_REVIEW_VERSIONS):
        errs.append(field.invalid(path, versions, f"must include at least one of {accepted}"))
    return errs


def validate_client_config(client: Object, path: Path) -> ErrorList:
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        return [field.required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(path.child("url"), url, True)
    return validate_webhook_service(path.child("service"), as_dict(service))


def compile_error(path: Path, expression: str, variables: tuple[str, ...], value: str | None = None) -> ErrorList:
    """The expression compiled with the CEL environment; a compile error is an Invalid value (shown as
    `value` when Kubernetes shows the expression as written rather than trimmed)."""
    from ... import cel  # imported on first use: the CEL libraries are only needed once there is CEL

    try:
        cel.compile(expression, variables=variables)
    except cel.CompileError as err:
        return [field.invalid(path, expression if value is None else value, str(err))]
    return []


def validate_match_conditions(conditions: list[Any], path: Path, with_params: bool = False) -> ErrorList:
    errs: ErrorList = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(field.too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    variables = MATCH_CONDITION_VARIABLES + (("params",) if with_params else ())
    names: set[str] = set()
    for i, condition in enumerate(dicts(conditions)):
        expression = str(condition.get("expression") or "").strip()
        if not expression:
            errs.append(field.required(path.index(i).child("expression"), ""))
        else:
            errs += compile_error(path.index(i).child("expression"), expression, variables)
        name = condition.get("name") or ""
        if not name:
            errs.append(field.required(path.index(i).child("name"), ""))
        else:
            errs += [field.invalid(path.index(i).child("name"), name, m) for m in validation.is_qualified_name(name)]
        if name and name in names:
            errs.append(field.duplicate(path.index(i).child("name"), name))
        names.add(name)
    return errs


def _validate_selector(selector: Any, opts: Options, path: Path) -> ErrorList:
    if selector is None:
        return []
    return validation.validate_label_selector(as_dict(selector), path, opts.allow_invalid_label_value_in_selector)


def validate_webhook(hook: Object, opts: Options, path: Path, mutating: bool) -> ErrorList:
    """validateMutatingWebhook / validateValidatingWebhook."""
    errs = validation.is_fully_qualified_name(path.child("name"), hook.get("name") or "")
    for i, rule in enumerate(dicts(hook.get("rules"))):
        errs += validate_rule_with_operations(rule, path.child("rules").index(i))
    if hook.get("failurePolicy") is not None and hook["failurePolicy"] not in FAILURE_POLICIES:
        errs.append(field.not_supported(path.child("failurePolicy"), hook["failurePolicy"], FAILURE_POLICIES))
    if hook.get("matchPolicy") is not None and hook["matchPolicy"] not in MATCH_POLICIES:
        errs.append(field.not_supported(path.child("matchPolicy"), hook["matchPolicy"], MATCH_POLICIES))
    allowed = NO_SIDE_EFFECT_CLASSES if opts.require_no_side_effects else SIDE_EFFECT_CLASSES
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(field.required(path.child("sideEffects"), f"must specify one of {', '.join(allowed)}"))
    elif side_effects not in allowed:
        errs.append(field.not_supported(path.child("sideEffects"), side_effects, allowed))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        errs.append(field.invalid(path.child("timeoutSeconds"), timeout,
                                  "the timeout value must be between 1 and 30 seconds"))
    errs += _validate_selector(hook.get("namespaceSelector"), opts, path.child("namespaceSelector"))
    errs += _validate_selector(hook.get("objectSelector"), opts, path.child("objectSelector"))
    policy = hook.get("reinvocationPolicy")
    if mutating and policy is not None and policy not in REINVOCATION_POLICIES:
        errs.append(field.not_supported(path.child("reinvocationPolicy"), policy, REINVOCATION_POLICIES))
    errs += validate_client_config(as_dict(hook.get("clientConfig")), path.child("clientConfig"))
    if not opts.ignore_match_conditions:
        errs += validate_match_conditions(as_list(hook.get("matchConditions")), path.child("matchConditions"))
    return errs


def validate_webhook_configuration(obj: Object, opts: Options, mutating: bool) -> ErrorList:
    """The webhooks of a configuration (its metadata is the strategy's to validate)."""
    errs: ErrorList = []
    names: set[str] = set()
    for i, hook in enumerate(dicts(obj.get("webhooks"))):
        path = Path("webhooks").index(i)
        errs += validate_webhook(hook, opts, path, mutating)
        errs += validate_review_versions(as_list(hook.get("admissionReviewVersions")),
                                         opts.require_recognized_review_version, path.child("admissionReviewVersions"))
        name = hook.get("name") or ""
        if opts.require_unique_webhook_names and name:
            if name in names:
                errs.append(field.duplicate(path.child("name"), name))
            names.add(name)
    return errs


def _selector_invalid(selector: Any) -> bool:
    return selector is not None and bool(validation.validate_label_selector(as_dict(selector), Path("x")))


def update_options(new: Object, old: Object) -> Options:
    """What an update must meet: no stricter than what the stored configuration already met."""
    old_hooks, new_hooks = dicts(old.get("webhooks")), dicts(new.get("webhooks"))
    accepted = set(ACCEPTED_REVIEW_VERSIONS)
    names = [h.get("name") for h in old_hooks]
    same_conditions = len(old_hooks) == len(new_hooks) and all(
        a.get("matchConditions") == b.get("matchConditions") for a, b in zip(old_hooks, new_hooks, strict=True))
    return Options(
        ignore_match_conditions=same_conditions,
        require_no_side_effects=all(h.get("sideEffects") in NO_SIDE_EFFECT_CLASSES for h in old_hooks),
        require_recognized_review_version=all(
            not h.get("admissionReviewVersions") or set(as_list(h["admissionReviewVersions"])) & accepted
            for h in old_hooks),
        require_unique_webhook_names=len(names) == len(set(names)),
        allow_invalid_label_value_in_selector=any(
            _selector_invalid(h.get("namespaceSelector")) or _selector_invalid(h.get("objectSelector"))
            for h in old_hooks),
    )
