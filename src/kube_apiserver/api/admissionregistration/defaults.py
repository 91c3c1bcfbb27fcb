"""admissionregistration.k8s.io/v1 defaulting (pkg/apis/admissionregistration/v1/defaults.go and the
generated SetObjectDefaults_*), and the shape the objects are stored and served in: fields in Go
declaration order, empty optional ones left out, []byte fields as canonical base64."""

from __future__ import annotations

import base64
from typing import Any

from ...apimachinery import errors, jsontypes

Object = dict[str, Any]
TIMEOUT_SECONDS = 10
SERVICE_PORT = 443


def as_dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def dicts(value: Any) -> list[Object]:
    """The entries of a list that are objects (anything else was refused when the body was decoded)."""
    return [item for item in as_list(value) if isinstance(item, dict)]


def default_rule(rule: Object) -> None:
    """SetDefaults_Rule: a rule covers every scope unless it says otherwise."""
    rule.setdefault("scope", "*")


def default_match_resources(match: Object) -> None:
    """SetDefaults_MatchResources, and the rules inside it."""
    match.setdefault("matchPolicy", "Equivalent")
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in dicts(match.get(key)):
            default_rule(rule)


def default_webhook(hook: Object, mutating: bool) -> None:
    """SetDefaults_MutatingWebhook / SetDefaults_ValidatingWebhook (sideEffects and
    admissionReviewVersions have no default in v1: they are required)."""
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", TIMEOUT_SECONDS)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    service = as_dict(hook.get("clientConfig")).get("service")
    if isinstance(service, dict):
        service.setdefault("port", SERVICE_PORT)
    for rule in dicts(hook.get("rules")):
        default_rule(rule)


def default_webhook_configuration(obj: Object, mutating: bool) -> None:
    for hook in dicts(obj.get("webhooks")):
        default_webhook(hook, mutating)


def default_policy(obj: Object) -> None:
    """SetObjectDefaults_ValidatingAdmissionPolicy."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("failurePolicy", "Fail")
    if isinstance(spec.get("matchConstraints"), dict):
        default_match_resources(spec["matchConstraints"])


def default_binding(obj: Object) -> None:
    """SetObjectDefaults_ValidatingAdmissionPolicyBinding."""
    match = as_dict(obj.get("spec")).get("matchResources")
    if isinstance(match, dict):
        default_match_resources(match)


# ---- the stored form ----

def ordered(obj: Object, keys: tuple[str, ...], required: tuple[str, ...] = ()) -> Object:
    """The fields in Go declaration order; empty ones left out unless `required` (not omitempty)."""
    out = {key: obj[key] for key in keys if key in obj and (key in required or obj[key] not in (None, [], {}))}
    out.update((key, value) for key, value in obj.items() if key not in out and key not in keys)
    return out


def canonical_bytes(container: Object, key: str, kind: str) -> None:
    """A []byte field as Go re-encodes it; data that is not base64 fails decoding (400)."""
    value = container.get(key)
    if value in (None, ""):
        container.pop(key, None)  # omitempty
        return
    if not isinstance(value, str):
        return  # the body's type check answers this one
    try:
        data = jsontypes.decode_base64(value)
    except jsontypes.CorruptBase64 as err:
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {err}') from None
    container[key] = base64.b64encode(data).decode()


RULE_KEYS = ("operations", "apiGroups", "apiVersions", "resources", "scope")
WEBHOOK_KEYS = ("name", "clientConfig", "rules", "failurePolicy", "matchPolicy", "namespaceSelector",
                "objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions", "reinvocationPolicy",
                "matchConditions")
# Not omitempty in Go: an empty selector or list is kept as it was sent.
WEBHOOK_KEPT = ("name", "clientConfig", "namespaceSelector", "objectSelector", "admissionReviewVersions")


def stored_webhook(hook: Object, kind: str) -> Object:
    client = as_dict(hook.get("clientConfig"))
    canonical_bytes(client, "caBundle", kind)
    if isinstance(client.get("service"), dict):
        client["service"] = ordered(client["service"], ("namespace", "name", "path", "port"),
                                    ("namespace", "name"))
    hook["clientConfig"] = ordered(client, ("url", "service", "caBundle"))
    if isinstance(hook.get("rules"), list):
        hook["rules"] = [ordered(r, RULE_KEYS) if isinstance(r, dict) else r for r in hook["rules"]]
    return ordered(hook, WEBHOOK_KEYS, WEBHOOK_KEPT)


def stored_webhook_configuration(obj: Object) -> None:
    kind = obj.get("kind") or "WebhookConfiguration"
    if isinstance(obj.get("webhooks"), list):
        obj["webhooks"] = [stored_webhook(h, kind) if isinstance(h, dict) else h for h in obj["webhooks"]]
        if not obj["webhooks"]:
            del obj["webhooks"]
