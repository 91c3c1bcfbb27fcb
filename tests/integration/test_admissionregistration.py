"""admissionregistration.k8s.io/v1 definitions: defaults, generation, the status split of policies,
tables, protobuf bodies, and invalid objects refused with Kubernetes' exact messages."""

from __future__ import annotations

import copy

import pytest

from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

GROUP = "/apis/admissionregistration.k8s.io/v1"
MUTATING = f"{GROUP}/mutatingwebhookconfigurations"
VALIDATING = f"{GROUP}/validatingwebhookconfigurations"
POLICIES = f"{GROUP}/validatingadmissionpolicies"
BINDINGS = f"{GROUP}/validatingadmissionpolicybindings"
MERGE = {"Content-Type": "application/merge-patch+json"}
PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}
RULE = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}


def webhook(name: str = "hook.example.com", **extra) -> dict:
    return {"name": name, "clientConfig": {"url": "https://127.0.0.1:9/hook"}, "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "rules": [dict(RULE)], **extra}


def configuration(kind: str, name: str, *hooks: dict) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(hooks)}


def policy(name: str, **spec) -> dict:
    base = {"matchConstraints": {"resourceRules": [dict(RULE)]}, "validations": [{"expression": "true"}]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {**base, **spec}}


def binding(name: str, **spec) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": "p", "validationActions": ["Deny"], **spec}}


