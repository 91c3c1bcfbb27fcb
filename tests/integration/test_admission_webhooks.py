"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins end to end: a real HTTPS webhook
server (self-signed CA given as caBundle) that allows, denies, patches, warns and stalls, reached by URL
or through a Service's endpoints; failure policies, selectors, match conditions, matchPolicy
Equivalent, reinvocation, and Kubernetes' exact messages."""

from __future__ import annotations

import base64
import copy
import http.client
import http.server
import ipaddress
import json
import socket
import ssl
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import wait_for
from httpsserver import HTTPSJSONServer
from kube_apiserver.admission.interfaces import Attributes

GROUP = "/apis/admissionregistration.k8s.io/v1"
MUTATING = f"{GROUP}/mutatingwebhookconfigurations"
VALIDATING = f"{GROUP}/validatingwebhookconfigurations"
SERVICE_NAME, SERVICE_NAMESPACE = "hooks", "wh-system"
Review = dict[str, Any]
Behaviour = Callable[[Review], Any]


# ---- the test webhook server ----

def local_ip() -> str | None:
    """A non-loopback address of this host (Endpoints may not point at loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.254", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(address).is_loopback else address


class WebhookServer(HTTPSJSONServer):
    """An HTTPS server answering AdmissionReviews by path, recording what it was sent; reachable on this
    host's non-loopback address too (a service's Endpoints may not point at loopback)."""

    def __init__(self) -> None:
        self.ip = local_ip()
        self.behaviours: dict[str, Behaviour] = {}
        super().__init__(f"{SERVICE_NAME}.{SERVICE_NAMESPACE}.svc", "0.0.0.0", (self.ip,) if self.ip else ())

    def respond(self, path: str, review: Review) -> tuple[int, bytes, str]:
        behaviour = self.behaviours.get(path, lambda r: {})
        result = behaviour(review)
        if isinstance(result, tuple):  # (code, raw body): not an AdmissionReview at all
            return result[0], result[1], "text/plain"
        response = {"uid": review["request"]["uid"], "allowed": True, **result}
        answer = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        return 200, json.dumps(answer).encode(), "application/json"


def patch(*operations: dict) -> dict:
    return {"patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}


def slow(review: Review) -> dict:
    time.sleep(2)
    return {}


BEHAVIOURS: dict[str, Behaviour] = {
    "/allow": lambda r: {},
    "/deny": lambda r: {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "no thanks"}},
    "/deny-bare": lambda r: {"allowed": False},
    "/label": lambda r: patch({"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}),
    "/annotate": lambda r: patch({"op": "add", "path": "/metadata/annotations",
                                  "value": {"seen-labels": json.dumps(r["request"]["object"]["metadata"].get("labels"))}}),
    "/warn": lambda r: {"warnings": ["careful now", "mind the gap"]},
    "/slow": slow,
    "/wrong-uid": lambda r: {"uid": "not-the-uid"},
    "/crash": lambda r: (500, b"boom"),
}


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    srv = WebhookServer()
    srv.behaviours.update(BEHAVIOURS)
    yield srv
    srv.stop()


# ---- configurations, namespaces, waiting ----

class Registry:
    """Creates webhook configurations and namespaces for one test, and removes the configurations."""

    def __init__(self, server: Any, hook_server: WebhookServer):
        self.server, self.hooks = server, hook_server
        self.created: list[str] = []

    def webhook(self, name: str, path: str, **extra: Any) -> dict:
        hook = {"name": name, "clientConfig": {"url": self.hooks.url(path), "caBundle": self.hooks.ca_bundle},
                "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
                "sideEffects": "None", "admissionReviewVersions": ["v1"], **extra}
        return hook

    def configure(self, mutating: bool, name: str, *webhooks: dict) -> None:
        kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
        url = MUTATING if mutating else VALIDATING
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
                "webhooks": list(webhooks)}
        resp = self.server.request("POST", url, body)
        assert resp.status == 201, resp.body
        self.created.append(f"{url}/{name}")

    def namespace(self, labels: dict[str, str] | None = None) -> str:
        name = f"wh-{uuid.uuid4().hex[:8]}"
        resp = self.server.request("POST", "/api/v1/namespaces", {"metadata": {"name": name, "labels": labels or {}}})
        assert resp.status == 201, resp.body
        return name

    def wait_called(self, path: str, namespace: str, **labels: str) -> None:
        """Until the webhook is in force: dry-run marker creations reach it (configurations are read from
        the watch cache, as kube-apiserver reads them from an informer)."""
        before = len(self.hooks.received.get(path, []))
        deadline = time.time() + 10
        while len(self.hooks.received.get(path, [])) == before:
            assert time.time() < deadline, f"webhook {path} never called"
            self.server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps?dryRun=All",
                                configmap(f"marker-{uuid.uuid4().hex[:6]}", labels))
            time.sleep(0.02)

    def cleanup(self) -> None:
        for url in self.created:
            self.server.request("DELETE", url)


@pytest.fixture
def registry(server: Any, hooks: WebhookServer) -> Iterator[Registry]:
    reg = Registry(server, hooks)
    yield reg
    reg.cleanup()


def configmap(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}},
            "data": {"k": "v"}}


def scoped(registry: Registry, namespace: str) -> dict:
    """A namespaceSelector for just this test's namespace."""
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}


