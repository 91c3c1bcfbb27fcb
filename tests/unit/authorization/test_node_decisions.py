"""The Node authorizer's decisions, ported from upstream's node_authorizer_test.go (TestAuthorizer,
TestAuthorizerSharedResources) with v1.34's rules: pods and nodes by name or field selector, resource slices,
resource claims, service accounts read by a pod's node."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.authorization.authorizer import ALLOW, NO_OPINION, Attributes, UnionAuthorizer
from kube_apiserver.authorization.node import Graph, NodeAuthorizer, node_identity
from kube_apiserver.controlplane.bootstrappolicy.policy import node_rules
from kube_apiserver.registry.context import UserInfo

NODE0 = UserInfo("system:node:node0", groups=("system:nodes",))
LEASES, STORAGE, RESOURCE = "coordination.k8s.io", "storage.k8s.io", "resource.k8s.io"


def _pod(name: str, namespace: str, node: str, volumes: list[dict], **spec) -> dict:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "volumes": volumes, **spec},
    }


def sample_graph(nodes: int = 2, namespaces: int = 2, pods_per_node: int = 2) -> Graph:
    """upstream's generate() with TestAuthorizer's options: per pod a service account, a unique and a shared
    secret, a unique configmap and a unique PVC whose PV names a secret; one volume attachment per node."""
    graph = Graph()
    for n in range(nodes):
        node = f"node{n}"
        for p in range(pods_per_node):
            name, namespace = f"pod{p}-{node}", f"ns{p % namespaces}"
            pv_name, claim = f"pv0-{name}-{namespace}", f"pvc0-{name}"
            graph.add_pod(
                _pod(
                    name,
                    namespace,
                    node,
                    [
                        {"name": "s", "secret": {"secretName": f"secret0-{name}"}},
                        {"name": "shared", "secret": {"secretName": "secret0-shared"}},
                        {"name": "c", "configMap": {"name": f"configmap0-{name}"}},
                        {"name": "p", "persistentVolumeClaim": {"claimName": claim}},
                    ],
                    serviceAccountName=f"svcacct{p}-{node}",
                )
            )
            graph.add_pv(
                {
                    "metadata": {"name": pv_name},
                    "spec": {
                        "flexVolume": {"driver": "d", "secretRef": {"name": f"secret-{pv_name}"}},
                        "claimRef": {"name": claim, "namespace": namespace},
                    },
                }
            )
        graph.add_volume_attachment(f"attachment0-{node}", node)
    return graph


@pytest.fixture(scope="module")
def authz() -> NodeAuthorizer:
    return NodeAuthorizer(sample_graph(), node_rules())


def decide(
    authorizer,
    verb: str,
    resource: str,
    name: str = "",
    namespace: str = "",
    group: str = "",
    subresource: str = "",
    field_selector: str = "",
    user: UserInfo = NODE0,
) -> tuple[str, str]:
    attrs = Attributes(
        user,
        verb,
        True,
        namespace=namespace,
        api_group=group,
        resource=resource,
        subresource=subresource,
        name=name,
        field_selector=field_selector,
    )
    return asyncio.run(authorizer.authorize(attrs))


ALLOWED = [
    ("get", "configmaps", "configmap0-pod0-node0", "ns0", ""),
    ("get", "secrets", "secret0-pod0-node0", "ns0", ""),
    ("list", "secrets", "secret0-pod0-node0", "ns0", ""),
    ("watch", "secrets", "secret0-pod0-node0", "ns0", ""),
    ("get", "secrets", "secret0-shared", "ns0", ""),
    ("get", "secrets", "secret-pv0-pod0-node0-ns0", "ns0", ""),  # via pvc <- pv
    ("get", "persistentvolumeclaims", "pvc0-pod0-node0", "ns0", ""),
    ("get", "persistentvolumes", "pv0-pod0-node0-ns0", "", ""),
    ("get", "volumeattachments", "attachment0-node0", "", STORAGE),
    ("get", "serviceaccounts", "svcacct0-node0", "ns0", ""),
    ("get", "pods", "pod0-node0", "ns0", ""),
    ("get", "nodes", "node0", "", ""),
    ("update", "nodes", "node1", "", ""),  # NodeRestriction narrows writes
    ("get", "leases", "node0", "kube-node-lease", LEASES),
    ("create", "leases", "node0", "kube-node-lease", LEASES),
    ("update", "leases", "node0", "kube-node-lease", LEASES),
    ("patch", "leases", "node0", "kube-node-lease", LEASES),
    ("delete", "leases", "node0", "kube-node-lease", LEASES),
    ("get", "csinodes", "node0", "", STORAGE),
    ("create", "csinodes", "node0", "", STORAGE),
    ("delete", "csinodes", "node0", "", STORAGE),
    ("create", "resourceslices", "", "", RESOURCE),
    ("get", "services", "", "", ""),  # the static node rules
    ("create", "certificatesigningrequests", "", "", "certificates.k8s.io"),
]


@pytest.mark.parametrize(("verb", "resource", "name", "namespace", "group"), ALLOWED)
def test_allowed(authz, verb, resource, name, namespace, group):
    assert decide(authz, verb, resource, name, namespace, group) == (ALLOW, "")


NO_RELATIONSHIP = "no relationship found between node 'node0' and this object"
DENIED = [
    ("list", "secrets", "", "ns0", "", "", "No Object name found"),
    ("watch", "secrets", "", "ns0", "", "", "No Object name found"),
    ("list", "secrets", "secret0-pod0-node0", "", "", "", "can only read namespaced object of this type"),
    ("update", "secrets", "secret0-pod0-node0", "ns0", "", "", "can only read resources of this type"),
    ("get", "secrets", "secret0-pod0-node0", "ns0", "", "status", "cannot read subresource"),
    ("get", "configmaps", "configmap0-pod0-node1", "ns0", "", "", NO_RELATIONSHIP),
    ("get", "secrets", "secret0-pod0-node1", "ns0", "", "", NO_RELATIONSHIP),
    ("get", "secrets", "secret-pv0-pod0-node1-ns0", "ns0", "", "", NO_RELATIONSHIP),
    ("get", "secrets", "unknown", "ns0", "", "", NO_RELATIONSHIP),
    ("get", "persistentvolumeclaims", "pvc0-pod0-node1", "ns0", "", "", NO_RELATIONSHIP),
    (
        "list",
        "persistentvolumeclaims",
        "pvc0-pod0-node0",
        "ns0",
        "",
        "",
        "can only get individual resources of this type",
    ),
    ("get", "persistentvolumes", "pv0-pod0-node1-ns0", "", "", "", NO_RELATIONSHIP),
    ("get", "volumeattachments", "attachment0-node1", "", STORAGE, "", NO_RELATIONSHIP),
    ("create", "serviceaccounts", "svcacct0-node1", "ns0", "", "token", NO_RELATIONSHIP),
    (
        "create",
        "serviceaccounts",
        "svcacct0-node0",
        "ns0",
        "",
        "",
        "can only create token subresource of serviceaccount",
    ),
    (
        "update",
        "serviceaccounts",
        "svcacct0-node0",
        "ns0",
        "",
        "token",
        "can only create tokens for individual service accounts",
    ),
    ("get", "serviceaccounts", "svcacct0-node1", "ns0", "", "", NO_RELATIONSHIP),
    (
        "get",
        "leases",
        "node0",
        "foo",
        LEASES,
        "",
        'can only access leases in the "kube-node-lease" system namespace',
    ),
    (
        "create",
        "leases",
        "node0",
        "foo",
        LEASES,
        "",
        'can only access leases in the "kube-node-lease" system namespace',
    ),
    (
        "get",
        "leases",
        "node1",
        "kube-node-lease",
        LEASES,
        "",
        "can only access node lease with the same name as the requesting node",
    ),
    (
        "update",
        "leases",
        "node1",
        "kube-node-lease",
        LEASES,
        "",
        "can only access node lease with the same name as the requesting node",
    ),
    (
        "list",
        "leases",
        "",
        "kube-node-lease",
        LEASES,
        "",
        "can only get, create, update, patch, or delete a node lease",
    ),
    (
        "watch",
        "leases",
        "",
        "kube-node-lease",
        LEASES,
        "",
        "can only get, create, update, patch, or delete a node lease",
    ),
    ("get", "csinodes", "node0", "", STORAGE, "csiDrivers", "cannot authorize CSINode subresources"),
    (
        "get",
        "csinodes",
        "node1",
        "",
        STORAGE,
        "",
        "can only access CSINode with the same name as the requesting node",
    ),
    ("list", "csinodes", "", "", STORAGE, "", "can only get, create, update, patch, or delete a CSINode"),
    ("get", "nodes", "node1", "", "", "", "node 'node0' cannot read 'node1', only its own Node object"),
    ("list", "nodes", "", "", "", "", "node 'node0' cannot read all nodes, only its own Node object"),
    ("delete", "nodes", "node0", "", "", "", ""),
    ("get", "pods", "pod0-node1", "ns0", "", "", NO_RELATIONSHIP),
    ("list", "pods", "", "", "", "", "can only list/watch pods with spec.nodeName field selector"),
    ("update", "pods", "pod0-node0", "ns0", "", "", ""),
    ("get", "pods", "pod0-node0", "ns0", "", "log", ""),
    (
        "list",
        "resourceslices",
        "",
        "",
        RESOURCE,
        "",
        "can only list/watch/deletecollection resourceslices with nodeName field selector",
    ),
    ("get", "resourceslices", "slice", "", RESOURCE, "status", "cannot authorize ResourceSlice subresources"),
    ("get", "resourceclaims", "claim", "ns0", RESOURCE, "", NO_RELATIONSHIP),
    ("delete", "services", "", "", "", "", ""),
]


@pytest.mark.parametrize(("verb", "resource", "name", "namespace", "group", "subresource", "reason"), DENIED)
def test_no_opinion(authz, verb, resource, name, namespace, group, subresource, reason):
    assert decide(authz, verb, resource, name, namespace, group, subresource) == (NO_OPINION, reason)


def test_field_selectors_scope_lists_to_the_node(authz):
    assert decide(authz, "list", "pods", field_selector="spec.nodeName=node0") == (ALLOW, "")
    assert (
        decide(authz, "watch", "pods", field_selector="spec.nodeName==node0,metadata.namespace=ns1")[0]
        == ALLOW
    )
    assert decide(authz, "list", "pods", field_selector="spec.nodeName=node1")[0] == NO_OPINION
    assert decide(authz, "list", "pods", field_selector="spec.nodeName!=node1")[0] == NO_OPINION
    assert decide(authz, "list", "pods", field_selector="spec.nodeName=node0=")[0] == NO_OPINION  # unparsable
    for verb in ("list", "watch", "deletecollection"):
        assert decide(
            authz, verb, "resourceslices", group=RESOURCE, field_selector="spec.nodeName=node0"
        ) == (ALLOW, "")


def test_non_nodes_and_unidentified_nodes():
    authz = NodeAuthorizer(Graph(), node_rules())
    not_a_node = UserInfo("system:node:node0", groups=("system:authenticated",))
    assert decide(authz, "get", "services", user=not_a_node) == (NO_OPINION, "")
    assert decide(authz, "get", "services", user=UserInfo("bob", groups=("system:nodes",))) == (
        NO_OPINION,
        "",
    )
    nameless = UserInfo("system:node:", groups=("system:nodes",))
    assert decide(authz, "get", "services", user=nameless) == (
        NO_OPINION,
        'unknown node for user "system:node:"',
    )
    assert node_identity(NODE0) == ("node0", True)


def test_rules_for_a_node_are_incomplete(authz):
    rules = asyncio.run(authz.rules_for(NODE0, "ns0"))
    assert (
        rules.incomplete and rules.evaluation_error == "node authorizer does not support user rule resolution"
    )
    assert not asyncio.run(authz.rules_for(UserInfo("bob"), "ns0")).incomplete


def test_union_keeps_the_node_reason_when_rbac_has_no_opinion(authz):
    """Node,RBAC: RBAC says nothing of a kubelet, so the 403 carries the Node authorizer's reason."""

    class Silent:
        async def authorize(self, attrs):
            return NO_OPINION, ""

    union = UnionAuthorizer([authz, Silent()])
    assert decide(union, "list", "secrets", namespace="ns0") == (NO_OPINION, "No Object name found")


