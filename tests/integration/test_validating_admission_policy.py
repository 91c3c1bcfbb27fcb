"""The ValidatingAdmissionPolicy plugin end to end: policies and bindings created with kubectl and raw
HTTP, then requests denied, warned or let through with Kubernetes' exact messages and status codes:
params from ConfigMaps (by name and selector, parameterNotFoundAction), validationActions, namespace
selectors, matchConditions, variables, messageExpression and reason, failure policies, audit
annotations, and the authorizer library against RBAC."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from conftest import Server, wait_for

GROUP = "/apis/admissionregistration.k8s.io/v1"
POLICIES, BINDINGS = f"{GROUP}/validatingadmissionpolicies", f"{GROUP}/validatingadmissionpolicybindings"
DEPLOYMENT_RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["deployments"]}
CONFIGMAP_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                  "resources": ["configmaps"]}
_ids = itertools.count()


def deployment(name: str, replicas: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


class Policies:
    """Creates policies, bindings and namespaces for one test, removes them afterwards."""

    def __init__(self, server: Server):
        self.server = server
        self.created: list[str] = []

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.server.request("POST", path, body)
        assert response.status == 201, response.body
        self.created.append(f"{path}/{body['metadata']['name']}")
        return response.json()

    def namespace(self, labels: dict[str, str] | None = None) -> str:
        name = f"vap-{next(_ids)}"
        self.create("/api/v1/namespaces", {"metadata": {"name": name, "labels": labels or {}}})
        return name

    def policy(self, name: str, validations: list[dict[str, Any]], rules: dict[str, Any] = DEPLOYMENT_RULE,
               **spec: Any) -> None:
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                "metadata": {"name": name},
                "spec": {"matchConstraints": {"resourceRules": [rules]}, "validations": validations, **spec}}
        self.create(POLICIES, body)

    def binding(self, name: str, policy: str, namespace: str | None, actions: tuple[str, ...] = ("Deny",),
                **spec: Any) -> None:
        """Bound to `namespace` only, so that tests sharing the server do not meet each other's policies."""
        if namespace is not None:
            selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            spec.setdefault("matchResources", {"namespaceSelector": selector})
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": list(actions), **spec}}
        self.create(BINDINGS, body)

    def cleanup(self) -> None:
        for path in reversed(self.created):
            self.server.request("DELETE", path)


@pytest.fixture
def policies(server: Server) -> Iterator[Policies]:
    created = Policies(server)
    yield created
    created.cleanup()


def post_until(server: Server, path: str, body: dict[str, Any], status: int, **kwargs: Any) -> Any:
    """POST with dryRun until the answer has `status` (bindings take effect once the cache has them)."""
    separator = "&" if "?" in path else "?"

    def attempt() -> Any:
        response = server.request("POST", f"{path}{separator}dryRun=All", body, **kwargs)
        return response if response.status == status else None

    return wait_for(attempt, timeout=10)


def denial(policy: str, binding: str, message: str) -> str:
    return f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}"


# ---- kubectl: the documentation's example ----