def test_webhook_defaults_and_generation(server):
    hook = webhook(clientConfig={"service": {"namespace": "ns", "name": "svc"}})
    created = server.request("POST", MUTATING, configuration("MutatingWebhookConfiguration", "def-m", hook))
    assert created.status == 201, created.body
    out = created.json()
    assert out["metadata"]["generation"] == 1
    assert out["webhooks"] == [{
        "name": "hook.example.com", "clientConfig": {"service": {"namespace": "ns", "name": "svc", "port": 443}},
        "rules": [{**RULE, "scope": "*"}], "failurePolicy": "Fail", "matchPolicy": "Equivalent",
        "namespaceSelector": {}, "objectSelector": {}, "sideEffects": "None", "timeoutSeconds": 10,
        "admissionReviewVersions": ["v1"], "reinvocationPolicy": "Never"}]
    labelled = server.request("PATCH", f"{MUTATING}/def-m", {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert labelled.json()["metadata"]["generation"] == 1
    hooks = copy.deepcopy(out["webhooks"])
    hooks[0]["timeoutSeconds"] = 5
    changed = server.request("PATCH", f"{MUTATING}/def-m", {"webhooks": hooks}, MERGE)
    assert changed.status == 200, changed.body
    assert changed.json()["metadata"]["generation"] == 2
    validating = server.request("POST", VALIDATING, configuration("ValidatingWebhookConfiguration", "def-v", webhook()))
    assert "reinvocationPolicy" not in validating.json()["webhooks"][0]


def test_update_needs_resource_version(server):
    server.request("POST", VALIDATING, configuration("ValidatingWebhookConfiguration", "rv-v", webhook()))
    put = server.request("PUT", f"{VALIDATING}/rv-v", configuration("ValidatingWebhookConfiguration", "rv-v",
                                                                    webhook()))
    assert put.status == 422
    assert put.json()["message"] == ('ValidatingWebhookConfiguration.admissionregistration.k8s.io "rv-v" is invalid: '
                                     'metadata.resourceVersion: Invalid value: "": must be specified for an update')


INVALID_WEBHOOKS = [
    ({"name": "short"}, 'webhooks[0].name: Invalid value: "short": should be a domain with at least three '
                        "segments separated by dots"),
    ({"name": ""}, "webhooks[0].name: Required value"),
    ({"sideEffects": None}, "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"),
    ({"sideEffects": "Some"}, 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
                              '"NoneOnDryRun"'),
    ({"admissionReviewVersions": []}, "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, "
                                      "v1beta1"),
    ({"admissionReviewVersions": ["v2"]}, 'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include '
                                          "at least one of v1, v1beta1"),
    ({"admissionReviewVersions": ["v1", "v1"]}, 'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": '
                                                "duplicate version"),
    ({"timeoutSeconds": 31}, "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and "
                             "30 seconds"),
    ({"failurePolicy": "Maybe"}, 'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", '
                                 '"Ignore"'),
    ({"matchPolicy": "Loose"}, 'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: '
                               '"Equivalent", "Exact"'),
    ({"clientConfig": {}}, "webhooks[0].clientConfig: Required value: exactly one of url or service is required"),
    ({"clientConfig": {"url": "http://example.com/x"}}, 'webhooks[0].clientConfig.url: Invalid value: "http": '
                                                        "'https' is the only allowed URL scheme; desired format: "
                                                        "https://host[/path]"),
    ({"clientConfig": {"url": "https://example.com/x?a=b"}}, 'webhooks[0].clientConfig.url: Invalid value: "a=b": '
                                                             "query parameters are not permitted in the URL"),
    ({"clientConfig": {"url": "https://example.com/x#f"}}, 'webhooks[0].clientConfig.url: Invalid value: "f": '
                                                           "fragments are not permitted in the URL"),
    ({"clientConfig": {"service": {"name": "s", "namespace": "n", "port": 0}}},
     "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, "
     "inclusive"),
    ({"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "xy"}}},
     'webhooks[0].clientConfig.service.path: Invalid value: "xy": must start with a \'/\''),
    ({"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/a//B/"}}},
     '[webhooks[0].clientConfig.service.path: Invalid value: "/a//B/": segment[1] may not be empty, '
     'webhooks[0].clientConfig.service.path: Invalid value: "/a//B/": segment[2]: a lowercase RFC 1123 subdomain '
     "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"),
    ({"clientConfig": {"service": {"namespace": "n"}}}, "webhooks[0].clientConfig.service.name: Required value"),
    ({"rules": [{"operations": ["CREATE", "*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]},
     'webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if \'*\' is present, must not specify other '
     "operations"),
    ({"rules": [{"operations": ["PATCH"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]},
     'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", '
     '"DELETE", "UPDATE"'),
    ({"rules": [{"operations": ["*"], "apiGroups": [], "apiVersions": ["v1"], "resources": ["pods"]}]},
     "webhooks[0].rules[0].apiGroups: Required value"),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/*", "pods"]}]},
     'webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other '
     "resources"),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/*",
                                                                                              "pods/status"]}]},
     'webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if \'pods/*\' is present, must not specify '
     "pods/status"),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                 "scope": "Global"}]},
     'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"'),
    ({"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
     "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` "
     "is 'In' or 'NotIn'"),
    ({"matchConditions": [{"name": "", "expression": "true"}]}, "webhooks[0].matchConditions[0].name: Required value"),
    ({"matchConditions": [{"name": "a", "expression": " "}]},
     "webhooks[0].matchConditions[0].expression: Required value"),
]


@pytest.mark.parametrize(("change", "message"), INVALID_WEBHOOKS)
def test_invalid_validating_webhook(server, change, message):
    hook = {k: v for k, v in {**webhook(), **change}.items() if v is not None}
    resp = server.request("POST", VALIDATING, configuration("ValidatingWebhookConfiguration", "bad-v", hook))
    assert resp.status == 422, resp.body
    assert resp.json()["message"] == ('ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad-v" is '
                                      f"invalid: {message}")


def test_invalid_mutating_webhooks(server):
    hooks = (webhook(reinvocationPolicy="Sometimes"), webhook())
    resp = server.request("POST", MUTATING, configuration("MutatingWebhookConfiguration", "bad-m", *hooks))
    assert resp.json()["message"] == (
        'MutatingWebhookConfiguration.admissionregistration.k8s.io "bad-m" is invalid: [webhooks[0].reinvocationPolicy: '
        'Unsupported value: "Sometimes": supported values: "IfNeeded", "Never", webhooks[1].name: Duplicate value: '
        '"hook.example.com"]')
    causes = resp.json()["details"]["causes"]
    assert causes[1] == {"reason": "FieldValueDuplicate", "message": 'Duplicate value: "hook.example.com"',
                         "field": "webhooks[1].name"}


def test_policy_defaults_status_and_generation(server):
    created = server.request("POST", POLICIES, {**policy("pol-a"), "status": {"observedGeneration": 7}})
    assert created.status == 201, created.body
    out = created.json()
    assert out["status"] == {} and out["metadata"]["generation"] == 1
    assert out["spec"]["failurePolicy"] == "Fail"
    assert out["spec"]["matchConstraints"] == {"resourceRules": [{**RULE, "scope": "*"}], "matchPolicy": "Equivalent",
                                               "namespaceSelector": {}, "objectSelector": {}}
    status = server.request("PATCH", f"{POLICIES}/pol-a/status", {"status": {"observedGeneration": 1},
                                                                   "spec": {"failurePolicy": "Ignore"}}, MERGE)
    assert status.status == 200, status.body
    assert status.json()["status"] == {"observedGeneration": 1}
    assert status.json()["spec"]["failurePolicy"] == "Fail" and status.json()["metadata"]["generation"] == 1
    spec = server.request("PATCH", f"{POLICIES}/pol-a", {"spec": {"failurePolicy": "Ignore"},
                                                         "status": {"observedGeneration": 5}}, MERGE)
    assert spec.json()["metadata"]["generation"] == 2 and spec.json()["status"] == {"observedGeneration": 1}


INVALID_POLICIES = [
    ({"validations": []}, "[spec.validations: Required value: validations or auditAnnotations must contain at least "
                          "one item, spec.auditAnnotations: Required value: validations or auditAnnotations must "
                          "contain at least one item]"),
    ({"failurePolicy": "Never"}, 'spec.failurePolicy: Unsupported value: "Never": supported values: "Fail", '
                                 '"Ignore"'),
    ({"matchConstraints": {}}, "spec.matchConstraints.resourceRules: Required value"),
    ({"paramKind": {"apiVersion": "a/b/c", "kind": "K"}},
     'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
    ({"paramKind": {"apiVersion": "v1"}}, "spec.paramKind.kind: Required value"),
    ({"validations": [{"expression": "true", "reason": "Teapot"}]},
     'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", '
     '"RequestEntityTooLarge"'),
    ({"validations": [{"expression": "true", "message": "a\nb"}]},
     'spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks'),
    ({"validations": [{"expression": " "}]}, "spec.validations[0].expression: Required value: expression is not "
                                             "specified"),
    ({"variables": [{"name": "in", "expression": "1"}]},
     'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier'),
    ({"auditAnnotations": [{"key": "", "valueExpression": "'x'"}], "validations": []},
     'spec.auditAnnotations[0].key: Invalid value: "pol-bad/": name part must be non-empty'),
    ({"matchConstraints": {"resourceRules": [{**RULE, "resourceNames": ["a", "a"]}]}},
     'spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "a"'),
]


@pytest.mark.parametrize(("spec", "message"), INVALID_POLICIES)
def test_invalid_policy(server, spec, message):
    resp = server.request("POST", POLICIES, policy("pol-bad", **spec))
    assert resp.status == 422, resp.body
    prefix = 'ValidatingAdmissionPolicy.admissionregistration.k8s.io "pol-bad" is invalid: '
    assert resp.json()["message"].startswith(prefix) and message in resp.json()["message"]


INVALID_BINDINGS = [
    ({"policyName": ""}, "spec.policyName: Required value"),
    ({"validationActions": []}, "spec.validationActions: Required value: at least one validation action is required"),
    ({"validationActions": ["Deny", "Warn"]},
     'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same '
     "validation failure information in the API response and headers serves no purpose)"),
    ({"validationActions": ["Block"]}, 'spec.validationActions[0]: Unsupported value: "Block": supported values: '
                                       '"Audit", "Deny", "Warn"'),
    ({"paramRef": {"parameterNotFoundAction": "Deny"}}, "spec.paramRef: Required value: one of name or selector "
                                                        "must be specified"),
    ({"paramRef": {"name": "p"}}, "spec.paramRef.parameterNotFoundAction: Required value"),
    ({"paramRef": {"name": "p", "selector": {}, "parameterNotFoundAction": "Deny"}},
     "[spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: "
     "name and selector are mutually exclusive]"),
    ({"matchResources": {"matchPolicy": "Loose"}},
     'spec.matchResouces.matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"'),
]


@pytest.mark.parametrize(("spec", "message"), INVALID_BINDINGS)
def test_invalid_binding(server, spec, message):
    resp = server.request("POST", BINDINGS, binding("bind-bad", **spec))
    assert resp.status == 422, resp.body
    assert resp.json()["message"] == ('ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "bind-bad" is '
                                      f"invalid: {message}")


def test_binding_defaults(server):
    created = server.request("POST", BINDINGS, binding("bind-a", matchResources={}))
    assert created.status == 201, created.body
    assert created.json()["spec"]["matchResources"] == {"namespaceSelector": {}, "objectSelector": {},
                                                        "matchPolicy": "Equivalent"}
    assert created.json()["metadata"]["generation"] == 1


def test_protobuf_validating_webhook_configuration(server):
    rule = bytes_field(1, b"CREATE") + bytes_field(2, bytes_field(1, b"") + bytes_field(2, b"v1") +
                                                   bytes_field(3, b"pods"))
    hook = bytes_field(1, b"proto.example.com") + bytes_field(2, bytes_field(3, b"https://127.0.0.1:9/x")) + \
        bytes_field(3, rule) + bytes_field(6, b"None") + varint_field(7, 3) + bytes_field(8, b"v1")
    message = bytes_field(1, bytes_field(1, b"pb-v")) + bytes_field(2, hook)
    type_meta = bytes_field(1, b"admissionregistration.k8s.io/v1") + bytes_field(2, b"ValidatingWebhookConfiguration")
    body = b"k8s\x00" + bytes_field(1, type_meta) + bytes_field(2, message)
    created = server.request("POST", VALIDATING, body, PROTOBUF)
    assert created.status == 201, created.body
    assert created.json()["webhooks"][0] == {
        "name": "proto.example.com", "clientConfig": {"url": "https://127.0.0.1:9/x"},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "scope": "*"}],
        "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "sideEffects": "None", "timeoutSeconds": 3, "admissionReviewVersions": ["v1"]}


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_tables(server):
    server.request("POST", VALIDATING, configuration("ValidatingWebhookConfiguration", "tbl-v", webhook(),
                                                     webhook("two.example.com")))
    server.request("POST", POLICIES, policy("tbl-p", paramKind={"apiVersion": "v1", "kind": "ConfigMap"}))
    server.request("POST", BINDINGS, binding("tbl-b", policyName="tbl-p", paramRef={
        "selector": {"matchLabels": {"a": "b"}}, "parameterNotFoundAction": "Deny"}))
    hooks = server.kubectl("get", "validatingwebhookconfigurations", "tbl-v").stdout.splitlines()
    assert hooks[0].split() == ["NAME", "WEBHOOKS", "AGE"] and hooks[1].split()[:2] == ["tbl-v", "2"]
    policies = server.kubectl("get", "validatingadmissionpolicies", "tbl-p").stdout.splitlines()
    assert policies[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert policies[1].split()[:3] == ["tbl-p", "1", "v1/ConfigMap"]
    bindings = server.kubectl("get", "validatingadmissionpolicybindings", "tbl-b").stdout.splitlines()
    assert bindings[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}" \
        in bindings[1]
    extensions = server.kubectl("get", "api-extensions", "-o", "name").stdout
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/tbl-v" in extensions
