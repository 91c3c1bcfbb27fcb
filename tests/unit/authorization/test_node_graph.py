"""The Node authorizer's graph: what a pod and a PV grant their node, vertices dropped with their last edge
(upstream's graph_test.go), and the populator following informer events."""

from __future__ import annotations

from kube_apiserver.authorization.node.graph import (
    CONFIGMAP,
    NODE,
    POD,
    PV,
    PVC,
    RESOURCE_CLAIM,
    SECRET,
    SERVICE_ACCOUNT,
    SLICE,
    VOLUME_ATTACHMENT,
    Graph,
    pod_configmap_names,
    pod_secret_names,
    pv_secret_names,
)
from kube_apiserver.authorization.node.graph_populator import GraphPopulator

RICH_POD = {
    "metadata": {"name": "web", "namespace": "ns", "uid": "1"},
    "spec": {
        "nodeName": "node1",
        "serviceAccountName": "sa",
        "imagePullSecrets": [{"name": "pull"}],
        "initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "init-env"}}]}],
        "containers": [
            {
                "name": "c",
                "env": [
                    {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-key", "key": "k"}}},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm-key", "key": "k"}}},
                    {"name": "C", "value": "plain"},
                ],
                "envFrom": [{"configMapRef": {"name": "cm-env"}}],
            }
        ],
        "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "debug-env"}}]}],
        "volumes": [
            {"name": "s", "secret": {"secretName": "vol"}},
            {
                "name": "p",
                "projected": {
                    "sources": [
                        {"secret": {"name": "proj"}},
                        {"configMap": {"name": "proj-cm"}},
                        {"serviceAccountToken": {"path": "t"}},
                    ]
                },
            },
            {"name": "cm", "configMap": {"name": "vol-cm"}},
            {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-publish"}}},
            {"name": "az", "azureFile": {"secretName": "", "shareName": "x"}},
            {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        ],
        "resourceClaims": [
            {"name": "gpu", "resourceClaimName": "shared-gpu"},
            {"name": "tpl", "resourceClaimTemplateName": "t"},
            {"name": "later", "resourceClaimTemplateName": "t"},
        ],
    },
    "status": {"resourceClaimStatuses": [{"name": "tpl", "resourceClaimName": "web-tpl-x"}]},
}


def test_pod_references():
    assert pod_secret_names(RICH_POD) == [
        "pull",
        "init-env",
        "env-key",
        "debug-env",
        "vol",
        "proj",
        "csi-publish",
    ]
    assert pod_configmap_names(RICH_POD) == ["cm-env", "cm-key", "proj-cm", "vol-cm"]
    graph = Graph()
    graph.add_pod(RICH_POD)
    for kind, name in [
        (SERVICE_ACCOUNT, "sa"),
        (SECRET, "debug-env"),
        (CONFIGMAP, "proj-cm"),
        (PVC, "data"),
        (PVC, "web-scratch"),
        (RESOURCE_CLAIM, "shared-gpu"),
        (RESOURCE_CLAIM, "web-tpl-x"),
    ]:
        assert graph.has_path("node1", kind, "ns", name), (kind, name)
        assert not graph.has_path("node2", kind, "ns", name)
    assert graph.get(RESOURCE_CLAIM, "ns", "later") is None  # its claim is not made yet
    assert not graph.has_path("node1", SECRET, "other", "vol")  # namespaced


def test_mirror_pods_grant_nothing():
    graph = Graph()
    mirror = {
        "metadata": {"name": "m", "namespace": "ns", "annotations": {"kubernetes.io/config.mirror": "x"}},
        "spec": {"nodeName": "node1", "volumes": [{"name": "s", "secret": {"secretName": "s"}}]},
    }
    graph.add_pod(mirror)
    assert graph.has_path("node1", POD, "ns", "m")
    assert graph.get(SECRET, "ns", "s") is None


