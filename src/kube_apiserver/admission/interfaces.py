"""Admission (k8s.io/apiserver/pkg/admission): attributes of a request, and the mutating then
validating chain every write passes through."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..apimachinery import errors
from ..registry.context import UserInfo

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"
Object = dict[str, Any]


@dataclass(slots=True)
class Attributes:
    operation: str
    group: str
    version: str
    kind: str
    resource: str
    subresource: str
    namespace: str
    name: str
    object: Object | None
    old_object: Object | None
    user: UserInfo
    dry_run: bool = False
    options: Object = field(default_factory=dict)
    # Warnings for the client (warning.AddWarning): the request's list, returned as Warning headers.
    warnings: list[str] = field(default_factory=list)
    # The request's audit context (audit/event.py) when it is audited, else None.
    audit: Any = None
    # The group of the resource the URL names when it is not the kind's: a subresource may be another group's
    # kind (pods/eviction is policy's Eviction, serviceaccounts/token authentication's TokenRequest).
    resource_group: str | None = None

    @property
    def served_group(self) -> str:
        """GetResource().Group: the group the resource is served in."""
        return self.group if self.resource_group is None else self.resource_group

    def add_audit_annotation(self, key: str, value: str) -> None:
        """AddAnnotation: recorded on the request's audit event, if it has one."""
        if self.audit is not None:
            self.audit.add_annotation(key, value)


def forbidden(attrs: Attributes, why: str) -> errors.StatusError:
    """admission.NewForbidden: named after the request, else the object's name or generateName."""
    meta = (attrs.object or {}).get("metadata") or {}
    name = attrs.name or meta.get("name") or meta.get("generateName") or "Unknown"
    return errors.forbidden(attrs.resource, attrs.served_group, name, why)


class MutationInterface(Protocol):
    def handles(self, operation: str) -> bool: ...

    async def admit(self, attrs: Attributes) -> None:
        """May change attrs.object in place."""


class ValidationInterface(Protocol):
    def handles(self, operation: str) -> bool: ...

    async def validate(self, attrs: Attributes) -> None:
        """Raises a StatusError to refuse."""


class Chain:
    """Every plugin that mutates, in order, then every plugin that validates, in order."""

    def __init__(self, plugins: list[Any]):
        self.plugins = plugins
        self.mutating = [p for p in plugins if hasattr(p, "admit")]
        self.validating = [p for p in plugins if hasattr(p, "validate")]

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.mutating:
            if plugin.handles(attrs.operation):
                await plugin.admit(attrs)

    async def validate(self, attrs: Attributes) -> None:
        for plugin in self.validating:
            if plugin.handles(attrs.operation):
                await plugin.validate(attrs)
