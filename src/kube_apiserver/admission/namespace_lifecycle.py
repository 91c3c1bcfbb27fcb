"""NamespaceLifecycle: no new objects in a namespace that is missing or being terminated, and the
immortal namespaces cannot be deleted (plugin/pkg/admission/namespace/lifecycle).

As upstream, the namespace is read from the namespaces' informer, and live when the informer has not seen it
(just created) or this server admitted its deletion in the last 30 s (the informer may not have seen the
deletion yet): one read of storage per create otherwise, which a worker of --workers pays as a round trip."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..apimachinery import errors
from ..client.informers import SharedInformerFactory
from .interfaces import CREATE, DELETE, Attributes
from .webhook.predicates import NamespaceLabels

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
NamespaceGetter = Callable[[str], Awaitable[dict[str, Any] | None]]
# upstream's forceLiveLookupCache: an LRU of 100 names, each kept 30 s
FORCE_LIVE_LOOKUP_TTL, FORCE_LIVE_LOOKUP_SIZE = 30.0, 100


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, get_namespace: NamespaceGetter, clock: Callable[[], float] = time.monotonic):
        self.get_namespace = get_namespace
        self.namespaces = NamespaceLabels(get_namespace)
        self.clock = clock
        self.force_live_lookup: OrderedDict[str, float] = OrderedDict()  # name -> until when

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.namespaces.set_informers(informers)

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, DELETE)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation == DELETE and attrs.resource == "namespaces" and not attrs.subresource:
            if attrs.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden("namespaces", "", attrs.name, "this namespace may not be deleted")
            self._force_live_lookup(attrs.name)
            return
        if not attrs.namespace or attrs.resource == "namespaces":
            return
        if attrs.operation != CREATE:
            return  # updates and deletes in a terminating namespace are how it empties
        namespace = await (self.get_namespace(attrs.namespace) if self._looked_up_live(attrs.namespace)
                           else self.namespaces.get(attrs.namespace))
        if namespace is None:
            raise errors.not_found("namespaces", "", attrs.namespace)
        if (namespace.get("status") or {}).get("phase") == "Terminating" or \
                (namespace.get("metadata") or {}).get("deletionTimestamp"):
            raise errors.forbidden(attrs.resource, attrs.group, attrs.name,
                                   f"unable to create new content in namespace {attrs.namespace} because it is "
                                   f"being terminated",
                                   [{"reason": "NamespaceTerminating",
                                     "message": f"namespace {attrs.namespace} is being terminated",
                                     "field": "metadata.namespace"}])

    def _force_live_lookup(self, name: str) -> None:
        self.force_live_lookup[name] = self.clock() + FORCE_LIVE_LOOKUP_TTL
        self.force_live_lookup.move_to_end(name)
        if len(self.force_live_lookup) > FORCE_LIVE_LOOKUP_SIZE:
            self.force_live_lookup.popitem(last=False)

    def _looked_up_live(self, name: str) -> bool:
        until = self.force_live_lookup.get(name)
        if until is None:
            return False
        if until > self.clock():
            return True
        del self.force_live_lookup[name]
        return False
