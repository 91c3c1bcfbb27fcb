"""Authorizers (k8s.io/apiserver/pkg/authorization): a decision for (user, verb, resource or path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..registry.context import UserInfo

ALLOW, DENY, NO_OPINION = "Allow", "Deny", "NoOpinion"
SYSTEM_MASTERS = "system:masters"


@dataclass(slots=True, frozen=True)
class Attributes:
    user: UserInfo
    verb: str
    is_resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


class Authorizer(Protocol):
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        """(decision, reason)."""
        ...


class AlwaysAllow:
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return ALLOW, ""


class AlwaysDeny:
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return NO_OPINION, "Everything is forbidden."


class PrivilegedGroups:
    """system:masters may do anything, whatever the other authorizers say (k8s authorizerfactory)."""

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return (ALLOW, "") if SYSTEM_MASTERS in attrs.user.groups else (NO_OPINION, "")


class UnionAuthorizer:
    def __init__(self, authorizers: list[Authorizer]):
        self.authorizers = authorizers

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        reasons = []
        for authorizer in self.authorizers:
            decision, reason = await authorizer.authorize(attrs)
            if decision in (ALLOW, DENY):
                return decision, reason
            if reason:
                reasons.append(reason)
        return NO_OPINION, ", ".join(reasons)
