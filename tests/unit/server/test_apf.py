"""API Priority and Fairness and the max-in-flight limit, without a server: FlowSchema matching and
precedence, shuffle sharding, queuing and fair dispatch in a priority level, and the two filters around a
handler the test holds (no timing is asserted)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from kube_apiserver.api.flowcontrol import ConfigProducer
from kube_apiserver.api.flowcontrol.bootstrap import MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.endpoints.http import Request, Response, StreamingResponse, text
from kube_apiserver.endpoints.request_info import new_request_info
from kube_apiserver.flowcontrol.controller import Controller
from kube_apiserver.flowcontrol.dropped_requests import DroppedRequestsTracker
from kube_apiserver.flowcontrol.queueset import QUEUE_FULL, TIME_OUT
from kube_apiserver.flowcontrol.request import list_seats
from kube_apiserver.flowcontrol.rule import RequestDigest, matches_flow_schema
from kube_apiserver.flowcontrol.shufflesharding import Dealer, hash_flow_id
from kube_apiserver.registry.context import UserInfo
from kube_apiserver.server.filters.maxinflight import with_max_in_flight_limit
from kube_apiserver.server.filters.priority_and_fairness import with_priority_and_fairness

EVERYTHING = {
    "resourceRules": [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}
    ],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
}


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """An async test, run on its own event loop."""

    @functools.wraps(test)
    def running() -> None:
        asyncio.run(test())

    return running


def level(name: str, shares: int, queues: int = 1, hand_size: int = 1, queue_length: int = 1) -> dict:
    response: dict[str, Any] = {"type": "Reject"}
    if queues:
        response = {
            "type": "Queue",
            "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": queue_length},
        }
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {
            "type": "Limited",
            "limited": {"nominalConcurrencyShares": shares, "lendablePercent": 0, "limitResponse": response},
        },
    }


def schema(
    name: str,
    level_name: str,
    precedence: int,
    subjects: list[dict],
    rules: dict | None = None,
    distinguisher: str = "ByUser",
) -> dict:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {
            "priorityLevelConfiguration": {"name": level_name},
            "matchingPrecedence": precedence,
            "distinguisherMethod": {"type": distinguisher},
            "rules": [{"subjects": subjects, **(rules or EVERYTHING)}],
        },
    }


def user(name: str) -> dict:
    return {"kind": "User", "user": {"name": name}}


def digest(
    user_name: str = "alice",
    groups: tuple[str, ...] = ("system:authenticated",),
    verb: str = "get",
    resource: str = "pods",
    namespace: str = "ns",
    path: str = "",
    subresource: str = "",
) -> RequestDigest:
    return RequestDigest(user_name, groups, not path, verb, path, "", namespace, resource, subresource)


def controller(
    limit: int, levels: list[dict], schemas: list[dict], wait: float = 60.0, clock: Any = None
) -> Controller:
    ctl = Controller(limit, wait, MANDATORY_PRIORITY_LEVELS, MANDATORY_FLOW_SCHEMAS, clock=clock)
    ctl.configure(schemas, levels)
    return ctl


# ---- classification ----


def test_subjects_users_groups_and_service_accounts() -> None:
    spec = schema(
        "s",
        "l",
        1,
        [
            user("bob"),
            {"kind": "Group", "group": {"name": "team"}},
            {"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube", "name": "*"}},
            {"kind": "ServiceAccount", "serviceAccount": {"namespace": "ns", "name": "sa"}},
        ],
    )["spec"]
    assert matches_flow_schema(digest("bob"), spec)
    assert matches_flow_schema(digest("carol", ("team",)), spec)
    assert matches_flow_schema(digest("system:serviceaccount:kube:any"), spec)
    assert not matches_flow_schema(
        digest("system:serviceaccount:kube-system:any"), spec
    )  # not a prefix match
    assert matches_flow_schema(digest("system:serviceaccount:ns:sa"), spec)
    assert not matches_flow_schema(digest("system:serviceaccount:ns:other"), spec)
    assert not matches_flow_schema(digest("carol"), spec)


def test_resource_rules_verbs_resources_namespaces_and_cluster_scope() -> None:
    rules = {
        "resourceRules": [
            {
                "verbs": ["get", "list"],
                "apiGroups": [""],
                "resources": ["pods", "pods/log"],
                "namespaces": ["ns"],
            }
        ]
    }
    spec = schema("s", "l", 1, [user("*")], rules)["spec"]
    assert matches_flow_schema(digest(verb="list"), spec)
    assert matches_flow_schema(digest(subresource="log"), spec)
    assert not matches_flow_schema(digest(subresource="status"), spec)
    assert not matches_flow_schema(digest(verb="create"), spec)
    assert not matches_flow_schema(digest(namespace="other"), spec)
    assert not matches_flow_schema(digest(namespace=""), spec)  # cluster scope needs clusterScope: true
    assert not matches_flow_schema(digest(path="/healthz"), spec)  # no nonResourceRules


def test_non_resource_urls_exact_and_prefix() -> None:
    rules = {
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics/*", "/debug"]}]
    }
    spec = schema("s", "l", 1, [user("*")], rules)["spec"]
    assert matches_flow_schema(digest(path="/healthz"), spec)
    assert matches_flow_schema(digest(path="/metrics/slis"), spec)
    assert matches_flow_schema(digest(path="/debug/pprof"), spec)  # "/debug" also matches below it
    assert not matches_flow_schema(digest(path="/healthzz"), spec)
    assert not matches_flow_schema(digest(path="/version"), spec)


def test_lowest_matching_precedence_wins_then_name_and_masters_are_exempt() -> None:
    ctl = controller(
        10,
        [level("low", 10)],
        [
            schema("b", "low", 500, [user("alice")]),
            schema("a", "low", 500, [user("alice")]),
            schema("z", "low", 100, [user("bob")]),
        ],
    )
    assert ctl.classify(digest("alice"))[0]["metadata"]["name"] == "a"
    assert ctl.classify(digest("bob"))[0]["metadata"]["name"] == "z"
    assert ctl.classify(digest("carol"))[0]["metadata"]["name"] == "catch-all"
    fs, pl = ctl.classify(digest("root", ("system:masters",)))
    assert (fs["metadata"]["name"], pl.name, pl.exempt) == ("exempt", "exempt", True)


def test_schema_of_a_missing_level_is_ignored() -> None:
    ctl = controller(10, [], [schema("a", "nowhere", 1, [user("alice")])])
    assert ctl.classify(digest("alice"))[0]["metadata"]["name"] == "catch-all"


def test_nominal_concurrency_is_the_server_limit_shared_by_shares() -> None:
    ctl = controller(600, [level("a", 10), level("b", 30)], [])
    # shares: a 10, b 30, catch-all 5, exempt 0 -> ceil(600 * shares / 45)
    assert {name: pl.nominal_limit for name, pl in ctl.levels.items()} == {
        "a": 134,
        "b": 400,
        "catch-all": 67,
        "exempt": 0,
    }


# ---- shuffle sharding ----


def test_dealer_is_deterministic_and_deals_distinct_cards() -> None:
    assert Dealer(10, 3).deal(123) == [3, 4, 1]  # remainders 3, 3, 1: later cards skip the earlier ones
    for value in (0, 1, 2**60 - 1, 987654321):
        hand = Dealer(64, 6).deal(value)
        assert hand == Dealer(64, 6).deal(value)
        assert len(set(hand)) == 6 and all(0 <= card < 64 for card in hand)
    with pytest.raises(ValueError):
        Dealer(128, 13)  # more than 60 bits of entropy


def test_flow_hash_is_sha256_of_schema_and_distinguisher() -> None:
    expected = int.from_bytes(hashlib.sha256(b"fs\x00alice").digest()[:8], "little")
    assert hash_flow_id("fs", "alice") == expected != hash_flow_id("fs", "bob")


# ---- queuing ----


@run
async def test_full_queue_rejects_and_a_release_dispatches_the_waiter() -> None:
    ctl = controller(
        1, [level("tiny", 1000, queues=1, queue_length=1)], [schema("flood", "tiny", 100, [user("alice")])]
    )
    assert ctl.levels["tiny"].nominal_limit == 1
    first = await ctl.admit(digest("alice"))
    second = asyncio.ensure_future(ctl.admit(digest("alice")))
    await asyncio.sleep(0)
    third = await ctl.admit(digest("alice"))
    assert first.seat is not None and not second.done()
    assert ctl.in_queue[("tiny", "flood")] == 1 and ctl.executing[("tiny", "flood")] == 1
    assert (third.seat, third.rejected) == (None, QUEUE_FULL)
    root = await ctl.admit(digest("root", ("system:masters",)))
    assert root.seat is not None  # the exempt level is never limited
    ctl.finish(first)
    assert (await second).seat is not None
    assert ctl.in_queue[("tiny", "flood")] == 0
    assert ctl.rejected[("tiny", "flood", QUEUE_FULL)] == 1
    assert ctl.dispatched[("tiny", "flood")] == 2


@run
async def test_a_wait_past_the_limit_is_rejected() -> None:
    ctl = controller(
        1,
        [level("tiny", 1000, queues=1, queue_length=5)],
        [schema("flood", "tiny", 100, [user("alice")])],
        wait=0.01,
    )
    held = await ctl.admit(digest("alice"))
    waited = await ctl.admit(digest("alice"))
    assert held.seat is not None and waited.rejected == TIME_OUT
    assert ctl.levels["tiny"].queues.waiting == 0


@run
async def test_cancelled_waiter_leaves_its_queue() -> None:
    ctl = controller(
        1, [level("tiny", 1000, queues=1, queue_length=5)], [schema("flood", "tiny", 100, [user("alice")])]
    )
    held = await ctl.admit(digest("alice"))
    waiter = asyncio.ensure_future(ctl.admit(digest("alice")))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    queues = ctl.levels["tiny"].queues
    assert (queues.waiting, queues.cancelled) == (0, 1)
    ctl.finish(held)
    assert queues.is_idle() and (queues.active_queues, queues.queued_seats) == (0, 0)


def _users_in_distinct_queues(schema_name: str, queues: int) -> tuple[str, str]:
    dealer, seen = Dealer(queues, 1), {}
    for i in range(100):
        name = f"user-{i}"
        queue = dealer.deal(hash_flow_id(schema_name, name))[0]
        if seen and queue not in seen:
            return next(iter(seen.values())), name
        seen.setdefault(queue, name)
    raise AssertionError("no two users in distinct queues")


@run
async def test_fair_queuing_serves_a_light_flow_before_a_heavy_flows_backlog() -> None:
    """Virtual time runs on a clock the test moves: the heavy flow's request held 10 s, its backlog queued
    at 1 s, the light flow's one request at 2 s; the light one finishes first in virtual time."""
    heavy, light = _users_in_distinct_queues("shared", 2)
    now = [0.0]
    ctl = controller(
        1,
        [level("tiny", 1000, queues=2, hand_size=1, queue_length=10)],
        [schema("shared", "tiny", 100, [user("*")])],
        clock=lambda: now[0],
    )
    held = await ctl.admit(digest(heavy))
    order: list[str] = []

    async def admitted(name: str) -> None:
        admission = await ctl.admit(digest(name))
        order.append(name)
        await asyncio.sleep(0)
        ctl.finish(admission)

    now[0] = 1.0
    tasks = [asyncio.ensure_future(admitted(heavy)) for _ in range(3)]
    await asyncio.sleep(0)
    now[0] = 2.0
    tasks.append(asyncio.ensure_future(admitted(light)))
    await asyncio.sleep(0)
    now[0] = 10.0
    ctl.finish(held)
    await asyncio.gather(*tasks)
    assert order == [light, heavy, heavy, heavy]  # not behind the heavy flow's backlog, queued before it
    queues = ctl.levels["tiny"].queues
    assert (queues.active_queues, queues.queued_seats, queues.seats_in_use) == (0, 0, 0)


