"""The configuration controller and request admission of API Priority and Fairness
(k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go, apf_filter.go): the FlowSchemas and
PriorityLevelConfigurations as the informers last saw them (the mandatory exempt and catch-all ones
imagined while they are missing), each limited level's share of the server's concurrency limit
(ceil(serverCL x nominalConcurrencyShares / sum of shares)), and its QueueSet."""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .dropped_requests import DroppedRequestsTracker
from .queueset import EXEMPT_QUEUES, REJECT_QUEUES, WAITING, QueueSet, QueuingConfig, Seat
from .request import ObjectCount, level_max_seats
from .rule import CompiledRules, RequestDigest, flow_distinguisher, precedence_order
from .shufflesharding import Dealer, hash_flow_id

log = logging.getLogger("kube_apiserver.flowcontrol")
Object = dict[str, Any]
EXEMPT, CATCH_ALL = "exempt", "catch-all"
MAX_WAIT_SECONDS = 60.0
CLASSIFICATION_CACHE_SIZE = 4096  # a request never waits in its queue longer than a minute


class ConfigSource(Protocol):
    """Where the objects come from (the loopback informers): `version` moves whenever they change."""

    def version(self) -> Any: ...

    def objects(self) -> tuple[list[Object], list[Object]]: ...  # flow schemas, priority levels


@dataclass
class PriorityLevel:
    config: Object
    queues: QueueSet
    nominal_limit: int = 0
    max_seats: int = 0  # the most one request may take (queuing levels; 0: the estimator's own limit)

    @property
    def name(self) -> str:
        return self.config["metadata"]["name"]

    @property
    def exempt(self) -> bool:
        return self.queues.config.desired_queues == EXEMPT_QUEUES


@dataclass
class Admission:
    """A request's classification, and its seat unless it was rejected (then `rejected` says why)."""

    flow_schema: Object
    level: PriorityLevel
    seat: Seat | None = None
    rejected: str = ""
    retry_after: int = 1  # seconds, for a rejected request

    @property
    def flow_schema_uid(self) -> str:
        return self.flow_schema["metadata"].get("uid", "")

    @property
    def priority_level_uid(self) -> str:
        return self.level.config["metadata"].get("uid", "")


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _limited(level: Object) -> Object:
    limited = _spec(level).get("limited")
    return limited if isinstance(limited, dict) else {}


def _shares(level: Object) -> int:
    section = _spec(level).get("exempt") if _spec(level).get("type") == "Exempt" else _limited(level)
    shares = section.get("nominalConcurrencyShares") if isinstance(section, dict) else None
    if isinstance(shares, int):
        return shares
    return 0 if _spec(level).get("type") == "Exempt" else 30  # the API's defaults


def queuing_config(level: Object) -> QueuingConfig:
    if _spec(level).get("type") == "Exempt":
        return QueuingConfig(EXEMPT_QUEUES)
    response = _limited(level).get("limitResponse") or {}
    queuing = response.get("queuing") if response.get("type") == "Queue" else None
    if not isinstance(queuing, dict):
        return QueuingConfig(REJECT_QUEUES)
    return QueuingConfig(
        int(queuing.get("queues", 64)),
        int(queuing.get("queueLengthLimit", 50)),
        int(queuing.get("handSize", 8)),
    )


