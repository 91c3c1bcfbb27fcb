"""A DELETE without preconditions succeeds when another client writes the object while it is being deleted
(Kubernetes' Store retries on the conflict); one with a resourceVersion precondition answers 409.

The concurrent write is made deterministic with a validating admission webhook on DELETE: kube-apiserver
calls it after reading the object and before deleting it, and this one updates the object (once per
object) before allowing the deletion."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Server, wait_for
from httpsserver import HTTPSJSONServer

VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
LABELS = {"delete-race": "yes"}


class TouchingWebhook(HTTPSJSONServer):
    """Allows every review; the first DELETE review of each object first labels the object."""

    def __init__(self, api: Server) -> None:
        super().__init__()
        self.api = api
        self.touched: dict[str, int] = {}
        self.lock = threading.Lock()

    def respond(self, path: str, review: Any) -> tuple[int, bytes, str]:
        request = review["request"]
        name = request.get("name", "")
        with self.lock:
            first = request["operation"] == "DELETE" and name not in self.touched
            if first:
                self.touched[name] = 0
        if first:
            patch = {"metadata": {"labels": {"touched-by": "webhook"}}}
            answer = self.api.request("PATCH", f"{CONFIGMAPS}/{name}", json.dumps(patch),
                                      {"Content-Type": "application/merge-patch+json"})
            self.touched[name] = answer.status
        response = {"uid": request["uid"], "allowed": True}
        body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        return 200, json.dumps(body).encode(), "application/json"


@pytest.fixture(scope="module")
def webhook(server: Server) -> Iterator[TouchingWebhook]:
    hook = TouchingWebhook(server)
    config = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
              "metadata": {"name": "delete-race"},
              "webhooks": [{"name": "touch.delete-race.example.com",
                            "clientConfig": {"url": hook.url("/touch"), "caBundle": hook.ca_bundle},
                            "rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                                       "resources": ["configmaps"]}],
                            "objectSelector": {"matchLabels": LABELS},
                            "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}
    assert server.request("POST", VALIDATING, config).status == 201
    markers = iter(range(1000))

    def in_force() -> bool:  # configurations are read from the watch cache: until a marker's DELETE reaches it
        name = f"marker-{next(markers)}"
        create(server, name)
        server.request("DELETE", f"{CONFIGMAPS}/{name}")
        return name in hook.touched
    wait_for(in_force)
    yield hook
    server.request("DELETE", f"{VALIDATING}/delete-race")
    hook.stop()


def create(server: Server, name: str) -> dict[str, Any]:
    answer = server.request("POST", CONFIGMAPS, {"metadata": {"name": name, "labels": LABELS}})
    assert answer.status == 201, answer.body
    return answer.json()


def test_delete_succeeds_when_the_object_changes_meanwhile(server, webhook):
    create(server, "raced")
    deleted = server.request("DELETE", f"{CONFIGMAPS}/raced")
    assert webhook.touched["raced"] == 200  # the object was written between the read and the deletion
    assert deleted.status == 200, deleted.body
    assert deleted.json()["status"] == "Success"
    assert server.request("GET", f"{CONFIGMAPS}/raced").status == 404


def test_delete_with_a_resource_version_precondition_conflicts(server, webhook):
    created = create(server, "raced-precondition")
    options = {"kind": "DeleteOptions", "apiVersion": "v1",
               "preconditions": {"resourceVersion": created["metadata"]["resourceVersion"]}}
    refused = server.request("DELETE", f"{CONFIGMAPS}/raced-precondition", options)
    assert webhook.touched["raced-precondition"] == 200
    assert refused.status == 409
    status = refused.json()
    assert status["reason"] == "Conflict" and status["message"].startswith(
        'Operation cannot be fulfilled on configmaps "raced-precondition": Precondition failed: ResourceVersion in '
        f'precondition: {created["metadata"]["resourceVersion"]}, ResourceVersion in object meta: ')
    assert server.request("GET", f"{CONFIGMAPS}/raced-precondition").json()["metadata"]["labels"]["touched-by"] \
        == "webhook"
