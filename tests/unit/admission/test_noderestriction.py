"""NodeRestriction: a node writes only its own objects, with upstream's messages (cases from upstream's
plugin/pkg/admission/noderestriction/admission_test.go)."""

from __future__ import annotations

import asyncio
import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kube_apiserver.admission.interfaces import CREATE, DELETE, UPDATE, Attributes, Chain
from kube_apiserver.admission.noderestriction import NodeRestriction, forbidden_labels
from kube_apiserver.apimachinery import errors
from kube_apiserver.registry.context import UserInfo

NODE1 = UserInfo("system:node:node1", groups=("system:nodes",))
MIRROR = {"kubernetes.io/config.mirror": "x"}
OWNER = {"apiVersion": "v1", "kind": "Node", "name": "node1", "uid": "node1-uid", "controller": True}
STORED = {
    ("pods", "ns", "mine"): {"metadata": {"name": "mine", "uid": "pod-uid"}, "spec": {"nodeName": "node1"}},
    ("pods", "ns", "theirs"): {"metadata": {"name": "theirs", "uid": "t"}, "spec": {"nodeName": "node2"}},
    ("nodes", "", "node1"): {"metadata": {"name": "node1", "uid": "node1-uid"}},
}


class Plugin(NodeRestriction):
    async def _lookup(self, resource, singular, namespace, name):
        obj = STORED.get((resource, namespace, name))
        if obj is None:
            raise errors.not_found(singular, "", name)
        return obj


def admit(
    operation: str,
    resource: str,
    obj=None,
    old=None,
    *,
    name: str = "",
    namespace: str = "ns",
    subresource: str = "",
    group: str = "",
    user: UserInfo = NODE1,
    resource_group: str | None = None,
) -> str:
    """ "" when admitted, else the refusal's message (both phases, as a request passes them)."""
    attrs = Attributes(
        operation,
        group,
        "v1",
        "",
        resource,
        subresource,
        namespace,
        name,
        obj,
        old,
        user,
        resource_group=resource_group,
    )
    chain = Chain([Plugin()])

    async def run() -> None:
        if operation != DELETE:
            await chain.admit(attrs)
        await chain.validate(attrs)

    try:
        asyncio.run(run())
    except errors.StatusError as err:
        assert err.code in (403, 404), err
        return err.message
    return ""


def pod(node: str = "node1", annotations=MIRROR, owners=(OWNER,), **spec) -> dict:
    return {
        "metadata": {"name": "p", "annotations": dict(annotations), "ownerReferences": list(owners)},
        "spec": {"nodeName": node, **spec},
    }


def test_mirror_pods():
    assert admit(CREATE, "pods", pod()) == ""
    assert admit(CREATE, "pods", pod(annotations={})) == (
        'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node1" can only '
        "create mirror pods"
    )
    assert admit(CREATE, "pods", pod("node2")) == (
        'pods "p" is forbidden: node "node1" can only create pods with spec.nodeName set to itself'
    )
    assert admit(CREATE, "pods", pod(owners=())).endswith(
        "can only create pods with an owner reference set to itself"
    )
    assert admit(CREATE, "pods", pod(owners=(OWNER, OWNER))).endswith(
        "with a single owner reference set to itself"
    )
    assert admit(CREATE, "pods", pod(owners=({**OWNER, "controller": False},))).endswith(
        "can only create pods with a controller owner reference set to itself"
    )
    assert admit(CREATE, "pods", pod(owners=({**OWNER, "blockOwnerDeletion": True},))).endswith(
        'node "node1" must not set blockOwnerDeletion on an owner reference'
    )
    assert admit(CREATE, "pods", pod(owners=({**OWNER, "uid": "old"},))).endswith(
        "node node1 UID mismatch: expected old got node1-uid"
    )
    assert admit(CREATE, "pods", pod(serviceAccountName="sa")).endswith(
        'node "node1" can not create pods that reference a service account'
    )
    volume = {"name": "v", "secret": {"secretName": "s"}}
    assert admit(CREATE, "pods", pod(volumes=[volume])).endswith("can not create pods that reference secrets")
    env = [{"name": "c", "envFrom": [{"configMapRef": {"name": "cm"}}]}]
    assert admit(CREATE, "pods", pod(containers=env)).endswith(
        "can not create pods that reference configmaps"
    )
    claim = {"name": "v", "persistentVolumeClaim": {"claimName": "c"}}
    assert admit(CREATE, "pods", pod(volumes=[claim])).endswith(
        "can not create pods that reference persistentvolumeclaims"
    )
    bundle = {"name": "v", "projected": {"sources": [{"clusterTrustBundle": {"path": "x", "name": "b"}}]}}
    assert admit(CREATE, "pods", pod(volumes=[bundle])).endswith(
        "can not create pods that reference clustertrustbundles"
    )


