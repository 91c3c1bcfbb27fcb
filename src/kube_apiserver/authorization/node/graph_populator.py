"""Keeps the Node authorizer's graph as the server's shared informers see pods, persistent volumes, volume
attachments and resource slices (k8s plugin/pkg/auth/authorizer/node/graph_populator.go)."""

from __future__ import annotations

from typing import Any

from ...client.informers import EventHandler, SharedInformerFactory
from .graph import Graph

Object = dict[str, Any]

# (group, version, resource) of what the graph is made of
PODS = ("", "v1", "pods")
PERSISTENT_VOLUMES = ("", "v1", "persistentvolumes")
VOLUME_ATTACHMENTS = ("storage.k8s.io", "v1", "volumeattachments")
RESOURCE_SLICES = ("resource.k8s.io", "v1", "resourceslices")


def _meta(obj: Object) -> Object:
    return obj.get("metadata") or {}


def _node_name(obj: Object | None) -> str:
    return ((obj or {}).get("spec") or {}).get("nodeName") or ""


class GraphPopulator:
    def __init__(self, graph: Graph):
        self.graph = graph

    def update_pod(self, old: Object | None, pod: Object) -> None:
        if not _node_name(pod):
            return  # not bound yet: it grants nothing
        if (
            old is not None
            and _node_name(old) == _node_name(pod)
            and _meta(old).get("uid") == _meta(pod).get("uid")
            and _claim_statuses(old) == _claim_statuses(pod)
        ):
            return  # a bound pod's references do not change, except the claims made for its templates
        self.graph.add_pod(pod)

    def delete_pod(self, pod: Object) -> None:
        if _node_name(pod):
            self.graph.delete_pod(_meta(pod).get("namespace") or "", _meta(pod).get("name") or "")

    def update_pv(self, _old: Object | None, pv: Object) -> None:
        self.graph.add_pv(pv)

    def delete_pv(self, pv: Object) -> None:
        self.graph.delete_pv(_meta(pv).get("name") or "")

    def update_volume_attachment(self, old: Object | None, attachment: Object) -> None:
        if old is not None and _node_name(old) == _node_name(attachment):
            return
        self.graph.add_volume_attachment(_meta(attachment).get("name") or "", _node_name(attachment))

    def delete_volume_attachment(self, attachment: Object) -> None:
        self.graph.delete_volume_attachment(_meta(attachment).get("name") or "")

    def update_resource_slice(self, _old: Object | None, slice_: Object) -> None:
        self.graph.add_resource_slice(_meta(slice_).get("name") or "", _node_name(slice_))

    def delete_resource_slice(self, slice_: Object) -> None:
        self.graph.delete_resource_slice(_meta(slice_).get("name") or "")


def _claim_statuses(pod: Object) -> tuple[Any, Any]:
    status = pod.get("status") or {}
    claims = [
        (s.get("name"), s.get("resourceClaimName"))
        for s in status.get("resourceClaimStatuses") or []
        if isinstance(s, dict)
    ]
    return claims, (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")


def add_graph_event_handlers(graph: Graph, informers: SharedInformerFactory) -> GraphPopulator:
    """AddGraphEventHandlers: the graph follows the informers, which start with the server's (and its
    informer-sync readiness check waits for their first list)."""
    populator = GraphPopulator(graph)
    handlers = {
        PODS: (populator.update_pod, populator.delete_pod),
        PERSISTENT_VOLUMES: (populator.update_pv, populator.delete_pv),
        VOLUME_ATTACHMENTS: (populator.update_volume_attachment, populator.delete_volume_attachment),
        RESOURCE_SLICES: (populator.update_resource_slice, populator.delete_resource_slice),
    }
    for resource, (update, delete) in handlers.items():
        informers.for_resource(*resource).add_event_handler(
            EventHandler(
                on_add=lambda obj, update=update: update(None, obj), on_update=update, on_delete=delete
            )
        )
    return populator
