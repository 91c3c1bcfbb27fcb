"""The NodeRestriction admission plugin (k8s plugin/pkg/admission/noderestriction, v1.34 with its default
feature gates): what the Node authorizer allows a kubelet to write, narrowed to its own node. A node may
create and delete only mirror pods bound to itself, update only its own pods' status, evict only its own
pods, register and update only its own Node (not its taints, nor labels outside the kubelet's set), use
only its own Lease, CSINode and ResourceSlices, ask tokens only for its pods' service accounts, and ask
kubelet certificates only in its own name."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from ..apimachinery import errors, pem
from ..authorization.node import node_identity
from ..authorization.node.graph import pod_configmap_names, pod_secret_names
from ..client.informers import Lister, SharedInformerFactory
from .interfaces import CREATE, DELETE, UPDATE, Attributes, forbidden

Object = dict[str, Any]
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NODE_LEASE_NAMESPACE = "kube-node-lease"
NODE_RESTRICTION_LABELS = "node-restriction.kubernetes.io"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
# the labels a kubelet may set on its own Node (k8s.io/kubelet/pkg/apis IsKubeletLabel)
KUBELET_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    }
)
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _meta(obj: Object | None) -> Object:
    return (obj or {}).get("metadata") or {}


def _spec(obj: Object | None) -> Object:
    return (obj or {}).get("spec") or {}


def _in_namespace(namespace: str, suffix: str) -> bool:
    return namespace == suffix or namespace.endswith("." + suffix)


def _label_namespace(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def is_kubelet_label(key: str) -> bool:
    namespace = _label_namespace(key)
    return key in KUBELET_LABELS or any(_in_namespace(namespace, n) for n in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: Object | None, old: Object | None) -> list[str]:
    """The labels added, removed or changed that a node may not set: node-restriction.kubernetes.io ones, and
    kubernetes.io or k8s.io ones outside the kubelet's set (sorted, as sets.String.List)."""
    new, old = new or {}, old or {}
    modified = {k for k in new.keys() | old.keys() if new.get(k) != old.get(k) or (k in new) != (k in old)}
    out = set()
    for key in modified:
        namespace = _label_namespace(key)
        if _in_namespace(namespace, NODE_RESTRICTION_LABELS):
            out.add(key)
        kubernetes = _in_namespace(namespace, "kubernetes.io") or _in_namespace(namespace, "k8s.io")
        if kubernetes and not is_kubelet_label(key):
            out.add(key)
    return sorted(out)


