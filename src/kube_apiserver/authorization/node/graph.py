"""The Node authorizer's graph (k8s plugin/pkg/auth/authorizer/node/graph.go): which API objects each node
may reach. Every edge points toward a node:

    node <- pod <- secret, configmap, pvc, service account, resource claim
    pvc <- pv <- secret
    node <- volume attachment, resource slice

An edge from a namespaced object to a pod is a "destination edge": it remembers the node the pod is bound to,
so a secret shared by pods of many nodes answers "may node X read me?" without walking the pods, and a walk
never follows a destination edge that leads to another node. A vertex disappears with the last edge that
kept it (a secret no pod references any more is not in the graph).

One graph per server; it is changed and read on the server's event loop only, so it needs no lock."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Object = dict[str, Any]

CONFIGMAP, SLICE, NODE, POD, PVC, PV = "configmap", "resourceslice", "node", "pod", "pvc", "pv"
RESOURCE_CLAIM, SECRET, VOLUME_ATTACHMENT, SERVICE_ACCOUNT = (
    "resourceclaim",
    "secret",
    "volumeattachment",
    "serviceAccount",
)
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass(eq=False, slots=True)
class Vertex:
    kind: str
    namespace: str
    name: str
    # out: the vertices this one points to, each with the node its edge leads to (None: not a destination edge)
    out: dict[Vertex, Vertex | None] = field(default_factory=dict)
    into: set[Vertex] = field(default_factory=set)
    # how many of the out edges lead to each node: the fast answer for the vertices with destination edges
    destinations: Counter[Vertex] = field(default_factory=Counter)

    def degree(self) -> int:
        return len(self.out) + len(self.into)

    def __repr__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}:{where}{self.name}"


class Graph:
    def __init__(self) -> None:
        self.vertices: dict[tuple[str, str, str], Vertex] = {}

    # --- reading

    def get(self, kind: str, namespace: str, name: str) -> Vertex | None:
        return self.vertices.get((kind, namespace, name))

    def has_path(self, node_name: str, kind: str, namespace: str, name: str) -> bool:
        """Whether the object reaches the node (hasPathFrom): along edges whose destination, when they have
        one, is that node."""
        node, start = self.get(NODE, "", node_name), self.get(kind, namespace, name)
        if node is None or start is None:
            return False
        if start.destinations[node] > 0:
            return True
        seen, stack = {start}, [start]
        while stack:
            vertex = stack.pop()
            for target, destination in vertex.out.items():
                if destination is not None:
                    if destination is node:
                        return True
                    continue  # never through another node's objects
                if target is node:
                    return True
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return False

    # --- the vertices and edges

    def _vertex(self, kind: str, namespace: str, name: str) -> Vertex:
        key = (kind, namespace, name)
        vertex = self.vertices.get(key)
        if vertex is None:
            vertex = self.vertices[key] = Vertex(kind, namespace, name)
        return vertex

    def _edge(self, source: Vertex, target: Vertex, destination: Vertex | None) -> None:
        if target in source.out:  # SetEdge replaces the edge between two vertices
            self._unindex(source, source.out[target])
        source.out[target] = destination
        target.into.add(source)
        if destination is not None:
            source.destinations[destination] += 1

    @staticmethod
    def _unindex(source: Vertex, destination: Vertex | None) -> None:
        if destination is not None:
            source.destinations[destination] -= 1
            if source.destinations[destination] <= 0:
                del source.destinations[destination]

    def _remove(self, vertex: Vertex) -> None:
        """Drops the vertex and its edges (the neighbours' indexes lose the edges into it)."""
        for target in vertex.out:
            target.into.discard(vertex)
        for source in vertex.into:
            self._unindex(source, source.out.pop(vertex, None))
        self.vertices.pop((vertex.kind, vertex.namespace, vertex.name), None)

    def _delete(self, kind: str, namespace: str, name: str) -> None:
        """deleteVertexLocked: the vertex, and each neighbour it was the only neighbour of."""
        vertex = self.get(kind, namespace, name)
        if vertex is None:
            return
        orphans = [n for n in (*vertex.out, *vertex.into) if n.degree() == 1]
        self._remove(vertex)
        for orphan in orphans:
            self._remove(orphan)

    # --- what the informers tell

    def add_pod(self, pod: Object) -> None:
        """AddPod, once spec.nodeName is set: the pod's references never change while it is bound."""
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        self._delete(POD, namespace, name)
        pod_vertex = self._vertex(POD, namespace, name)
        node = self._vertex(NODE, "", spec.get("nodeName") or "")
        self._edge(pod_vertex, node, node)
        # A mirror pod grants nothing: a node must not give itself access to objects by creating a pod.
        if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
            return
        for kind, referenced in _references(pod):
            self._edge(self._vertex(kind, namespace, referenced), pod_vertex, node)

    def delete_pod(self, namespace: str, name: str) -> None:
        self._delete(POD, namespace, name)

    def add_pv(self, pv: Object) -> None:
        """AddPV: pv -> its claim, and the secrets the kubelet uses to mount it -> pv."""
        name = (pv.get("metadata") or {}).get("name") or ""
        self._delete(PV, "", name)
        claim = (pv.get("spec") or {}).get("claimRef")
        if not claim:
            return
        pv_vertex = self._vertex(PV, "", name)
        # the other end of pvc -> pod -> node is not known here: a plain edge
        self._edge(pv_vertex, self._vertex(PVC, claim.get("namespace") or "", claim.get("name") or ""), None)
        for namespace, secret in pv_secret_names(pv):
            self._edge(self._vertex(SECRET, namespace, secret), pv_vertex, None)

    def delete_pv(self, name: str) -> None:
        self._delete(PV, "", name)

    def add_volume_attachment(self, name: str, node_name: str) -> None:
        self._set_node_edge(VOLUME_ATTACHMENT, name, node_name)

    def delete_volume_attachment(self, name: str) -> None:
        self._delete(VOLUME_ATTACHMENT, "", name)

    def add_resource_slice(self, name: str, node_name: str) -> None:
        self._set_node_edge(SLICE, name, node_name)

    def delete_resource_slice(self, name: str) -> None:
        self._delete(SLICE, "", name)

    def _set_node_edge(self, kind: str, name: str, node_name: str) -> None:
        self._delete(kind, "", name)
        if node_name:
            vertex, node = self._vertex(kind, "", name), self._vertex(NODE, "", node_name)
            self._edge(vertex, node, node)


def _references(pod: Object) -> list[tuple[str, str]]:
    """The objects a pod grants its node: service account, secrets, configmaps, claims (in upstream's
    order; a name may repeat)."""
    spec, refs = pod.get("spec") or {}, []
    if spec.get("serviceAccountName"):
        refs.append((SERVICE_ACCOUNT, spec["serviceAccountName"]))
    refs += [(SECRET, name) for name in pod_secret_names(pod)]
    refs += [(CONFIGMAP, name) for name in pod_configmap_names(pod)]
    refs += [(PVC, name) for name in pod_pvc_names(pod)]
    refs += [(RESOURCE_CLAIM, name) for name in pod_resource_claim_names(pod)]
    return refs


def _containers(spec: Object) -> list[Object]:
    return [
        *(spec.get("initContainers") or []),
        *(spec.get("containers") or []),
        *(spec.get("ephemeralContainers") or []),
    ]


def _ref_name(obj: Any, key: str) -> str | None:
    ref = obj.get(key) if isinstance(obj, dict) else None
    return ref.get("name", "") if isinstance(ref, dict) else None


def _container_names(spec: Object, env_from_key: str, key_ref: str) -> list[str]:
    names: list[str] = []
    for container in _containers(spec):
        for env_from in container.get("envFrom") or []:
            if (name := _ref_name(env_from, env_from_key)) is not None:
                names.append(name)
        for env in container.get("env") or []:
            if (name := _ref_name(env.get("valueFrom"), key_ref)) is not None:
                names.append(name)
    return names


# volume sources whose secret is named by secretRef (VisitPodSecretNames)
_VOLUME_SECRET_REFS = {
    "cephfs": "secretRef",
    "cinder": "secretRef",
    "flexVolume": "secretRef",
    "rbd": "secretRef",
    "scaleIO": "secretRef",
    "iscsi": "secretRef",
    "storageos": "secretRef",
    "csi": "nodePublishSecretRef",
}
_VOLUME_SOURCE_ORDER = (
    "azureFile",
    "cephfs",
    "cinder",
    "flexVolume",
    "projected",
    "rbd",
    "secret",
    "scaleIO",
    "iscsi",
    "storageos",
    "csi",
)


def pod_secret_names(pod: Object) -> list[str]:
    """VisitPodSecretNames: image pull secrets, every container's env, then the volumes (of a volume with
    several sources, the first in upstream's order counts)."""
    spec = pod.get("spec") or {}
    names = [ref.get("name", "") for ref in spec.get("imagePullSecrets") or [] if isinstance(ref, dict)]
    names += _container_names(spec, "secretRef", "secretKeyRef")
    for volume in spec.get("volumes") or []:
        kind = next((k for k in _VOLUME_SOURCE_ORDER if isinstance(volume.get(k), dict)), None)
        if kind is None:
            continue
        source = volume[kind]
        if kind == "azureFile":
            if source.get("secretName"):
                names.append(source["secretName"])
        elif kind == "secret":
            names.append(source.get("secretName", ""))
        elif kind == "projected":
            names += [n for s in source.get("sources") or [] if (n := _ref_name(s, "secret")) is not None]
        elif (name := _ref_name(source, _VOLUME_SECRET_REFS[kind])) is not None:
            names.append(name)
    return names


def pod_configmap_names(pod: Object) -> list[str]:
    """VisitPodConfigmapNames: every container's env, then configMap and projected volumes."""
    spec = pod.get("spec") or {}
    names = _container_names(spec, "configMapRef", "configMapKeyRef")
    for volume in spec.get("volumes") or []:
        if volume.get("projected") is not None:
            names += [
                n
                for s in volume["projected"].get("sources") or []
                if (n := _ref_name(s, "configMap")) is not None
            ]
        elif isinstance(volume.get("configMap"), dict):
            names.append(volume["configMap"].get("name", ""))
    return names


def pod_pvc_names(pod: Object) -> list[str]:
    """Claims of persistentVolumeClaim volumes, and the <pod>-<volume> claims of generic ephemeral ones."""
    pod_name = (pod.get("metadata") or {}).get("name") or ""
    names = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.get("claimName"):
            names.append(claim["claimName"])
        elif volume.get("ephemeral") is not None:
            names.append(f"{pod_name}-{volume.get('name', '')}")
    return names


def pod_resource_claim_names(pod: Object) -> list[str]:
    """resourceclaim.Name of each spec.resourceClaims entry that has one yet (a template's claim is named in
    status.resourceClaimStatuses once made), and the extended resources' claim."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    made = {
        s.get("name"): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or []
        if isinstance(s, dict)
    }
    names = []
    for claim in spec.get("resourceClaims") or []:
        if claim.get("resourceClaimName"):
            names.append(claim["resourceClaimName"])
        elif claim.get("resourceClaimTemplateName") and made.get(claim.get("name")):
            names.append(made[claim["name"]])
    extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        names.append(extended)
    return names


# PV sources whose secretRef names its namespace, else the claim's (VisitPVSecretNames)
_PV_SECRET_REFS = ("cephfs", "flexVolume", "rbd", "scaleIO", "iscsi")


def pv_secret_names(pv: Object) -> list[tuple[str, str]]:
    """(namespace, name) of the secrets the kubelet reads to mount the PV; the CSI controller-side secrets
    are not the kubelet's."""
    spec = pv.get("spec") or {}
    claim_namespace = (spec.get("claimRef") or {}).get("namespace") or ""
    azure = spec.get("azureFile")
    if isinstance(azure, dict):
        return (
            [(azure.get("secretNamespace") or claim_namespace, azure["secretName"])]
            if azure.get("secretName")
            else []
        )
    for source_name in _PV_SECRET_REFS:
        source = spec.get(source_name)
        if isinstance(source, dict):
            ref = source.get("secretRef")
            return (
                [(ref.get("namespace") or claim_namespace, ref.get("name", ""))]
                if isinstance(ref, dict)
                else []
            )
    for source_name in ("cinder", "storageos"):
        source = spec.get(source_name)
        if isinstance(source, dict):
            ref = source.get("secretRef")
            return [(ref.get("namespace", ""), ref.get("name", ""))] if isinstance(ref, dict) else []
    csi = spec.get("csi")
    if isinstance(csi, dict):
        refs = [csi.get(k) for k in ("nodePublishSecretRef", "nodeStageSecretRef", "nodeExpandSecretRef")]
        return [(r.get("namespace", ""), r.get("name", "")) for r in refs if isinstance(r, dict)]
    return []
