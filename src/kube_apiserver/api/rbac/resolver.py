"""The rule resolver the rbac storage asks (k8s pkg/registry/rbac/validation rule.go DefaultRuleResolver,
built in the rbac REST storage provider over the group's own registries): the rules a user holds, and
ConfirmNoEscalation, which refuses to let a user grant what it does not hold."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors
from ...apimachinery.field import go_quote
from ...apimachinery.gostrconv import quote_list as go_quote_list
from ...authorization.rbac import subject_matches
from ...registry.context import Context, UserInfo
from ...registry.options import ListQuery
from .covers import compact_rules, compact_string, covers

Object = dict[str, Any]
SYSTEM = UserInfo("system:apiserver", groups=("system:masters",))


def aggregate_message(messages: list[str]) -> str:
    """utilerrors.Aggregate's Error(): one message alone, several deduplicated inside brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class RuleResolver:
    def __init__(self, stores: dict[str, Any]):
        # roles, rolebindings, clusterroles, clusterrolebindings: filled once the stores exist
        self.stores = stores

    async def _list(self, resource: str, namespace: str = "") -> list[Object]:
        ctx = Context(namespace, SYSTEM)
        return (await self.stores[resource].list(ctx, ListQuery(resource_version="0")))["items"]

    async def role_reference_rules(self, ref: Object, namespace: str) -> list[Object]:
        """GetRoleReferenceRules; a missing role is the registry's NotFound error."""
        kind, name = ref.get("kind", ""), ref.get("name", "")
        if kind == "Role":
            role = await self.stores["roles"].get(Context(namespace, SYSTEM), name)
        elif kind == "ClusterRole":
            role = await self.stores["clusterroles"].get(Context("", SYSTEM), name)
        else:
            raise errors.StatusError(500, "InternalError", f"unsupported role reference kind: {go_quote(kind)}")
        return list(role.get("rules") or [])

    async def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Object], list[str]]:
        """RulesFor: the rules of every role bound to the user cluster-wide and in the namespace, with the
        errors met resolving them (the rules found are still returned)."""
        rules: list[Object] = []
        failures: list[str] = []
        sources = [(await self._list("clusterrolebindings"), "")]
        if namespace:
            sources.append((await self._list("rolebindings", namespace), namespace))
        for bindings, binding_namespace in sources:
            for binding in bindings:
                if not any(subject_matches(s, user, binding_namespace) for s in binding.get("subjects") or []):
                    continue
                try:
                    rules += await self.role_reference_rules(binding.get("roleRef") or {}, binding_namespace)
                except errors.StatusError as err:
                    failures.append(err.message)
        return rules, failures

    async def escalation(self, ctx: Context, rules: list[Object]) -> str:
        """ConfirmNoEscalation: "" when the user holds every permission of rules, else why not."""
        owner_rules, failures = await self.rules_for(ctx.user, ctx.namespace)
        held, missing = covers(owner_rules, rules)
        if held:
            return ""
        descriptions = sorted({compact_string(rule) for rule in compact_rules(missing)})
        message = (f"user {go_quote(ctx.user.name)} (groups={go_quote_list(list(ctx.user.groups))}) is attempting "
                   f"to grant RBAC permissions not currently held:\n" + "\n".join(descriptions))
        if failures:
            message += f"; resolution errors: [{aggregate_message(failures)}]"
        return message
