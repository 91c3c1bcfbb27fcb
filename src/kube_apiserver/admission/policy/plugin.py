"""The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver/pkg/admission/plugin/policy/validating
plugin.go and dispatcher.go, over policy/generic): every bound policy whose matchConstraints, binding
matchResources and matchConditions take the request is evaluated for each of the binding's params; a
failed validation denies, warns or (Audit) is only counted, as the binding's
validationActions say. The first denial is the request's error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors
from ...apimachinery.equivalence import EquivalentResourceRegistry
from ...apimachinery.schema import parse_group_version
from ...authorization.authorizer import Attributes as AuthorizationAttributes
from ...authorization.authorizer import Authorizer
from ...cel.library import authz
from ...client.discovery import RESTMapper
from ...client.informers import SharedInformerFactory
from ...registry.context import UserInfo
from ..interfaces import CONNECT, CREATE, DELETE, UPDATE, Attributes, forbidden
from ..webhook.generic import NamespaceGetter, add_warnings
from ..webhook.matching import Match, matches
from ..webhook.predicates import NamespaceLabels
from ..webhook.resources import ResourceMapper
from ..webhook.rules import GROUP, Request, request_of
from .inputs import Scope, authorizer_value, cel_request, namespace_object, param_with_type, with_type
from .params import ParamError, ParamResolver, ParamSource, collect_params
from .source import PolicyHook, PolicySource
from .validator import ANNOTATION_ERROR, DENY, PUBLISH, ValidateResult, reason_to_code, validate

Object = dict[str, Any]
PLUGIN_NAME = "ValidatingAdmissionPolicy"
OPERATIONS = (CONNECT, CREATE, DELETE, UPDATE)
# policy/generic admissionResources: the policies' own resources are never subject to policies
EXCLUDED_RESOURCES = frozenset((GROUP, resource) for resource in (
    "validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings"))


@dataclass
class Denial:
    policy: str
    binding: str | None
    message: str
    reason: str = ""


def _name(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


class ValidatingAdmissionPolicy:
    def __init__(self, get_namespace: NamespaceGetter, authorizer: Authorizer | None = None,
                 equivalents: EquivalentResourceRegistry | None = None):
        """`equivalents`: the server's registry of what it serves (matchPolicy Equivalent, conversion)."""
        self.source = PolicySource()
        self.namespaces = NamespaceLabels(get_namespace)
        self.mapper = ResourceMapper(equivalents)
        self.params = ParamResolver()
        self.authorizer = authorizer

    def set_rest_mapper(self, rest_mapper: RESTMapper) -> None:
        """WantsRESTMapper: the paramKinds' resources."""
        self.params.set_rest_mapper(rest_mapper)

    def set_informers(self, informers: SharedInformerFactory) -> None:
        """WantsExternalKubeInformerFactory: policies, bindings, namespaces and params from shared informers."""
        for part in (self.source, self.namespaces, self.params):
            part.set_informers(informers)

    def handles(self, operation: str) -> bool:
        return operation in OPERATIONS

    async def validate(self, attrs: Attributes) -> None:
        if (attrs.group, attrs.resource) in EXCLUDED_RESOURCES:
            return
        hooks = await self.source.hooks()
        if hooks:
            await Dispatch(self, attrs).run(hooks)

    async def authorize(self, check: authz.Check) -> tuple[str, str]:
        """A check of the authz library, asked of the server's authorizer."""
        assert self.authorizer is not None
        user = UserInfo(check.username, check.uid, check.groups, {key: list(values) for key, values in check.extra})
        return await self.authorizer.authorize(AuthorizationAttributes(
            user, check.verb, check.resource_request, check.path, check.namespace, check.group, "*",
            check.resource, check.subresource, check.name))