DEMO = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
"""


def test_replicas_policy_with_kubectl(server: Server, policies: Policies, kubectl_available: None, tmp_path) -> None:
    manifest = tmp_path / "policy.yaml"
    manifest.write_text(DEMO)
    server.kubectl("apply", "-f", str(manifest))
    policies.created += [f"{POLICIES}/demo-policy.example.com", f"{BINDINGS}/demo-binding-test.example.com"]
    tested, other = policies.namespace({"environment": "test"}), policies.namespace()
    path = f"/apis/apps/v1/namespaces/{tested}/deployments"
    refused = post_until(server, path, deployment("nginx", 6), 422)
    message = denial("demo-policy.example.com", "demo-binding-test.example.com",
                     "failed expression: object.spec.replicas <= 5")
    assert refused.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'deployments.apps "nginx" is forbidden: {message}', "reason": "Invalid",
        "details": {"name": "nginx", "group": "apps", "kind": "deployments", "causes": [{"message": message}]},
        "code": 422}
    failed = server.kubectl("create", "deployment", "nginx", "--image=nginx", "--replicas=6", "-n", tested,
                            check=False)
    assert failed.returncode != 0 and message in failed.stderr
    server.kubectl("create", "deployment", "nginx", "--image=nginx", "--replicas=3", "-n", tested)
    patched = server.kubectl("patch", "deployment", "nginx", "-n", tested, "-p", '{"spec":{"replicas":7}}',
                             check=False)
    assert patched.returncode != 0 and message in patched.stderr  # UPDATE is covered too
    # deployments/scale is another resource: the policy's rules (deployments) leave it alone
    server.kubectl("scale", "deployment", "nginx", "--replicas=7", "-n", tested)
    server.kubectl("create", "deployment", "nginx", "--image=nginx", "--replicas=6", "-n", other)


# ---- params ----

def test_params_from_a_configmap(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.create(f"/api/v1/namespaces/{ns}/configmaps",
                    {"metadata": {"name": "limits", "labels": {"kind": "limit"}}, "data": {"maxReplicas": "3"}})
    policies.policy("max-replicas", [{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                                      "messageExpression": "'at most ' + params.data.maxReplicas + ' replicas'"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    policies.binding("max-replicas-b", "max-replicas", ns,
                     paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    refused = post_until(server, path, deployment("web", 4), 422)
    assert refused.json()["message"] == \
        f'deployments.apps "web" is forbidden: {denial("max-replicas", "max-replicas-b", "at most 3 replicas")}'
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 3)).status == 201
    # the param is read again: raising the limit lets the request through
    patch = server.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/limits", {"data": {"maxReplicas": "9"}},
                           {"Content-Type": "application/merge-patch+json"})
    assert patch.status == 200
    post_until(server, path, deployment("web", 4), 201)


def test_params_not_found_and_selected_by_labels(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.policy("cm-params", [{"expression": "object.spec.replicas <= int(params.data.max)"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    policies.binding("cm-params-deny", "cm-params", ns,
                     paramRef={"name": "absent", "parameterNotFoundAction": "Deny"})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    refused = post_until(server, path, deployment("web", 1), 422)
    assert refused.json()["message"] == 'deployments.apps "web" is forbidden: ' + denial(
        "cm-params", "cm-params-deny",
        "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
    server.request("DELETE", f"{BINDINGS}/cm-params-deny")
    # by selector, every matching param is checked; none found with Allow lets the request through
    policies.binding("cm-params-sel", "cm-params", ns,
                     paramRef={"selector": {"matchLabels": {"limit": "true"}}, "parameterNotFoundAction": "Allow"})
    post_until(server, path, deployment("web", 8), 201)
    for name, most in (("a", "10"), ("b", "5")):
        policies.create(f"/api/v1/namespaces/{ns}/configmaps",
                        {"metadata": {"name": name, "labels": {"limit": "true"}}, "data": {"max": most}})
    refused = post_until(server, path, deployment("web", 8), 422)
    assert "failed expression: object.spec.replicas <= int(params.data.max)" in refused.json()["message"]


def test_params_from_a_custom_resource(server: Server, policies: Policies) -> None:
    """The documentation's ReplicaLimit: a cluster-scoped custom resource as paramKind."""
    schema = {"type": "object", "properties": {"maxReplicas": {"type": "integer"}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "replicalimits.rules.example.com"},
           "spec": {"group": "rules.example.com", "scope": "Cluster",
                    "names": {"plural": "replicalimits", "singular": "replicalimit", "kind": "ReplicaLimit"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    policies.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    limits = "/apis/rules.example.com/v1/replicalimits"
    wait_for(lambda: server.request("GET", limits).status == 200)
    policies.create(limits, {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
                             "metadata": {"name": "limit-test"}, "maxReplicas": 3})
    ns = policies.namespace()
    policies.policy("replica-limit", [{"expression": "object.spec.replicas <= params.maxReplicas",
                                       "messageExpression": "'object.spec.replicas must be no greater than ' + "
                                                            "string(params.maxReplicas)",
                                       "reason": "Invalid"}],
                    paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"})
    policies.binding("replica-limit-test", "replica-limit", ns,
                     paramRef={"name": "limit-test", "parameterNotFoundAction": "Deny"})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    refused = post_until(server, path, deployment("web", 4), 422)
    assert refused.json()["message"] == 'deployments.apps "web" is forbidden: ' + denial(
        "replica-limit", "replica-limit-test", "object.spec.replicas must be no greater than 3")
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 3)).status == 201


def test_param_kind_served_after_the_policy(server: Server, policies: Policies) -> None:
    """A paramKind no resource serves configures nothing (the policy fails); once its CRD is served the
    REST mapper finds it (a miss reads discovery again) and the params, custom resources read through
    the loopback client's informer, are used."""
    group = f"later{next(_ids)}.example.com"
    ns = policies.namespace()
    policies.policy(f"threshold-{group}", [{"expression": "object.spec.replicas <= params.max",
                                            "messageExpression": "'at most ' + string(params.max)"}],
                    paramKind={"apiVersion": f"{group}/v1", "kind": "Threshold"})
    policies.binding(f"threshold-b-{group}", f"threshold-{group}", ns,
                     paramRef={"name": "t", "parameterNotFoundAction": "Deny"})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    unknown = post_until(server, path, deployment("web", 4), 422)
    assert unknown.json()["message"].endswith(
        f"failed to configure policy: failed to find resource referenced by paramKind: '{group}/v1, Kind=Threshold'")
    schema = {"type": "object", "properties": {"max": {"type": "integer"}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"thresholds.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "thresholds", "singular": "threshold", "kind": "Threshold"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    policies.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    thresholds = f"/apis/{group}/v1/namespaces/{ns}/thresholds"
    wait_for(lambda: server.request("GET", thresholds).status == 200)
    policies.create(thresholds, {"apiVersion": f"{group}/v1", "kind": "Threshold", "metadata": {"name": "t"},
                                 "max": 2})
    refused = post_until(server, path, deployment("web", 4), 422)
    assert refused.json()["message"] == 'deployments.apps "web" is forbidden: ' + denial(
        f"threshold-{group}", f"threshold-b-{group}", "at most 2")
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 2)).status == 201


def test_cluster_scoped_request_with_namespaced_params(server: Server, policies: Policies) -> None:
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["namespaces"]}
    policies.policy("ns-params", [{"expression": "true"}], rule, paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    policies.binding("ns-params-b", "ns-params", None, paramRef={"name": "x", "parameterNotFoundAction": "Deny"},
                     matchResources={"objectSelector": {"matchLabels": {"vap-test": "ns-params"}}})
    body = {"metadata": {"name": "vap-cluster-scoped", "labels": {"vap-test": "ns-params"}}}
    refused = post_until(server, "/api/v1/namespaces", body, 422)
    assert refused.json()["message"] == 'namespaces "vap-cluster-scoped" is forbidden: ' + denial(
        "ns-params", "ns-params-b", "failed to configure binding: cannot use namespaced paramRef in policy "
        "binding that matches cluster-scoped resources")


def test_unknown_param_kind_fails_the_policy(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.policy("no-such-kind", [{"expression": "true"}], paramKind={"apiVersion": "example.com/v1", "kind": "Nope"})
    policies.binding("no-such-kind-b", "no-such-kind", ns, paramRef={"name": "x", "parameterNotFoundAction": "Deny"})
    refused = post_until(server, f"/apis/apps/v1/namespaces/{ns}/deployments", deployment("web", 1), 422)
    assert refused.json()["message"] == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'no-such-kind' denied request: failed to "
        "configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'")


# ---- actions, selectors, conditions, messages ----

def test_warn_action_admits_with_a_warning(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.policy("warn-replicas", [{"expression": "object.spec.replicas <= 2", "message": "too many"}])
    policies.binding("warn-replicas-b", "warn-replicas", ns, ("Warn", "Audit"))
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    expected = "299 - \"Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding " \
               "'warn-replicas-b': too many\""

    def warned() -> Any:
        response = server.request("POST", f"{path}?dryRun=All", deployment("web", 3))
        return response if response.headers.get("warning") == expected else None

    assert wait_for(warned, timeout=10).status == 201
    assert "warning" not in server.request("POST", f"{path}?dryRun=All", deployment("web", 2)).headers


def test_warn_with_kubectl(server: Server, policies: Policies, kubectl_available: None) -> None:
    ns = policies.namespace()
    policies.policy("warn-kubectl", [{"expression": "object.data.size() < 2", "message": "keep it small"}],
                    CONFIGMAP_RULE)
    policies.binding("warn-kubectl-b", "warn-kubectl", ns, ("Warn",))
    post_until(server, f"/api/v1/namespaces/{ns}/configmaps",
               {"metadata": {"name": "probe"}, "data": {"a": "1", "b": "2"}}, 201)
    created = server.kubectl("create", "configmap", "big", "--from-literal=a=1", "--from-literal=b=2", "-n", ns)
    assert "Warning: Validation failed for ValidatingAdmissionPolicy 'warn-kubectl' with binding " \
           "'warn-kubectl-b': keep it small" in created.stderr


def test_namespace_selector_and_namespace_object(server: Server, policies: Policies) -> None:
    prod, dev = policies.namespace({"stage": "prod"}), policies.namespace({"stage": "dev"})
    policies.policy("prod-only", [{"expression": "namespaceObject.metadata.labels.stage != 'prod' || "
                                                 "object.spec.replicas >= 2",
                                   "messageExpression": "'namespace ' + namespaceObject.metadata.name + "
                                                        "' needs 2 replicas'",
                                   "reason": "Forbidden"}])
    policies.binding("prod-only-b", "prod-only", None,
                     matchResources={"namespaceSelector": {"matchExpressions": [
                         {"key": "stage", "operator": "In", "values": ["prod", "dev"]}]}})
    refused = post_until(server, f"/apis/apps/v1/namespaces/{prod}/deployments", deployment("web", 1), 403)
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"].endswith(f"denied request: namespace {prod} needs 2 replicas")
    assert server.request("POST", f"/apis/apps/v1/namespaces/{dev}/deployments?dryRun=All",
                          deployment("web", 1)).status == 201
    other = policies.namespace({"stage": "prod-like"})
    assert server.request("POST", f"/apis/apps/v1/namespaces/{other}/deployments?dryRun=All",
                          deployment("web", 1)).status == 201


def test_match_conditions_and_variables(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.policy(
        "labelled", [{"expression": "variables.wanted.all(k, k in variables.labels)",
                      "messageExpression": "'missing labels: ' + variables.wanted.filter(k, !(k in "
                                           "variables.labels)).join(', ')"}],
        matchConditions=[{"name": "not-exempt", "expression": "!has(object.metadata.labels) || "
                                                               "!('exempt' in object.metadata.labels)"},
                         {"name": "creates", "expression": "request.operation == 'CREATE'"}],
        variables=[{"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
                   {"name": "wanted", "expression": "['team', 'tier']"}])
    policies.binding("labelled-b", "labelled", ns)
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    refused = post_until(server, path, deployment("web", 1, {"team": "a"}), 422)
    assert refused.json()["message"].endswith("denied request: missing labels: tier")
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 1, {"exempt": "yes"})).status == 201
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 1, {"team": "a", "tier": "b"})).status == 201


def test_failure_policies_and_runtime_errors(server: Server, policies: Policies) -> None:
    failing, ignoring = policies.namespace(), policies.namespace()
    validations = [{"expression": "object.spec.paused == false"}, {"expression": "object.spec.replicas < 5"}]
    policies.policy("broken", validations)
    policies.binding("broken-b", "broken", failing)
    refused = post_until(server, f"/apis/apps/v1/namespaces/{failing}/deployments", deployment("web", 1), 422)
    assert refused.json()["message"] == 'deployments.apps "web" is forbidden: ' + denial(
        "broken", "broken-b", "expression 'object.spec.paused == false' resulted in error: no such key: paused")
    policies.policy("broken-ignored", validations, failurePolicy="Ignore")
    policies.binding("broken-ignored-b", "broken-ignored", ignoring)
    path = f"/apis/apps/v1/namespaces/{ignoring}/deployments"
    refused = post_until(server, path, deployment("web", 9), 422)  # the binding is in effect
    assert refused.json()["message"].endswith("denied request: failed expression: object.spec.replicas < 5")
    assert server.request("POST", f"{path}?dryRun=All", deployment("web", 1)).status == 201


def test_audit_annotations_are_evaluated(server: Server, policies: Policies) -> None:
    ns = policies.namespace()
    policies.policy("annotated", [], auditAnnotations=[{"key": "replicas",
                                                          "valueExpression": "object.spec.replicas"}])
    policies.binding("annotated-b", "annotated", ns, ("Audit",))
    refused = post_until(server, f"/apis/apps/v1/namespaces/{ns}/deployments", deployment("web", 1), 422)
    assert refused.json()["message"].endswith(
        "denied request: valueExpression 'object.spec.replicas' resulted in unsupported return type: int. "
        "Return type must be either string or null.")


def test_policy_resources_are_never_subject_to_policies(server: Server, policies: Policies) -> None:
    policies.policy("deny-all-policies", [{"expression": "false"}],
                    {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]},
                    matchConditions=[{"name": "mine", "expression": "object != null && "
                                                     "object.metadata.name.startsWith('vap-self')"}])
    policies.binding("deny-all-policies-b", "deny-all-policies", None)
    body = {"metadata": {"name": "vap-self-cm"}}
    post_until(server, "/api/v1/namespaces/default/configmaps", body, 422)
    policies.policy("vap-self-policy", [{"expression": "true"}])  # not refused: excluded resource


