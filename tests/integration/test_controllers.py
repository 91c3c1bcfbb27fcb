"""The embedded garbage collector and namespace controller, driven by kubectl."""

from __future__ import annotations

import json
import time

import pytest

from conftest import wait_for

pytestmark = pytest.mark.usefixtures("kubectl_available")


def owned(server, owner: str, child: str, block: bool = True) -> None:
    server.kubectl("create", "cm", owner)
    uid = server.kubectl("get", "cm", owner, "-o", "jsonpath={.metadata.uid}").stdout
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid, "blockOwnerDeletion": block}
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": child, "ownerReferences": [ref]}}
    assert server.request("POST", "/api/v1/namespaces/default/configmaps", body).status == 201


def gone(server, name: str, timeout: float = 10) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.request("GET", f"/api/v1/namespaces/default/configmaps/{name}").status == 404:
            return True
        time.sleep(0.1)
    return False


def test_cascade_orphan_keeps_dependents_without_the_reference(server):
    owned(server, "gc-o1", "gc-c1")
    server.kubectl("delete", "cm", "gc-o1", "--cascade=orphan", timeout=30)
    child = server.request("GET", "/api/v1/namespaces/default/configmaps/gc-c1").json()
    assert "ownerReferences" not in child["metadata"]
    assert gone(server, "gc-o1", 1)


def test_cascade_foreground_deletes_dependents_first(server):
    owned(server, "gc-o2", "gc-c2")
    server.kubectl("delete", "cm", "gc-o2", "--cascade=foreground", timeout=30)
    assert gone(server, "gc-c2", 1) and gone(server, "gc-o2", 1)


def test_cascade_background_collects_dependents(server):
    owned(server, "gc-o3", "gc-c3", block=False)
    server.kubectl("delete", "cm", "gc-o3", timeout=30)
    assert gone(server, "gc-c3")


def test_deleting_a_namespace_empties_it(server):
    server.kubectl("create", "ns", "emptied")
    server.kubectl("-n", "emptied", "create", "cm", "a")
    server.kubectl("-n", "emptied", "create", "secret", "generic", "b", "--from-literal=k=v")
    server.kubectl("delete", "ns", "emptied", timeout=60)
    assert server.request("GET", "/api/v1/namespaces/emptied").status == 404


def test_namespace_waits_for_finalizers_and_says_so(server):
    server.kubectl("create", "ns", "stuck")
    held = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/x"]}}
    server.request("POST", "/api/v1/namespaces/stuck/configmaps", held)
    server.kubectl("delete", "ns", "stuck", "--wait=false")
    deadline = time.time() + 10
    conditions: list[dict] = []
    while time.time() < deadline and not conditions:
        ns = server.request("GET", "/api/v1/namespaces/stuck").json()
        conditions = [c for c in ns["status"].get("conditions", []) if c["type"] == "NamespaceContentRemaining"]
        time.sleep(0.1)
    # Upstream prints resource.group, so a core resource ends with a dot.
    assert conditions and conditions[0]["message"] == "Some resources are remaining: configmaps. has 1 resource instances"
    held_by = next(c for c in ns["status"]["conditions"] if c["type"] == "NamespaceFinalizersRemaining")
    assert held_by["message"] == "Some finalizers are remaining: example.com/x in 1 resource instances"
    assert ns["status"]["phase"] == "Terminating"
    patch = json.dumps({"metadata": {"finalizers": None}})
    server.request("PATCH", "/api/v1/namespaces/stuck/configmaps/held", patch,
                   {"Content-Type": "application/merge-patch+json"})
    deadline = time.time() + 10
    while time.time() < deadline and server.request("GET", "/api/v1/namespaces/stuck").status != 404:
        time.sleep(0.1)
    assert server.request("GET", "/api/v1/namespaces/stuck").status == 404


def test_root_ca_cert_publisher_keeps_kube_root_ca_in_every_namespace(server):
    """kube-root-ca.crt holds the CA the admin kubeconfig trusts, in new namespaces too, and comes back."""
    with open(server.ca_file) as f:
        ca = f.read()
    assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "rootca"}}).status == 201
    path = "/api/v1/namespaces/rootca/configmaps/kube-root-ca.crt"
    published = wait_for(lambda: server.request("GET", path).json() if server.request("GET", path).status == 200
                         else None, timeout=10)
    assert published["data"] == {"ca.crt": ca}
    assert published["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")
    assert server.request("DELETE", path).status == 200
    wait_for(lambda: server.request("GET", path).status == 200, timeout=10)
    changed = server.request("PATCH", path, {"data": {"ca.crt": "tampered"}},
                             {"Content-Type": "application/merge-patch+json"})
    assert changed.status == 200
    wait_for(lambda: server.request("GET", path).json()["data"] == {"ca.crt": ca}, timeout=10)
    assert server.request("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt").status == 200