def _normalized(value: Any) -> Any:
    """Semantic equality's view: empty and missing fields are the same."""
    if isinstance(value, dict):
        out = {k: _normalized(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


class NodeRestriction:
    name = "NodeRestriction"

    def __init__(self) -> None:
        self.informers: SharedInformerFactory | None = None
        self._by_resource = {
            ("", "pods"): self._pod,
            ("", "nodes"): self._node,
            ("", "persistentvolumeclaims"): self._pvc,
            ("", "serviceaccounts"): self._service_account,
            ("coordination.k8s.io", "leases"): self._lease,
            ("storage.k8s.io", "csinodes"): self._csi_node,
            ("resource.k8s.io", "resourceslices"): self._resource_slice,
            ("certificates.k8s.io", "certificatesigningrequests"): self._csr,
        }

    def set_informers(self, informers: SharedInformerFactory) -> None:
        """WantsExternalKubeInformerFactory: the pods and nodes it looks up."""
        self.informers = informers

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE, DELETE)

    async def admit(self, attrs: Attributes) -> None:
        await self._restrict(attrs)

    async def validate(self, attrs: Attributes) -> None:
        """Deletes pass admission's validating phase only here; upstream runs its Admit on them too."""
        if attrs.operation == DELETE:
            await self._restrict(attrs)

    async def _restrict(self, attrs: Attributes) -> None:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return
        if not node:
            raise forbidden(attrs, f'could not determine node from user "{attrs.user.name}"')
        check = self._by_resource.get((attrs.served_group, attrs.resource))
        if check is not None:
            await check(node, attrs)

    async def _lookup(self, resource: str, singular: str, namespace: str, name: str) -> Object:
        """The object from the shared informer (upstream's lister), else read live when the informer has not
        caught up with a recent write; missing, the lister's NotFound."""
        if self.informers is not None:
            obj = await Lister(self.informers.for_resource("", "v1", resource)).get(name, namespace)
            if obj is not None:
                return obj
            client = self.informers.client.resource("", "v1", resource)
            try:
                return await (client.namespace(namespace) if namespace else client).get(name)
            except errors.StatusError as err:
                if err.code != 404:
                    raise
        raise errors.not_found(singular, "", name)

    # --- pods

    async def _pod(self, node: str, attrs: Attributes) -> None:
        if attrs.subresource == "":
            await self._pod_itself(node, attrs)
        elif attrs.subresource == "status":
            self._pod_status(node, attrs)
        elif attrs.subresource == "eviction":
            await self._pod_eviction(node, attrs)
        else:
            raise forbidden(
                attrs,
                f"unexpected pod subresource \"{attrs.subresource}\", only 'status' and "
                f"'eviction' are allowed",
            )

    async def _pod_itself(self, node: str, attrs: Attributes) -> None:
        if attrs.operation == CREATE:
            await self._mirror_pod(node, attrs)
        elif attrs.operation == DELETE:
            existing = await self._lookup("pods", "pod", attrs.namespace, attrs.name)
            if _spec(existing).get("nodeName") != node:
                raise forbidden(attrs, f'node "{node}" can only delete pods with spec.nodeName set to itself')
        else:
            raise forbidden(
                attrs,
                f'unexpected operation "{attrs.operation}", node "{node}" can only create and '
                "delete mirror pods",
            )

    async def _mirror_pod(self, node: str, attrs: Attributes) -> None:
        pod = attrs.object or {}
        if MIRROR_POD_ANNOTATION not in (_meta(pod).get("annotations") or {}):
            raise forbidden(
                attrs,
                f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, node "{node}" can '
                "only create mirror pods",
            )
        if _spec(pod).get("nodeName") != node:
            raise forbidden(attrs, f'node "{node}" can only create pods with spec.nodeName set to itself')
        await self._mirror_pod_owner(node, attrs, _meta(pod).get("ownerReferences") or [])
        why = _mirror_pod_references(pod)
        if why:
            raise forbidden(attrs, f'node "{node}" can not create pods that reference {why}')

    async def _mirror_pod_owner(self, node: str, attrs: Attributes, owners: list[Object]) -> None:
        if len(owners) > 1:
            raise forbidden(
                attrs, f'node "{node}" can only create pods with a single owner reference set to itself'
            )
        if not owners:
            raise forbidden(
                attrs, f'node "{node}" can only create pods with an owner reference set to itself'
            )
        owner = owners[0]
        if owner.get("apiVersion") != "v1" or owner.get("kind") != "Node" or owner.get("name") != node:
            raise forbidden(
                attrs, f'node "{node}" can only create pods with an owner reference set to itself'
            )
        if owner.get("controller") is not True:
            raise forbidden(
                attrs, f'node "{node}" can only create pods with a controller owner reference set to itself'
            )
        if owner.get("blockOwnerDeletion") is True:
            raise forbidden(attrs, f'node "{node}" must not set blockOwnerDeletion on an owner reference')
        existing = await self._lookup("nodes", "node", "", node)
        uid = _meta(existing).get("uid", "")
        if owner.get("uid", "") != uid:
            raise forbidden(attrs, f"node {node} UID mismatch: expected {owner.get('uid', '')} got {uid}")

    def _pod_status(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != UPDATE:
            raise forbidden(attrs, f'unexpected operation "{attrs.operation}"')
        old, new = attrs.old_object or {}, attrs.object or {}
        if _spec(old).get("nodeName") != node:
            raise forbidden(
                attrs, f'node "{node}" can only update pod status for pods with spec.nodeName set to itself'
            )
        if (_meta(old).get("labels") or {}) != (_meta(new).get("labels") or {}):
            raise forbidden(attrs, f'node "{node}" cannot update labels through pod status')
        if _claim_statuses(old) != _claim_statuses(new):
            raise forbidden(attrs, f'node "{node}" cannot update resource claim statues')  # sic, upstream's

    async def _pod_eviction(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != CREATE:
            raise forbidden(attrs, f"unexpected operation {attrs.operation}")
        pod_name = attrs.name or _meta(attrs.object).get("name") or ""
        if not pod_name:
            raise forbidden(attrs, "could not determine pod from request data")
        existing = await self._lookup("pods", "pod", attrs.namespace, pod_name)
        if _spec(existing).get("nodeName") != node:
            raise forbidden(attrs, f"node {node} can only evict pods with spec.nodeName set to itself")

    # --- nodes

    async def _node(self, node: str, attrs: Attributes) -> None:
        if attrs.name != node:
            raise forbidden(attrs, f'node "{node}" is not allowed to modify node "{attrs.name}"')
        new = attrs.object or {}
        if attrs.operation == CREATE:
            if _spec(new).get("configSource") is not None:
                raise forbidden(
                    attrs, f'node "{node}" is not allowed to create pods with a non-nil configSource'
                )
            labels = forbidden_labels(_meta(new).get("labels"), None)
            if labels:
                raise forbidden(
                    attrs, f'node "{node}" is not allowed to set the following labels: {", ".join(labels)}'
                )
        elif attrs.operation == UPDATE:
            old = attrs.old_object or {}
            source = _spec(new).get("configSource")
            if source is not None and _normalized(source) != _normalized(_spec(old).get("configSource")):
                raise forbidden(
                    attrs,
                    f'node "{node}" is not allowed to update configSource to a new non-nil configSource',
                )
            if _normalized(_spec(new).get("taints") or []) != _normalized(_spec(old).get("taints") or []):
                raise forbidden(attrs, f'node "{node}" is not allowed to modify taints')
            labels = forbidden_labels(_meta(new).get("labels"), _meta(old).get("labels"))
            if labels:
                raise forbidden(
                    attrs, f"is not allowed to modify labels: {', '.join(labels)}"
                )  # sic, no node

    # --- the other kinds

    async def _pvc(self, node: str, attrs: Attributes) -> None:
        if attrs.subresource != "status":
            raise forbidden(attrs, "may only update PVC status")
        if attrs.operation != UPDATE:
            raise forbidden(attrs, f'unexpected operation "{attrs.operation}"')
        old, new = (
            _pvc_without_status_quantities(attrs.old_object),
            _pvc_without_status_quantities(attrs.object),
        )
        if old != new:
            diff = json.dumps({"old": old, "new": new}, sort_keys=True, separators=(",", ":"))
            raise forbidden(
                attrs,
                f'node "{node}" is not allowed to update fields other than status.quantity and '
                f"status.conditions: {diff}",
            )

    async def _service_account(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.subresource != "token":
            return
        ref = _spec(attrs.object).get("boundObjectRef") or {}
        if ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
            raise forbidden(attrs, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(attrs, "node requested token with a pod binding without a uid")
        pod = await self._lookup("pods", "pod", attrs.namespace, ref["name"])
        if ref["uid"] != _meta(pod).get("uid"):
            raise forbidden(
                attrs,
                f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
                "record. The object might have been deleted and then recreated",
            )
        if _spec(pod).get("nodeName") != node:
            raise forbidden(attrs, "node requested token bound to a pod scheduled on a different node")

    async def _lease(self, node: str, attrs: Attributes) -> None:
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            raise forbidden(attrs, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        name = _meta(attrs.object).get("name") if attrs.operation == CREATE else attrs.name
        if name != node:
            raise forbidden(attrs, "can only access node lease with the same name as the requesting node")

    async def _csi_node(self, node: str, attrs: Attributes) -> None:
        name = _meta(attrs.object).get("name") if attrs.operation == CREATE else attrs.name
        if name != node:
            raise forbidden(attrs, "can only access CSINode with the same name as the requesting node")

    async def _resource_slice(self, node: str, attrs: Attributes) -> None:
        """A create's and each delete's slice must be the node's: the authorizer sees neither object."""
        if attrs.operation == CREATE and _spec(attrs.object).get("nodeName") != node:
            raise forbidden(
                attrs, "can only create ResourceSlice with the same NodeName as the requesting node"
            )
        if attrs.operation == DELETE and _spec(attrs.old_object).get("nodeName") != node:
            raise forbidden(
                attrs, "can only delete ResourceSlice with the same NodeName as the requesting node"
            )

    async def _csr(self, node: str, attrs: Attributes) -> None:
        """A kubelet's client or serving certificate request must be in the node's own name."""
        if attrs.operation != CREATE:
            return
        spec = _spec(attrs.object)
        if spec.get("signerName") not in (KUBELET_SERVING, KUBELET_CLIENT):
            return
        common_name = _csr_common_name(spec.get("request"))
        if common_name is None:
            raise forbidden(attrs, "unable to parse csr: PEM block type must be CERTIFICATE REQUEST")
        if common_name != f"system:node:{node}":
            raise forbidden(attrs, f"can only create a node CSR with CN=system:node:{node}")


def _claim_statuses(pod: Object) -> list[tuple[Any, Any]]:
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    return [(s.get("name"), s.get("resourceClaimName")) for s in statuses if isinstance(s, dict)]


def _mirror_pod_references(pod: Object) -> str:
    """What a mirror pod may not reference (it would grant its node access through the graph), or ""."""
    spec = _spec(pod)
    volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict)]
    if spec.get("serviceAccountName"):
        return "a service account"
    if pod_secret_names(pod):
        return "secrets"
    if pod_configmap_names(pod):
        return "configmaps"
    for volume in volumes:
        sources = (volume.get("projected") or {}).get("sources") or []
        if any(isinstance(s, dict) and s.get("clusterTrustBundle") is not None for s in sources):
            return "clustertrustbundles"
    if any(volume.get("persistentVolumeClaim") is not None for volume in volumes):
        return "persistentvolumeclaims"
    return ""


def _pvc_without_status_quantities(pvc: Object | None) -> Object:
    """The claim without what a node may change (status capacity, conditions and allocations) nor what does
    not count (resourceVersion, managedFields)."""
    pvc = json.loads(json.dumps(pvc or {}))
    meta, status = pvc.get("metadata") or {}, pvc.get("status") or {}
    for key in ("resourceVersion", "managedFields"):
        meta.pop(key, None)
    for key in ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources"):
        status.pop(key, None)
    return _normalized(pvc)


def _csr_common_name(request: Any) -> str | None:
    """The subject CN of spec.request, None when it is not a PEM CERTIFICATE REQUEST."""
    try:
        data = base64.b64decode(request, validate=True) if isinstance(request, str) else b""
    except (binascii.Error, ValueError):
        return None
    block, _ = pem.decode(data)
    if block is None or block.type != "CERTIFICATE REQUEST":
        return None
    try:
        csr = x509.load_der_x509_csr(block.data)
    except ValueError:
        return None
    names = csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""