# ---- the authorizer library, against RBAC ----

@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("vap-rbac")
    tokens = data / "tokens.csv"
    tokens.write_text('carol-token,carol,2001,"writers"\n')
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(tokens)]).start()
    yield srv
    srv.stop()


def test_authorizer_checks_the_requesting_user(rbac_server: Server) -> None:
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
    role = {"metadata": {"name": "cm-writer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]}
    binding = {"metadata": {"name": "writers"}, "subjects": [{"kind": "Group", "name": "writers"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"}}
    assert rbac_server.request("POST", f"{rbac}/roles", role).status == 201
    assert rbac_server.request("POST", f"{rbac}/rolebindings", binding).status == 201
    policy = textwrap.dedent("""\
        validations:
        - expression: "authorizer.group('').resource('secrets').namespace(request.namespace).check('get').allowed()"
          messageExpression: "'user ' + request.userInfo.username + ' may not read secrets'"
          reason: Forbidden
        - expression: "authorizer.requestResource.check('create').allowed()"
        """)
    spec = yaml.safe_load(policy)
    spec["matchConstraints"] = {"resourceRules": [CONFIGMAP_RULE]}
    assert rbac_server.request("POST", POLICIES, {"metadata": {"name": "secret-readers"}, "spec": spec}).status == 201
    assert rbac_server.request("POST", BINDINGS, {"metadata": {"name": "secret-readers-b"}, "spec": {
        "policyName": "secret-readers", "validationActions": ["Deny"]}}).status == 201
    path = "/api/v1/namespaces/default/configmaps"
    refused = post_until(rbac_server, path, {"metadata": {"name": "c"}}, 403, token="carol-token")
    assert refused.json()["message"] == 'configmaps "c" is forbidden: ' + denial(
        "secret-readers", "secret-readers-b", "user carol may not read secrets")
    # the admin (system:masters) may
    assert rbac_server.request("POST", f"{path}?dryRun=All", {"metadata": {"name": "c"}}).status == 201
    reader = {"metadata": {"name": "secret-reader"},
              "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}
    assert rbac_server.request("POST", f"{rbac}/roles", reader).status == 201
    assert rbac_server.request("POST", f"{rbac}/rolebindings", {**binding, "metadata": {"name": "readers"},
                               "roleRef": {**binding["roleRef"], "name": "secret-reader"}}).status == 201
    post_until(rbac_server, path, {"metadata": {"name": "c"}}, 201, token="carol-token")
