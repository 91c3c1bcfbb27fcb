"""spec.behavior of an autoscaling/v2 HPA (horizontal.go's normalizeDesiredReplicasWithBehaviors): the
recommendation stabilized within each direction's window, then the change limited by the direction's
policies (Pods or Percent per period, the Max, Min or Disabled selection) given the rescales of each
period, and by minReplicas/maxReplicas."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Object = dict[str, Any]
SCALE_UP_DEFAULTS: Object = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
SCALE_DOWN_DEFAULTS: Object = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


@dataclass
class ScaleEvent:
    change: int
    at: float
    outdated: bool = False


@dataclass
class History:
    """What the controller remembers of one HPA: its recommendations and its rescales, by direction."""

    recommendations: list[tuple[float, int]] = field(default_factory=list)
    ups: list[ScaleEvent] = field(default_factory=list)
    downs: list[ScaleEvent] = field(default_factory=list)


def rules(behavior: Object, direction: str, default_down_window: float) -> Object:
    """The direction's rules with upstream's defaults filled in (the scale-down window: the controller's
    --horizontal-pod-autoscaler-downscale-stabilization)."""
    defaults = SCALE_UP_DEFAULTS if direction == "scaleUp" else SCALE_DOWN_DEFAULTS
    given = behavior.get(direction) or {}
    merged = {**defaults, **{k: v for k, v in given.items() if v is not None}}
    if merged.get("stabilizationWindowSeconds") is None:
        merged["stabilizationWindowSeconds"] = int(default_down_window)
    return merged


def stabilize(
    history: History, now: float, current: int, desired: int, up_window: float, down_window: float
) -> tuple[int, str, str]:
    """stabilizeRecommendationWithBehaviors: between the lowest recommendation of the scale-up window and
    the highest of the scale-down window; the new recommendation is recorded."""
    up, down = desired, desired
    old_index = -1
    for i, (at, recommendation) in enumerate(history.recommendations):
        if at > now - up_window:
            up = min(up, recommendation)
        if at > now - down_window:
            down = max(down, recommendation)
        if at < now - up_window and at < now - down_window:
            old_index = i
    stabilized = min(max(current, up), down)
    if old_index >= 0:
        history.recommendations[old_index] = (now, desired)
    else:
        history.recommendations.append((now, desired))
    if desired >= current:
        return (
            stabilized,
            "ScaleUpStabilized",
            ("recent recommendations were lower than current one, applying the lowest recent recommendation"),
        )
    return (
        stabilized,
        "ScaleDownStabilized",
        ("recent recommendations were higher than current one, applying the highest recent recommendation"),
    )


def _changed_within(events: list[ScaleEvent], period: float, now: float) -> int:
    return sum(e.change for e in events if not e.outdated and e.at > now - period)


def _period_start(current: int, history: History, period: float, now: float) -> int:
    return current - _changed_within(history.ups, period, now) + _changed_within(history.downs, period, now)


def scale_up_limit(current: int, history: History, rules_: Object, now: float) -> int:
    """calculateScaleUpLimitWithScalingRules."""

    def propose(start: int, kind: str, value: int) -> int:
        return start + value if kind == "Pods" else math.ceil(start * (1 + value / 100))

    return _policies_limit(current, history, rules_, now, propose, max)


def scale_down_limit(current: int, history: History, rules_: Object, now: float) -> int:
    """calculateScaleDownLimitWithBehaviors."""

    def propose(start: int, kind: str, value: int) -> int:
        return start - value if kind == "Pods" else int(start * (1 - value / 100))

    return _policies_limit(current, history, rules_, now, propose, min)


def _policies_limit(
    current: int,
    history: History,
    rules_: Object,
    now: float,
    propose: Callable[[int, str, int], int],
    loosest: Callable[[list[int]], int],
) -> int:
    """The limit the rules' policies set, each proposing from the replicas at the start of its period;
    selectPolicy Max takes the `loosest` proposal (the most change allowed), Min the tightest."""
    select = rules_.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    proposals = [
        propose(
            _period_start(current, history, float(policy.get("periodSeconds") or 0), now),
            policy.get("type") or "",
            int(policy.get("value") or 0),
        )
        for policy in rules_.get("policies") or ()
    ]
    if not proposals:
        return current
    tightest = min if loosest is max else max
    return tightest(proposals) if select == "Min" else loosest(proposals)


def limit_rate(
    history: History,
    now: float,
    current: int,
    desired: int,
    minimum: int,
    maximum: int,
    up_rules: Object,
    down_rules: Object,
) -> tuple[int, str, str]:
    """convertDesiredReplicasWithBehaviorRate."""
    if desired > current:
        limit = max(scale_up_limit(current, history, up_rules, now), current)
        if maximum > limit:
            allowed, reason = limit, "ScaleUpLimit"
            message = "the desired replica count is increasing faster than the maximum scale rate"
        else:
            allowed, reason = maximum, "TooManyReplicas"
            message = "the desired replica count is more than the maximum replica count"
        if desired > allowed:
            return allowed, reason, message
    elif desired < current:
        limit = min(scale_down_limit(current, history, down_rules, now), current)
        if minimum < limit:
            allowed, reason = limit, "ScaleDownLimit"
            message = "the desired replica count is decreasing faster than the maximum scale rate"
        else:
            allowed, reason = minimum, "TooFewReplicas"
            message = "the desired replica count is less than the minimum replica count"
        if desired < allowed:
            return allowed, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def record_rescale(history: History, behavior: Object, previous: int, new: int, now: float) -> None:
    """storeScaleEvent: events older than the longest policy period are marked outdated, and reused."""
    longest = max(
        (
            float(p.get("periodSeconds") or 0)
            for d in ("scaleUp", "scaleDown")
            for p in (behavior.get(d) or {}).get("policies") or ()
        ),
        default=0.0,
    )
    events = history.ups if new > previous else history.downs
    for event in events:
        if event.at < now - longest:
            event.outdated = True
    change = abs(new - previous)
    reusable = next((e for e in events if e.outdated), None)
    if reusable is not None:
        reusable.change, reusable.at, reusable.outdated = change, now, False
    else:
        events.append(ScaleEvent(change, now))