def test_pod_delete_update_status_and_eviction():
    assert admit(DELETE, "pods", None, STORED[("pods", "ns", "mine")], name="mine") == ""
    assert admit(DELETE, "pods", None, STORED[("pods", "ns", "theirs")], name="theirs") == (
        'pods "theirs" is forbidden: node "node1" can only delete pods with spec.nodeName set to itself'
    )
    assert admit(DELETE, "pods", None, None, name="gone") == 'pod "gone" not found'
    assert admit(UPDATE, "pods", pod(), pod(), name="p") == (
        'pods "p" is forbidden: unexpected operation "UPDATE", node "node1" can only create and delete mirror pods'
    )
    mine, theirs = STORED[("pods", "ns", "mine")], STORED[("pods", "ns", "theirs")]
    assert admit(UPDATE, "pods", mine, mine, name="mine", subresource="status") == ""
    assert admit(UPDATE, "pods", theirs, theirs, name="theirs", subresource="status") == (
        'pods "theirs" is forbidden: node "node1" can only update pod status for pods with spec.nodeName set to '
        "itself"
    )
    relabelled = {**mine, "metadata": {**mine["metadata"], "labels": {"a": "b"}}}
    assert admit(UPDATE, "pods", relabelled, mine, name="mine", subresource="status").endswith(
        'node "node1" cannot update labels through pod status'
    )
    eviction = {"metadata": {"name": "mine"}}
    assert admit(CREATE, "pods", eviction, name="mine", subresource="eviction") == ""
    assert admit(CREATE, "pods", {"metadata": {"name": "theirs"}}, name="theirs", subresource="eviction") == (
        'pods "theirs" is forbidden: node node1 can only evict pods with spec.nodeName set to itself'
    )
    assert admit(UPDATE, "pods", mine, mine, name="mine", subresource="ephemeralcontainers").endswith(
        "unexpected pod subresource \"ephemeralcontainers\", only 'status' and 'eviction' are allowed"
    )