def test_pv_secrets_and_paths_through_the_claim():
    pv = {
        "metadata": {"name": "pv1"},
        "spec": {
            "claimRef": {"name": "data", "namespace": "ns"},
            "csi": {
                "driver": "d",
                "controllerPublishSecretRef": {"name": "ctrl", "namespace": "ns"},
                "nodeStageSecretRef": {"name": "stage", "namespace": "ns"},
                "nodeExpandSecretRef": {"name": "expand", "namespace": "other"},
            },
        },
    }
    assert pv_secret_names(pv) == [
        ("ns", "stage"),
        ("other", "expand"),
    ]  # the controller's secret is not the kubelet's
    rbd = {
        "metadata": {"name": "pv2"},
        "spec": {"claimRef": {"name": "c", "namespace": "claims"}, "rbd": {"secretRef": {"name": "ceph"}}},
    }
    assert pv_secret_names(rbd) == [("claims", "ceph")]  # no namespace: the claim's
    graph = Graph()
    graph.add_pv(pv)
    assert not graph.has_path("node1", PV, "", "pv1")  # no pod uses the claim yet
    graph.add_pod(RICH_POD)
    assert graph.has_path("node1", PV, "", "pv1")
    assert graph.has_path("node1", SECRET, "ns", "stage")
    assert not graph.has_path("node1", SECRET, "ns", "ctrl")
    graph.add_pv({"metadata": {"name": "pv1"}, "spec": {}})  # unbound: its edges go
    assert graph.get(PV, "", "pv1") is None and graph.get(SECRET, "ns", "stage") is None


def test_deleting_a_pod_drops_what_only_it_kept():
    graph = Graph()
    graph.add_pod(RICH_POD)
    other = {
        "metadata": {"name": "other", "namespace": "ns"},
        "spec": {"nodeName": "node1", "volumes": [{"name": "s", "secret": {"secretName": "vol"}}]},
    }
    graph.add_pod(other)
    graph.delete_pod("ns", "web")
    assert graph.get(POD, "ns", "web") is None
    assert graph.get(SECRET, "ns", "pull") is None  # only web used it
    assert graph.has_path("node1", SECRET, "ns", "vol")  # other still does
    graph.delete_pod("ns", "other")
    assert graph.vertices == {}  # the node went with its last pod


def test_node_edges_of_attachments_and_slices():
    graph = Graph()
    graph.add_volume_attachment("va", "node1")
    graph.add_resource_slice("slice", "node1")
    assert graph.has_path("node1", VOLUME_ATTACHMENT, "", "va") and graph.has_path(
        "node1", SLICE, "", "slice"
    )
    graph.add_resource_slice("slice", "node2")  # moved
    assert not graph.has_path("node1", SLICE, "", "slice") and graph.has_path("node2", SLICE, "", "slice")
    graph.add_volume_attachment("va", "")
    assert graph.get(VOLUME_ATTACHMENT, "", "va") is None
    graph.delete_resource_slice("slice")
    graph.delete_volume_attachment("va")
    assert graph.vertices == {}


def test_populator_follows_pod_events():
    graph = Graph()
    populator = GraphPopulator(graph)
    pending = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "1"},
        "spec": {"volumes": [{"name": "s", "secret": {"secretName": "s"}}]},
    }
    populator.update_pod(None, pending)
    assert graph.vertices == {}  # not bound: nothing
    bound = {**pending, "spec": {**pending["spec"], "nodeName": "node1"}}
    populator.update_pod(pending, bound)
    assert graph.has_path("node1", SECRET, "ns", "s")
    recreated = {
        **bound,
        "metadata": {**bound["metadata"], "uid": "2"},
        "spec": {**bound["spec"], "volumes": []},
    }
    populator.update_pod(bound, recreated)  # a new pod of the same name
    assert graph.get(SECRET, "ns", "s") is None
    populator.delete_pod(recreated)
    assert graph.get(NODE, "", "node1") is None
