"""The serviceaccount controller (pkg/controller/serviceaccount/serviceaccounts_controller.go): every
active namespace has a `default` ServiceAccount; it is created with the namespace and again whenever
it is deleted. Its writes go through the loopback client, so admission (webhooks, policies) and audit see
them as kube-apiserver's own."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from .informer import Informer, InformerController, Resource, active_namespace

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
SERVICE_ACCOUNTS_TO_ENSURE = ("default",)


class ServiceAccountsController(InformerController):
    name = "serviceaccount"

    def __init__(self, namespaces: Resource, accounts: Resource):
        self.namespaces = namespaces
        self.accounts = accounts
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.informers = [Informer(namespaces, self._namespace_changed), Informer(accounts, self._account_changed)]

    async def _namespace_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        if event_type != "DELETED":
            self.queue.put_nowait(obj["metadata"]["name"])

    async def _account_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        if event_type == "DELETED" and meta.get("name") in SERVICE_ACCOUNTS_TO_ENSURE:
            self.queue.put_nowait(meta.get("namespace", ""))


    async def sync(self, namespace: str) -> None:
        """syncNamespace: nothing for a namespace that is gone or not active."""
        namespaces, accounts = self.informers
        if active_namespace(namespaces, namespace) is None:
            return
        for name in SERVICE_ACCOUNTS_TO_ENSURE:
            if accounts.get(name, namespace) is None:
                await self._create(namespace, name)

    async def _create(self, namespace: str, name: str) -> None:
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
        try:
            await self.accounts.api(namespace).create(account)
            log.info("serviceaccount controller created ServiceAccount %s/%s", namespace, name)
        except errors.StatusError as err:
            if err.code != 409:
                raise