# ---- the filters ----


def request(method: str, path: str, user_info: UserInfo, query: str = "") -> Request:
    req = Request(method, path, query.encode(), {}, body=b"")
    req.info = new_request_info(method, path, req.query)
    req.user = user_info
    return req


ALICE = UserInfo("alice", groups=("system:authenticated",))
ROOT = UserInfo("root", groups=("system:masters", "system:authenticated"))


class HeldHandler:
    """Answers once the test releases it, so the requests it holds stay in flight."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = 0

    async def __call__(self, req: Request) -> Response:
        self.entered += 1
        if req.info is not None and req.info.verb == "watch":

            async def chunks() -> Any:
                yield b"{}"

            return StreamingResponse(200, chunks(), "application/json")
        await self.release.wait()
        return text(200, "ok")


@run
async def test_priority_and_fairness_filter_rejects_with_429_and_names_the_uids() -> None:
    ctl = controller(1, [level("tiny", 1000, queues=0)], [schema("flood", "tiny", 100, [user("alice")])])
    held = HeldHandler()
    handler = with_priority_and_fairness(held, ctl)
    first = asyncio.ensure_future(handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE)))
    await asyncio.sleep(0)
    rejected = await handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE))
    headers = dict(rejected.headers)
    assert rejected.status == 429 and rejected.body == b"Too many requests, please try again later.\n"
    assert headers["retry-after"] == "1"
    assert headers["x-kubernetes-pf-flowschema-uid"] == "uid-flood"
    assert headers["x-kubernetes-pf-prioritylevel-uid"] == "uid-tiny"
    root = asyncio.ensure_future(handler(request("GET", "/api/v1/namespaces/ns/pods", ROOT)))
    held.release.set()
    served = await first
    assert served.status == 200 and dict(served.headers)["x-kubernetes-pf-flowschema-uid"] == "uid-flood"
    assert (await root).status == 200
    assert ctl.levels["tiny"].queues.is_idle()


@run
async def test_a_watch_holds_its_seat_only_while_it_starts() -> None:
    ctl = controller(1, [level("tiny", 1000, queues=0)], [schema("flood", "tiny", 100, [user("alice")])])
    handler = with_priority_and_fairness(HeldHandler(), ctl)
    for _ in range(3):
        resp = await handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE, "watch=true"))
        assert resp.status == 200 and isinstance(resp, StreamingResponse)
    assert ctl.levels["tiny"].queues.is_idle()


@run
async def test_max_in_flight_limits_each_kind_and_serves_masters_and_long_running() -> None:
    held = HeldHandler()
    handler = with_max_in_flight_limit(held, 1, 1)
    read = asyncio.ensure_future(handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE)))
    write = asyncio.ensure_future(handler(request("POST", "/api/v1/namespaces/ns/pods", ALICE)))
    await asyncio.sleep(0)
    rejected = await handler(request("GET", "/api/v1/namespaces/ns/pods/a", ALICE))
    assert rejected.status == 429 and rejected.body == b"Too many requests, please try again later.\n"
    assert dict(rejected.headers)["retry-after"] == "1"
    assert (await handler(request("DELETE", "/api/v1/namespaces/ns/pods/a", ALICE))).status == 429
    watch = await handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE, "watch=true"))
    assert watch.status == 200  # long-running: not counted
    masters = asyncio.ensure_future(handler(request("GET", "/api/v1/namespaces/ns/pods", ROOT)))
    await asyncio.sleep(0)
    assert held.entered == 4  # read, write, watch, and system:masters past the limit
    held.release.set()
    assert [r.status for r in await asyncio.gather(read, write, masters)] == [200, 200, 200]
    assert (await handler(request("GET", "/api/v1/namespaces/ns/pods", ALICE))).status == 200


@run
async def test_max_in_flight_zero_means_unlimited() -> None:
    held = HeldHandler()
    assert with_max_in_flight_limit(held, 0, 0) is held


# ---- the bootstrap configuration, re-ensured ----


class CountingEnsurer:
    def __init__(self, failures: int = 0) -> None:
        self.calls = 0
        self.failures = failures

    async def ensure(self) -> None:
        self.calls += 1
        if 1 < self.calls <= 1 + self.failures:
            raise RuntimeError("storage unavailable")


@run
async def test_config_producer_ensures_once_then_again_every_period_until_stopped() -> None:
    ensurer = CountingEnsurer(failures=2)
    producer = ConfigProducer(ensurer, period=0)  # type: ignore[arg-type]
    await producer()
    assert ensurer.calls == 1  # the hook is done after the first ensure
    for _ in range(20):
        await asyncio.sleep(0)
    assert ensurer.calls > 4  # failed attempts did not end the loop
    await producer.stop()
    calls = ensurer.calls
    for _ in range(5):
        await asyncio.sleep(0)
    assert ensurer.calls == calls


def test_retry_after_doubles_while_a_level_keeps_dropping_and_comes_back_down() -> None:
    now = [100.0]
    tracker = DroppedRequestsTracker(lambda: now[0])
    assert tracker.retry_after("tiny") == 1
    for _ in range(3):
        tracker.record_dropped_request("tiny")
    assert tracker.retry_after("tiny") == 1  # judged when the next second's first drop comes
    now[0] = 101.0
    tracker.record_dropped_request("tiny")
    assert tracker.retry_after("tiny") == 2  # 3 drops within the last second
    for _ in range(5):
        tracker.record_dropped_request("tiny")
    now[0] = 103.0
    tracker.record_dropped_request("tiny")
    assert tracker.retry_after("tiny") == 4  # 6 drops within the last 2 seconds
    now[0] = 120.0
    tracker.record_dropped_request("tiny")
    assert tracker.retry_after("tiny") == 3  # none recently: down by one
    assert tracker.retry_after("other") == 1


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--runtime-config=api/all=false"], "--runtime-config=api/all=false"),
        (["--runtime-config=api/ga=false"], "--runtime-config=api/ga=false"),
        (
            ["--runtime-config=flowcontrol.apiserver.k8s.io/v1=false"],
            "--runtime-config=flowcontrol.apiserver.k8s.io/v1=false",
        ),
        (["--runtime-config=api/all=false,flowcontrol.apiserver.k8s.io/v1=true"], None),
        (["--runtime-config=api/beta=false"], None),
        (["--runtime-config=api/all=false", "--enable-priority-and-fairness=false"], None),
    ],
)
def test_flowcontrol_api_must_stay_served_while_priority_and_fairness_is_on(
    args: list[str], error: str | None
) -> None:
    errors = [e for e in ServerRunOptions.parse(args).complete().validate() if "priority-and-fairness" in e]
    assert errors == ([f"{error} conflicts with --enable-priority-and-fairness=true"] if error else [])


# ---- seats of lists ----


def test_list_seats_follow_the_stored_object_count() -> None:
    def count(stored: int | None) -> Any:
        return lambda group, resource: stored

    assert list_seats("get", "", "pods", {}, 10, count(5000)) == 1
    assert list_seats("list", "", "pods", {}, 10, count(None)) == 1  # count not known
    assert list_seats("list", "", "pods", {}, 10, count(250)) == 3  # from the watch cache: all 250
    assert list_seats("list", "", "pods", {}, 10, count(50000)) == 10  # never more than 10
    assert list_seats("list", "", "pods", {}, 2, count(50000)) == 2  # nor than the level allows
    assert (
        list_seats("list", "", "pods", {"limit": ["100"], "continue": ["x"]}, 10, count(5000)) == 2
    )  # 2 x limit
    selective = {"limit": ["100"], "continue": ["x"], "labelSelector": ["a=b"]}
    assert list_seats("list", "", "pods", selective, 10, count(450)) == 6  # stored + limit
    assert list_seats("watch", "", "pods", {}, 10, count(5000)) == 1
    assert list_seats("watch", "", "pods", {"sendInitialEvents": ["true"]}, 10, count(450)) == 5
    assert list_seats("list", "", "pods", {"limit": ["x"]}, 4, count(1)) == 4  # invalid: the most it may cost


@run
async def test_a_big_list_takes_several_seats_of_its_level() -> None:
    ctl = controller(
        20,
        [level("wide", 1000, queues=4, hand_size=1, queue_length=5)],
        [schema("lists", "wide", 100, [user("alice")])],
    )
    wide = ctl.levels["wide"]
    assert (wide.nominal_limit, wide.max_seats) == (20, 3)  # ceil(15% of 20)
    admission = await ctl.admit(
        digest("alice", verb="list"), lambda most: list_seats("list", "", "pods", {}, most, lambda g, r: 1000)
    )
    assert admission.seat is not None and wide.queues.seats_in_use == 3
    ctl.finish(admission)
    assert wide.queues.seats_in_use == 0
