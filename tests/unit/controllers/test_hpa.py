"""The horizontalpodautoscaling controller against a real server (in-process): a target below
minReplicas or above maxReplicas is rescaled through its scale subresource even without metrics; within
the range, with no metrics API served, ScalingActive is False with FailedGetResourceMetric and upstream's
message, and the events say so; a missing target is FailedGetScale. The replica calculation itself
(tolerance, missing and unready pods) is checked on its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.apimachinery.labels import parse_selector
from kube_apiserver.controllers.podautoscaler.behavior import (
    History,
    limit_rate,
    record_rescale,
    rules,
    stabilize,
)
from kube_apiserver.controllers.podautoscaler.config import HPAControllerConfiguration
from kube_apiserver.controllers.podautoscaler.horizontal import (
    HorizontalController,
    convert_desired_replicas_with_rules,
)
from kube_apiserver.controllers.podautoscaler.replicas import (
    MetricsError,
    PodMetric,
    Timing,
    resource_replicas,
)

NS = "default"
NO_METRICS = (
    "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from "
    "resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
)


@contextlib.asynccontextmanager
async def autoscaler(tmp_path: Path) -> AsyncIterator:
    config = HPAControllerConfiguration(sync_period=0.2)

    def controllers(c: ControllerCluster) -> list:
        return [HorizontalController(c.client, c.informers, c.recorder("horizontal-pod-autoscaler"), config)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


def _deployment(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def _hpa(name: str, target: str, minimum: int, maximum: int) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": minimum,
            "maxReplicas": maximum,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }


def _api(client, group: str, version: str, resource: str):  # noqa: ANN001, ANN202
    return client.resource(group, version, resource).namespace(NS)


def _conditions(hpa: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (hpa.get("status") or {}).get("conditions") or ()}


async def _events(client, name: str) -> dict[str, str]:  # noqa: ANN001
    events = (await _api(client, "", "v1", "events").list())["items"]
    return {e["reason"]: e["message"] for e in events if e["involvedObject"]["name"] == name}


async def event_message(client, name: str, reason: str) -> str:  # noqa: ANN001
    """The message of the HPA's event of that reason, once it was written (the recorder writes late)."""

    async def written() -> str:
        return (await _events(client, name)).get(reason, "")

    return await eventually(written)


def test_replicas_are_brought_within_the_range_without_metrics(tmp_path: Path) -> None:
    async def main() -> None:
        async with autoscaler(tmp_path) as client:
            deployments = _api(client, "apps", "v1", "deployments")
            hpas = _api(client, "autoscaling", "v2", "horizontalpodautoscalers")
            await deployments.create(_deployment("low", 1))
            await deployments.create(_deployment("high", 9))
            await hpas.create(_hpa("low", "low", 2, 5))
            await hpas.create(_hpa("high", "high", 1, 4))

            async def replicas(name: str, wanted: int) -> bool:
                return (await deployments.get(name))["spec"]["replicas"] == wanted

            await eventually(lambda: replicas("low", 2))
            await eventually(lambda: replicas("high", 4))
            assert (
                await event_message(client, "low", "SuccessfulRescale")
                == "New size: 2; reason: Current number of replicas below Spec.MinReplicas"
            )
            assert await event_message(client, "high", "SuccessfulRescale") == (
                "New size: 4; reason: Current number of replicas above Spec.MaxReplicas"
            )

            async def no_metrics() -> dict | None:
                hpa = await hpas.get("low")
                active = _conditions(hpa).get("ScalingActive")
                return hpa if active and active["status"] == "False" else None

            hpa = await eventually(no_metrics)
            conditions = _conditions(hpa)
            assert conditions["AbleToScale"]["status"] == "True"
            assert conditions["AbleToScale"]["reason"] == "SucceededGetScale"
            assert (
                conditions["AbleToScale"]["message"]
                == "the HPA controller was able to get the target's current scale"
            )
            assert conditions["ScalingActive"]["reason"] == "FailedGetResourceMetric"
            assert (
                conditions["ScalingActive"]["message"]
                == f"the HPA was unable to compute the replica count: {NO_METRICS}"
            )
            assert hpa["status"]["currentReplicas"] == 2 and hpa["status"]["desiredReplicas"] == 2
            assert hpa["status"]["lastScaleTime"]
            assert await event_message(client, "low", "FailedGetResourceMetric") == NO_METRICS
            assert await event_message(client, "low", "FailedComputeMetricsReplicas") == (
                f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {NO_METRICS}"
            )

    asyncio.run(main())


