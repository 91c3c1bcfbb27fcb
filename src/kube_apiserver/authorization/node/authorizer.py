"""The Node authorizer (k8s plugin/pkg/auth/authorizer/node/node_authorizer.go, v1.34 with its default feature
gates: AuthorizeNodeWithSelectors and KubeletServiceAccountTokenForCredentialProviders on,
PodCertificateRequest off). A kubelet (user system:node:<name> in group system:nodes) may read the secrets,
configmaps, claims and volumes of the pods bound to its node, as the graph relates them; its own Node, Lease,
CSINode and ResourceSlices; and what the static node rules allow. Otherwise it has no opinion, with a reason,
so that another authorizer (RBAC) may still allow. NodeRestriction admission checks what it cannot see here
(the object of a create)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import fields
from ...registry.context import UserInfo
from ..authorizer import ALLOW, NO_OPINION, Attributes, Rules
from ..rbac import rule_allows
from .graph import CONFIGMAP as CONFIGMAP_VERTEX
from .graph import POD as POD_VERTEX
from .graph import PV, PVC, RESOURCE_CLAIM, SECRET, SERVICE_ACCOUNT, SLICE, VOLUME_ATTACHMENT, Graph

Decision = tuple[str, str]
NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
NODE_LEASE_NAMESPACE = "kube-node-lease"
LEASE_VERBS = ("get", "create", "update", "patch", "delete")


def node_identity(user: UserInfo | None) -> tuple[str, bool]:
    """nodeidentifier.NodeIdentity: (node name, is a node); a node whose name is empty is not identified."""
    if user is None or not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in (user.groups or []):
        return "", False
    return user.name.removeprefix(NODE_USER_PREFIX), True


def _no_relationship(node: str) -> Decision:
    return NO_OPINION, f"no relationship found between node '{node}' and this object"


def _selects(attrs: Attributes, field_name: str, value: str) -> bool:
    """Whether the request's field selector requires field_name = value (its parse error selects nothing)."""
    if not attrs.field_selector:
        return False
    try:
        requirements = fields.parse_field_selector(attrs.field_selector).requirements()
    except ValueError:
        return False
    return any(
        r.field == field_name and r.operator == fields.EQUALS and r.value == value for r in requirements
    )


