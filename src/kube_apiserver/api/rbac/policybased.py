"""Escalation prevention (k8s pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/
policybased and pkg/registry/rbac/escalation_check.go).

A user may write a Role or ClusterRole only with rules it already holds, unless it may `escalate` on
that resource; it may bind a role only if it holds the role's rules or may `bind` it. Members of
system:masters (the API server's own loopback identity among them) are never checked."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import errors
from ...apimachinery.equality import semantic
from ...authorization.authorizer import ALLOW, SYSTEM_MASTERS, Attributes, Authorizer
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ...registry.store import Store
from .resolver import RuleResolver

Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
# what setting an aggregationRule requires, since it can gather any rule (* on *.* and every URL)
FULL_AUTHORITY = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                  {"nonResourceURLs": ["*"], "verbs": ["*"]}]
AGGREGATION_FORBIDDEN = "must have cluster-admin privileges to use the aggregationRule"


def escalation_allowed(ctx: Context) -> bool:
    """EscalationAllowed: system:masters may do anything."""
    return SYSTEM_MASTERS in ctx.user.groups




def only_mutating_gc_fields(obj: Object, old: Object | None) -> bool:
    """IsOnlyMutatingGCFields: the update only touches what the garbage collector needs to delete it."""
    if not old:
        return False
    copied = copy.deepcopy(obj)
    meta, old_meta = copied.setdefault("metadata", {}), old.get("metadata") or {}
    for key in ("ownerReferences", "finalizers", "selfLink", "managedFields"):
        meta.pop(key, None)
        if key in old_meta:
            meta[key] = old_meta[key]
    return semantic(copied) == semantic(old)


def _has_aggregation_rule(role: Object | None) -> bool:
    return bool(((role or {}).get("aggregationRule") or {}).get("clusterRoleSelectors"))


def _with_check(obj_info: UpdatedObjectInfo, check: Any) -> UpdatedObjectInfo:
    """rest.WrapUpdatedObjectInfo: the check sees the object every earlier step (admission included) made."""
    return UpdatedObjectInfo(obj_info.name, obj_info.transform, [*obj_info.admission, check])


class PolicyStore(Store):
    """A Store whose writes the escalation checks guard (set up by `guard`)."""

    authorizer: Authorizer | None = None
    resolver: RuleResolver

    def guard(self, authorizer: Authorizer | None, resolver: RuleResolver) -> PolicyStore:
        self.authorizer, self.resolver = authorizer, resolver
        return self

    async def _authorized(self, ctx: Context, verb: str, resource: str, name: str, namespace: str) -> bool:
        if self.authorizer is None:
            return False
        attrs = Attributes(ctx.user, verb, True, namespace=namespace, api_group=GROUP, api_version="v1",
                           resource=resource, name=name)
        decision, _ = await self.authorizer.authorize(attrs)
        return decision == ALLOW

    async def _confirm(self, ctx: Context, rules: list[Object], name: str, why: str = "") -> None:
        message = await self.resolver.escalation(ctx, rules)
        if message:
            raise errors.forbidden(self.info.resource, GROUP, name, why or message)


class RoleStore(PolicyStore):
    """roles and clusterroles: writing rules needs holding them, or `escalate` on the resource."""

    async def _escalation_authorized(self, ctx: Context, name: str) -> bool:
        """RoleEscalationAuthorized, asked with the request's name (none for a POST)."""
        return escalation_allowed(ctx) or await self._authorized(ctx, "escalate", self.info.resource, name,
                                                                 ctx.namespace)

    async def _check(self, ctx: Context, obj: Object, old: Object | None) -> None:
        name = (obj.get("metadata") or {}).get("name", "")
        await self._confirm(ctx, list(obj.get("rules") or []), name)
        # an aggregationRule can gather anything, so setting or changing one needs every permission
        if self.info.resource == "clusterroles" and (_has_aggregation_rule(obj) or _has_aggregation_rule(old)):
            await self._confirm(ctx, FULL_AUTHORITY, name, AGGREGATION_FORBIDDEN)

    async def create(self, ctx: Context, obj: Object, create_validation: Any = None,
                     options: dict[str, Any] | None = None) -> Object:
        if not await self._escalation_authorized(ctx, ""):
            await self._check(ctx, obj, None)
        return await super().create(ctx, obj, create_validation, options)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo, create_validation: Any = None,
                     update_validation: Any = None, force_allow_create: bool = False,
                     options: dict[str, Any] | None = None) -> tuple[Object, bool]:
        if not await self._escalation_authorized(ctx, name):
            async def check(check_ctx: Context, obj: Object, old: Object | None) -> Object:
                if not only_mutating_gc_fields(obj, old):
                    await self._check(check_ctx, obj, old)
                return obj
            obj_info = _with_check(obj_info, check)
        return await super().update(ctx, name, obj_info, create_validation, update_validation, force_allow_create,
                                    options)


class BindingStore(PolicyStore):
    """rolebindings and clusterrolebindings: binding a role needs holding its rules, or `bind` on it."""

    async def _bind_authorized(self, ctx: Context, ref: Object) -> bool:
        """BindingAuthorized, asked in the binding's namespace (none for a ClusterRoleBinding)."""
        resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(ref.get("kind", ""))
        if resource is None:
            return False
        return await self._authorized(ctx, "bind", resource, ref.get("name", ""), ctx.namespace)

    async def _check_role(self, ctx: Context, obj: Object) -> None:
        name = (obj.get("metadata") or {}).get("name", "")
        try:
            rules = await self.resolver.role_reference_rules(obj.get("roleRef") or {}, ctx.namespace)
        except errors.StatusError as err:
            raise errors.forbidden(self.info.resource, GROUP, name, err.message) from None
        await self._confirm(ctx, rules, name)

    async def create(self, ctx: Context, obj: Object, create_validation: Any = None,
                     options: dict[str, Any] | None = None) -> Object:
        if not escalation_allowed(ctx) and not await self._bind_authorized(ctx, obj.get("roleRef") or {}):
            await self._check_role(ctx, obj)
        return await super().create(ctx, obj, create_validation, options)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo, create_validation: Any = None,
                     update_validation: Any = None, force_allow_create: bool = False,
                     options: dict[str, Any] | None = None) -> tuple[Object, bool]:
        if not escalation_allowed(ctx):
            async def check(check_ctx: Context, obj: Object, old: Object | None) -> Object:
                if await self._bind_authorized(check_ctx, obj.get("roleRef") or {}):
                    return obj
                if not only_mutating_gc_fields(obj, old):
                    await self._check_role(check_ctx, obj)
                return obj
            obj_info = _with_check(obj_info, check)
        return await super().update(ctx, name, obj_info, create_validation, update_validation, force_allow_create,
                                    options)