def create(server: Any, namespace: str, name: str, labels: dict[str, str] | None = None, query: str = "") -> Any:
    return server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps{query}", configmap(name, labels))


# ---- validating webhooks ----

def test_validating_webhook_denies_with_its_status(server, registry):
    ns = registry.namespace()
    registry.configure(False, "deny-cfg", registry.webhook("deny.example.com", "/deny", **scoped(registry, ns)))
    registry.wait_called("/deny", ns)
    denied = create(server, ns, "cm-denied")
    assert denied.status == 403
    body = denied.json()
    assert body["message"] == 'admission webhook "deny.example.com" denied the request: no thanks'
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert server.request("GET", f"/api/v1/namespaces/{ns}/configmaps/cm-denied").status == 404


def test_denial_without_explanation_is_a_bad_request(server, registry):
    ns = registry.namespace()
    registry.configure(False, "bare-cfg", registry.webhook("bare.example.com", "/deny-bare", **scoped(registry, ns)))
    registry.wait_called("/deny-bare", ns)
    denied = create(server, ns, "cm-bare")
    assert denied.status == 400
    assert denied.json()["message"] == 'admission webhook "bare.example.com" denied the request without explanation'


def test_admission_review_request(server, registry, hooks):
    ns = registry.namespace()
    registry.configure(False, "record-cfg", registry.webhook("record.example.com", "/allow", timeoutSeconds=7,
                                                             **scoped(registry, ns)))
    registry.wait_called("/allow", ns)
    hooks.received["/allow"].clear()
    assert create(server, ns, "cm-rec", {"a": "b"}).status == 201
    review = hooks.received["/allow"][-1]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    request = review["request"]
    uuid.UUID(request["uid"])
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["requestKind"] == request["kind"] and request["requestResource"] == request["resource"]
    assert (request["name"], request["namespace"], request["operation"]) == ("cm-rec", ns, "CREATE")
    assert request["userInfo"]["username"] == "admin" and "system:masters" in request["userInfo"]["groups"]
    assert request["object"]["metadata"]["labels"] == {"a": "b"} and request["object"]["kind"] == "ConfigMap"
    assert request["oldObject"] is None and request["dryRun"] is False
    assert request["options"]["kind"] == "CreateOptions"
    assert hooks.queries["/allow"][-1] == "timeout=7s"
    changed = server.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/cm-rec", {"data": {"k": "w"}},
                             {"Content-Type": "application/merge-patch+json"})
    assert changed.status == 200
    update = hooks.received["/allow"][-1]["request"]
    assert update["operation"] == "UPDATE" and update["oldObject"]["data"] == {"k": "v"}
    assert update["object"]["data"] == {"k": "w"} and update["options"]["kind"] == "UpdateOptions"
    assert server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm-rec?dryRun=All").status == 200
    delete = hooks.received["/allow"][-1]["request"]
    assert delete["operation"] == "DELETE" and delete["object"] is None and delete["dryRun"] is True
    assert delete["oldObject"]["metadata"]["name"] == "cm-rec" and delete["options"]["kind"] == "DeleteOptions"


