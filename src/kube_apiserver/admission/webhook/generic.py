"""What both webhook plugins share (k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go):
deciding whether a webhook is called for a request and as which resource (matchPolicy Equivalent), the
request it gets, and the call itself with its failure handling."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ...apimachinery import deepjson, errors
from ...apimachinery.equivalence import EquivalentResourceRegistry
from ...client.informers import SharedInformerFactory
from ..interfaces import Attributes
from .client import CallError, WebhookClient
from .conditions import admission_request, operation_options
from .errors import CallingError, RejectionError, dry_run_unsupported, to_status_error
from .hooks import Hook, HookSource
from .predicates import NamespaceLabels, match_namespace_selector, match_object_selector
from .resources import ResourceMapper
from .review import (
    InvalidResponse,
    Response,
    admission_review,
    new_uid,
    review_version,
    verify_response,
    with_type,
)
from .rules import GVK, GVR, Request, any_rule_matches, is_exempt, request_of
from .serviceresolution import ServiceResolver

Object = dict[str, Any]
NamespaceGetter = Callable[[str], Awaitable[Object | None]]
WEBHOOK_OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")


@dataclass
class Invocation:
    """WebhookInvocation: the webhook, and the resource and kind it is called as."""

    hook: Hook
    resource: GVR
    subresource: str
    kind: GVK


@dataclass
class Versioned:
    """VersionedAttributes: the request's objects as the invocation's version serves them."""

    object: Object | None
    old_object: Object | None


class Webhook:
    """The plugin base: configuration source, matchers, and the client."""

    def __init__(self, source: HookSource, get_namespace: NamespaceGetter,
                 equivalents: EquivalentResourceRegistry | None = None):
        """`equivalents`: the server's registry of what it serves (equivalent resources, conversion and
        defaulting between their versions)."""
        self.source = source
        self.namespaces = NamespaceLabels(get_namespace)
        self.mapper = ResourceMapper(equivalents)
        self.resolver = ServiceResolver()
        self.client = WebhookClient(self.resolver)

    def set_informers(self, informers: SharedInformerFactory) -> None:
        """WantsExternalKubeInformerFactory: configurations, namespaces and the services webhooks are reached
        through are read from shared informers."""
        for part in (self.source, self.namespaces, self.resolver):
            part.set_informers(informers)

    def handles(self, operation: str) -> bool:
        return operation in WEBHOOK_OPERATIONS

    def request(self, attrs: Attributes) -> Request:
        return self.mapper.served_resource(request_of(attrs))

    async def relevant_hooks(self, attrs: Attributes) -> tuple[Request, list[Hook]]:
        request = self.request(attrs)
        return request, ([] if is_exempt(request) else await self.source.hooks())

    def _invocation(self, hook: Hook, request: Request) -> Invocation | None:
        """The rules, then (matchPolicy Equivalent) the same rules against the equivalent resources."""
        if any_rule_matches(hook.rules, request):
            return Invocation(hook, request.resource, request.subresource, request.kind)
        if hook.match_policy != "Equivalent":
            return None
        equivalents = self.mapper.equivalents(request.resource, request.subresource)
        for rule in hook.rules:
            for equivalent in equivalents:
                if equivalent != request.resource and any_rule_matches([rule], request.with_resource(equivalent)):
                    kind = self.mapper.kind_for(equivalent, request.subresource)
                    if kind is None:
                        raise errors.internal_error(f"unable to convert to {equivalent}: unknown kind")
                    return Invocation(hook, equivalent, request.subresource, kind)
        return None

    async def should_call(self, hook: Hook, request: Request, attrs: Attributes) -> Invocation | None:
        """ShouldCallHook. Rules are checked first (cheapest); a selector error only counts when they match."""
        invocation = self._invocation(hook, request)
        if invocation is None:
            return None
        if not await match_namespace_selector(hook.selector("namespaceSelector"), request, self.namespaces):
            return None
        if not match_object_selector(hook.selector("objectSelector"), request):
            return None
        if hook.conditions:
            result = hook.conditions.match(await self.cel_activation(invocation, attrs))
            if result.error:
                raise errors.forbidden(request.resource.resource, request.resource.group, attrs.name, result.error)
            if not result.matches:
                return None
        return invocation

    async def versioned(self, invocation: Invocation, attrs: Attributes) -> Versioned:
        source = self.request(attrs).resource
        convert = self.mapper.convert
        return Versioned(await convert(attrs.object, source, invocation.resource, invocation.subresource),
                         await convert(attrs.old_object, source, invocation.resource, invocation.subresource))

    def request_fields(self, invocation: Invocation, attrs: Attributes) -> Object:
        request = self.request(attrs)
        return admission_request(attrs, invocation.resource, invocation.kind, request.resource, request.kind,
                                 invocation.subresource)

    async def cel_activation(self, invocation: Invocation, attrs: Attributes) -> Object:
        versioned = await self.versioned(invocation, attrs)
        request = self.request_fields(invocation, attrs)
        request["dryRun"] = attrs.dry_run
        request["options"] = operation_options(attrs)
        return {"object": versioned.object, "oldObject": versioned.old_object, "request": request}

    async def call(self, invocation: Invocation, attrs: Attributes, versioned: Versioned) -> Response:
        """Calls the webhook; CallingError when it cannot be asked, RejectionError when it says no."""
        hook = invocation.hook
        if attrs.dry_run:
            if hook.side_effects is None:
                nil = "Webhook SideEffects is nil"
                raise CallingError(hook.name, nil, errors.bad_request(nil))
            if hook.side_effects not in NO_SIDE_EFFECTS:
                raise dry_run_unsupported(hook.name)
        version = review_version(hook.review_versions)
        if version is None:
            raise CallingError(hook.name, "could not create admission objects: webhook does not accept known "
                               "AdmissionReview versions (v1, v1beta1)",
                               errors.bad_request("error creating admission objects"))
        uid = new_uid()
        body = self._review_body(uid, invocation, attrs, versioned, version)
        try:
            answer = await self.client.post(hook.client, body, hook.timeout or 10)
        except CallError as err:
            raise CallingError(hook.name, err.reason, err.status) from None
        try:
            response = verify_response(uid, version, hook.mutating, answer)
        except InvalidResponse as err:
            raise CallingError(hook.name, f"received invalid webhook response: {err}",
                               errors.service_unavailable("error validating webhook response")) from None
        add_warnings(attrs, response.warnings)
        if not response.allowed:
            raise RejectionError(to_status_error(hook.name, response.result))
        return response

    def _review_body(self, uid: str, invocation: Invocation, attrs: Attributes, versioned: Versioned,
                     version: str) -> bytes:
        request = {"uid": uid, **self.request_fields(invocation, attrs)}
        request["object"] = with_type(versioned.object, invocation.kind)
        request["oldObject"] = with_type(versioned.old_object, invocation.kind)
        request["dryRun"] = attrs.dry_run
        request["options"] = operation_options(attrs)
        return deepjson.dumps(admission_review(version, request))


def add_warnings(attrs: Attributes, warnings: list[str]) -> None:
    """warning.AddWarning: to the request's Warning headers, each message once."""
    sink = getattr(attrs, "warnings", None)
    if isinstance(sink, list):
        sink.extend(w for w in warnings if w and w not in sink)
