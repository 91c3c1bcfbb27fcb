"""The clusterrole-aggregation controller (k8s pkg/controller/clusterroleaggregation): a ClusterRole with
an aggregationRule gets, as its rules, the union of the rules of every other ClusterRole its selectors
match, in selector order then name order, without duplicates. Any ClusterRole change re-syncs every
aggregated role; the rules are server-side applied, forced, by the manager
`clusterrole-aggregation-controller` through the loopback client (the rules list is atomic, so the
applied list replaces it)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from ..apimachinery.equality import semantic
from ..apimachinery.labels import SelectorParseError, selector_from_label_selector
from ..client.rest import APPLY_PATCH
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
FIELD_MANAGER = "clusterrole-aggregation-controller"
RETRY_SECONDS = 1.0




def aggregated_rules(role: Object, roles: dict[str, Object]) -> list[Object]:
    """The rules syncClusterRole computes for an aggregated role from the roles it selects."""
    rules: list[Object] = []
    seen: list[Any] = []
    name = role["metadata"]["name"]
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
        matcher = selector_from_label_selector(selector or {})
        for other_name in sorted(roles):
            other = roles[other_name]
            if other_name == name or not matcher.matches(other["metadata"].get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                if semantic(rule) not in seen:
                    seen.append(semantic(rule))
                    rules.append(rule)
    return rules


class ClusterRoleAggregationController(InformerController):
    name = "clusterrole-aggregation"

    def __init__(self, cluster_roles: Resource):
        self.cluster_roles = cluster_roles
        self.roles: dict[str, Object] = {}
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: set[str] = set()
        self.informers = [Informer(cluster_roles, self._changed)]

    async def _changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        name = obj["metadata"]["name"]
        if event_type == "DELETED":
            self.roles.pop(name, None)
        else:
            self.roles[name] = obj
        # any role may feed any aggregated role: re-sync them all
        for other_name, other in self.roles.items():
            if other.get("aggregationRule") is not None:
                self._enqueue(other_name)

    def _enqueue(self, name: str) -> None:
        if name not in self.queued:
            self.queued.add(name)
            self.queue.put_nowait(name)

    async def _work(self) -> None:
        while True:
            name = await self.queue.get()
            self.queued.discard(name)
            try:
                await self.sync(name)
            except (errors.StatusError, SelectorParseError) as err:
                log.info("clusterrole-aggregation controller: %s: %s", name, err)
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._enqueue, name)

    async def sync(self, name: str) -> None:
        role = self.roles.get(name)
        if role is None or role.get("aggregationRule") is None:
            return
        rules = aggregated_rules(role, self.roles)
        if semantic(rules) == semantic(role.get("rules") or []):
            return
        await self._apply(name, rules)
        log.info("aggregated %d rules into ClusterRole %s", len(rules), name)

    async def _apply(self, name: str, rules: list[Object]) -> None:
        config = {"apiVersion": self.cluster_roles.api_version, "kind": "ClusterRole", "metadata": {"name": name},
                  "rules": rules}

        # ClusterRoles().Apply(..., FieldManager: clusterrole-aggregation-controller, Force: true)
        await self.cluster_roles.api().patch(name, config, APPLY_PATCH, field_manager=FIELD_MANAGER, force=True)