@pytest.mark.parametrize(("policy", "status"), [("Fail", 500), ("Ignore", 201)])
def test_timeout_and_failure_policy(server, registry, hooks, policy, status):
    ns = registry.namespace()
    name = f"slow-{policy.lower()}.example.com"
    registry.configure(False, f"slow-{policy.lower()}", registry.webhook(
        name, "/slow", timeoutSeconds=1, failurePolicy=policy, **scoped(registry, ns)))
    registry.wait_called("/slow", ns)
    started = time.time()
    resp = create(server, ns, "cm-slow")
    assert resp.status == status, resp.body
    assert time.time() - started < 1.9  # the webhook answers after 2s: it was not waited for
    if policy == "Fail":
        assert resp.json()["message"] == (
            f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: Post '
            f'"https://127.0.0.1:{hooks.port}/slow?timeout=1s": context deadline exceeded')
        assert resp.json()["reason"] == "InternalError"


def test_unreachable_webhook_fails_closed(server, registry):
    ns = registry.namespace()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    hook = registry.webhook("gone.example.com", "/x", **scoped(registry, ns))
    hook["clientConfig"]["url"] = f"https://127.0.0.1:{port}/x"
    registry.configure(False, "gone-cfg", hook)
    deadline = time.time() + 10
    while (resp := create(server, ns, "cm-gone")).status == 201:
        server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm-gone")
        assert time.time() < deadline
    assert resp.status == 500
    assert resp.json()["message"] == (
        f'Internal error occurred: failed calling webhook "gone.example.com": failed to call webhook: Post '
        f'"https://127.0.0.1:{port}/x?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused')


def test_invalid_responses(server, registry, hooks):
    ns = registry.namespace()
    registry.configure(False, "odd-cfg", registry.webhook("uid.example.com", "/wrong-uid", **scoped(registry, ns)),
                       registry.webhook("crash.example.com", "/crash", failurePolicy="Ignore",
                                        **scoped(registry, ns)))
    registry.wait_called("/wrong-uid", ns)
    resp = create(server, ns, "cm-odd")
    uid = hooks.received["/wrong-uid"][-1]["request"]["uid"]
    assert resp.status == 500
    assert resp.json()["message"] == (
        'Internal error occurred: failed calling webhook "uid.example.com": received invalid webhook response: '
        f'expected response.uid="{uid}", got "not-the-uid"')


def test_unknown_ca_is_refused(server, registry, hooks):
    ns = registry.namespace()
    hook = registry.webhook("trust.example.com", "/allow", **scoped(registry, ns))
    del hook["clientConfig"]["caBundle"]  # the system roots do not know the test CA
    registry.configure(False, "trust-cfg", hook)
    deadline = time.time() + 10
    while (resp := create(server, ns, "cm-trust")).status == 201:
        server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm-trust")
        assert time.time() < deadline
    assert resp.json()["message"] == (
        'Internal error occurred: failed calling webhook "trust.example.com": failed to call webhook: Post '
        f'"https://127.0.0.1:{hooks.port}/allow?timeout=10s": tls: failed to verify certificate: x509: certificate '
        "signed by unknown authority")


# ---- selectors and match conditions ----

def test_namespace_and_object_selectors(server, registry):
    blocked, open_ns = registry.namespace({"env": "locked"}), registry.namespace({"env": "open"})
    registry.configure(False, "ns-cfg", registry.webhook(
        "ns.example.com", "/deny", namespaceSelector={"matchLabels": {"env": "locked"}},
        objectSelector={"matchExpressions": [{"key": "guard", "operator": "Exists"}]}))
    registry.wait_called("/deny", blocked, guard="1")
    assert create(server, blocked, "cm-guarded", {"guard": "1"}).status == 403
    assert create(server, blocked, "cm-free").status == 201
    assert create(server, open_ns, "cm-guarded", {"guard": "1"}).status == 201
    # The old object's labels count too: removing the label is still guarded.
    path = f"/api/v1/namespaces/{open_ns}/configmaps/cm-guarded"
    moved = server.request("PATCH", path, {"metadata": {"labels": None}}, {"Content-Type": "application/merge-patch+json"})
    assert moved.status == 200


def test_match_conditions(server, registry):
    ns = registry.namespace()
    registry.configure(False, "cond-cfg", registry.webhook(
        "cond.example.com", "/deny", matchConditions=[
            {"name": "named-deny", "expression": "object.metadata.name.startsWith('deny-')"},
            {"name": "creates", "expression": "request.operation == 'CREATE'"}],
        **scoped(registry, ns)))
    deadline = time.time() + 10
    while (resp := create(server, ns, "deny-me")).status == 201:
        server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/deny-me")
        assert time.time() < deadline
    assert resp.status == 403
    assert create(server, ns, "allow-me").status == 201


