"""The Webhook authorization mode (--authorization-webhook-*, k8s plugin/pkg/authorizer/webhook): a
SubjectAccessReview to the webhook; allowed answers are cached for the authorized TTL, the others for the
unauthorized TTL. A webhook that fails has no opinion and makes the request fail unless another authorizer
decides (AuthorizationError)."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from typing import Any

import orjson

from .. import cel
from ..webhook.generic import GenericWebhook, WebhookError
from .authorizer import ALLOW, DENY, NO_OPINION, Attributes, AuthorizationError
from .metrics import AuthorizationMetrics

DEFAULT_AUTHORIZED_TTL = 300.0
DEFAULT_UNAUTHORIZED_TTL = 30.0
CACHE_SIZE = 8192
VERSIONS = {"v1": "authorization.k8s.io/v1", "v1beta1": "authorization.k8s.io/v1beta1"}


def review_of(attrs: Attributes, api_version: str) -> dict[str, Any]:
    """The SubjectAccessReview of a request's attributes (its empty fields left out, as Go's omitempty)."""
    user = attrs.user
    spec: dict[str, Any] = {}
    if attrs.is_resource_request:
        resource = {"namespace": attrs.namespace, "verb": attrs.verb, "group": attrs.api_group,
                    "version": attrs.api_version, "resource": attrs.resource, "subresource": attrs.subresource,
                    "name": attrs.name}
        spec["resourceAttributes"] = {key: value for key, value in resource.items() if value}
    else:
        spec["nonResourceAttributes"] = {key: value for key, value in (("path", attrs.path), ("verb", attrs.verb))
                                         if value}
    if user.name:
        spec["user"] = user.name
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra.items()}
    if user.uid:
        spec["uid"] = user.uid
    return {"apiVersion": api_version, "kind": "SubjectAccessReview", "metadata": {"creationTimestamp": None},
            "spec": spec, "status": {"allowed": False}}


class WebhookAuthorizer:
    """`failure_policy`: what a failed call decides (NoOpinion, or Deny: no later authorizer is asked);
    `match_conditions`: CEL over `request` (the SubjectAccessReview's spec), all true for the webhook to be
    asked, else it has no opinion."""

    def __init__(self, webhook: GenericWebhook, version: str = "v1beta1",
                 authorized_ttl: float = DEFAULT_AUTHORIZED_TTL, unauthorized_ttl: float = DEFAULT_UNAUTHORIZED_TTL,
                 *, failure_policy: str = "NoOpinion", match_conditions: tuple[str, ...] = (), name: str = "default",
                 measured: AuthorizationMetrics | None = None):
        self.webhook = webhook
        self.name, self.measured = name, measured
        self.api_version = VERSIONS[version]
        self.authorized_ttl, self.unauthorized_ttl = authorized_ttl, unauthorized_ttl
        self.failure_decision = DENY if failure_policy == "Deny" else NO_OPINION
        self.conditions = [cel.compile(expression, ("request",)) for expression in match_conditions]
        self._cache: OrderedDict[bytes, tuple[str, str, float]] = OrderedDict()

    def _matches(self, spec: dict[str, Any]) -> bool:
        """All conditions true; a false one wins over errors in the others, which fail the call."""
        failures = []
        for program in self.conditions:
            try:
                value = program.evaluate({"request": spec})
            except cel.EvaluationError as err:
                failures.append(str(err))
                continue
            if value is False:
                return False
            if value is not True:
                failures.append(f"expected bool result, got {type(value).__name__}")
        if failures:
            raise AuthorizationError(f"failed to evaluate match conditions: {', '.join(failures)}",
                                     self.failure_decision)
        return True

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        review = review_of(attrs, self.api_version)
        if self.conditions and not self._matches(review["spec"]):
            return NO_OPINION, ""
        key = hashlib.sha256(orjson.dumps(review["spec"], option=orjson.OPT_SORT_KEYS)).digest()
        cached = self._cache.get(key)
        if cached is not None and cached[2] > time.monotonic():
            self._cache.move_to_end(key)
            return cached[0], cached[1]
        start = time.perf_counter()
        try:
            answer = await self.webhook.post(review)
        except WebhookError as err:
            result = "timeout" if "deadline exceeded" in str(err) else "error"
            if self.measured is not None:
                self.measured.webhook_round_trip(self.name, result, time.perf_counter() - start)
                if self.failure_decision == NO_OPINION:
                    self.measured.webhook_fail_open.inc(self.name, result)
            raise AuthorizationError(str(err), self.failure_decision) from None
        if self.measured is not None:
            self.measured.webhook_round_trip(self.name, "success", time.perf_counter() - start)
        status = answer.get("status") if isinstance(answer.get("status"), dict) else {}
        reason = str(status.get("reason") or "")
        decision = ALLOW if status.get("allowed") else DENY if status.get("denied") else NO_OPINION
        ttl = self.authorized_ttl if decision == ALLOW else self.unauthorized_ttl
        if ttl > 0:
            self._cache[key] = (decision, reason, time.monotonic() + ttl)
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return decision, reason
