"""CRD registration (kube-apiserver pkg/controlplane/controller/crdregistration): each served version of
a CustomResourceDefinition's group is registered with auto-registration, so it gets a local APIService
(priority 1000/100) while some CRD serves it, and loses it when none does."""

from __future__ import annotations

import asyncio
from typing import Any

from ..controllers.informer import Informer, Resource
from ..registry.options import ListQuery
from .autoregister import AutoRegisterController
from .workqueue import Workers, WorkQueue

Object = dict[str, Any]
CRD_GROUP = "apiextensions.k8s.io"


def _group_versions(crd: Object) -> list[tuple[str, str]]:
    spec = crd.get("spec") or {}
    return [(spec.get("group", ""), v.get("name", "")) for v in spec.get("versions") or []]


class CRDRegistrationController:
    def __init__(self, crd_store: Any, registration: AutoRegisterController):
        self.store = crd_store
        self.registration = registration
        self.crds: dict[str, Object] = {}
        self.queue = WorkQueue("crd-autoregister")
        self._workers = Workers(self.queue, self.sync)
        resource = Resource(CRD_GROUP, "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
                            crd_store)
        self._informer = Informer(resource, self._on_event)
        self.synced_initial_set = asyncio.Event()

    async def run(self) -> None:
        """Processes the CRDs that exist before returning (WaitForInitialSync), then follows changes."""
        listed = await self.store.list(self._informer.resource.context(), ListQuery())
        for crd in listed["items"]:
            self.crds[crd["metadata"]["name"]] = crd
        for crd in listed["items"]:
            for group, version in _group_versions(crd):
                await self.sync(f"{group}/{version}")
        self.synced_initial_set.set()
        self._informer.start()
        self._workers.start()

    async def stop(self) -> None:
        await self._informer.stop()
        await self._workers.stop()

    async def _on_event(self, resource: Resource, event_type: str, crd: Object) -> None:
        old = self.crds.pop(crd["metadata"]["name"], None)
        if event_type != "DELETED":
            self.crds[crd["metadata"]["name"]] = crd
        for group, version in {*_group_versions(crd), *(_group_versions(old) if old else [])}:
            self.queue.add(f"{group}/{version}")

    async def sync(self, key: str) -> None:
        """handleVersionUpdate: registered while any CRD of the group serves that version."""
        group, _, version = key.partition("/")
        for crd in self.crds.values():
            spec = crd.get("spec") or {}
            if spec.get("group") != group:
                continue
            if any(v.get("name") == version and v.get("served") for v in spec.get("versions") or []):
                self.registration.register_local(group, version)
                return
        self.registration.unregister_local(group, version)
