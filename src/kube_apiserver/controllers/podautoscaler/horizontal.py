"""The horizontalpodautoscaling controller (pkg/controller/podautoscaler/horizontal.go), for
autoscaling/v2 HorizontalPodAutoscalers: every --horizontal-pod-autoscaler-sync-period it reads the
target's scale subresource through the loopback client, brings a replica count outside
[minReplicas, maxReplicas] back inside, and otherwise computes the count the metrics ask for (resource
metrics from metrics.k8s.io when an aggregated API serves them) and rescales; the AbleToScale,
ScalingActive and ScalingLimited conditions and the events say what happened, as upstream writes them.
Without a metrics API, ScalingActive is False with reason FailedGetResourceMetric."""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from typing import Any

from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...apimachinery.labels import SelectorParseError, parse_selector
from ...apimachinery.meta import now_rfc3339
from ...apimachinery.quantity import QuantityError, parse
from ...client.discovery import GroupVersionKind, NoMatchError, RESTMapper
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import EventRecorder
from ...client.rest import Client
from ..queue_controller import QueueController
from .behavior import History, limit_rate, record_rescale, rules, stabilize
from .config import HPAControllerConfiguration
from .replicas import MetricsError, Timing, milli_quantity, resource_metrics, resource_replicas

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
GROUP, VERSION, RESOURCE = "autoscaling", "v2", "horizontalpodautoscalers"
ABLE_TO_SCALE, SCALING_ACTIVE, SCALING_LIMITED = "AbleToScale", "ScalingActive", "ScalingLimited"
DEFAULT_METRICS = [
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
    }
]
# the reason a failing metric of each source type gives (computeReplicasForMetric)
FAILED_REASONS = {
    "Object": "FailedGetObjectMetric",
    "Pods": "FailedGetPodsMetric",
    "Resource": "FailedGetResourceMetric",
    "ContainerResource": "FailedGetContainerResourceMetric",
    "External": "FailedGetExternalMetric",
}


class ReconcileError(Exception):
    pass


def set_condition(hpa: Object, condition_type: str, status: str, reason: str, message: str) -> None:
    """setCondition: the condition replaced in place; its transition time moves only with its status."""
    conditions = hpa.setdefault("status", {}).setdefault("conditions", [])
    existing = next((c for c in conditions if c.get("type") == condition_type), None)
    if existing is None:
        existing = {"type": condition_type}
        conditions.append(existing)
    if existing.get("status") != status:
        existing["lastTransitionTime"] = now_rfc3339()
    existing.update(status=status, reason=reason, message=message)


def convert_desired_replicas_with_rules(
    current: int, desired: int, minimum: int, maximum: int
) -> tuple[int, str, str]:
    """convertDesiredReplicasWithRules: the count within [min, max] and at most max(2 x current, 4)."""
    scale_up_limit = max(2 * current, 4)
    if maximum > scale_up_limit:
        allowed_max, condition = scale_up_limit, "ScaleUpLimit"
        reason = "the desired replica count is increasing faster than the maximum scale rate"
    else:
        allowed_max, condition = maximum, "TooManyReplicas"
        reason = "the desired replica count is more than the maximum replica count"
    if desired < minimum:
        return minimum, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
    if desired > allowed_max:
        return allowed_max, condition, reason
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


