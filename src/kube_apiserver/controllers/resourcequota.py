"""The resource quota controller (kube-controller-manager's pkg/controller/resourcequota): it keeps each
quota's status.hard equal to spec.hard and recomputes status.used from what the namespace holds, when a
quota is created or its limits change, when an object it counts goes away (or a pod ends, a service
changes type, a claim's storage request changes), and every --resource-quota-sync-period (5 minutes)."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from ..admission.resourcequota import Evaluator, Registry
from ..admission.resourcequota import resources as rl
from ..admission.resourcequota.controller import IGNORED
from ..admission.resourcequota.generic import calculate_usage
from ..api.core.resourcequota.pods import quota_v1_pod
from ..apimachinery.wait import Periodic
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
RETRY_SECONDS = 1.0
SYNC_PERIOD = 300.0  # --resource-quota-sync-period


def _pvc_storage(pvc: Object) -> Any:
    return (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")


def _service_type(svc: Object) -> str:
    kind = (svc.get("spec") or {}).get("type")
    return kind if kind in ("NodePort", "LoadBalancer") else ""


# What an update must change for the quotas counting the object to be recomputed (the quota monitor's
# update filter); any deletion recomputes them.
SIGNATURES = {("", "pods"): quota_v1_pod, ("", "services"): _service_type, ("", "persistentvolumeclaims"): _pvc_storage}


def _limits_changed(quota: Object, old: Object | None) -> bool:
    hard = rl.parse((quota.get("spec") or {}).get("hard"))
    return old is None or not rl.equals(hard, rl.parse((old.get("spec") or {}).get("hard")))


class ResourceQuotaController(InformerController):
    name = "resourcequota"

    def __init__(self, quotas: Resource, resources: list[Resource], evaluators: list[Evaluator]):
        self.quotas = quotas  # its status is written through the loopback client
        self.resources = {(r.group, r.resource): r for r in resources
                          if r.namespaced and (r.group, r.resource) not in IGNORED}
        self.registry = Registry(evaluators)
        for group, resource in self.resources:
            self.registry.get(group, resource)  # an object count for every other served resource
        self.known: dict[str, dict[str, Object]] = {}
        self.signatures: dict[str, Any] = {}
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.pending: set[tuple[str, str]] = set()
        watched = [r for key, r in self.resources.items() if key != ("", "resourcequotas")]
        self.informers = [Informer(quotas, self._observe_quota), *(Informer(r, self._observe) for r in watched)]
        # the listers the evaluators count from (upstream's quota.ListerForResourceFunc): the informers'
        self.listers = {(r.group, r.resource): informer for r, informer in zip(watched, self.informers[1:], strict=True)}
        self.listers[("", "resourcequotas")] = self.informers[0]
        self.resync = Periodic("resource quota resync", SYNC_PERIOD, self._enqueue_all)

    async def start(self) -> None:
        await super().start()
        self.resync.start()

    async def stop(self) -> None:
        await self.resync.stop()
        await super().stop()

    def _enqueue(self, namespace: str, name: str) -> None:
        if (namespace, name) not in self.pending:
            self.pending.add((namespace, name))
            self.queue.put_nowait((namespace, name))

    async def _enqueue_all(self) -> None:
        for namespace, quotas in list(self.known.items()):
            for name in quotas:
                self._enqueue(namespace, name)

    # ---- events ----

    async def _observe_quota(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        in_namespace = self.known.setdefault(namespace, {})
        if event_type == "DELETED":
            in_namespace.pop(name, None)
            self._replenish("", "resourcequotas", namespace)
            return
        old = in_namespace.get(name)
        in_namespace[name] = obj
        if event_type == "ADDED" or _limits_changed(obj, old):
            self._enqueue(namespace, name)

    async def _observe(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        gr = (resource.group, resource.resource)
        signature_of = SIGNATURES.get(gr)
        key = f"{resource.resource}/{meta.get('namespace', '')}/{meta['name']}"
        if event_type == "DELETED":
            self.signatures.pop(key, None)
            self._replenish(*gr, meta.get("namespace", ""))
            return
        if signature_of is None:
            return
        signature = signature_of(obj)
        previous = self.signatures.get(key, signature)
        self.signatures[key] = signature
        if event_type == "MODIFIED" and previous != signature and (gr != ("", "pods") or previous):
            self._replenish(*gr, meta.get("namespace", ""))

    def _replenish(self, group: str, resource: str, namespace: str) -> None:
        """replenishQuota: the namespace's quotas that track this resource are recomputed."""
        evaluator = self.registry.get(group, resource)
        for name, quota in (self.known.get(namespace) or {}).items():
            if evaluator.matching_resources((quota.get("status") or {}).get("hard") or {}):
                self._enqueue(namespace, name)

    # ---- the worker ----

    async def _work(self) -> None:
        while True:
            namespace, name = await self.queue.get()
            self.pending.discard((namespace, name))
            try:
                await self._sync(namespace, name)
            except Exception as err:  # noqa: BLE001 - retried shortly
                log.info("resource quota controller: %s/%s: %s", namespace, name, err)
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._enqueue, namespace, name)

    async def _items(self, evaluator: Evaluator, namespace: str) -> list[Object]:
        """The objects an evaluator counts, from its resource's lister (shared: read, not changed)."""
        informer = self.listers.get((evaluator.group, evaluator.resource))
        return [] if informer is None else informer.indexer.list(namespace)

    async def _sync(self, namespace: str, name: str) -> None:
        """syncResourceQuota."""
        listed = self.informers[0].get(name, namespace)  # the quota lister
        if listed is None:
            return
        quota = copy.deepcopy(listed)
        status = quota.get("status") or {}
        hard = rl.parse((quota.get("spec") or {}).get("hard"))
        previous = rl.parse(status.get("used"))
        dirty = "hard" not in status or "used" not in status or not rl.equals(hard, rl.parse(status.get("hard")))
        usage = await calculate_usage(namespace, quota, hard, self.registry.known(), self._items)
        used = rl.mask({**previous, **usage}, hard)
        if dirty or not rl.equals(used, previous):
            quota["status"] = {"hard": rl.to_strings(hard), "used": rl.to_strings(used)}
            await self._write(quota)

    async def _write(self, quota: Object) -> None:
        """UpdateStatus with the resourceVersion the usage was computed at (a conflict retries)."""
        await self.quotas.api(quota["metadata"]["namespace"]).update_status(quota)
