"""The system namespaces controller: default, kube-system, kube-public and kube-node-lease exist,
created at start and recreated every minute if deleted (k8s systemnamespaces controller)."""

from __future__ import annotations

import logging

from ..apimachinery import errors
from ..apimachinery.wait import Periodic
from ..registry.context import Context, UserInfo
from ..server.restful import APIContainer

log = logging.getLogger("kube_apiserver.controlplane")
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
RESYNC_SECONDS = 60.0
SYSTEM_USER = UserInfo("system:apiserver", groups=("system:masters",))


class SystemNamespacesController:
    def __init__(self, restful: APIContainer):
        self.restful = restful
        self._periodic = Periodic("system namespaces controller", RESYNC_SECONDS, self.ensure)

    async def start(self) -> None:
        await self.ensure()
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def ensure(self) -> None:
        store = self.restful.group_versions[("", "v1")]["namespaces"].scope.storage
        ctx = Context(user=SYSTEM_USER)
        for name in SYSTEM_NAMESPACES:
            try:
                await store.get(ctx, name)
                continue
            except errors.StatusError as err:
                if err.code != 404:
                    raise
            obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            try:
                await store.create(ctx, obj)
                log.info("created system namespace %s", name)
            except errors.StatusError as err:
                if err.code != 409:
                    raise
