"""The root-ca-cert-publisher controller (pkg/controller/certificates/rootcacertpublisher): every active
namespace has a ConfigMap `kube-root-ca.crt` holding the cluster's CA bundle (`ca.crt`), which the
kube-api-access projected volume of every pod mounts; it is put back when deleted or changed. Its writes go through the loopback client (admitted and audited as
kube-apiserver's own)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from .informer import Informer, InformerController, Resource, active_namespace

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
NAME = "kube-root-ca.crt"
DATA_KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
               "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
               "guaranteed across distributions of Kubernetes clusters.")


class RootCACertPublisher(InformerController):
    name = "root-ca-cert-publisher"

    def __init__(self, namespaces: Resource, configmaps: Resource, ca_bundle: str):
        self.namespaces = namespaces
        self.configmaps = configmaps
        self.ca_bundle = ca_bundle
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.informers = [Informer(namespaces, self._namespace_changed),
                          Informer(configmaps, self._configmap_changed)]

    async def _namespace_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        if event_type != "DELETED":
            self.queue.put_nowait(obj["metadata"]["name"])

    async def _configmap_changed(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        if meta.get("name") == NAME and (event_type == "DELETED" or (obj.get("data") or {}).get(DATA_KEY)
                                         != self.ca_bundle):
            self.queue.put_nowait(meta.get("namespace", ""))


    async def sync(self, namespace: str) -> None:
        """syncNamespace: create the ConfigMap, or put its data back; nothing in a namespace being deleted."""
        namespaces, configmaps = self.informers
        if active_namespace(namespaces, namespace) is None:
            return
        current = configmaps.get(NAME, namespace)
        if current is None:
            await self._create(namespace)
            return
        if current.get("data") == {DATA_KEY: self.ca_bundle}:
            return
        await self._repair(namespace, current)

    async def _create(self, namespace: str) -> None:
        configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": NAME, "namespace": namespace,
                                  "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                     "data": {DATA_KEY: self.ca_bundle}}
        try:
            await self.configmaps.api(namespace).create(configmap)
        except errors.StatusError as err:
            if err.code not in (409, 403):  # 403: the namespace began terminating meanwhile
                raise

    async def _repair(self, namespace: str, current: Object) -> None:
        """An update from what was read: a conflict (someone wrote it meanwhile) retries the namespace."""
        obj = dict(current)
        obj["data"] = {DATA_KEY: self.ca_bundle}
        meta = obj["metadata"] = dict(obj["metadata"])
        meta["annotations"] = {**(meta.get("annotations") or {}), DESCRIPTION_ANNOTATION: DESCRIPTION}
        await self.configmaps.api(namespace).update(obj)