def test_shared_resources():
    """TestAuthorizerSharedResources: a secret several nodes' pods use, and dropping a pod's volumes."""
    graph = Graph()
    authz = NodeAuthorizer(graph, node_rules())

    def secret(name: str) -> dict:
        return {"name": name, "secret": {"secretName": name}}

    graph.add_pod(
        _pod(
            "pod1-node1",
            "ns1",
            "node1",
            [secret("node1-only"), secret("node1-node2-only"), secret("shared-all")],
        )
    )
    graph.add_pod(_pod("pod2-node2", "ns1", "node2", [secret("node1-node2-only"), secret("shared-all")]))
    pod3 = _pod("pod3-node3", "ns1", "node3", [secret("shared-all")])
    graph.add_pod(pod3)
    expected = {
        "node1": {"node1-only": True, "node1-node2-only": True, "shared-all": True},
        "node2": {"node1-only": False, "node1-node2-only": True, "shared-all": True},
        "node3": {"node1-only": False, "node1-node2-only": False, "shared-all": True},
    }
    for node, secrets in expected.items():
        user = UserInfo(f"system:node:{node}", groups=("system:nodes",))
        for name, allowed in secrets.items():
            decision = decide(authz, "get", "secrets", name, "ns1", user=user)[0]
            assert (decision == ALLOW) == allowed, (node, name)
    node3 = UserInfo("system:node:node3", groups=("system:nodes",))
    pod3["spec"]["volumes"] = []
    graph.add_pod(pod3)  # the shared secret's destinations are recomputed
    assert decide(authz, "get", "secrets", "shared-all", "ns1", user=node3)[0] == NO_OPINION
    assert (
        decide(
            authz,
            "get",
            "secrets",
            "shared-all",
            "ns1",
            user=UserInfo("system:node:node1", groups=("system:nodes",)),
        )[0]
        == ALLOW
    )
