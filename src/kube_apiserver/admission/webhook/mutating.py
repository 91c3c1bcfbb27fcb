"""The MutatingAdmissionWebhook plugin (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating): the
matching webhooks are called one after the other, each seeing the object as the previous ones left it,
and each JSON patch applied (then the version's defaults). A webhook with reinvocationPolicy IfNeeded
is called once more when a later webhook changed the object.

Kubernetes re-runs the whole mutating chain for that second round; here only the webhooks are
re-run, which is the same as long as the webhook plugin ends the mutating chain (as it does)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import orjson

from ...apimachinery import errors
from ...apimachinery.equivalence import EquivalentResourceRegistry
from ...apimachinery.field import go_quote
from ...apimachinery.patch import json_patch
from ..interfaces import Attributes
from .errors import CallingError, RejectionError, fail_closed, to_status_error
from .generic import Invocation, NamespaceGetter, Webhook
from .hooks import Hook, HookSource

log = logging.getLogger("kube_apiserver.admission")


@dataclass
class Reinvocation:
    """webhookReinvokeContext."""

    previously_invoked: set[str] = field(default_factory=set)
    to_reinvoke: set[str] = field(default_factory=set)

    def changed(self) -> None:
        """The object changed: every reinvocable webhook called before must see it again."""
        self.to_reinvoke |= self.previously_invoked
        self.previously_invoked = set()


class MutatingAdmissionWebhook(Webhook):
    def __init__(self, get_namespace: NamespaceGetter, equivalents: EquivalentResourceRegistry | None = None):
        super().__init__(HookSource("mutatingwebhookconfigurations", mutating=True), get_namespace, equivalents)

    async def admit(self, attrs: Attributes) -> None:
        _request, hooks = await self.relevant_hooks(attrs)
        if not hooks:
            return
        state = Reinvocation()
        await self._round(attrs, hooks, state, None)
        if state.to_reinvoke:
            await self._round(attrs, hooks, state, set(state.to_reinvoke))

    async def _round(self, attrs: Attributes, hooks: list[Hook], state: Reinvocation,
                     only: set[str] | None) -> None:
        """One pass over the webhooks (`only`: the second pass, just these)."""
        for hook in hooks:
            invocation = await self.should_call(hook, self.request(attrs), attrs)
            if invocation is None or (only is not None and hook.uid not in only):
                continue
            changed, failure = await self._invoke(invocation, attrs)
            if changed:
                state.changed()
            if hook.reinvoke_if_needed:
                state.previously_invoked.add(hook.uid)
            if failure is not None:
                raise failure

    async def _invoke(self, invocation: Invocation, attrs: Attributes) -> tuple[bool, errors.StatusError | None]:
        """(whether the object changed, the error that fails the request)."""
        hook = invocation.hook
        try:
            return await self._mutate(invocation, attrs), None
        except CallingError as err:
            if hook.ignores_failures:
                log.warning("Failed calling webhook, failing open %s: %s", hook.name, err)
                return False, None
            log.warning("Failed calling webhook, failing closed %s: %s", hook.name, err)
            return False, fail_closed(err)
        except RejectionError as err:
            return False, err.status
        except errors.StatusError as err:
            return False, err

    async def _mutate(self, invocation: Invocation, attrs: Attributes) -> bool:
        """callAttrMutatingHook: calls the webhook and applies its patch to attrs.object."""
        hook = invocation.hook
        versioned = await self.versioned(invocation, attrs)
        response = await self.call(invocation, attrs, versioned)
        if not response.patch:
            return False
        try:
            operations = orjson.loads(response.patch)
            if not isinstance(operations, list):
                raise ValueError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        except ValueError as err:
            raise CallingError(hook.name, f"received undecodable patch in webhook response: {err}",
                               errors.service_unavailable("error decoding patch in webhook response")) from None
        if not operations:
            return False
        if versioned.object is None:
            raise errors.internal_error(f"admission webhook {go_quote(hook.name)} attempted to modify the object, "
                                        "which is not supported for this operation")
        if response.patch_type != "JSONPatch":
            raise CallingError(hook.name, f"unsupported patch type {go_quote(response.patch_type)}",
                               to_status_error(hook.name, response.result))
        try:
            patched = json_patch(versioned.object, operations)
        except errors.StatusError as err:
            raise errors.internal_error(err.message) from None
        if not isinstance(patched, dict):
            raise errors.internal_error("json: cannot unmarshal into Go value of type object")
        changed = patched != versioned.object
        self.mapper.default(patched, invocation.resource, invocation.subresource)
        attrs.object = await self.mapper.convert(patched, invocation.resource, self.request(attrs).resource,
                                           invocation.subresource)
        return changed
