"""The scheduler's cache (pkg/scheduler/backend/cache): every node's NodeInfo, built from the node
informer and the bound pods, plus the pods the scheduler assumed on a node before the binding is
seen. An assumed pod whose binding failed is forgotten; one whose binding succeeded but never shows
up bound in the informer expires after `assumed_ttl` seconds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .framework.nodeinfo import NodeInfo, PodInfo, object_key

log = logging.getLogger("kube_apiserver.scheduler")
Object = dict[str, Any]
ASSUMED_POD_TTL_SECONDS = 30.0


@dataclass
class _PodState:
    node_name: str
    assumed: bool = False
    deadline: float | None = None  # set once the binding finished


def _node_name(pod: Object) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


class Cache:
    def __init__(
        self, clock: Callable[[], float] = time.monotonic, assumed_ttl: float = ASSUMED_POD_TTL_SECONDS
    ):
        self.clock = clock
        self.assumed_ttl = assumed_ttl
        self.nodes: dict[str, NodeInfo] = {}
        self.pod_states: dict[str, _PodState] = {}

    # ---- nodes ----

    def add_node(self, node: Object) -> None:
        name = node.get("metadata", {}).get("name", "")
        self.nodes.setdefault(name, NodeInfo()).set_node(node)

    update_node = add_node

    def remove_node(self, node: Object) -> None:
        """The node goes; its pods stay counted (under no node) until their deletion is seen."""
        name = node.get("metadata", {}).get("name", "")
        info = self.nodes.get(name)
        if info is None:
            return
        if info.pods:
            info.node = None
        else:
            del self.nodes[name]

    def node_infos(self) -> list[NodeInfo]:
        """The snapshot a scheduling cycle filters: the nodes the informer knows."""
        return [info for info in self.nodes.values() if info.node is not None]

    # ---- pods ----

    def _add(self, pod: Object, node_name: str) -> None:
        self.nodes.setdefault(node_name, NodeInfo()).add_pod(PodInfo.of(pod))

    def _remove(self, key: str, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if info is None:
            return
        info.remove_pod(key)
        if info.node is None and not info.pods:
            del self.nodes[node_name]

    def is_assumed(self, key: str) -> bool:
        state = self.pod_states.get(key)
        return state is not None and state.assumed

    def assume_pod(self, pod: Object) -> None:
        """The pod (its nodeName set) counts on its node from now on, before the binding."""
        key = object_key(pod)
        self._add(pod, _node_name(pod))
        self.pod_states[key] = _PodState(_node_name(pod), assumed=True)

    def finish_binding(self, pod: Object) -> None:
        state = self.pod_states.get(object_key(pod))
        if state is not None and state.assumed:
            state.deadline = self.clock() + self.assumed_ttl

    def forget_pod(self, pod: Object) -> None:
        key = object_key(pod)
        state = self.pod_states.get(key)
        if state is not None and state.assumed:
            self._remove(key, state.node_name)
            del self.pod_states[key]

    def add_pod(self, pod: Object) -> None:
        """A bound pod the informer shows: confirms an assumed pod (on the node it really went to)."""
        key = object_key(pod)
        state = self.pod_states.get(key)
        if state is not None:
            self._remove(key, state.node_name)
        self._add(pod, _node_name(pod))
        self.pod_states[key] = _PodState(_node_name(pod))

    update_pod = add_pod

    def remove_pod(self, pod: Object) -> None:
        key = object_key(pod)
        state = self.pod_states.pop(key, None)
        if state is not None:
            self._remove(key, state.node_name)

    def cleanup_expired_assumed_pods(self) -> list[str]:
        now = self.clock()
        expired = [
            key
            for key, state in self.pod_states.items()
            if state.assumed and state.deadline is not None and now > state.deadline
        ]
        for key in expired:
            log.warning("Assumed pod expired: %s", key)
            self._remove(key, self.pod_states.pop(key).node_name)
        return expired
