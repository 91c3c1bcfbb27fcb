"""Authorizers (k8s.io/apiserver/pkg/authorization): a decision for (user, verb, resource or path)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..apimachinery.field import aggregate_message
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
    # a list, watch or deletecollection's raw fieldSelector (AuthorizeWithSelectors: the Node authorizer reads it)
    field_selector: str = ""


class AuthorizationError(Exception):
    """An authorizer could not decide (a webhook that failed); the union goes on to the next, and a request
    no authorizer allowed or denied then fails with it (500), as upstream's union aggregates errors. With
    `decision` DENY (a webhook whose failurePolicy is Deny) the union stops there and fails."""

    def __init__(self, message: str, decision: str = "NoOpinion"):
        super().__init__(message)
        self.decision = decision


class Authorizer(Protocol):
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        """(decision, reason)."""
        ...


@dataclass
class Rules:
    """What a user may do in a namespace, as far as an authorizer can list it (authorizer.RuleResolver)."""

    resource_rules: list[dict[str, Any]] = field(default_factory=list)
    non_resource_rules: list[dict[str, Any]] = field(default_factory=list)
    incomplete: bool = False
    evaluation_error: str = ""


class RuleResolver(Protocol):
    async def rules_for(self, user: UserInfo, namespace: str) -> Rules: ...


class AlwaysAllow:
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return ALLOW, ""

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                     [{"verbs": ["*"], "nonResourceURLs": ["*"]}])


class AlwaysDeny:
    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return NO_OPINION, "Everything is forbidden."

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


class PrivilegedGroups:
    """system:masters may do anything, whatever the other authorizers say (k8s authorizerfactory)."""

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        return (ALLOW, "") if SYSTEM_MASTERS in attrs.user.groups else (NO_OPINION, "")


class UnionAuthorizer:
    def __init__(self, authorizers: list[Authorizer]):
        self.authorizers = authorizers

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        reasons, failures = [], []
        for authorizer in self.authorizers:
            try:
                decision, reason = await authorizer.authorize(attrs)
            except AuthorizationError as err:
                if err.decision == DENY:
                    raise
                failures.append(str(err))
                continue
            if decision in (ALLOW, DENY):
                return decision, reason
            if reason:
                reasons.append(reason)
        if failures:
            raise AuthorizationError(aggregate_message(failures))
        return NO_OPINION, ", ".join(reasons)

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """Every resolver's rules together; incomplete when any says so (union.RulesFor)."""
        out, errors = Rules(), []
        for authorizer in self.authorizers:
            rules_for = getattr(authorizer, "rules_for", None)
            if rules_for is None:  # not a RuleResolver (the system:masters rule)
                continue
            rules = await rules_for(user, namespace)
            out.resource_rules += rules.resource_rules
            out.non_resource_rules += rules.non_resource_rules
            out.incomplete = out.incomplete or rules.incomplete
            if rules.evaluation_error:
                errors.append(rules.evaluation_error)
        out.evaluation_error = ", ".join(errors)
        return out