def node(name: str = "node1", labels=None, taints=None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def test_nodes():
    assert (
        admit(CREATE, "nodes", node(labels={"kubernetes.io/hostname": "n", "custom": "x"}), name="node1")
        == ""
    )
    assert admit(UPDATE, "nodes", node("node2"), node("node2"), name="node2", namespace="") == (
        'nodes "node2" is forbidden: node "node1" is not allowed to modify node "node2"'
    )
    assert admit(
        CREATE,
        "nodes",
        node(
            labels={
                "node-restriction.kubernetes.io/a": "b",
                "foo.k8s.io/x": "y",
                "node.kubernetes.io/ok": "z",
            }
        ),
        name="node1",
        namespace="",
    ) == (
        'nodes "node1" is forbidden: node "node1" is not allowed to set the following labels: foo.k8s.io/x, '
        "node-restriction.kubernetes.io/a"
    )
    tainted = node(taints=[{"key": "k", "effect": "NoSchedule"}])
    assert admit(UPDATE, "nodes", node(), tainted, name="node1", namespace="") == (
        'nodes "node1" is forbidden: node "node1" is not allowed to modify taints'
    )
    assert admit(UPDATE, "nodes", tainted, tainted, name="node1", namespace="", subresource="status") == ""
    assert admit(UPDATE, "nodes", node(labels={"kubernetes.io/role": "master"}), node(), name="node1") == (
        'nodes "node1" is forbidden: is not allowed to modify labels: kubernetes.io/role'
    )


def test_forbidden_labels():
    assert forbidden_labels(
        {
            "a.node-restriction.kubernetes.io/x": "1",
            "kubelet.kubernetes.io/y": "2",
            "beta.kubernetes.io/arch": "amd64",
        },
        {"k8s.io/z": "3"},
    ) == ["a.node-restriction.kubernetes.io/x", "k8s.io/z"]
    assert forbidden_labels({"same.k8s.io/x": "1"}, {"same.k8s.io/x": "1"}) == []


def test_leases_csinodes_slices_and_tokens():
    lease = {"metadata": {"name": "node1"}}
    assert admit(CREATE, "leases", lease, group="coordination.k8s.io", namespace="kube-node-lease") == ""
    assert admit(
        CREATE,
        "leases",
        {"metadata": {"name": "node2"}},
        group="coordination.k8s.io",
        namespace="kube-node-lease",
    ) == (
        'leases.coordination.k8s.io "node2" is forbidden: can only access node lease with the same name as the '
        "requesting node"
    )
    assert admit(
        UPDATE, "leases", lease, lease, name="node1", group="coordination.k8s.io", namespace="x"
    ).endswith('can only access leases in the "kube-node-lease" system namespace')
    assert admit(
        CREATE, "csinodes", {"metadata": {"name": "node2"}}, group="storage.k8s.io", namespace=""
    ).endswith("can only access CSINode with the same name as the requesting node")
    assert admit(
        CREATE,
        "resourceslices",
        {"metadata": {"name": "s"}, "spec": {"nodeName": "node2"}},
        group="resource.k8s.io",
        namespace="",
    ).endswith("can only create ResourceSlice with the same NodeName as the requesting node")
    assert admit(
        DELETE,
        "resourceslices",
        None,
        {"metadata": {"name": "s"}, "spec": {"nodeName": "node2"}},
        name="s",
        group="resource.k8s.io",
        namespace="",
    ).endswith("can only delete ResourceSlice with the same NodeName as the requesting node")

    def token(**ref) -> dict:
        return {"spec": {"boundObjectRef": ref}}

    bound = {"apiVersion": "v1", "kind": "Pod", "name": "mine", "uid": "pod-uid"}
    assert admit(CREATE, "serviceaccounts", token(**bound), name="sa", subresource="token") == ""
    assert admit(CREATE, "serviceaccounts", token(), name="sa", subresource="token").endswith(
        "node requested token not bound to a pod"
    )
    assert admit(
        CREATE, "serviceaccounts", token(**{**bound, "uid": ""}), name="sa", subresource="token"
    ).endswith("node requested token with a pod binding without a uid")
    assert admit(
        CREATE, "serviceaccounts", token(**{**bound, "uid": "x"}), name="sa", subresource="token"
    ).endswith(
        "the UID in the bound object reference (x) does not match the UID in record. The object might have been "
        "deleted and then recreated"
    )
    theirs = {**bound, "name": "theirs", "uid": "t"}
    assert admit(CREATE, "serviceaccounts", token(**theirs), name="sa", subresource="token").endswith(
        "node requested token bound to a pod scheduled on a different node"
    )


def _csr(common_name: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


@pytest.mark.parametrize(
    ("signer", "common_name", "message"),
    [
        ("kubernetes.io/kubelet-serving", "system:node:node1", ""),
        (
            "kubernetes.io/kube-apiserver-client-kubelet",
            "system:node:node2",
            "can only create a node CSR with CN=system:node:node1",
        ),
        ("example.com/other", "system:node:node2", ""),
    ],
)
def test_kubelet_csrs(signer, common_name, message):
    csr = {"metadata": {"name": "c"}, "spec": {"signerName": signer, "request": _csr(common_name)}}
    got = admit(CREATE, "certificatesigningrequests", csr, group="certificates.k8s.io", namespace="")
    assert got == (
        f'certificatesigningrequests.certificates.k8s.io "c" is forbidden: {message}' if message else ""
    )


def test_others_and_unidentified_nodes():
    assert admit(CREATE, "pods", pod("node2"), user=UserInfo("alice")) == ""
    assert admit(CREATE, "pods", pod(), user=UserInfo("system:node:", groups=("system:nodes",))) == (
        'pods "p" is forbidden: could not determine node from user "system:node:"'
    )
    assert admit(UPDATE, "persistentvolumeclaims", {}, {}, name="c") == (
        'persistentvolumeclaims "c" is forbidden: may only update PVC status'
    )
    claim = {"metadata": {"name": "c", "resourceVersion": "1"}, "status": {"capacity": {"storage": "1Gi"}}}
    grown = {"metadata": {"name": "c", "resourceVersion": "2"}, "status": {"capacity": {"storage": "2Gi"}}}
    assert admit(UPDATE, "persistentvolumeclaims", grown, claim, name="c", subresource="status") == ""
    relabelled = {**grown, "metadata": {"name": "c", "labels": {"a": "b"}}}
    assert "is not allowed to update fields other than status.quantity and status.conditions" in admit(
        UPDATE, "persistentvolumeclaims", relabelled, claim, name="c", subresource="status"
    )


def test_subresources_of_another_groups_kind_are_their_resources():
    """pods/eviction's kind is policy's Eviction and serviceaccounts/token's authentication's TokenRequest: the
    plugin and its messages go by the resource's group (admission's GetResource)."""
    eviction = {"metadata": {"name": "theirs"}}
    assert admit(
        CREATE, "pods", eviction, name="theirs", subresource="eviction", group="policy", resource_group=""
    ) == ('pods "theirs" is forbidden: node node1 can only evict pods with spec.nodeName set to itself')
    token = {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "theirs", "uid": "t"}}}
    assert admit(
        CREATE,
        "serviceaccounts",
        token,
        name="sa",
        subresource="token",
        group="authentication.k8s.io",
        resource_group="",
    ) == (
        'serviceaccounts "sa" is forbidden: node requested token bound to a pod scheduled on a different node'
    )
