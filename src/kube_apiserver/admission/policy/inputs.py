"""The values policy expressions read (pkg/admission/plugin/cel activation.go and condition.go):
`object`, `oldObject`, `request`, `params`, `namespaceObject`, `authorizer` with
`authorizer.requestResource`, and the evaluation of `variables` on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...cel import EvaluationError, Opaque
from ...cel.library import authz
from ...cel.values import tag
from ..interfaces import Attributes
from ..webhook.conditions import admission_request, operation_options, user_info
from ..webhook.rules import GVK, GVR
from .compile import AUTHORIZER, CompiledPolicy, Expression

Object = dict[str, Any]
# CreateNamespaceObject: the metadata fields namespaceObject keeps
NAMESPACE_META = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


def cel_request(attrs: Attributes, resource: GVR, kind: GVK, request_resource: GVR, request_kind: GVK) -> Object:
    """CreateAdmissionRequest: the request as matched (resource, kind) and as made."""
    request = admission_request(attrs, resource, kind, request_resource, request_kind, attrs.subresource)
    request["dryRun"] = attrs.dry_run
    request["options"] = operation_options(attrs)
    return request


def namespace_object(namespace: Object | None) -> Object | None:
    if namespace is None:
        return None
    meta = namespace.get("metadata") or {}
    return {"metadata": {key: meta[key] for key in NAMESPACE_META if meta.get(key) not in (None, "", [], {})},
            "spec": namespace.get("spec") or {}, "status": namespace.get("status") or {}}


def with_type(obj: Object | None, kind: GVK) -> Object | None:
    """The object as its versioned form shows it: with apiVersion and kind."""
    if obj is None or ("apiVersion" in obj and "kind" in obj):
        return obj
    return {"apiVersion": kind.api_version, "kind": kind.kind, **obj}


def param_with_type(param: Object | None, param_kind: Object) -> Object | None:
    """wrappedParam: a param without type meta gets the policy's paramKind."""
    if param is None or (param.get("apiVersion") and param.get("kind")):
        return param
    return {**param, "apiVersion": param_kind.get("apiVersion") or "", "kind": param_kind.get("kind") or ""}


def authorizer_value(attrs: Attributes, resource: GVR) -> Object:
    """NewAuthorizerVal and NewResourceAuthorizerVal for the request's user and resource."""
    info = user_info(attrs)
    user = authz.user_fields(info["username"], info.get("uid", ""), info.get("groups", ()), info.get("extra"))
    checked = authz.resource_check(user, resource.group, resource.resource, attrs.subresource, attrs.namespace,
                                   attrs.name)
    return authz.authorizer_value(user, checked)


def raw(value: Any) -> Any:
    """A result handed back to the interpreter: opaque values as the tagged maps it passes around."""
    if isinstance(value, Opaque):
        return tag(value.type_name, value.value)
    if type(value) is dict:
        return {key: raw(item) for key, item in value.items()}
    if type(value) is list:
        return [raw(item) for item in value]
    return value


@dataclass
class Scope:
    """One activation: the base variables, and the composited variables evaluated lazily (each at most
    once, only when an expression reads it)."""

    policy: CompiledPolicy
    base: Mapping[str, Any]
    session: authz.Session | None
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    async def _variable(self, name: str) -> None:
        if name in self.values or name in self.errors:
            return
        compiled = self.policy.variables[name]
        if compiled.error:
            self.errors[name] = f'composited variable "{name}" fails to compile: {compiled.error}'
            return
        try:
            self.values[name] = raw(await self.run(compiled))
        except EvaluationError as err:
            self.errors[name] = f'composited variable "{name}" fails to evaluate: {err}'

    async def run(self, expression: Expression) -> Any:
        """The expression's value (EvaluationError with cel-go's error text when it fails)."""
        variables = {}
        for name in expression.reads:
            await self._variable(name)
            if name in self.errors:
                raise EvaluationError(self.errors[name])
            variables[name] = self.values[name]
        activation = {**self.base, "variables": variables}
        if self.session is not None and AUTHORIZER in expression.program.variables:
            return await self.session.evaluate(expression.program, activation)
        return expression.program.evaluate(activation)