def test_a_missing_target_is_failed_get_scale(tmp_path: Path) -> None:
    async def main() -> None:
        async with autoscaler(tmp_path) as client:
            hpas = _api(client, "autoscaling", "v2", "horizontalpodautoscalers")
            await hpas.create(_hpa("lost", "nope", 1, 3))

            async def able() -> dict | None:
                return _conditions(await hpas.get("lost")).get("AbleToScale")

            condition = await eventually(able)
            assert condition["status"] == "False" and condition["reason"] == "FailedGetScale"
            assert condition["message"] == (
                "the HPA controller was unable to get the target's current scale: "
                'deployments.apps "nope" not found'
            )
            assert (
                await event_message(client, "lost", "FailedGetScale") == 'deployments.apps "nope" not found'
            )
            oddity = _hpa("odd", "web", 1, 3)
            oddity["spec"]["scaleTargetRef"]["kind"] = "Nope"
            await hpas.create(oddity)
            assert (
                await event_message(client, "odd", "FailedGetScale")
                == 'no matches for kind "Nope" in group "apps"'
            )

    asyncio.run(main())


STARTED = "2026-01-01T00:00:00Z"  # long before NOW: past the CPU initialization period
NOW = 1_800_000_000.0  # 2027-01-15


def _pod(name: str, cpu_request: str = "100m", ready: bool = True, phase: str = "Running") -> dict:
    ready_condition = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": STARTED}
    return {
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu_request}}}]},
        "status": {"phase": phase, "startTime": STARTED, "conditions": [ready_condition]},
    }


def _calc(
    current: int, utilization: int | None, pods: list[dict], usage: dict[str, int], average: int | None = None
):  # noqa: ANN202
    metrics = {name: PodMetric(value, NOW - 10, 30.0) for name, value in usage.items()}
    return resource_replicas(current, utilization, average, "cpu", 0.1, pods, metrics, timing=Timing(now=NOW))


def test_replica_calculation() -> None:
    pods = [_pod("a"), _pod("b")]
    # 100% of request against a 50% target: twice the pods
    assert _calc(2, 50, pods, {"a": 100, "b": 100}).replicas == 4
    # within the tolerance: unchanged
    assert _calc(2, 50, pods, {"a": 54, "b": 54}).replicas == 2
    # 25% against 50%: half
    proposal = _calc(4, 50, pods, {"a": 25, "b": 25})
    assert (proposal.replicas, proposal.utilization, proposal.raw_average) == (1, 25, 25)
    # a pod without metrics while scaling up counts as idle: 200m of 300m is 66%, / 50% x 3 pods = 4 (not 6)
    three = [*pods, _pod("c")]
    assert _calc(3, 50, three, {"a": 100, "b": 100}).replicas == 4
    # ... and while scaling down as using its whole request: (10+10+100)/300 = 40% / 50% x 3 = 3: no change
    assert _calc(3, 50, three, {"a": 10, "b": 10}).replicas == 3
    # a pod that never became ready, and a pending one, count as idle while scaling up
    unready = [*pods, _pod("c", ready=False), _pod("d", phase="Pending")]
    assert _calc(4, 50, unready, {"a": 100, "b": 100, "c": 100}).replicas == 4
    # a pod without startTime is no CPU sample to trust
    fresh = _pod("a")
    del fresh["status"]["startTime"]
    with pytest.raises(
        MetricsError, match=r"did not receive metrics for targeted pods \(pods might be unready\)"
    ):
        _calc(1, 50, [fresh], {"a": 100})
    # an average value target: 300m average against 100m: three times as many
    assert _calc(2, None, pods, {"a": 300, "b": 300}, average=100).replicas == 6
    with pytest.raises(MetricsError, match="missing request for cpu in container c of Pod a"):
        pod = _pod("a")
        del pod["spec"]["containers"][0]["resources"]
        _calc(2, 50, [pod], {"a": 1})
    with pytest.raises(MetricsError, match="no pods returned by selector while calculating replica count"):
        _calc(2, 50, [], {})
    assert str(parse_selector("app=x")) == "app=x"


def test_limits() -> None:
    assert convert_desired_replicas_with_rules(2, 1, 3, 10) == (
        3,
        "TooFewReplicas",
        "the desired replica count is less than the minimum replica count",
    )
    assert convert_desired_replicas_with_rules(3, 9, 1, 5) == (
        5,
        "TooManyReplicas",
        "the desired replica count is more than the maximum replica count",
    )
    assert convert_desired_replicas_with_rules(2, 9, 1, 20)[:2] == (4, "ScaleUpLimit")
    assert convert_desired_replicas_with_rules(2, 3, 1, 5)[1] == "DesiredWithinRange"