class NodeAuthorizer:
    def __init__(self, graph: Graph, node_rules: list[dict[str, Any]]):
        self.graph = graph
        self.node_rules = node_rules
        self._by_resource = {
            ("", "secrets"): lambda n, a: self._read_namespaced(n, SECRET, a),
            ("", "configmaps"): lambda n, a: self._read_namespaced(n, CONFIGMAP_VERTEX, a),
            ("", "persistentvolumeclaims"): self._pvc,
            ("", "persistentvolumes"): lambda n, a: self._get(n, PV, a),
            ("resource.k8s.io", "resourceclaims"): lambda n, a: self._get(n, RESOURCE_CLAIM, a),
            ("storage.k8s.io", "volumeattachments"): lambda n, a: self._get(n, VOLUME_ATTACHMENT, a),
            ("", "serviceaccounts"): self._service_account,
            ("coordination.k8s.io", "leases"): self._lease,
            ("storage.k8s.io", "csinodes"): self._csi_node,
            ("resource.k8s.io", "resourceslices"): self._resource_slice,
            ("", "nodes"): self._node,
            ("", "pods"): self._pod,
        }

    async def authorize(self, attrs: Attributes) -> Decision:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return NO_OPINION, ""
        if not node:
            return NO_OPINION, f'unknown node for user "{attrs.user.name}"'
        if attrs.is_resource_request:
            decide = self._by_resource.get((attrs.api_group, attrs.resource))
            if decide is not None:
                return decide(node, attrs)
        return self._static(attrs)

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        if node_identity(user)[1]:  # a node's permissions cannot be listed
            return Rules(
                incomplete=True, evaluation_error="node authorizer does not support user rule resolution"
            )
        return Rules()

    def _static(self, attrs: Attributes) -> Decision:
        """Resources not subdivided by the graph: the node rules, the same for every node."""
        return (ALLOW, "") if any(rule_allows(rule, attrs) for rule in self.node_rules) else (NO_OPINION, "")

    def _related(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if not attrs.name:
            return NO_OPINION, "No Object name found"
        if self.graph.has_path(node, kind, attrs.namespace, attrs.name):
            return ALLOW, ""
        return _no_relationship(node)

    def _get(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb != "get":
            return NO_OPINION, "can only get individual resources of this type"
        if attrs.subresource:
            return NO_OPINION, "cannot get subresource"
        return self._related(node, kind, attrs)

    def _read_namespaced(self, node: str, kind: str, attrs: Attributes) -> Decision:
        """get, list and watch of one object (a list or watch names it by a metadata.name field selector)."""
        if attrs.verb not in ("get", "list", "watch"):
            return NO_OPINION, "can only read resources of this type"
        if attrs.subresource:
            return NO_OPINION, "cannot read subresource"
        if not attrs.namespace:
            return NO_OPINION, "can only read namespaced object of this type"
        return self._related(node, kind, attrs)

    def _pvc(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource != "status":
            return self._get(node, PVC, attrs)
        if attrs.verb not in ("update", "patch"):
            return NO_OPINION, "can only get/update/patch this type"
        return self._related(node, PVC, attrs)

    def _service_account(self, node: str, attrs: Attributes) -> Decision:
        """get of a pod's service account (for credential providers), or a token for it."""
        if attrs.verb == "get" and not attrs.subresource:
            return self._read_namespaced(node, SERVICE_ACCOUNT, attrs)
        if attrs.verb != "create" or not attrs.name:
            return NO_OPINION, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return NO_OPINION, "can only create token subresource of serviceaccount"
        if self.graph.has_path(node, SERVICE_ACCOUNT, attrs.namespace, attrs.name):
            return ALLOW, ""
        return _no_relationship(node)

    def _lease(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in LEASE_VERBS:
            return NO_OPINION, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return NO_OPINION, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        # a create's name is in its body: NodeRestriction checks it
        if attrs.verb != "create" and attrs.name != node:
            return NO_OPINION, "can only access node lease with the same name as the requesting node"
        return ALLOW, ""

    def _csi_node(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in LEASE_VERBS:
            return NO_OPINION, "can only get, create, update, patch, or delete a CSINode"
        if attrs.subresource:
            return NO_OPINION, "cannot authorize CSINode subresources"
        if attrs.verb != "create" and attrs.name != node:
            return NO_OPINION, "can only access CSINode with the same name as the requesting node"
        return ALLOW, ""

    def _resource_slice(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return NO_OPINION, "cannot authorize ResourceSlice subresources"
        if attrs.verb == "create":  # NodeRestriction checks the slice's nodeName
            return ALLOW, ""
        if attrs.verb in ("get", "update", "patch", "delete"):
            return self._related(node, SLICE, attrs)
        if attrs.verb in ("watch", "list", "deletecollection"):
            if _selects(attrs, "spec.nodeName", node):
                return ALLOW, ""
            return (
                NO_OPINION,
                "can only list/watch/deletecollection resourceslices with nodeName field selector",
            )
        return NO_OPINION, (
            "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, "
            "update, patch, delete, deletecollection"
        )

    def _node(self, node: str, attrs: Attributes) -> Decision:
        if not attrs.subresource:
            if attrs.verb in ("create", "update", "patch"):  # NodeRestriction keeps a node to its own
                return ALLOW, ""
            if attrs.verb in ("get", "list", "watch"):
                # by name, not by the graph: a kubelet reads its Node before creating it
                if attrs.name == node:
                    return ALLOW, ""
                if not attrs.name:
                    return NO_OPINION, f"node '{node}' cannot read all nodes, only its own Node object"
                return NO_OPINION, f"node '{node}' cannot read '{attrs.name}', only its own Node object"
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return ALLOW, ""
        return NO_OPINION, ""

    def _pod(self, node: str, attrs: Attributes) -> Decision:
        if not attrs.subresource:
            if attrs.verb == "get":
                return self._get(node, POD_VERTEX, attrs)
            if attrs.verb in ("list", "watch"):
                if _selects(attrs, "spec.nodeName", node):
                    return ALLOW, ""
                if attrs.name:  # one pod, named by a metadata.name field selector
                    return self._related(node, POD_VERTEX, attrs)
                return NO_OPINION, "can only list/watch pods with spec.nodeName field selector"
            if attrs.verb in ("create", "delete"):  # mirror pods; NodeRestriction keeps them to the node
                return ALLOW, ""
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return ALLOW, ""
        elif attrs.subresource == "eviction" and attrs.verb == "create":
            return ALLOW, ""
        return NO_OPINION, ""
