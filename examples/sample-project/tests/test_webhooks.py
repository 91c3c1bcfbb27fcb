"""Admission webhooks served by test functions (server.admission_webhook): the server calls them over HTTPS
with certificates the plugin generated and wired into the webhook configuration."""

from __future__ import annotations

from conftest import CONFIGMAPS, configmap

CONFIGMAP_CREATES = [
    {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["configmaps"],
        "scope": "Namespaced",
    }
]
TIER = "sample.example.com/tier"
MUTATED = "sample.example.com/mutated"


def refuse_the_forbidden_tier(request: dict) -> dict:
    """A validating webhook's function: it gets the AdmissionReview's request and answers its response."""
    labels = request["object"]["metadata"].get("labels") or {}
    if labels.get(TIER) == "forbidden":
        return {"allowed": False, "status": {"code": 403, "message": f"{TIER}=forbidden is not allowed"}}
    return {"allowed": True}


def add_the_mutated_label(request: dict) -> list[dict]:
    """A mutating webhook's function: a list is the JSON patch applied to the object."""
    if request["object"]["metadata"].get("labels"):
        return [{"op": "add", "path": "/metadata/labels/" + MUTATED.replace("/", "~1"), "value": "true"}]
    return [{"op": "add", "path": "/metadata/labels", "value": {MUTATED: "true"}}]


def test_a_validating_webhook_refuses_a_label_value(kube_apiserver):
    with kube_apiserver.admission_webhook(refuse_the_forbidden_tier, rules=CONFIGMAP_CREATES) as webhook:
        refused = kube_apiserver.request("POST", CONFIGMAPS, configmap("bad", labels={TIER: "forbidden"}))
        allowed = kube_apiserver.request("POST", CONFIGMAPS, configmap("good", labels={TIER: "gold"}))

    assert refused.status == 403
    assert refused.json()["message"] == (
        f'admission webhook "{webhook.name}" denied the request: {TIER}=forbidden is not allowed'
    )
    assert allowed.status == 201
    assert [r["name"] for r in webhook.requests] == ["bad", "good"]
    assert kube_apiserver.request("GET", f"{CONFIGMAPS}/bad").status == 404


def test_a_mutating_webhook_adds_a_label(kube_apiserver):
    with kube_apiserver.admission_webhook(add_the_mutated_label, rules=CONFIGMAP_CREATES, mutating=True):
        created = kube_apiserver.request("POST", CONFIGMAPS, configmap("plain"))
        labelled = kube_apiserver.request("POST", CONFIGMAPS, configmap("labelled", labels={TIER: "gold"}))

    assert created.status == 201
    assert created.json()["metadata"]["labels"] == {MUTATED: "true"}
    assert labelled.json()["metadata"]["labels"] == {TIER: "gold", MUTATED: "true"}
    # after the block the webhook is gone: objects are stored as sent
    after = kube_apiserver.request("POST", CONFIGMAPS, configmap("after"))
    assert after.json()["metadata"].get("labels") is None