class Dispatch:
    """One request through every hook (validating dispatcher.Dispatch)."""

    def __init__(self, plugin: ValidatingAdmissionPolicy, attrs: Attributes):
        self.plugin, self.attrs = plugin, attrs
        self.request: Request = plugin.mapper.served_resource(request_of(attrs))
        self.denials: list[Denial] = []
        # decisions are cached for the request, as the caching authorizer does
        self.session = authz.Session(plugin.authorize) if plugin.authorizer is not None else None
        self._namespace: tuple[Object | None] | None = None

    async def run(self, hooks: list[PolicyHook]) -> None:
        for hook in hooks:
            await self._hook(hook)
        if self.denials:
            raise self._error(self.denials[0])

    def _config_error(self, hook: PolicyHook, binding: Object | None, message: str) -> None:
        policy = hook.compiled.failure_policy
        if policy == "Ignore":
            return
        if policy == "Fail":
            message = f"failed to configure {'policy' if binding is None else 'binding'}: {message}"
        else:
            message = f"unrecognized failure policy: '{policy}'"
        self.denials.append(Denial(hook.name, None if binding is None else _name(binding), message))

    async def _matches(self, constraints: Object) -> Match | None:
        return await matches(constraints, self.request, self.plugin.namespaces, self.plugin.mapper)

    async def _hook(self, hook: PolicyHook) -> None:
        spec = hook.policy.get("spec") or {}
        constraints = spec.get("matchConstraints")
        if not isinstance(constraints, dict):
            self._config_error(hook, None, "policy contained no match constraints, a required field")
            return
        try:
            found = await self._matches(constraints)
        except errors.StatusError as err:
            self._config_error(hook, None, err.message)
            return
        if found is None:
            return
        param_kind, source = spec.get("paramKind"), None
        if isinstance(param_kind, dict):
            if parse_group_version(str(param_kind.get("apiVersion") or "")) is None:
                return  # the policy source leaves out a policy whose paramKind cannot be parsed
            try:
                source = await self.plugin.params.resolve(param_kind)
            except ParamError as err:
                self._config_error(hook, None, str(err))
                return
        for binding in hook.bindings:
            await self._binding(hook, binding, found, param_kind, source)

    async def _binding(self, hook: PolicyHook, binding: Object, found: Match, param_kind: Object | None,
                       source: ParamSource | None) -> None:
        spec = binding.get("spec") or {}
        try:
            if isinstance(spec.get("matchResources"), dict) and await self._matches(spec["matchResources"]) is None:
                return
            params = await collect_params(param_kind, source, spec.get("paramRef"), self.attrs.namespace)
        except errors.StatusError as err:
            self._config_error(hook, binding, err.message)
            return
        except ParamError as err:
            self._config_error(hook, binding, str(err))
            return
        if not params:
            return
        try:
            obj, old = await self._versioned(found)
        except Exception as err:  # noqa: BLE001 - a conversion failure configures nothing
            self._config_error(hook, binding, f"failed to convert object version: {err}")
            return
        namespace = await self._namespace_object()
        actions = [a for a in spec.get("validationActions") or [] if isinstance(a, str)]
        for param in params:
            base = self._base(obj, old, param_with_type(param, param_kind or {}))
            match_base = {**base, "request": cel_request(self.attrs, self.request.resource, found.kind,
                                                         self.request.resource, self.request.kind),
                          "namespaceObject": None}
            scope_base = {**base, "request": cel_request(self.attrs, found.resource, found.kind,
                                                         self.request.resource, self.request.kind),
                          "namespaceObject": namespace}
            result = await validate(hook.compiled, Scope(hook.compiled, match_base, self.session),
                                    Scope(hook.compiled, scope_base, self.session))
            self._record(hook.name, _name(binding), actions, result)

    def _record(self, policy: str, binding: str, actions: list[str], result: ValidateResult) -> None:
        for decision in result.decisions:
            if decision.action != DENY:
                continue
            for action in actions:
                if action == "Deny":
                    self.denials.append(Denial(policy, binding, decision.message, decision.reason))
                elif action == "Warn":
                    add_warnings(self.attrs, [f"Validation failed for ValidatingAdmissionPolicy '{policy}' "
                                              f"with binding '{binding}': {decision.message}"])
                # Audit: upstream's validation_failure audit annotation is not written yet
        for annotation in result.audit_annotations:
            if annotation.action == ANNOTATION_ERROR:  # a failed valueExpression denies (failurePolicy Fail)
                self.denials.append(Denial(policy, binding, annotation.error))
            elif annotation.action == PUBLISH:
                self.attrs.add_audit_annotation(f"{policy}/{annotation.key}", annotation.value)

    def _base(self, obj: Object | None, old: Object | None, param: Object | None) -> Object:
        base: Object = {"object": obj, "oldObject": old, "params": param}
        if self.plugin.authorizer is not None:
            base["authorizer"] = authorizer_value(self.attrs, self.request.resource)
        return base

    async def _versioned(self, found: Match) -> tuple[Object | None, Object | None]:
        """The objects as the matched resource's version serves them."""
        convert, source, sub = self.plugin.mapper.convert, self.request.resource, self.request.subresource
        return (with_type(await convert(self.attrs.object, source, found.resource, sub), found.kind),
                with_type(await convert(self.attrs.old_object, source, found.resource, sub), found.kind))

    async def _namespace_object(self) -> Object | None:
        """The request's namespace (none for a namespace itself); a missing one fails the request."""
        if self._namespace is None:
            name = self.attrs.namespace
            if (self.attrs.group, self.attrs.version, self.attrs.kind) == ("", "v1", "Namespace"):
                name = ""
            namespace = await self.plugin.namespaces.get(name) if name else None
            if name and namespace is None:
                raise errors.not_found("namespaces", "", name)
            self._namespace = (namespace_object(namespace),)
        return self._namespace[0]

    def _error(self, denial: Denial) -> errors.StatusError:
        if denial.binding is not None:
            message = (f"ValidatingAdmissionPolicy '{denial.policy}' with binding '{denial.binding}' "
                       f"denied request: {denial.message}")
        else:
            message = f"ValidatingAdmissionPolicy '{denial.policy}' denied request: {denial.message}"
        err = forbidden(self.attrs, message)
        err.reason = denial.reason or "Invalid"
        err.code = reason_to_code(err.reason)
        details = err.details if err.details is not None else {}
        details.setdefault("causes", []).append({"message": message})
        err.details = details
        return err
