"""Prometheus metrics under kube-apiserver's names, and the filter that records every request."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from .. import metrics
from ..endpoints.http import Handler, Request, Response, text
from .filters.observe import serve_observed
from .filters.timeout import is_long_running

DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
                    45, 60)
CANONICAL_VERBS = {"list": "LIST", "watch": "WATCH", "get": "GET", "create": "POST", "update": "PUT",
                   "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}
# Gauges of state each worker of --workers sees alike: a merged exposition takes them once, not summed.
SHARED_STATE_GAUGES = frozenset({
    "apiserver_storage_objects", "apiserver_resource_objects", "apiserver_encryption_config_controller_last_config_info",
    "apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds",
})
LABELS = ("component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version")
Labels = tuple[str, ...]


class Registry:
    def __init__(self) -> None:
        self.requests: dict[Labels, int] = defaultdict(int)  # LABELS + code
        self.durations: dict[Labels, list[float]] = {}  # bucket counts + [sum, count]
        self.inflight: dict[str, int] = {"readOnly": 0, "mutating": 0}
        self.longrunning: dict[Labels, int] = defaultdict(int)
        self.collectors: list[Callable[[], list[str]]] = []  # more exposition lines (storage object counts)
        # With --workers: the other workers' expositions, merged into this one's so a scrape sees the server
        self.peers: Callable[[], Awaitable[list[str]]] | None = None

    def observe(self, labels: Labels, code: int, seconds: float) -> None:
        self.requests[(*labels, str(code))] += 1
        hist = self.durations.get(labels)
        if hist is None:
            hist = self.durations[labels] = [0.0] * (len(DURATION_BUCKETS) + 2)
        index = bisect.bisect_left(DURATION_BUCKETS, seconds)
        if index < len(DURATION_BUCKETS):
            hist[index] += 1
        hist[-2] += seconds
        hist[-1] += 1

    def exposition(self) -> str:
        out = ["# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, "
               "dry run value, group, version, resource, scope, component, and HTTP response code.",
               "# TYPE apiserver_request_total counter"]
        for key, value in sorted(self.requests.items()):
            out.append(f"apiserver_request_total{{{_labels((*LABELS, 'code'), key)}}} {value}")
        out += ["# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for "
                "each verb, dry run value, group, version, resource, subresource, scope and component.",
                "# TYPE apiserver_request_duration_seconds histogram"]
        for key, hist in sorted(self.durations.items()):
            labels, cumulative = _labels(LABELS, key), 0.0
            for bound, count in zip(DURATION_BUCKETS, hist, strict=False):
                cumulative += count
                out.append(f'apiserver_request_duration_seconds_bucket{{{labels},le="{bound}"}} {int(cumulative)}')
            out.append(f'apiserver_request_duration_seconds_bucket{{{labels},le="+Inf"}} {int(hist[-1])}')
            out.append(f"apiserver_request_duration_seconds_sum{{{labels}}} {hist[-2]}")
            out.append(f"apiserver_request_duration_seconds_count{{{labels}}} {int(hist[-1])}")
        out += ["# HELP apiserver_current_inflight_requests [STABLE] Maximal number of currently used inflight "
                "request limit of this apiserver per request kind in last second.",
                "# TYPE apiserver_current_inflight_requests gauge"]
        for kind, value in self.inflight.items():
            out.append(f'apiserver_current_inflight_requests{{request_kind="{kind}"}} {value}')
        out += ["# HELP apiserver_longrunning_requests [STABLE] Gauge of all active long-running apiserver "
                "requests broken out by verb, group, version, resource, scope and component.",
                "# TYPE apiserver_longrunning_requests gauge"]
        for key, value in sorted(self.longrunning.items()):
            out.append(f"apiserver_longrunning_requests{{{_labels(LABELS, key)}}} {value}")
        for collect in self.collectors:
            out += collect()
        return "\n".join(out) + "\n"


def _labels(names: tuple[str, ...], values: Labels) -> str:
    return ",".join(f'{n}="{v}"' for n, v in zip(names, values, strict=True))


def _request_labels(req: Request) -> Labels:
    info = req.info
    if info is None or not info.is_resource_request:
        return ("apiserver", "", "", "", "", "", req.method.upper(), "")
    scope = "resource" if info.name else ("namespace" if info.namespace else "cluster")
    verb = CANONICAL_VERBS.get(info.verb, info.verb.upper())
    dry_run = "All" if req.param("dryRun") else ""
    return ("apiserver", dry_run, info.api_group, info.resource, scope, info.subresource, verb, info.api_version)


def with_metrics(handler: Handler, registry: Registry) -> Handler:
    async def measuring(req: Request) -> Response:
        labels = _request_labels(req)
        long_running = is_long_running(req)
        kind = "readOnly" if req.method in ("GET", "HEAD") else "mutating"
        gauge = registry.longrunning if long_running else registry.inflight
        key: Any = labels if long_running else kind
        gauge[key] += 1

        def done(code: int, seconds: float) -> None:
            gauge[key] -= 1
            registry.observe(labels, code, seconds)

        return await serve_observed(handler, req, done)
    return measuring


def metrics_handler(registry: Registry) -> Handler:
    async def serve(req: Request) -> Response:
        exposition = registry.exposition()
        if registry.peers is not None:
            exposition = metrics.merge([exposition, *await registry.peers()], SHARED_STATE_GAUGES)
        resp = text(200, exposition)
        resp.headers[0] = ("content-type", "text/plain; version=0.0.4; charset=utf-8")
        return resp
    return serve
