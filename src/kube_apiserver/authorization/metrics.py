"""The authorizers' metrics (k8s.io/apiserver/pkg/authorization/metrics and the webhook's): terminal decisions
per authorizer of the chain, and the webhooks' round trips."""

from __future__ import annotations

from .. import metrics
from ..registry.context import UserInfo
from .authorizer import ALLOW, DENY, Attributes, Authorizer, Rules

DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)  # prometheus.DefBuckets


class AuthorizationMetrics:
    def __init__(self) -> None:
        self.decisions = metrics.Counter(
            "apiserver_authorization_decisions_total",
            "Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.",
            ("type", "name", "decision"))
        self.webhook_evaluations = metrics.Counter(
            "apiserver_authorization_webhook_evaluations_total", "Round-trips to authorization webhooks.",
            ("name", "result"))
        self.webhook_duration = metrics.Histogram(
            "apiserver_authorization_webhook_duration_seconds", "Request latency in seconds.", ("name", "result"),
            DEFAULT_BUCKETS)
        self.webhook_fail_open = metrics.Counter(
            "apiserver_authorization_webhook_evaluations_fail_open_total",
            "NoOpinion results due to webhook timeout or error.", ("name", "result"))
        self.lines = metrics.collector(self.decisions, self.webhook_evaluations, self.webhook_duration,
                                       self.webhook_fail_open)

    def webhook_round_trip(self, name: str, result: str, seconds: float) -> None:
        self.webhook_evaluations.inc(name, result)
        self.webhook_duration.observe(name, result, value=seconds)


class Instrumented:
    """One authorizer of the chain, its allows and denies counted under its type and name."""

    def __init__(self, authorizer: Authorizer, kind: str, name: str, measured: AuthorizationMetrics):
        self.authorizer, self.kind, self.name, self.measured = authorizer, kind, name, measured

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        decision, reason = await self.authorizer.authorize(attrs)
        if decision in (ALLOW, DENY):
            self.measured.decisions.inc(self.kind, self.name, "allowed" if decision == ALLOW else "denied")
        return decision, reason

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        rules_for = getattr(self.authorizer, "rules_for", None)
        return await rules_for(user, namespace) if rules_for is not None else Rules()
