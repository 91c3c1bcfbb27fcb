"""kube_apiserver.testing.webhooks: admission and conversion webhooks served from test functions over HTTPS
with generated certificates, registered with url + caBundle, unregistered on exit."""

from __future__ import annotations

import copy

from conftest import wait_for
from kube_apiserver.testing.webhooks import admission_webhook, conversion_webhook, deny, patch, rule

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def configmap(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}}}


def test_validating_webhook_denies_with_its_message(server):
    def no_forbidden_label(request: dict) -> object:
        if request["object"]["metadata"].get("labels", {}).get("forbidden"):
            return deny("forbidden configmaps are not allowed")
        return True

    name = "deny.webhooks.example.com"
    with admission_webhook(
        server, no_forbidden_label, rules=[rule(["CREATE"], "", "v1", "configmaps")], name=name
    ) as hook:
        refused = server.request("POST", CONFIGMAPS, configmap("bad", {"forbidden": "yes"}))
        assert refused.status == 403
        assert refused.json()["message"] == (
            f'admission webhook "{name}" denied the request: forbidden configmaps are not allowed'
        )
        assert server.request("POST", CONFIGMAPS, configmap("good")).status == 201
        assert [r["name"] for r in hook.requests] == ["bad", "good"]  # the probe never reaches the function
        assert hook.requests[0]["operation"] == "CREATE"
    # Unregistered on exit: the server no longer asks it.
    assert server.request("POST", CONFIGMAPS, configmap("bad2", {"forbidden": "yes"})).status == 201
    listed = server.request(
        "GET", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    ).json()
    assert name not in [c["metadata"]["name"] for c in listed["items"]]


def test_mutating_webhook_patches(server):
    def add_label(request: dict) -> object:
        return patch([{"op": "add", "path": "/metadata/labels/mutated", "value": "by-test"}])

    with admission_webhook(
        server, add_label, rules=[rule(["CREATE"], "", "v1", "configmaps")], mutating=True
    ):
        created = server.request("POST", CONFIGMAPS, configmap("patched", {"a": "b"}))
        assert created.status == 201, created.body
        assert created.json()["metadata"]["labels"] == {"a": "b", "mutated": "by-test"}


def test_failing_function_follows_the_failure_policy(server):
    def broken(request: dict) -> object:
        raise RuntimeError("boom")

    with admission_webhook(
        server, broken, rules=[rule(["CREATE"], "", "v1", "configmaps")], failure_policy="Ignore"
    ):
        assert server.request("POST", CONFIGMAPS, configmap("ignored")).status == 201
    with admission_webhook(server, broken, rules=[rule(["CREATE"], "", "v1", "configmaps")]) as hook:
        failed = server.request("POST", CONFIGMAPS, configmap("failed"))
        assert failed.status == 500
        assert failed.json()["message"].startswith(
            f'Internal error occurred: failed calling webhook "{hook.name}"'
        )


def version(name: str, storage: bool, props: dict) -> dict:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": props}},
            }
        },
    }


def host_port_to_address(obj: dict, desired: str) -> dict:
    """v1 {host, port} <-> v2 {address: "host:port"}."""
    obj = copy.deepcopy(obj)
    spec = obj.get("spec") or {}
    if desired.endswith("/v2"):
        obj["spec"] = {"address": f"{spec.get('host', '')}:{spec.get('port', 0)}"}
    else:
        host, _, port = (spec.get("address") or ":0").rpartition(":")
        obj["spec"] = {"host": host, "port": int(port)}
    return obj


def backend_crd(plural: str, kind: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.testing.example.com"},
        "spec": {
            "group": "testing.example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
            "versions": [
                version("v1", True, {"host": {"type": "string"}, "port": {"type": "integer"}}),
                version("v2", False, {"address": {"type": "string"}}),
            ],
        },
    }


def test_conversion_webhook_wired_at_creation(server):
    crd = backend_crd("backends", "Backend")
    v1, v2 = (f"/apis/testing.example.com/{v}/namespaces/default/backends" for v in ("v1", "v2"))
    with conversion_webhook(server, host_port_to_address) as hook:
        crd["spec"]["conversion"] = hook.conversion
        assert server.request("POST", CRDS, crd).status == 201
        body = {
            "apiVersion": "testing.example.com/v2",
            "kind": "Backend",
            "metadata": {"name": "db"},
            "spec": {"address": "db.local:5432"},
        }
        wait_for(lambda: server.request("POST", v2, body).status == 201)  # the CRD serves a moment after
        stored = server.request("GET", f"{v1}/db").json()
        assert stored["apiVersion"] == "testing.example.com/v1"
        assert stored["spec"] == {"host": "db.local", "port": 5432}
        assert server.request("GET", f"{v2}/db").json()["spec"] == {"address": "db.local:5432"}
        assert hook.reviews[0]["kind"] == "ConversionReview"
    server.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


def test_conversion_webhook_patched_into_an_existing_crd(server):
    crd = backend_crd("frontends", "Frontend")
    name = crd["metadata"]["name"]
    v1, v2 = (f"/apis/testing.example.com/{v}/namespaces/default/frontends" for v in ("v1", "v2"))
    assert server.request("POST", CRDS, crd).status == 201
    body = {
        "apiVersion": "testing.example.com/v1",
        "kind": "Frontend",
        "metadata": {"name": "web"},
        "spec": {"host": "web.local", "port": 80},
    }
    wait_for(lambda: server.request("POST", v1, body).status == 201)
    with conversion_webhook(server, host_port_to_address, crd=name) as hook:
        got = server.request("GET", f"{CRDS}/{name}").json()["spec"]["conversion"]
        assert (
            got["strategy"] == "Webhook"
            and got["webhook"]["clientConfig"] == hook.conversion["webhook"]["clientConfig"]
        )
        wait_for(lambda: server.request("GET", f"{v2}/web").json()["spec"] == {"address": "web.local:80"})
    assert server.request("GET", f"{CRDS}/{name}").json()["spec"]["conversion"] == {"strategy": "None"}
    server.request("DELETE", f"{CRDS}/{name}")
