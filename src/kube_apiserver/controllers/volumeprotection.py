"""The pvc-protection and pv-protection controllers (kube-controller-manager's): the finalizers the
StorageObjectInUseProtection admission plugin adds are removed once a claim is used by no running pod,
or a volume is no longer bound, so their deletion completes."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from ..registry.options import ListQuery
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
PVC_FINALIZER = "kubernetes.io/pvc-protection"
PV_FINALIZER = "kubernetes.io/pv-protection"
TERMINATED = ("Succeeded", "Failed")


def _deleting_with(obj: Object, finalizer: str) -> bool:
    meta = obj.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and finalizer in (meta.get("finalizers") or [])


def claims_of(pod: Object) -> set[str]:
    """The claims a pod uses: named ones, and the generated claims of its ephemeral volumes."""
    names = set()
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if "persistentVolumeClaim" in volume:
            names.add((volume["persistentVolumeClaim"] or {}).get("claimName", ""))
        elif "ephemeral" in volume:
            names.add(f"{pod['metadata']['name']}-{volume.get('name', '')}")
    return names


async def _drop_finalizer(resource: Resource, namespace: str, name: str, finalizer: str) -> None:
    """An update through the loopback client of the object as read: a conflict retries the key."""
    api = resource.api(namespace)
    try:
        obj = await api.get(name)
        meta = obj["metadata"]
        if finalizer not in (meta.get("finalizers") or []):
            return
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        if not meta["finalizers"]:
            del meta["finalizers"]
        await api.update(obj)
        log.info("removed %s from %s %s/%s", finalizer, resource.resource, namespace, name)
    except errors.StatusError as err:
        if err.code != 404:
            raise


class PVCProtectionController(InformerController):
    name = "pvc-protection"

    def __init__(self, claims: Resource, pods: Resource):
        self.claims = claims
        self.pods = pods
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.informers = [Informer(claims, self._claim_changed), Informer(pods, self._pod_changed)]

    async def _claim_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        if event_type != "DELETED" and _deleting_with(obj, PVC_FINALIZER):
            self.queue.put_nowait((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))

    async def _pod_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        for claim in claims_of(obj):
            self.queue.put_nowait((obj["metadata"].get("namespace", ""), claim))


    async def sync(self, key: tuple[str, str]) -> None:
        namespace, name = key
        claim = self.informers[0].get(name, namespace)  # the claim lister
        if claim is None:
            return
        if not _deleting_with(claim, PVC_FINALIZER) or await self._in_use(namespace, name):
            return
        await _drop_finalizer(self.claims, namespace, name, PVC_FINALIZER)

    async def _in_use(self, namespace: str, claim: str) -> bool:
        """isBeingUsed: the pod lister first (askInformer); when no pod there uses the claim, a live list
        (askAPIServer), as a pod created a moment ago may not have reached the informer."""
        if _used_by_any(self.informers[1].indexer.list(namespace), claim):
            return True
        if self.pods.client is not None:
            pods = (await self.pods.api(namespace).list())["items"]
        else:
            pods = (await self.pods.store.list(self.pods.context(namespace), ListQuery()))["items"]
        return _used_by_any(pods, claim)


def _used_by_any(pods: list[Object], claim: str) -> bool:
    return any(claim in claims_of(pod) and (pod.get("status") or {}).get("phase") not in TERMINATED for pod in pods)


class PVProtectionController(InformerController):
    name = "pv-protection"

    def __init__(self, volumes: Resource):
        self.volumes = volumes
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.informers = [Informer(volumes, self._changed)]

    async def _changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        if event_type != "DELETED" and _deleting_with(obj, PV_FINALIZER) and \
                (obj.get("status") or {}).get("phase") != "Bound":
            self.queue.put_nowait(obj["metadata"]["name"])

    async def sync(self, name: str) -> None:
        await _drop_finalizer(self.volumes, "", name, PV_FINALIZER)