CM = "/api/v1/namespaces/default/configmaps"


def configmap(server, name: str, *owners: tuple[str, bool]) -> dict:
    """Creates a ConfigMap owned by `owners` ((name, blockOwnerDeletion) of existing ConfigMaps)."""
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "blockOwnerDeletion": block,
             "uid": server.request("GET", f"{CM}/{owner}").json()["metadata"]["uid"]} for owner, block in owners]
    meta = {"name": name, **({"ownerReferences": refs} if refs else {})}
    created = server.request("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
    assert created.status == 201, created.text
    return created.json()


def set_owners(server, name: str, *owners: tuple[str, bool]) -> None:
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "blockOwnerDeletion": block,
             "uid": server.request("GET", f"{CM}/{owner}").json()["metadata"]["uid"]} for owner, block in owners]
    patched = server.request("PATCH", f"{CM}/{name}", {"metadata": {"ownerReferences": refs}},
                             {"Content-Type": "application/merge-patch+json"})
    assert patched.status == 200, patched.text


def test_foreground_keeps_a_dependent_that_has_another_live_owner(server):
    """As upstream's attemptToDeleteItem: a dependent with a solid owner loses only the reference to the
    owner waiting for its dependents, and the owner's deletion completes."""
    configmap(server, "gc-fg-owner")
    configmap(server, "gc-fg-other")
    configmap(server, "gc-fg-shared", ("gc-fg-owner", True), ("gc-fg-other", False))
    configmap(server, "gc-fg-only", ("gc-fg-owner", True))
    deleted = server.request("DELETE", f"{CM}/gc-fg-owner", {"propagationPolicy": "Foreground"})
    assert deleted.status == 200
    assert gone(server, "gc-fg-owner") and gone(server, "gc-fg-only")
    shared = server.request("GET", f"{CM}/gc-fg-shared")
    assert shared.status == 200
    assert [ref["name"] for ref in shared.json()["metadata"]["ownerReferences"]] == ["gc-fg-other"]
    assert "deletionTimestamp" not in shared.json()["metadata"]


def test_foreground_deletion_of_an_owner_reference_cycle_completes(server):
    """A owns B (blocking), B owns A (blocking): deleting A in foreground ends with both gone, as upstream
    breaks the cycle by unblocking B's references and deleting B in foreground too."""
    configmap(server, "gc-cycle-a")
    configmap(server, "gc-cycle-b", ("gc-cycle-a", True))
    set_owners(server, "gc-cycle-a", ("gc-cycle-b", True))
    deleted = server.request("DELETE", f"{CM}/gc-cycle-a", {"propagationPolicy": "Foreground"})
    assert deleted.status == 200
    assert gone(server, "gc-cycle-a") and gone(server, "gc-cycle-b")


def test_foreground_deletion_through_a_chain_of_dependents(server):
    """An owner deleted in foreground waits for a dependent that has dependents of its own, deleted in
    foreground in turn."""
    configmap(server, "gc-chain-1")
    configmap(server, "gc-chain-2", ("gc-chain-1", True))
    configmap(server, "gc-chain-3", ("gc-chain-2", True))
    assert server.request("DELETE", f"{CM}/gc-chain-1", {"propagationPolicy": "Foreground"}).status == 200
    assert gone(server, "gc-chain-1") and gone(server, "gc-chain-2") and gone(server, "gc-chain-3")


GIZMOS = "/apis/ns.example.com/v1/namespaces/{ns}/gizmos"


def gizmo_crd() -> dict:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.ns.example.com"},
            "spec": {"group": "ns.example.com", "scope": "Namespaced",
                     "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def namespace_gone(server, name: str, timeout: float = 15) -> bool:
    return wait_for(lambda: server.request("GET", f"/api/v1/namespaces/{name}").status == 404, timeout=timeout)


def test_deleting_a_namespace_deletes_its_custom_resources(server):
    """Discovery finds the CRD's resource: the namespace goes, and recreating it finds no gizmo."""
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert server.request("POST", crds, gizmo_crd()).status == 201
    assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "gizmo-ns"}}).status == 201
    gizmos = GIZMOS.format(ns="gizmo-ns")
    wait_for(lambda: server.request("GET", gizmos).status == 200, timeout=10)
    for name in ("g1", "g2"):
        body = {"apiVersion": "ns.example.com/v1", "kind": "Gizmo", "metadata": {"name": name}}
        assert server.request("POST", gizmos, body).status == 201
    assert server.request("DELETE", "/api/v1/namespaces/gizmo-ns").status == 200
    assert namespace_gone(server, "gizmo-ns")
    assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "gizmo-ns"}}).status == 201
    assert server.request("GET", gizmos).json()["items"] == []
    assert server.request("DELETE", "/api/v1/namespaces/gizmo-ns").status == 200
    assert namespace_gone(server, "gizmo-ns")


