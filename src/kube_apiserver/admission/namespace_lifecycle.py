"""NamespaceLifecycle: no new objects in a namespace that is missing or being terminated, and the
immortal namespaces cannot be deleted (plugin/pkg/admission/namespace/lifecycle)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..apimachinery import errors
from .interfaces import CREATE, DELETE, Attributes

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
NamespaceGetter = Callable[[str], Awaitable[dict[str, Any] | None]]


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, get_namespace: NamespaceGetter):
        self.get_namespace = get_namespace

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, DELETE)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation == DELETE and attrs.resource == "namespaces" and not attrs.subresource:
            if attrs.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden("namespaces", "", attrs.name, "this namespace may not be deleted")
            return
        if not attrs.namespace or attrs.resource == "namespaces":
            return
        if attrs.operation != CREATE:
            return  # updates and deletes in a terminating namespace are how it empties
        namespace = await self.get_namespace(attrs.namespace)
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