def test_behavior_policies_limit_the_rate() -> None:
    up = rules({}, "scaleUp", 300)
    down = rules({"scaleDown": {"selectPolicy": "Disabled"}}, "scaleDown", 300)
    assert (
        down["stabilizationWindowSeconds"] == 300
    )  # the controller's --horizontal-pod-autoscaler-downscale-stabilization
    history = History()
    # the defaults: 4 pods or 100% per 15 s, whichever is more
    assert limit_rate(history, 0.0, 1, 10, 1, 20, up, down) == (
        5,
        "ScaleUpLimit",
        "the desired replica count is increasing faster than the maximum scale rate",
    )
    record_rescale(history, {"scaleUp": up, "scaleDown": down}, 1, 5, 0.0)
    assert limit_rate(history, 10.0, 5, 20, 1, 20, up, down)[0] == 5  # the period's 4 pods are spent
    assert limit_rate(history, 16.0, 5, 20, 1, 20, up, down)[0] == 10  # a new period: 100% of 5
    assert limit_rate(history, 16.0, 5, 8, 1, 6, up, down)[:2] == (6, "TooManyReplicas")
    assert limit_rate(history, 16.0, 5, 2, 1, 6, up, down)[:2] == (
        5,
        "ScaleDownLimit",
    )  # scaling down disabled
    free_down = rules({}, "scaleDown", 300)
    assert limit_rate(history, 16.0, 5, 0, 1, 6, up, free_down)[:2] == (1, "TooFewReplicas")


def test_behavior_stabilization_windows() -> None:
    history = History()
    assert stabilize(history, 0.0, 4, 8, 0.0, 300.0)[0] == 8
    # a lower recommendation within the scale-down window: the highest recent one stays
    stabilized, reason, _ = stabilize(history, 10.0, 8, 2, 0.0, 300.0)
    assert (stabilized, reason) == (8, "ScaleDownStabilized")
    assert stabilize(history, 400.0, 8, 2, 0.0, 300.0)[0] == 2  # both older than the window


def test_a_pods_metric_without_a_custom_metrics_api(tmp_path: Path) -> None:
    async def main() -> None:
        async with autoscaler(tmp_path) as client:
            await _api(client, "apps", "v1", "deployments").create(_deployment("web", 2))
            hpa = _hpa("web", "web", 1, 5)
            hpa["spec"]["metrics"] = [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                }
            ]
            hpas = _api(client, "autoscaling", "v2", "horizontalpodautoscalers")
            await hpas.create(hpa)

            async def inactive() -> dict | None:
                active = _conditions(await hpas.get("web")).get("ScalingActive")
                return active if active and active["status"] == "False" else None

            condition = await eventually(inactive)
            cause = (
                "unable to get metric qps: unable to fetch metrics from custom metrics API: no custom metrics API "
                "(custom.metrics.k8s.io) registered"
            )
            assert condition["reason"] == "FailedGetPodsMetric"
            assert condition["message"] == f"the HPA was unable to compute the replica count: {cause}"
            assert await event_message(client, "web", "FailedComputeMetricsReplicas") == (
                f"invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: {cause}"
            )

    asyncio.run(main())


def test_two_hpas_over_the_same_pods_are_ambiguous(tmp_path: Path) -> None:
    async def main() -> None:
        async with autoscaler(tmp_path) as client:
            await _api(client, "apps", "v1", "deployments").create(_deployment("web", 2))
            pod = {
                "metadata": {"name": "web-1", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
            await _api(client, "", "v1", "pods").create(pod)
            hpas = _api(client, "autoscaling", "v2", "horizontalpodautoscalers")
            await hpas.create(_hpa("first", "web", 1, 5))
            await hpas.create(_hpa("second", "web", 1, 5))

            async def ambiguous(name: str) -> dict | None:
                active = _conditions(await hpas.get(name)).get("ScalingActive")
                return active if active and active["reason"] == "AmbiguousSelector" else None

            message = (
                "pods by selector app=web are controlled by multiple HPAs: [default/first default/second]"
            )
            for name in ("first", "second"):
                condition = await eventually(lambda name=name: ambiguous(name))
                assert condition["status"] == "False" and condition["message"] == message
            assert await event_message(client, "first", "AmbiguousSelector") == message
            await hpas.delete("second")

            async def unambiguous() -> bool:
                active = _conditions(await hpas.get("first")).get("ScalingActive")
                return active["reason"] == "FailedGetResourceMetric"

            await eventually(unambiguous)

    asyncio.run(main())
