"""x-kubernetes-validations over HTTP: each rule shape kube-apiserver supports, with an object that
passes and one that is refused with kube-apiserver's cause; and CRDs refused at creation for a rule
that does not compile or whose estimated cost is over budget, with kube-apiserver's messages
(costs worked out with cel-go's estimator: apiextensions-apiserver compilation.go, cel-go cost.go)."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RULES = "/apis/cel.example.com/v1/namespaces/default/rulesets"
MERGE = {"Content-Type": "application/merge-patch+json"}
ADVICE = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and " \
         "strings are declared)"
STRING, INTEGER = {"type": "string", "maxLength": 64}, {"type": "integer"}


def rules(*entries: str | dict[str, Any]) -> list[dict[str, Any]]:
    return [{"rule": e} if isinstance(e, str) else e for e in entries]


SPEC = {"type": "object", "properties": {
    "name": {**STRING, "x-kubernetes-validations": rules("self == oldSelf")},
    "scaling": {"type": "object", "properties": {"minReplicas": INTEGER, "replicas": INTEGER},
                "x-kubernetes-validations": rules({"rule": "self.minReplicas <= self.replicas",
                                                   "message": "replicas must be at least minReplicas"})},
    "items": {"type": "array", "maxItems": 10, "items": STRING},
    "hosts": {"type": "array", "maxItems": 10, "items": STRING, "x-kubernetes-validations": rules(
        {"rule": "self.all(h, h.endsWith('.example.com'))", "message": "hosts must be under example.com"},
        {"rule": "self.exists(h, h.startsWith('www.'))", "messageExpression":
            "'no www host among ' + self.join(', ')"})},
    "label": {**STRING, "x-kubernetes-validations": rules("self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')")},
    "endpoint": {**STRING, "x-kubernetes-validations": rules({
        "rule": "isURL(self) && url(self).getScheme() == 'https'", "message": "must be an https URL"})},
    "memory": {**STRING, "x-kubernetes-validations": rules(
        "quantity(self).isLessThan(quantity('1Gi'))")},
    "timeout": {**STRING, "x-kubernetes-validations": rules("duration(self) < duration('1h')")},
    "counter": {"type": "integer", "x-kubernetes-validations": rules({
        "rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": True,
        "message": "counter may only grow"})},
    "ports": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "required": ["name"], "properties": {
                  "name": STRING, "port": INTEGER, "protocol": {**STRING, "default": "TCP"}},
                  "x-kubernetes-validations": rules({"rule": "self.protocol == oldSelf.protocol",
                                                     "message": "protocol is immutable"})},
              "x-kubernetes-validations": rules({"rule": "self.exists(p, p.name == 'http')",
                                                 "message": "an http port is required"})},
    "tls": {"type": "object", "properties": {"enabled": {"type": "boolean"}, "secretName": STRING}},
    "ingress": {"type": "boolean"}},
    "x-kubernetes-validations": rules(
        "size(self.items) <= 3",
        {"rule": "!has(self.tls) || !has(self.tls.enabled) || !self.tls.enabled || has(self.tls.secretName)",
         "fieldPath": ".tls.secretName",
         "reason": "FieldValueRequired", "message": "a secret is needed when TLS is enabled"},
        {"rule": "!has(self.ingress) || !self.ingress || has(self.endpoint)", "fieldPath": ".endpoint",
         "reason": "FieldValueForbidden",
         "messageExpression": "'ingress without an endpoint for ' + self.name"})}


def crd(name: str, spec: dict[str, Any], group: str = "cel.example.com") -> dict[str, Any]:
    plural = name.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": name},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


def established(server, name: str) -> bool:
    out = server.request("GET", f"{CRDS}/{name}")
    conditions = (out.json().get("status") or {}).get("conditions") or [] if out.status == 200 else []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


@pytest.fixture(scope="module")
def ruleset(server):
    assert server.request("POST", CRDS, crd("RuleSet", SPEC)).status == 201
    deadline = time.monotonic() + 20
    while not established(server, "rulesets.cel.example.com"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return server


VALID = {"name": "web", "scaling": {"minReplicas": 1, "replicas": 2}, "items": ["a", "b"],
         "hosts": ["www.example.com", "api.example.com"], "label": "web-1", "endpoint": "https://web.example.com/x",
         "memory": "512Mi", "timeout": "30m", "counter": 1, "ports": [{"name": "http", "port": 80}],
         "tls": {"enabled": True, "secretName": "web-tls"}, "ingress": True}
_names = iter(range(1000))


def post(server, **changes: Any):
    spec = {**copy.deepcopy(VALID), **changes}
    body = {"apiVersion": "cel.example.com/v1", "kind": "RuleSet", "metadata": {"name": f"r{next(_names)}"},
            "spec": {k: v for k, v in spec.items() if v is not None}}
    return server.request("POST", RULES, body)


def refused(out) -> list[tuple[str, str, str]]:
    assert out.status == 422, out.body
    return sorted((c["field"], c["reason"], c["message"]) for c in out.json()["details"]["causes"])


def test_a_valid_object_passes_every_rule(ruleset):
    out = post(ruleset)
    assert out.status == 201, out.body
    assert out.json()["spec"]["ports"] == [{"name": "http", "port": 80, "protocol": "TCP"}]


@pytest.mark.parametrize(("changes", "expected"), [
    # cross-field
    ({"scaling": {"minReplicas": 3, "replicas": 2}},
     ("spec.scaling", "FieldValueInvalid", 'Invalid value: "object": replicas must be at least minReplicas')),
    # list size, reported with the rule itself
    ({"items": ["a", "b", "c", "d"]},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": failed rule: size(self.items) <= 3')),
    # all()
    ({"hosts": ["www.example.com", "evil.test"]},
     ("spec.hosts", "FieldValueInvalid", 'Invalid value: "array": hosts must be under example.com')),
    # exists() with a messageExpression
    ({"hosts": ["api.example.com", "db.example.com"]},
     ("spec.hosts", "FieldValueInvalid", 'Invalid value: "array": no www host among api.example.com, db.example.com')),
    # matches()
    ({"label": "Web_1"}, ("spec.label", "FieldValueInvalid",
                          "Invalid value: \"string\": failed rule: self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')")),
    # isURL() and url()
    ({"endpoint": "http://web.example.com"},
     ("spec.endpoint", "FieldValueInvalid", 'Invalid value: "string": must be an https URL')),
    ({"endpoint": "not a url"}, ("spec.endpoint", "FieldValueInvalid", 'Invalid value: "string": must be an https URL')),
    # quantity()
    ({"memory": "2Gi"}, ("spec.memory", "FieldValueInvalid",
                         "Invalid value: \"string\": failed rule: quantity(self).isLessThan(quantity('1Gi'))")),
    ({"memory": "lots"}, ("spec.memory", "FieldValueInvalid",
                          "Invalid value: \"string\": quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: "
                          "quantity(self).isLessThan(quantity('1Gi'))")),
    # duration(), valid and not
    ({"timeout": "2h"}, ("spec.timeout", "FieldValueInvalid",
                         "Invalid value: \"string\": failed rule: duration(self) < duration('1h')")),
    ({"timeout": "soon"}, ("spec.timeout", "FieldValueInvalid",
                           "Invalid value: \"string\": type conversion error from 'string' to "
                           "'google.protobuf.Duration' evaluating rule: duration(self) < duration('1h')")),
    # reason and fieldPath: the error is the named field's, of the named type
    ({"tls": {"enabled": True}},
     ("spec.tls.secretName", "FieldValueRequired", "Required value: a secret is needed when TLS is enabled")),
    ({"endpoint": None},
     ("spec.endpoint", "FieldValueForbidden", "Forbidden: ingress without an endpoint for web")),
    # exists() over a map list
    ({"ports": [{"name": "metrics", "port": 9090}]},
     ("spec.ports", "FieldValueInvalid", 'Invalid value: "array": an http port is required')),
])
def test_rule_refuses_an_invalid_object(ruleset, changes, expected):
    assert refused(post(ruleset, **changes)) == [expected]


def test_has_guards_optional_fields(ruleset):
    for changes in ({"tls": None}, {"tls": {"enabled": False}}, {"tls": {}}, {"ingress": None, "endpoint": None}):
        assert post(ruleset, **changes).status == 201, changes


def test_transition_rules_run_on_update(ruleset):
    created = post(ruleset, counter=None)
    assert created.status == 201  # self == oldSelf and the counter's rule need an old value
    path = f"{RULES}/{created.json()['metadata']['name']}"
    assert ruleset.request("PATCH", path, {"spec": {"counter": 5}}, MERGE).status == 200  # no old value: optional
    assert refused(ruleset.request("PATCH", path, {"spec": {"counter": 4}}, MERGE)) == [
        ("spec.counter", "FieldValueInvalid", "Invalid value: \"integer\": counter may only grow")]
    assert refused(ruleset.request("PATCH", path, {"spec": {"name": "api"}}, MERGE)) == [
        ("spec.name", "FieldValueInvalid", "Invalid value: \"string\": failed rule: self == oldSelf")]
    # map list items correlate by key: reordering or adding is fine, changing an item's protocol is not
    ports = [{"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "http", "port": 8080}]
    assert ruleset.request("PATCH", path, {"spec": {"ports": ports}}, MERGE).status == 200
    ports[0]["protocol"] = "TCP"
    assert refused(ruleset.request("PATCH", path, {"spec": {"ports": ports}}, MERGE)) == [
        ("spec.ports[0]", "FieldValueInvalid", 'Invalid value: "object": protocol is immutable')]


def test_blocking_schema_errors_skip_the_rules(ruleset):
    assert refused(post(ruleset, scaling={"minReplicas": 3, "replicas": "2"})) == [
        ("<nil>", "FieldValueInvalid", "Invalid value: null: some validation rules were not checked because the "
                                       "object was invalid; correct the existing errors to complete validation"),
        ("spec.scaling.replicas", "FieldValueTypeInvalid",
         'Invalid value: "string": spec.scaling.replicas in body must be of type integer: "string"')]


# ---- CRDs refused for their rules ----

RULE_PATH = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"


def rule_crd(name: str, rule: dict[str, Any], properties: dict[str, Any] | None = None) -> dict[str, Any]:
    props = properties or {"replicas": INTEGER, "name": STRING}
    return crd(name, {"type": "object", "properties": props, "x-kubernetes-validations": [rule]}, "bad.example.com")


def crd_causes(out) -> list[tuple[str, str, str]]:
    assert out.status == 422, out.body
    return [(c["field"], c["reason"], c["message"]) for c in out.json()["details"]["causes"]]


@pytest.mark.parametrize(("rule", "message"), [
    ("self.replicas >", "compilation failed: ERROR: <input>:1:16: Syntax error: mismatched input '<EOF>' expecting "
                        "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
                        "STRING, BYTES, IDENTIFIER}\n | self.replicas >\n | ...............^"),
    ("self.replicas > minimum", "compilation failed: ERROR: <input>:1:17: undeclared reference to 'minimum' "
                                "(in container '')\n | self.replicas > minimum\n | ................^"),
    ("self.replica > 1", "compilation failed: ERROR: <input>:1:5: undefined field 'replica'\n"
                         " | self.replica > 1\n | ....^"),
    ("self.name + 1 == 'x'", "compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' "
                             "applied to '(string, int)'\n | self.name + 1 == 'x'\n | ..........^"),
    ("self.replicas", "cel expression must evaluate to a bool"),
])
def test_crd_with_a_rule_that_does_not_compile(server, rule, message):
    out = server.request("POST", CRDS, rule_crd("Broken", {"rule": rule}))
    shown = rule.replace(">", "\\u003e")
    assert crd_causes(out) == [(f"{RULE_PATH}.rule", "FieldValueInvalid", f'Invalid value: {{"Rule":"{shown}",'
                                '"Message":"","MessageExpression":"","Reason":null,"FieldPath":"",'
                                f'"OptionalOldSelf":null}}: {message}')]


def test_crd_with_a_broken_message_expression(server):
    out = server.request("POST", CRDS, rule_crd("Broken", {"rule": "self.replicas > 1",
                                                           "messageExpression": "self.replicas"}))
    assert crd_causes(out) == [(f"{RULE_PATH}.messageExpression", "FieldValueInvalid",
                                'Invalid value: {"Rule":"self.replicas \\u003e 1","Message":"","MessageExpression":'
                                '"self.replicas","Reason":null,"FieldPath":"","OptionalOldSelf":null}: '
                                "messageExpression must evaluate to a string")]


def test_transition_rule_under_an_atomic_list_is_refused(server):
    items = {"type": "object", "properties": {"name": STRING},
             "x-kubernetes-validations": [{"rule": "self.name == oldSelf.name"}]}
    out = server.request("POST", CRDS, rule_crd("Atomic", {"rule": "true"}, {
        "list": {"type": "array", "maxItems": 4, "items": items}}))
    base = "spec.validation.openAPIV3Schema.properties[spec].properties[list]"
    assert crd_causes(out) == [(f"{base}.items.x-kubernetes-validations[0].rule", "FieldValueInvalid",
                                'Invalid value: "self.name == oldSelf.name": oldSelf cannot be used on the '
                                f"uncorrelatable portion of the schema within {base}")]


# matches() on a list item, per item: the string (maxLength 64: 256 bytes) costs ceil(257 * 0.1) = 26 times
# the regex's ceil(9 * 0.25) = 3, plus the item (1), the && step (1) and the loop condition (2): 82; plus 2
# for self and the result. Without maxItems, 1048575 strings fit in a request.
HOSTS_RULE = "self.all(h, h.matches('^[a-z.]+$'))"


def hosts(max_items: int | None = None) -> dict[str, Any]:
    schema = {"type": "array", "items": STRING, "x-kubernetes-validations": [{"rule": HOSTS_RULE}]}
    return schema if max_items is None else {**schema, "maxItems": max_items}


def test_crd_with_a_rule_over_the_cost_budget(server):
    out = server.request("POST", CRDS, rule_crd("Costly", {"rule": "true"}, {"hosts": hosts()}))
    assert 2 + 82 * 1048575 == 85983152  # 8.6 times the 10M per-rule limit
    assert crd_causes(out) == [(
        "spec.validation.openAPIV3Schema.properties[spec].properties[hosts].x-kubernetes-validations[0].rule",
        "FieldValueForbidden", f"Forbidden: estimated rule cost exceeds budget by factor of 8.6x {ADVICE}")]
    bounded = server.request("POST", CRDS, rule_crd("Bounded", {"rule": "true"}, {"hosts": hosts(100)}))
    assert bounded.status == 201, bounded.body


def test_crd_whose_rules_together_are_over_the_budget(server):
    # thirteen lists, each rule under the 10M limit, together over the 100M of a whole schema
    props = {f"h{k:02d}": hosts(100000 + k) for k in range(1, 14)}
    total = sum(2 + 82 * (100000 + k) for k in range(1, 14))
    assert total == 106607488
    out = server.request("POST", CRDS, rule_crd("Greedy", {"rule": "true"}, props))
    base = "spec.validation.openAPIV3Schema"
    contributed = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
    assert crd_causes(out) == [
        *[(f"{base}.properties[spec].properties[h{k}].x-kubernetes-validations[0].rule", "FieldValueForbidden",
           contributed) for k in (13, 12, 11, 10)],
        (base, "FieldValueForbidden", "Forbidden: x-kubernetes-validations estimated rule cost total for entire "
                                      f"OpenAPIv3 schema exceeds budget by factor of 1.066075x {ADVICE}")]