def test_match_condition_error_fails_closed(server, registry):
    ns = registry.namespace()
    registry.configure(False, "condfail-cfg", registry.webhook(
        "condfail.example.com", "/allow", matchConditions=[{"name": "bad", "expression": "object.data.missing == 'x'"}],
        **scoped(registry, ns)))
    deadline = time.time() + 10
    while (resp := create(server, ns, "cm-cond")).status == 201:
        server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm-cond")
        assert time.time() < deadline
    assert resp.status == 403
    assert resp.json()["message"].startswith('configmaps "cm-cond" is forbidden: ')


# ---- mutating webhooks ----

def test_mutating_webhook_patches_then_validating_webhook_sees_it(server, registry, hooks):
    ns = registry.namespace()
    registry.configure(True, "label-cfg", registry.webhook("label.example.com", "/label", **scoped(registry, ns)))
    registry.configure(False, "see-cfg", registry.webhook("see.example.com", "/allow", **scoped(registry, ns)))
    registry.wait_called("/label", ns)
    registry.wait_called("/allow", ns)
    created = create(server, ns, "cm-mut")
    assert created.status == 201
    assert created.json()["metadata"]["labels"] == {"patched": "yes"}
    assert hooks.received["/allow"][-1]["request"]["object"]["metadata"]["labels"] == {"patched": "yes"}


def test_reinvocation_if_needed(server, registry, hooks):
    ns = registry.namespace()
    # Configurations run in name order: the annotating webhook first, then the labelling one.
    registry.configure(True, "a-annotate", registry.webhook("annotate.example.com", "/annotate",
                                                            reinvocationPolicy="IfNeeded", **scoped(registry, ns)))
    registry.configure(True, "b-label", registry.webhook("label2.example.com", "/label", **scoped(registry, ns)))
    registry.wait_called("/annotate", ns)
    registry.wait_called("/label", ns)
    hooks.received["/annotate"].clear()
    created = create(server, ns, "cm-reinvoke")
    assert created.status == 201
    calls = [r for r in hooks.received["/annotate"] if r["request"]["name"] == "cm-reinvoke"]
    assert len(calls) == 2
    assert created.json()["metadata"]["annotations"] == {"seen-labels": json.dumps({"patched": "yes"})}


@pytest.mark.skipif("warnings" not in getattr(Attributes, "__dataclass_fields__", {}),
                    reason="admission Attributes carry no warnings list yet (admission/interfaces.py)")
