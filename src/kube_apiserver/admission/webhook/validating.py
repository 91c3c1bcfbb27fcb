"""The ValidatingAdmissionWebhook plugin (k8s.io/apiserver/pkg/admission/plugin/webhook/validating):
every matching webhook is called at once; the request fails with the first refusal."""

from __future__ import annotations

import asyncio
import logging

from ...apimachinery import errors
from ...apimachinery.equivalence import EquivalentResourceRegistry
from ..interfaces import Attributes
from .errors import CallingError, RejectionError, fail_closed
from .generic import Invocation, NamespaceGetter, Webhook
from .hooks import HookSource

log = logging.getLogger("kube_apiserver.admission")
PLUGIN_NAME = "ValidatingAdmissionWebhook"


class ValidatingAdmissionWebhook(Webhook):
    def __init__(self, get_namespace: NamespaceGetter, equivalents: EquivalentResourceRegistry | None = None):
        super().__init__(HookSource("validatingwebhookconfigurations", mutating=False), get_namespace, equivalents)

    async def validate(self, attrs: Attributes) -> None:
        request, hooks = await self.relevant_hooks(attrs)
        invocations: list[Invocation] = []
        for hook in hooks:
            invocation = await self.should_call(hook, request, attrs)
            if invocation is not None:
                invocations.append(invocation)
        if not invocations:
            return
        failures = await asyncio.gather(*(self._call(invocation, attrs) for invocation in invocations))
        refused = [failure for failure in failures if failure is not None]
        for extra in refused[1:]:
            log.warning("admission webhook also refused the request: %s", extra.message)
        if refused:
            raise refused[0]

    async def _call(self, invocation: Invocation, attrs: Attributes) -> errors.StatusError | None:
        """The error this webhook fails the request with, if any."""
        hook = invocation.hook
        try:
            await self.call(invocation, attrs, await self.versioned(invocation, attrs))
        except CallingError as err:
            if hook.ignores_failures:
                log.warning("Failed calling webhook, failing open %s: %s", hook.name, err)
                return None
            log.warning("Failed calling webhook, failing closed %s: %s", hook.name, err)
            return fail_closed(err)
        except RejectionError as err:
            return err.status
        except errors.StatusError as err:
            return err
        except Exception as err:  # noqa: BLE001 - a broken webhook call is reported, as Go recovers panics
            log.exception("calling webhook %s", hook.name)
            return None if hook.ignores_failures else \
                errors.internal_error(f"{PLUGIN_NAME}/{hook.name} has panicked: {err}")
        return None
