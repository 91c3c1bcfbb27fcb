"""A cluster that moves (issue 12), end to end through kubectl with the default controllers and three
simulated nodes: a Deployment rolls out, is updated, undone and scaled; a Job completes; a StatefulSet gets
its ordered pods; a DaemonSet one pod per node; a Service's EndpointSlices list the ready pods; draining a
node evicts its pods within a PodDisruptionBudget; an approved CSR gets a certificate the cluster CA
verifies. No test plays the kubelet or the scheduler here: the server does."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server, wait_for

NODES = ("sim-node-0", "sim-node-1", "sim-node-2")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(
        str(tmp_path_factory.mktemp("cluster")), ["--controllers=*", "--simulated-nodes", "3"]
    ).start()
    yield server
    server.stop()


def _json(srv: Server, *args: str) -> dict:
    return json.loads(srv.kubectl(*args, "-o", "json").stdout)


def _rollout(srv: Server, what: str) -> None:
    srv.kubectl("rollout", "status", what, "--timeout=90s", timeout=120)


def _pods(srv: Server, selector: str) -> list[dict]:
    return _json(srv, "get", "pods", "-l", selector)["items"]


def test_the_simulated_nodes_are_ready(srv: Server) -> None:
    def ready() -> bool:
        nodes = _json(srv, "get", "nodes")["items"]
        conditions = [{c["type"]: c["status"] for c in n["status"].get("conditions", [])} for n in nodes]
        return sorted(n["metadata"]["name"] for n in nodes) == list(NODES) and all(
            c.get("Ready") == "True" for c in conditions
        )

    wait_for(ready, 60)


def test_a_deployment_rolls_out_updates_undoes_and_scales(srv: Server) -> None:
    srv.kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=3")
    _rollout(srv, "deployment/web")
    pods = _pods(srv, "app=web")
    assert len(pods) == 3 and all(p["spec"].get("nodeName") in NODES for p in pods)
    assert all(p["status"]["phase"] == "Running" for p in pods)

    srv.kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    _rollout(srv, "deployment/web")
    sets = _json(srv, "get", "replicasets", "-l", "app=web")["items"]
    assert sorted(rs["spec"]["template"]["spec"]["containers"][0]["image"] for rs in sets) == [
        "nginx:1",
        "nginx:2",
    ]

    srv.kubectl("rollout", "undo", "deployment/web")
    _rollout(srv, "deployment/web")
    deployment = _json(srv, "get", "deployment", "web")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"

    srv.kubectl("scale", "deployment/web", "--replicas=5")
    _rollout(srv, "deployment/web")
    wait_for(lambda: _json(srv, "get", "deployment", "web")["status"].get("availableReplicas") == 5, 60)


def test_a_job_completes(srv: Server) -> None:
    srv.kubectl("create", "job", "once", "--image=busybox", "--", "true")
    srv.kubectl("wait", "--for=condition=complete", "job/once", "--timeout=90s", timeout=120)
    assert _json(srv, "get", "job", "once")["status"]["succeeded"] == 1


def test_a_statefulset_gets_ordered_pods(srv: Server) -> None:
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres"}]},
            },
        },
    }
    srv.kubectl("apply", "-f", "-", input_text=json.dumps(manifest))
    _rollout(srv, "statefulset/db")
    pods = sorted(
        _pods(srv, "app=db"), key=lambda p: p["metadata"]["creationTimestamp"] + p["metadata"]["name"]
    )
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]


def test_a_daemonset_runs_one_pod_per_node(srv: Server) -> None:
    srv.kubectl(
        "create",
        "-f",
        "-",
        input_text=json.dumps(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": "agent"},
                "spec": {
                    "selector": {"matchLabels": {"app": "agent"}},
                    "template": {
                        "metadata": {"labels": {"app": "agent"}},
                        "spec": {"containers": [{"name": "agent", "image": "busybox"}]},
                    },
                },
            }
        ),
    )
    _rollout(srv, "daemonset/agent")
    assert sorted(p["spec"]["nodeName"] for p in _pods(srv, "app=agent")) == list(NODES)


def test_a_services_endpointslices_list_the_ready_pods(srv: Server) -> None:
    srv.kubectl("expose", "deployment", "web", "--port=80")

    def addresses() -> list[str]:
        slices = _json(srv, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")["items"]
        return sorted(
            a
            for s in slices
            for e in s.get("endpoints") or []
            if e["conditions"].get("ready")
            for a in e["addresses"]
        )

    def pod_ips() -> list[str]:
        return sorted(p["status"]["podIP"] for p in _pods(srv, "app=web") if p["status"].get("podIP"))

    wait_for(lambda: addresses() and addresses() == pod_ips(), 60)


def test_draining_a_node_respects_a_pod_disruption_budget(srv: Server) -> None:
    srv.kubectl("create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=4")
    wait_for(lambda: _json(srv, "get", "pdb", "web").get("status", {}).get("disruptionsAllowed") == 1, 60)
    node = next(p["spec"]["nodeName"] for p in _pods(srv, "app=web"))
    srv.kubectl("drain", node, "--ignore-daemonsets", "--timeout=120s", timeout=150)
    assert not [p for p in _pods(srv, "app=web") if p["spec"]["nodeName"] == node]
    _rollout(srv, "deployment/web")
    assert _json(srv, "get", "node", node)["spec"].get("unschedulable") is True


def test_an_approved_csr_gets_a_certificate_the_cluster_ca_verifies(srv: Server) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(NameOID.COMMON_NAME, "jane"),
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "developers"),
                ]
            )
        )
        .sign(key, hashes.SHA256())
    )
    pem = request.public_bytes(serialization.Encoding.PEM)
    srv.kubectl(
        "create",
        "-f",
        "-",
        input_text=json.dumps(
            {
                "apiVersion": "certificates.k8s.io/v1",
                "kind": "CertificateSigningRequest",
                "metadata": {"name": "jane"},
                "spec": {
                    "request": base64.b64encode(pem).decode(),
                    "signerName": "kubernetes.io/kube-apiserver-client",
                    "usages": ["client auth"],
                },
            }
        ),
    )
    srv.kubectl("certificate", "approve", "jane")
    issued = wait_for(lambda: _json(srv, "get", "csr", "jane").get("status", {}).get("certificate"), 60)
    certificate = x509.load_pem_x509_certificate(base64.b64decode(issued))
    ca = x509.load_pem_x509_certificate(Path(srv.data_dir, "pki", "ca.crt").read_bytes())
    certificate.verify_directly_issued_by(ca)
    assert certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "jane"