class Controller:
    def __init__(
        self,
        server_concurrency_limit: int,
        request_wait_limit: float,
        mandatory_levels: Iterable[Object],
        mandatory_schemas: Iterable[Object],
        source: ConfigSource | None = None,
        clock: Callable[[], float] | None = None,
    ):
        self.server_concurrency_limit = server_concurrency_limit
        self.request_wait_limit = (
            min(request_wait_limit, MAX_WAIT_SECONDS) if request_wait_limit > 0 else MAX_WAIT_SECONDS
        )
        self.mandatory_levels = {level["metadata"]["name"]: level for level in mandatory_levels}
        self.mandatory_schemas = {schema["metadata"]["name"]: schema for schema in mandatory_schemas}
        self.source = source
        self.object_count: ObjectCount | None = None  # the stored objects per resource, for list seats
        self.clock = clock
        self.levels: dict[str, PriorityLevel] = {}
        self.flow_schemas: list[tuple[Object, CompiledRules]] = []  # in precedence order
        self._source_version: Any = object()
        self.dropped = DroppedRequestsTracker()  # the Retry-After of each level's rejections
        self._classifications: dict[RequestDigest, tuple[Object, PriorityLevel, int]] = {}
        # apiserver_flowcontrol_* series, by (priority level, flow schema[, reason])
        self.dispatched: dict[tuple[str, str], int] = defaultdict(int)
        self.rejected: dict[tuple[str, str, str], int] = defaultdict(int)
        self.in_queue: dict[tuple[str, str], int] = defaultdict(int)
        self.executing: dict[tuple[str, str], int] = defaultdict(int)
        self.configure([], [])

    # ---- configuration ----

    def maybe_reload(self) -> None:
        if self.source is None:
            return
        version = self.source.version()
        if version != self._source_version:
            self._source_version = version
            self.configure(*self.source.objects())

    def configure(self, schemas: list[Object], levels: list[Object]) -> None:
        """lockAndDigestConfigObjects: levels kept by name (their queues with them), the mandatory ones
        imagined if missing, schemas referring to a missing level ignored, the rest in precedence order."""
        wanted = {level["metadata"]["name"]: level for level in levels if queuing_config_ok(level)}
        for name, level in self.mandatory_levels.items():
            wanted.setdefault(name, level)
        share_sum = sum(_shares(level) for level in wanted.values()) or 1
        new_levels: dict[str, PriorityLevel] = {}
        for name, config in wanted.items():
            nominal = math.ceil(self.server_concurrency_limit * _shares(config) / share_sum)
            current = self.levels.get(name)
            if current is None:
                queues = QueueSet(
                    nominal, queuing_config(config), **({"clock": self.clock} if self.clock else {})
                )
                current = PriorityLevel(config, queues)
            else:
                current.config = config
                current.queues.reconfigure(nominal, queuing_config(config))
            current.nominal_limit = nominal
            queuing = current.queues.config
            current.max_seats = (
                level_max_seats(nominal, queuing.hand_size) if queuing.desired_queues > 0 else 0
            )
            new_levels[name] = current
        self.levels = new_levels
        self._classifications.clear()
        by_name = {schema["metadata"]["name"]: schema for schema in schemas}
        for name, schema in self.mandatory_schemas.items():
            by_name.setdefault(name, schema)
        usable = [s for s in by_name.values() if _level_name(s) in new_levels]
        self.flow_schemas = [(s, CompiledRules(_spec(s))) for s in sorted(usable, key=precedence_order)]

    # ---- requests ----

    def classify(self, digest: RequestDigest) -> tuple[Object, PriorityLevel]:
        schema, level, _ = self._classified(digest)
        return schema, level

    def _classified(self, digest: RequestDigest) -> tuple[Object, PriorityLevel, int]:
        """The schema, level and flow hash of a digest; remembered until the configuration changes, since
        the same users ask the same things over and over."""
        self.maybe_reload()
        known = self._classifications.get(digest)
        if known is not None:
            return known
        chosen = next((s for s, rules in self.flow_schemas if rules.matches(digest)), None)
        if chosen is None:  # cannot happen while catch-all matches everyone; upstream falls back to it too
            chosen = next(s for s, _ in self.flow_schemas if s["metadata"]["name"] == CATCH_ALL)
        level = self.levels[_level_name(chosen)]
        hash_value = 0
        if level.queues.config.desired_queues > 1:
            hash_value = hash_flow_id(chosen["metadata"]["name"], flow_distinguisher(digest, _spec(chosen)))
        if len(self._classifications) >= CLASSIFICATION_CACHE_SIZE:
            self._classifications.clear()
        known = self._classifications[digest] = (chosen, level, hash_value)
        return known

    async def admit(self, digest: RequestDigest, estimate: Callable[[int], int] | None = None) -> Admission:
        """startRequest + wait: classified, then queued in its level until it may execute or is rejected.
        `estimate`: the seats the request takes, given its level's max seats (one when not given)."""
        schema, level, hash_value = self._classified(digest)
        seats = estimate(level.max_seats) if estimate is not None else 1
        admission = Admission(schema, level)
        key = (level.name, schema["metadata"]["name"])
        result = level.queues.start(hash_value, seats)
        if isinstance(result, Seat) and result.state == WAITING:
            self.in_queue[key] += 1
            try:
                result = await level.queues.wait(result, self.request_wait_limit)
            finally:
                self.in_queue[key] -= 1
        if isinstance(result, str):
            admission.rejected = result
            self.rejected[(*key, result)] += 1
            self.dropped.record_dropped_request(level.name)
            admission.retry_after = self.dropped.retry_after(level.name)
            return admission
        admission.seat = result
        self.dispatched[key] += 1
        self.executing[key] += 1
        return admission

    def finish(self, admission: Admission) -> None:
        if admission.seat is None:
            return
        seat, admission.seat = admission.seat, None
        admission.level.queues.release(seat)
        self.executing[(admission.level.name, admission.flow_schema["metadata"]["name"])] -= 1

    # ---- observing ----

    def metric_lines(self) -> list[str]:
        out: list[str] = []
        _series(
            out,
            "apiserver_flowcontrol_dispatched_requests_total",
            "counter",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
            {_pl_fs(k): v for k, v in self.dispatched.items()},
        )
        _series(
            out,
            "apiserver_flowcontrol_rejected_requests_total",
            "counter",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
            {_pl_fs(k[:2]) + f',reason="{k[2]}"': v for k, v in self.rejected.items()},
        )
        _series(
            out,
            "apiserver_flowcontrol_current_inqueue_requests",
            "gauge",
            "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            {_pl_fs(k): v for k, v in self.in_queue.items()},
        )
        _series(
            out,
            "apiserver_flowcontrol_current_executing_requests",
            "gauge",
            "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in "
            "the API Priority and Fairness subsystem",
            {_pl_fs(k): v for k, v in self.executing.items()},
        )
        _series(
            out,
            "apiserver_flowcontrol_nominal_limit_seats",
            "gauge",
            "[BETA] Nominal number of execution seats configured for each priority level",
            {f'priority_level="{name}"': level.nominal_limit for name, level in self.levels.items()},
        )
        _series(
            out,
            "apiserver_flowcontrol_current_executing_seats",
            "gauge",
            "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for "
            "a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
            {f'priority_level="{name}"': level.queues.seats_in_use for name, level in self.levels.items()},
        )
        return out

    def dump_priority_levels(self) -> str:
        header = (
            "PriorityLevelName",
            "ActiveQueues",
            "IsIdle",
            "IsQuiescing",
            "WaitingRequests",
            "ExecutingRequests",
            "DispatchedRequests",
            "RejectedRequests",
            "TimedoutRequests",
            "CancelledRequests",
        )
        rows = []
        for name in sorted(self.levels):
            qs = self.levels[name].queues
            active = sum(1 for queue in qs.queues if queue.waiting)
            rows.append(
                (
                    name,
                    active,
                    _go_bool(qs.is_idle()),
                    "false",
                    qs.waiting,
                    qs.executing,
                    qs.dispatched,
                    qs.rejected,
                    qs.timed_out,
                    qs.cancelled,
                )
            )
        return _tabulate(header, rows)

    def dump_queues(self) -> str:
        header = (
            "PriorityLevelName",
            "Index",
            "PendingRequests",
            "ExecutingRequests",
            "SeatsInUse",
            "NextDispatchR",
            "InitialSeatsSum",
            "MaxSeatsSum",
            "TotalWorkSum",
        )
        rows = []
        for name, level in self.levels.items():
            for queue in level.queues.queues:
                seats = sum(seat.seats for seat in queue.waiting)
                rows.append(
                    (
                        name,
                        queue.index,
                        len(queue.waiting),
                        queue.executing,
                        queue.seats_in_use,
                        f"{queue.next_dispatch_r:.8f}ss",
                        seats,
                        seats,
                        f"{queue.work_waiting:.8f}ss",
                    )
                )
        return _tabulate(header, rows)