def test_warnings_become_warning_headers(server, registry):
    ns = registry.namespace()
    registry.configure(False, "warn-cfg", registry.webhook("warn.example.com", "/warn", **scoped(registry, ns)))
    registry.wait_called("/warn", ns)
    ctx = ssl.create_default_context(cafile=server.ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=30)
    conn.request("POST", f"/api/v1/namespaces/{ns}/configmaps", json.dumps(configmap("cm-warn")),
                 {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    assert resp.status == 201
    assert resp.msg.get_all("warning") == ['299 - "careful now"', '299 - "mind the gap"']


def test_dry_run_reaches_side_effect_free_webhooks(server, registry, hooks):
    ns = registry.namespace()
    registry.configure(True, "dry-cfg", registry.webhook("dry.example.com", "/label", sideEffects="NoneOnDryRun",
                                                         **scoped(registry, ns)))
    registry.wait_called("/label", ns)
    resp = create(server, ns, "cm-dry", query="?dryRun=All")
    assert resp.status == 201 and resp.json()["metadata"]["labels"] == {"patched": "yes"}
    assert hooks.received["/label"][-1]["request"]["dryRun"] is True
    assert server.request("GET", f"/api/v1/namespaces/{ns}/configmaps/cm-dry").status == 404


# ---- what is matched ----

def test_configuration_resources_are_exempt(server, registry):
    ns = registry.namespace()
    hook = registry.webhook("exempt.example.com", "/deny", **scoped(registry, ns))
    hook["rules"].append({"operations": ["*"], "apiGroups": ["admissionregistration.k8s.io"], "apiVersions": ["*"],
                          "resources": ["*"]})
    registry.configure(False, "deny-config-writes", hook)
    registry.wait_called("/deny", ns)  # in force (cluster-scoped objects always pass the namespaceSelector)
    registry.configure(False, "still-allowed", registry.webhook("other.example.com", "/allow",
                                                                namespaceSelector={"matchLabels": {"x": "none"}}))
    assert server.request("DELETE", f"{VALIDATING}/still-allowed").status == 200


def test_equivalent_resources(server, registry, hooks):
    ns = registry.namespace()
    hook = registry.webhook("events.example.com", "/allow", **scoped(registry, ns))
    hook["rules"] = [{"operations": ["CREATE"], "apiGroups": ["events.k8s.io"], "apiVersions": ["v1"],
                      "resources": ["events"]}]
    exact = copy.deepcopy(hook)
    exact.update(name="exact.example.com", matchPolicy="Exact")
    exact["clientConfig"]["url"] = hooks.url("/deny")
    registry.configure(False, "events-cfg", hook, exact)
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-1"}, "reason": "Test",
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns}, "message": "hello"}
    deadline = time.time() + 10
    while not any(r["request"].get("name") == "ev-1" for r in hooks.received.get("/allow", [])):
        resp = server.request("POST", f"/api/v1/namespaces/{ns}/events", event)
        if resp.status == 201:
            server.request("DELETE", f"/api/v1/namespaces/{ns}/events/ev-1")
        assert time.time() < deadline
        time.sleep(0.02)
    request = next(r for r in hooks.received["/allow"] if r["request"].get("name") == "ev-1")["request"]
    assert request["kind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert request["resource"] == {"group": "events.k8s.io", "version": "v1", "resource": "events"}
    assert request["requestKind"] == {"group": "", "version": "v1", "kind": "Event"}
    assert request["object"]["note"] == "hello" and request["object"]["apiVersion"] == "events.k8s.io/v1"
    assert not any(r["request"].get("name") == "ev-1" for r in hooks.received.get("/deny", []))


# ---- a webhook behind a Service ----

def test_service_reference_resolves_to_endpoints(server, registry, hooks):
    if hooks.ip is None:
        pytest.skip("no non-loopback address to put in Endpoints")
    if server.request("GET", f"/api/v1/namespaces/{SERVICE_NAMESPACE}").status == 404:
        server.request("POST", "/api/v1/namespaces", {"metadata": {"name": SERVICE_NAMESPACE}})
    svc = {"metadata": {"name": SERVICE_NAME}, "spec": {"ports": [{"name": "https", "port": 8443,
                                                                   "targetPort": hooks.port}]}}
    assert server.request("POST", f"/api/v1/namespaces/{SERVICE_NAMESPACE}/services", svc).status == 201
    ns = registry.namespace()
    hook = registry.webhook("svc.example.com", "/deny", **scoped(registry, ns))
    hook["clientConfig"] = {"service": {"namespace": SERVICE_NAMESPACE, "name": SERVICE_NAME, "path": "/deny",
                                        "port": 8443}, "caBundle": hooks.ca_bundle}
    registry.configure(False, "svc-cfg", hook)
    deadline = time.time() + 10
    while (resp := create(server, ns, "cm-svc")).status != 500:
        server.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm-svc")
        assert time.time() < deadline
    assert resp.json()["message"] == (
        'Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post '
        f'"https://{SERVICE_NAME}.{SERVICE_NAMESPACE}.svc:8443/deny?timeout=10s": no endpoints available for '
        f'service "{SERVICE_NAME}"')
    endpoints = {"metadata": {"name": SERVICE_NAME}, "subsets": [{"addresses": [{"ip": hooks.ip}],
                                                                  "ports": [{"name": "https", "port": hooks.port}]}]}
    assert server.request("POST", f"/api/v1/namespaces/{SERVICE_NAMESPACE}/endpoints", endpoints).status == 201
    denied = create(server, ns, "cm-svc")
    assert denied.status == 403, denied.body
    assert denied.json()["message"] == 'admission webhook "svc.example.com" denied the request: no thanks'


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_sees_the_denial(server, registry):
    ns = registry.namespace()
    registry.configure(False, "kubectl-cfg", registry.webhook("kubectl.example.com", "/deny", **scoped(registry, ns)))
    registry.wait_called("/deny", ns)
    out = server.kubectl("create", "configmap", "cm-kubectl", "-n", ns, "--from-literal=a=b", check=False)
    assert out.returncode != 0
    assert 'admission webhook "kubectl.example.com" denied the request: no thanks' in out.stderr


def test_scale_subresource_is_matched_as_served(server, registry, hooks):
    ns = registry.namespace()
    hook = registry.webhook("scale.example.com", "/allow", **scoped(registry, ns))
    hook["rules"] = [{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                      "resources": ["deployments/scale"]}]
    registry.configure(False, "scale-cfg", hook)
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    assert server.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment).status == 201
    scale = f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale"
    deadline = time.time() + 10
    replicas = 1
    while not any(r["request"].get("namespace") == ns for r in hooks.received.get("/allow", [])):
        replicas += 1
        resp = server.request("PATCH", scale, {"spec": {"replicas": replicas}},
                              {"Content-Type": "application/merge-patch+json"})
        assert resp.status == 200, resp.body
        assert time.time() < deadline
    request = next(r for r in hooks.received["/allow"] if r["request"].get("namespace") == ns)["request"]
    assert request["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert request["subResource"] == "scale" and request["requestSubResource"] == "scale"
    assert request["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert request["object"]["kind"] == "Scale" and request["object"]["spec"]["replicas"] == replicas


def test_mutating_webhook_on_custom_resources_is_followed_by_their_schema(server, registry, hooks):
    """A webhook's patch of a custom resource is pruned and defaulted by the CRD's schema again."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmos.hooks.example.com"},
           "spec": {"group": "hooks.example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "size": {"type": "string", "default": "small"}}}}}}}]}}
    assert server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status == 201
    ns = registry.namespace()
    path = f"/apis/hooks.example.com/v1/namespaces/{ns}/gizmos"
    wait_for(lambda: server.request("GET", path).status == 200)
    hooks.behaviours["/strip"] = lambda r: patch({"op": "remove", "path": "/spec/size"},
                                                 {"op": "add", "path": "/spec/extra", "value": "x"})
    rule = {"operations": ["CREATE"], "apiGroups": ["hooks.example.com"], "apiVersions": ["v1"],
            "resources": ["gizmos"]}
    registry.configure(True, "strip-cfg", registry.webhook("strip.example.com", "/strip", rules=[rule],
                                                           **scoped(registry, ns)))

    def gizmo(name: str) -> dict:
        return {"apiVersion": "hooks.example.com/v1", "kind": "Gizmo", "metadata": {"name": name},
                "spec": {"size": "large"}}

    def called() -> bool:
        server.request("POST", f"{path}?dryRun=All", gizmo(f"marker-{uuid.uuid4().hex[:6]}"))
        return bool(hooks.received.get("/strip"))

    wait_for(called, timeout=10)
    created = server.request("POST", path, gizmo("g1"))
    assert created.status == 201, created.body
    assert created.json()["spec"] == {"size": "small"}


def test_equivalent_versions_of_a_custom_resource_just_created(server, registry, hooks):
    """A webhook for v2 of a CRD served a moment ago, matchPolicy Equivalent, is called for a v1 request
    as v2 (the equivalent resource registry learns a CRD's versions as its handler installs them)."""
    group = f"equiv{uuid.uuid4().hex[:6]}.example.com"
    versions = [{"name": name, "served": True, "storage": name == "v1", "schema": {"openAPIV3Schema": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}} for name in ("v1", "v2")]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"doohickeys.{group}"},
           "spec": {"group": group, "scope": "Namespaced", "versions": versions,
                    "names": {"plural": "doohickeys", "singular": "doohickey", "kind": "Doohickey"}}}
    assert server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status == 201
    ns = registry.namespace()
    path = f"/apis/{group}/v1/namespaces/{ns}/doohickeys"
    wait_for(lambda: server.request("GET", path).status == 200)
    rule = {"operations": ["CREATE"], "apiGroups": [group], "apiVersions": ["v2"], "resources": ["doohickeys"]}
    registry.configure(False, f"{group}-cfg", registry.webhook(f"v2.{group}", "/allow", rules=[rule],
                                                               matchPolicy="Equivalent", **scoped(registry, ns)))

    def called() -> dict | None:
        body = {"apiVersion": f"{group}/v1", "kind": "Doohickey", "metadata": {"name": "d1"}, "size": 3}
        assert server.request("POST", f"{path}?dryRun=All", body).status == 201
        return next((r["request"] for r in hooks.received.get("/allow", []) if r["request"].get("namespace") == ns),
                    None)

    request = wait_for(called, timeout=10)
    assert request["resource"] == {"group": group, "version": "v2", "resource": "doohickeys"}
    assert request["kind"] == {"group": group, "version": "v2", "kind": "Doohickey"}
    assert request["requestKind"] == {"group": group, "version": "v1", "kind": "Doohickey"}
    assert request["object"]["apiVersion"] == f"{group}/v2" and request["object"]["size"] == 3
