"""The columns `kubectl get hpa` prints (printHorizontalPodAutoscaler in
pkg/printers/internalversion/printers.go), computed from the stored (v2) form at either version."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...registry.rest import TableColumn
from ...registry.table import AGE, NAME, TableConvertor, age, name

Object = dict[str, Any]
MAX_SHOWN = 2
UNKNOWN = "<unknown>"


def _status(statuses: list[Any], i: int, key: str) -> Object | None:
    """The current values of the i-th metric's status, if it has the same source."""
    if i < len(statuses) and isinstance(statuses[i], dict) and isinstance(statuses[i].get(key), dict):
        return statuses[i][key].get("current") or {}
    return None


def _q(value: Any) -> str:
    """Quantity.String() of a pointer: "<nil>" when unset."""
    return "<nil>" if value is None else str(value)


def _value_or_average(target: Object, current: Object | None) -> str:
    """External and Object metrics: an average value (marked "(avg)") or a value."""
    if target.get("averageValue") is not None:
        now = _q(current["averageValue"]) if current is not None and current.get("averageValue") is not None \
            else UNKNOWN
        return f"{now}/{target['averageValue']} (avg)"
    now = _q(current.get("value")) if current is not None else UNKNOWN
    return f"{now}/{_q(target.get('value'))}"


def _resource(source: Object, current: Object | None) -> str:
    target, label = source.get("target") or {}, source.get("name", "")
    if target.get("averageValue") is not None:
        now = _q(current.get("averageValue")) if current is not None else UNKNOWN
        return f"{label}: {now}/{target['averageValue']}"
    utilization = current.get("averageUtilization") if current is not None else None
    now = f"{utilization}%" if utilization is not None else UNKNOWN
    wanted = target.get("averageUtilization")
    return f"{label}: {now}/{f'{wanted}%' if wanted is not None else '<auto>'}"


SOURCE_KEYS = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource",
               "ContainerResource": "containerResource"}


def _one(metric: Object, statuses: list[Any], i: int) -> str:
    key = SOURCE_KEYS.get(metric.get("type") or "")
    if key is None:
        return "<unknown type>"
    source = metric.get(key) if isinstance(metric.get(key), dict) else {}
    current = _status(statuses, i, key)
    if key == "pods":
        now = _q(current.get("averageValue")) if current is not None else UNKNOWN
        return f"{now}/{_q((source.get('target') or {}).get('averageValue'))}"
    if key in ("resource", "containerResource"):
        return _resource(source, current)
    return _value_or_average(source.get("target") or {}, current)


def format_metrics(hpa: Object) -> str:
    """formatHPAMetrics: at most two metrics, then "+ N more...", "<none>" without any."""
    metrics = (hpa.get("spec") or {}).get("metrics") or []
    if not metrics:
        return "<none>"
    statuses = (hpa.get("status") or {}).get("currentMetrics") or []
    shown = [_one(m if isinstance(m, dict) else {}, statuses, i) for i, m in enumerate(metrics)]
    text = ", ".join(shown[:MAX_SHOWN])
    return f"{text} + {len(shown) - MAX_SHOWN} more..." if len(shown) > MAX_SHOWN else text


def _cells(hpa: Object) -> list[Any]:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [name(hpa), f"{ref.get('kind', '')}/{ref.get('name', '')}", format_metrics(hpa),
            "<unset>" if minimum is None else str(minimum), spec.get("maxReplicas") or 0,
            status.get("currentReplicas") or 0, age(hpa)]


COLUMNS = (
    NAME,
    TableColumn("Reference", "string", "", "scaleTargetRef points to the target resource to scale, and is used to "
                "the pods for which metrics should be collected, as well as to actually change the replica count."),
    TableColumn("Targets", "string", "", "metrics contains the specifications for which to use to calculate the "
                "desired replica count (the maximum replica count across all metrics will be used).  The desired "
                "replica count is calculated multiplying the ratio between the target value and the current value "
                "by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, "
                "and vice-versa.  See the individual metric source types for more information about how each type "
                "of metric must respond. If not set, the default metric will be set to 80% average CPU "
                "utilization."),
    TableColumn("MinPods", "string", "", "minReplicas is the lower limit for the number of replicas to which the "
                "autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha "
                "feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  "
                "Scaling is active as long as at least one metric value is available."),
    TableColumn("MaxPods", "string", "", "maxReplicas is the upper limit for the number of replicas to which the "
                "autoscaler can scale up. It cannot be less that minReplicas."),
    TableColumn("Replicas", "string", "", "currentReplicas is current number of replicas of pods managed by this "
                "autoscaler, as last seen by the autoscaler."),
    AGE,
)


def table(to_stored: Callable[[Object], Object] | None = None) -> TableConvertor:
    """The HPA table; `to_stored` converts a served object to the stored form first."""
    if to_stored is None:
        return TableConvertor(COLUMNS, _cells)
    return TableConvertor(COLUMNS, lambda o: _cells(to_stored(o)))