class HorizontalController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        config: HPAControllerConfiguration | None = None,
        workers: int = 5,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__("horizontalpodautoscaling", client, recorder, workers)
        self.config = config or HPAControllerConfiguration()
        self.clock = clock
        self.hpas = informers.for_resource(GROUP, VERSION, RESOURCE)
        self.pods = informers.for_resource("", "v1", "pods")
        self.informers = (self.hpas, self.pods)
        self.mapper = RESTMapper(client.discovery)
        # per HPA: its recent recommendations and rescales (the stabilization windows, the policies' periods)
        self.recommendations: dict[str, History] = {}
        # per HPA: its target's selector, as last read (which HPAs control which pods)
        self.selectors: dict[str, Any] = {}

    def register_handlers(self) -> None:
        self.hpas.add_event_handler(EventHandler(self._enqueue, self._update, self._delete))

    def _enqueue(self, hpa: Object) -> None:
        self.queue.add(object_key(hpa))

    def _update(self, old: Object, new: Object) -> None:
        if old.get("spec") != new.get("spec"):  # a status write of ours waits for the next period
            self.queue.add(object_key(new))

    def _delete(self, hpa: Object) -> None:
        self.recommendations.pop(object_key(hpa), None)
        self.selectors.pop(object_key(hpa), None)

    def _ambiguous(self, hpa: Object, selector_text: str, selector: Any) -> str:
        """hpasControllingPodsUnderSelector: the HPAs of the namespace whose target selects a pod this one
        selects; more than one is an error ("" when there is none)."""
        key, namespace = object_key(hpa), hpa["metadata"].get("namespace", "")
        self.selectors[key] = selector
        labels = [p["metadata"].get("labels") or {} for p in self.pods.indexer.list(namespace)]
        labels = [pod_labels for pod_labels in labels if selector.matches(pod_labels)]
        controlling = sorted(
            other
            for other, other_selector in self.selectors.items()
            if other.partition("/")[0] == namespace and any(other_selector.matches(lbl) for lbl in labels)
        )
        if len(controlling) <= 1:
            return ""
        return f"pods by selector {selector_text} are controlled by multiple HPAs: [{' '.join(controlling)}]"

    async def sync_handler(self, key: str) -> None:
        hpa = self.hpas.indexer.get(key)
        if hpa is None:
            self.recommendations.pop(key, None)
            self.selectors.pop(key, None)
            return
        try:
            await self.reconcile(key, hpa)
        finally:
            self.queue.add_after(key, self.config.sync_period)  # the resync: every HPA, every period

    # ---- reconcile ----

    async def reconcile(self, key: str, shared: Object) -> None:
        """reconcileAutoscaler."""
        hpa = _copy(shared)
        original = _copy(shared.get("status") or {})
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind', '')}/{hpa['metadata'].get('namespace', '')}/{ref.get('name', '')}"
        try:
            scale, scales = await self._get_scale(hpa, ref)
        except ReconcileError as err:
            self.recorder.event(hpa, "Warning", "FailedGetScale", str(err))
            set_condition(
                hpa,
                ABLE_TO_SCALE,
                "False",
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {err}",
            )
            await self._update_status_if_needed(original, hpa)
            log.info("horizontalpodautoscaling: failed to query scale subresource for %s: %s", reference, err)
            return
        set_condition(
            hpa,
            ABLE_TO_SCALE,
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        self._record_initial(key, current)
        minimum = spec.get("minReplicas")
        minimum = 1 if minimum is None else int(minimum)
        maximum = int(spec.get("maxReplicas") or 0)
        statuses: list[Object] = []
        rescale, desired, reason = True, 0, ""
        if current == 0 and minimum != 0:
            rescale = False
            set_condition(
                hpa,
                SCALING_ACTIVE,
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
        elif current > maximum:
            desired, reason = maximum, "Current number of replicas above Spec.MaxReplicas"
        elif current < minimum:
            desired, reason = minimum, "Current number of replicas below Spec.MinReplicas"
        else:
            proposal, metric, statuses, failure = await self._replicas_for_metrics(hpa, scale)
            if proposal == -1:
                self._set_status(
                    hpa, current, (hpa.get("status") or {}).get("desiredReplicas", 0), statuses, False
                )
                await self._update_status_if_needed(original, hpa)
                self.recorder.event(hpa, "Warning", "FailedComputeMetricsReplicas", failure)
                return
            desired = max(desired, proposal)
            if desired > current:
                reason = f"{metric} above target"
            if desired < current:
                reason = "All metrics below target"
            if spec.get("behavior") is None:
                desired = self._normalize(hpa, key, current, desired, minimum, maximum)
            else:
                desired = self._normalize_with_behaviors(hpa, key, current, desired, minimum, maximum)
            rescale = desired != current
        if rescale:
            if not await self._rescale(hpa, scales, scale, desired, reason, current, statuses, original):
                return
            if spec.get("behavior") is not None:
                record_rescale(self.recommendations[key], spec["behavior"], current, desired, self.clock())
        else:
            desired = current
        self._set_status(hpa, current, desired, statuses, rescale)
        await self._update_status_if_needed(original, hpa)

    async def _get_scale(self, hpa: Object, ref: Object) -> tuple[Object, Any]:
        """The target's scale and the client of its scale subresource; ReconcileError saying why not."""
        api_version = ref.get("apiVersion") or ""
        group, _, version = api_version.rpartition("/")
        if api_version.count("/") > 1 or not version:
            raise ReconcileError(f"unexpected GroupVersion string: {api_version}")
        try:
            mapping = await self.mapper.rest_mapping(GroupVersionKind(group, version, ref.get("kind") or ""))
        except NoMatchError:  # upstream maps the group and kind (any version): its NoKindMatchError
            raise ReconcileError(
                f'no matches for kind "{ref.get("kind") or ""}" in group "{group}"'
            ) from None
        gvr = mapping.resource
        scales = self.client.resource(gvr.group, gvr.version, gvr.resource).namespace(
            hpa["metadata"]["namespace"]
        )
        try:
            return await scales.get(ref.get("name") or "", "scale"), scales
        except errors.StatusError as err:
            raise ReconcileError(err.message) from None

    async def _rescale(
        self,
        hpa: Object,
        scales: Any,
        scale: Object,
        desired: int,
        reason: str,
        current: int,
        statuses: list[Object],
        original: Object,
    ) -> bool:
        scale = {**scale, "spec": {**(scale.get("spec") or {}), "replicas": desired}}
        try:
            await scales.update(scale, "scale")
        except errors.StatusError as err:
            self.recorder.event(
                hpa,
                "Warning",
                "FailedRescale",
                f"New size: {desired}; reason: {reason}; error: {err.message}",
            )
            set_condition(
                hpa,
                ABLE_TO_SCALE,
                "False",
                "FailedUpdateScale",
                f"the HPA controller was unable to update the target scale: {err.message}",
            )
            self._set_status(
                hpa, current, (hpa.get("status") or {}).get("desiredReplicas", 0), statuses, False
            )
            await self._update_status_if_needed(original, hpa)
            return False
        set_condition(
            hpa,
            ABLE_TO_SCALE,
            "True",
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        self.recorder.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
        return True

    # ---- metrics ----

    async def _replicas_for_metrics(self, hpa: Object, scale: Object) -> tuple[int, str, list[Object], str]:
        """computeReplicasForMetrics: the largest proposal, its metric, the metric statuses; -1 and the
        error when every metric failed (or some did and the rest would scale down)."""
        selector_text = (scale.get("status") or {}).get("selector") or ""
        if not selector_text:
            self.recorder.event(hpa, "Warning", "SelectorRequired", "selector is required")
            set_condition(
                hpa,
                SCALING_ACTIVE,
                "False",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            )
            return -1, "", [], "selector is required"
        try:
            selector = parse_selector(selector_text)
        except (SelectorParseError, ValueError) as err:
            message = f"couldn't convert selector into a corresponding internal selector object: {err}"
            self.recorder.event(hpa, "Warning", "InvalidSelector", message)
            set_condition(hpa, SCALING_ACTIVE, "False", "InvalidSelector", message)
            return -1, "", [], message
        ambiguity = self._ambiguous(hpa, selector_text, selector)
        if ambiguity:
            self.recorder.event(hpa, "Warning", "AmbiguousSelector", ambiguity)
            set_condition(hpa, SCALING_ACTIVE, "False", "AmbiguousSelector", ambiguity)
            return -1, "", [], ambiguity
        specs = (hpa.get("spec") or {}).get("metrics") or DEFAULT_METRICS
        spec_replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        statuses: list[Object] = []
        replicas, metric, invalid, first_error, first_condition = 0, "", 0, "", ("", "")
        for spec in specs:
            status: Object = {"type": ""}
            statuses.append(status)
            try:
                proposal, name = await self._replicas_for_metric(hpa, spec, spec_replicas, selector, status)
            except MetricsError as err:
                source = spec.get("type", "")
                what = (
                    (spec.get(_source_field(source)) or {}).get("name")
                    or ((spec.get(_source_field(source)) or {}).get("metric") or {}).get("name")
                    or ""
                )
                wrapped = {
                    "Resource": f"failed to get {what} resource metric value: {err}",
                    "ContainerResource": f"failed to get {what} container metric value: {err}",
                    "External": f"failed to get {what} external metric value: {err}",
                }.get(source, f"failed to get {source.lower()} metric value: {err}")
                reason = FAILED_REASONS.get(source, "InvalidMetricSourceType")
                self.recorder.event(hpa, "Warning", reason, str(err))
                if not invalid:
                    first_error = wrapped
                    first_condition = (reason, f"the HPA was unable to compute the replica count: {err}")
                invalid += 1
                continue
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        if invalid >= len(specs) or (invalid and replicas < spec_replicas):
            set_condition(hpa, SCALING_ACTIVE, "False", *first_condition)
            return (
                -1,
                "",
                statuses,
                (f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"),
            )
        set_condition(
            hpa,
            SCALING_ACTIVE,
            "True",
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {metric}",
        )
        return replicas, metric, statuses, ""

    async def _replicas_for_metric(
        self, hpa: Object, spec: Object, current: int, selector: Any, status: Object
    ) -> tuple[int, str]:
        source = spec.get("type", "")
        if source not in ("Resource", "ContainerResource"):
            raise MetricsError(_custom_metric_error(source, spec))
        body = spec.get(_source_field(source)) or {}
        resource, container = body.get("name") or "", body.get("container") or ""
        target = body.get("target") or {}
        namespace = hpa["metadata"]["namespace"]
        average = target.get("averageValue")
        utilization = target.get("averageUtilization")
        if average is None and utilization is None:
            raise MetricsError(
                "invalid resource metric source: neither an average utilization target nor an "
                "average value (usage) target was set"
            )
        what = f"{resource} usage" if average is not None else f"{resource} utilization"
        try:
            metrics = await resource_metrics(self.client, resource, namespace, selector, container)
            pods = [
                p
                for p in self.pods.indexer.list(namespace)
                if selector.matches(p["metadata"].get("labels") or {})
            ]
            proposal = resource_replicas(
                current,
                None if average is not None else int(utilization),
                _milli_of(average) if average is not None else None,
                resource,
                self.config.tolerance,
                pods,
                metrics,
                container,
                Timing(
                    self.config.cpu_initialization_period, self.config.initial_readiness_delay, wall_time()
                ),
            )
        except MetricsError as err:
            raise MetricsError(f"failed to get {what}: {err}") from None
        current_value: Object = {"averageValue": milli_quantity(proposal.raw_average)}
        if average is None:
            current_value["averageUtilization"] = proposal.utilization
        status.clear()
        status.update(
            {
                "type": source,
                _source_field(source): {
                    "name": resource,
                    "current": current_value,
                    **({"container": container} if container else {}),
                },
            }
        )
        name = (
            f"{resource} resource"
            if average is not None
            else f"{resource} resource utilization (percentage of request)"
        )
        if source == "ContainerResource":
            name = f"{resource} container resource" + (
                "" if average is not None else " utilization (percentage of request)"
            )
        return proposal.replicas, name

    # ---- normalization and status ----

    def _record_initial(self, key: str, current: int) -> None:
        if key not in self.recommendations:
            self.recommendations[key] = History(recommendations=[(self.clock(), current)])

    def _stabilize(self, key: str, proposal: int) -> int:
        """stabilizeRecommendation: the highest recommendation of the downscale stabilization window (the
        recommendation replaces one older than the window, or is added)."""
        now = self.clock()
        history = self.recommendations.setdefault(key, History())
        cutoff = now - self.config.downscale_stabilization
        highest = max([proposal, *(r for t, r in history.recommendations if t >= cutoff)])
        old = next((i for i, (t, _) in enumerate(history.recommendations) if t < cutoff), None)
        if old is not None:
            history.recommendations[old] = (now, proposal)
        else:
            history.recommendations.append((now, proposal))
        return highest

    def _normalize_with_behaviors(
        self, hpa: Object, key: str, current: int, desired: int, minimum: int, maximum: int
    ) -> int:
        """normalizeDesiredReplicasWithBehaviors."""
        behavior = hpa["spec"]["behavior"] or {}
        up = rules(behavior, "scaleUp", self.config.downscale_stabilization)
        down = rules(behavior, "scaleDown", self.config.downscale_stabilization)
        history = self.recommendations.setdefault(key, History())
        now = self.clock()
        stabilized, reason, message = stabilize(
            history,
            now,
            current,
            desired,
            float(up["stabilizationWindowSeconds"]),
            float(down["stabilizationWindowSeconds"]),
        )
        if stabilized != desired:
            set_condition(hpa, ABLE_TO_SCALE, "True", reason, message)
        else:
            set_condition(
                hpa, ABLE_TO_SCALE, "True", "ReadyForNewScale", "recommended size matches current size"
            )
        replicas, condition, why = limit_rate(history, now, current, stabilized, minimum, maximum, up, down)
        set_condition(hpa, SCALING_LIMITED, "False" if replicas == stabilized else "True", condition, why)
        return replicas

    def _normalize(
        self, hpa: Object, key: str, current: int, desired: int, minimum: int, maximum: int
    ) -> int:
        """normalizeDesiredReplicas (spec.behavior's policies are not applied: the stabilization window
        is)."""
        stabilized = self._stabilize(key, desired)
        if stabilized != desired:
            set_condition(
                hpa,
                ABLE_TO_SCALE,
                "True",
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent "
                "recommendation",
            )
        else:
            set_condition(
                hpa, ABLE_TO_SCALE, "True", "ReadyForNewScale", "recommended size matches current size"
            )
        replicas, condition, reason = convert_desired_replicas_with_rules(
            current, stabilized, minimum, maximum
        )
        set_condition(hpa, SCALING_LIMITED, "False" if replicas == stabilized else "True", condition, reason)
        return replicas

    def _set_status(
        self, hpa: Object, current: int, desired: int, metrics: list[Object], rescaled: bool
    ) -> None:
        status = hpa.setdefault("status", {})
        status["currentReplicas"] = current
        status["desiredReplicas"] = desired
        if metrics:
            status["currentMetrics"] = metrics
        else:
            status.pop("currentMetrics", None)
        if rescaled:
            status["lastScaleTime"] = now_rfc3339()

    async def _update_status_if_needed(self, original: Object, hpa: Object) -> None:
        if original == (hpa.get("status") or {}):
            return
        api = self.client.resource(GROUP, VERSION, RESOURCE).namespace(hpa["metadata"]["namespace"])
        try:
            await api.update_status(hpa)
        except errors.StatusError as err:
            log.info(
                "horizontalpodautoscaling: failed to update status for %s: %s",
                hpa["metadata"].get("name"),
                err.message,
            )


def _custom_metric_error(source: str, spec: Object) -> str:
    """Why a Pods, Object or External metric has no value: no custom or external metrics API is read
    here (the Pods message is the custom metrics client's when none is registered)."""
    name = ((spec.get(_source_field(source)) or {}).get("metric") or {}).get("name") or ""
    if source in ("Pods", "Object"):
        return (
            f"unable to get metric {name}: unable to fetch metrics from custom metrics API: no custom metrics "
            "API (custom.metrics.k8s.io) registered"
        )
    if source == "External":
        return (
            f"unable to get external metric {name}: the server could not find the requested resource "
            f"(get {name}.external.metrics.k8s.io)"
        )
    return f'unknown metric source type "{source}"'


def _source_field(source: str) -> str:
    return {
        "Resource": "resource",
        "ContainerResource": "containerResource",
        "Pods": "pods",
        "Object": "object",
        "External": "external",
    }.get(source, "resource")


def _milli_of(value: Any) -> int:
    try:
        return parse(value).scaled(-3)
    except QuantityError:
        raise MetricsError(f"invalid average value {value!r}") from None


def _copy(obj: Any) -> Any:
    return copy.deepcopy(obj)
