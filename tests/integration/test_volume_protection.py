"""pvc-protection and pv-protection: deletion waits while a running pod uses the claim, then completes."""

from __future__ import annotations

import time

PVC = "/api/v1/namespaces/default/persistentvolumeclaims"
PODS = "/api/v1/namespaces/default/pods"


def gone(server, path: str, timeout: float = 10) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.request("GET", path).status == 404:
            return True
        time.sleep(0.1)
    return False


def test_claim_in_use_waits_for_its_pod(server):
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    created = server.request("POST", PVC, claim)
    assert created.status == 201 and "kubernetes.io/pvc-protection" in created.json()["metadata"]["finalizers"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}],
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}
    assert server.request("POST", PODS, pod).status == 201
    server.request("DELETE", f"{PVC}/data")
    time.sleep(1)
    assert server.request("GET", f"{PVC}/data").json()["metadata"]["deletionTimestamp"]  # still held
    server.request("DELETE", f"{PODS}/user")
    assert gone(server, f"{PVC}/data")


def test_unbound_volume_is_released(server):
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-free"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/x"}}}
    created = server.request("POST", "/api/v1/persistentvolumes", pv)
    assert "kubernetes.io/pv-protection" in created.json()["metadata"]["finalizers"]
    server.request("DELETE", "/api/v1/persistentvolumes/pv-free")
    assert gone(server, "/api/v1/persistentvolumes/pv-free")