def test_an_unavailable_aggregated_api_holds_namespace_deletion(server):
    """As upstream: discovery of an aggregated group fails, so the namespace says so and stays until the
    group is discoverable again (here: its APIService is removed)."""
    service = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
               "metadata": {"name": "v1beta1.broken.example.com"},
               "spec": {"group": "broken.example.com", "version": "v1beta1", "groupPriorityMinimum": 100,
                        "versionPriority": 10, "insecureSkipTLSVerify": True,
                        "service": {"namespace": "default", "name": "nowhere", "port": 443}}}
    api_services = "/apis/apiregistration.k8s.io/v1/apiservices"
    assert server.request("POST", api_services, service).status == 201
    try:
        assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "held-ns"}}).status == 201
        assert server.request("DELETE", "/api/v1/namespaces/held-ns").status == 200

        def failure() -> dict | None:
            ns = server.request("GET", "/api/v1/namespaces/held-ns").json()
            return next((c for c in ns["status"].get("conditions", [])
                         if c["type"] == "NamespaceDeletionDiscoveryFailure" and c["status"] == "True"), None)

        condition = wait_for(failure, timeout=10)
        assert condition["reason"] == "DiscoveryFailed"
        assert condition["message"] == (
            "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: "
            "broken.example.com/v1beta1: the server is currently unable to handle the request")
        assert server.request("GET", "/api/v1/namespaces/held-ns").json()["status"]["phase"] == "Terminating"
    finally:
        server.request("DELETE", f"{api_services}/v1beta1.broken.example.com")
    assert namespace_gone(server, "held-ns")


def test_custom_resources_own_and_are_owned(server):
    """The collector watches custom resources too: a ConfigMap owned by a gizmo goes with it, and a gizmo
    owned by a ConfigMap deleted in foreground goes before it."""
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    crd = gizmo_crd()
    crd["metadata"]["name"] = "gadgets.gc.example.com"
    crd["spec"].update(group="gc.example.com", names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
    assert server.request("POST", crds, crd).status == 201
    gadgets = "/apis/gc.example.com/v1/namespaces/default/gadgets"
    wait_for(lambda: server.request("GET", gadgets).status == 200, timeout=10)
    owner = server.request("POST", gadgets, {"apiVersion": "gc.example.com/v1", "kind": "Gadget",
                                             "metadata": {"name": "gc-gadget"}}).json()
    ref = {"apiVersion": "gc.example.com/v1", "kind": "Gadget", "name": "gc-gadget",
           "uid": owner["metadata"]["uid"]}
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gc-of-gadget", "ownerReferences": [ref]}}
    assert server.request("POST", CM, body).status == 201
    assert server.request("DELETE", f"{gadgets}/gc-gadget").status == 200
    assert gone(server, "gc-of-gadget")

    configmap(server, "gc-gadget-owner")
    uid = server.request("GET", f"{CM}/gc-gadget-owner").json()["metadata"]["uid"]
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gc-gadget-owner", "uid": uid,
           "blockOwnerDeletion": True}
    owned_gadget = {"apiVersion": "gc.example.com/v1", "kind": "Gadget",
                    "metadata": {"name": "gc-owned", "ownerReferences": [ref]}}
    assert server.request("POST", gadgets, owned_gadget).status == 201
    assert server.request("DELETE", f"{CM}/gc-gadget-owner", {"propagationPolicy": "Foreground"}).status == 200
    assert wait_for(lambda: server.request("GET", f"{gadgets}/gc-owned").status == 404, timeout=10)
    assert gone(server, "gc-gadget-owner")


def test_a_cluster_scoped_object_naming_a_namespaced_owner_is_left_alone(server):
    """Upstream's namespacedOwnerOfClusterScopedObjectErr: not collected. A ClusterRole whose (cluster-scoped)
    owner is gone, created after it, is collected: by then the first one was looked at."""
    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    bad_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "anything", "uid": "0b4e6b3c-0000-4000-8000-000000000001"}
    gone_ref = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "gc-no-such-role",
                "uid": "0b4e6b3c-0000-4000-8000-000000000002"}
    for name, ref in (("gc-names-a-namespaced-owner", bad_ref), ("gc-owner-gone", gone_ref)):
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": name, "ownerReferences": [ref]}}
        assert server.request("POST", roles, role).status == 201
    assert wait_for(lambda: server.request("GET", f"{roles}/gc-owner-gone").status == 404, timeout=10)
    assert server.request("GET", f"{roles}/gc-names-a-namespaced-owner").status == 200