def queuing_config_ok(level: Object) -> bool:
    """queueSetCompleterForPL's checks: a broken level is ignored, as upstream logs and skips it."""
    try:
        config = queuing_config(level)
        if config.desired_queues > 0:
            Dealer(config.desired_queues, config.hand_size)
    except (ValueError, TypeError, AttributeError):
        log.warning(
            "ignoring PriorityLevelConfiguration %s: its spec is broken", level["metadata"].get("name")
        )
        return False
    return (_spec(level).get("type") == "Exempt") == (level["metadata"].get("name") == EXEMPT)


def _level_name(schema: Object) -> str:
    ref = _spec(schema).get("priorityLevelConfiguration")
    return ref.get("name", "") if isinstance(ref, dict) else ""


def _pl_fs(key: tuple[str, ...]) -> str:
    return f'flow_schema="{key[1]}",priority_level="{key[0]}"'


def _series(out: list[str], name: str, kind: str, help_text: str, values: dict[str, int]) -> None:
    out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    out += [f"{name}{{{labels}}} {value}" for labels, value in sorted(values.items())]


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _tabulate(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    """tabwriter (minwidth 8, padding 1) over the comma-separated cells upstream prints."""
    table = [[f"{cell}," for cell in header[:-1]] + [header[-1]]]
    table += [[f"{cell}," for cell in row[:-1]] + [str(row[-1])] for row in rows]
    widths = [max(max(len(line[i]) for line in table) + 1, 8) for i in range(len(header))]
    lines = [
        "".join(
            cell.ljust(width) if i < len(header) - 1 else cell
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        )
        for line in table
    ]
    return "\n".join(lines) + "\n"


class InformerSource:
    """A ConfigSource over the two loopback informers (anything with `version` and `indexer.items`)."""

    def __init__(self, flow_schemas: Any, priority_levels: Any):
        self.flow_schema_informer, self.priority_level_informer = flow_schemas, priority_levels

    def version(self) -> Any:
        return (self.flow_schema_informer.version, self.priority_level_informer.version)

    def objects(self) -> tuple[list[Object], list[Object]]:
        return (
            list(self.flow_schema_informer.indexer.items.values()),
            list(self.priority_level_informer.indexer.items.values()),
        )
