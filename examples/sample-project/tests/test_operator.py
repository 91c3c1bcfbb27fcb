"""The kopf operator, run by kopf's own test runner against the fixture's server."""

from __future__ import annotations

from pathlib import Path

import pytest
from kopf.testing import KopfRunner

from conftest import wait_for

OPERATOR = Path(__file__).resolve().parents[1] / "greeting_operator.py"
GREETINGS = "/apis/example.com/v1/namespaces/default/greetings"

# The project's CRDs (pytest.ini: kube_apiserver_crds = crds) are Established before the test starts.
# The garbage collector: the ConfigMap is owned by its Greeting.
pytestmark = pytest.mark.kube_apiserver(controllers=["garbagecollector"])


def test_a_greeting_gets_its_configmap_and_status(kube_apiserver, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kube_apiserver.kubeconfig)  # kopf logs in with it
    greeting = {
        "apiVersion": "example.com/v1",
        "kind": "Greeting",
        "metadata": {"name": "hello"},
        "spec": {"name": "Ada"},
    }
    args = ["run", "--standalone", "--namespace", "default", str(OPERATOR)]
    with KopfRunner(args, timeout=60) as runner:
        assert kube_apiserver.request("POST", GREETINGS, greeting).status == 201

        configmap = wait_for(
            lambda: _json_if_found(kube_apiserver, "/api/v1/namespaces/default/configmaps/hello-greeting"),
            what="the greeting's configmap",
        )
        status = wait_for(
            lambda: kube_apiserver.request("GET", f"{GREETINGS}/hello").json().get("status", {}).get("phase"),
            what="the greeting's status",
        )

    assert runner.exit_code == 0, runner.output
    assert runner.exception is None
    assert configmap["data"] == {"message": "Hello, Ada!"}
    [owner] = configmap["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("Greeting", "hello")
    assert status == "Greeted"
    greeting_now = kube_apiserver.request("GET", f"{GREETINGS}/hello").json()
    assert greeting_now["status"]["configMap"] == "hello-greeting"
    # the operator wrote the status through the status subresource, once
    status_writes = kube_apiserver.requests(resource="greetings", subresource="status", verb="patch")
    assert [r.status for r in status_writes] == [200]


def _json_if_found(server, path):
    resp = server.request("GET", path)
    return resp.json() if resp.status == 200 else None
