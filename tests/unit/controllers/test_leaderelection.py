"""Leader election over a Lease (client-go's LeaseLock semantics): acquire when absent or expired on the
candidate's own clock, renew keeping acquireTime, count transitions, release on a clean stop, and give
leadership up when renewals fail past the renew deadline."""

from __future__ import annotations

import asyncio
import copy
import logging
from datetime import UTC, datetime

from kube_apiserver.apimachinery import errors
from kube_apiserver.controllers.leaderelection import (
    LeaderElectionConfiguration,
    LeaderElector,
    new_identity,
)
from kube_apiserver.storage.kv import StorageUnavailableError

NS, NAME = "kube-system", "kube-controller-manager"


class FakeLeases:
    """An in-memory Lease API with resourceVersion conflicts; `failing` makes every call fail."""

    def __init__(self) -> None:
        self.lease: dict | None = None
        self.revision = 0
        self.failing = False

    def _check(self) -> None:
        if self.failing:
            raise errors.internal_error("storage unavailable")

    async def get(self, namespace: str, name: str) -> dict | None:
        self._check()
        return copy.deepcopy(self.lease)

    async def create(self, lease: dict) -> dict:
        self._check()
        assert self.lease is None
        return self._store(lease)

    async def update(self, lease: dict) -> dict:
        self._check()
        if lease["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
            raise errors.conflict("leases", "coordination.k8s.io", NAME, "changed")
        return self._store(lease)

    def _store(self, lease: dict) -> dict:
        self.revision += 1
        self.lease = copy.deepcopy(lease)
        self.lease["metadata"]["resourceVersion"] = str(self.revision)
        return copy.deepcopy(self.lease)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def elector(leases: FakeLeases, identity: str, clock=None, config=None, events=None) -> LeaderElector:
    events = events if events is not None else []

    async def started() -> None:
        events.append(("started", identity))

    async def stopped() -> None:
        events.append(("stopped", identity))

    kwargs = {"clock": clock} if clock is not None else {}
    return LeaderElector(
        config or LeaderElectionConfiguration(),
        leases,
        identity,
        started,
        stopped,
        wall_clock=lambda: datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        **kwargs,
    )


def test_the_first_candidate_creates_the_lease_with_its_record():
    async def main() -> None:
        leases = FakeLeases()
        assert await elector(leases, "a").try_acquire_or_renew()
        assert leases.lease["metadata"] == {"name": NAME, "namespace": NS, "resourceVersion": "1"}
        assert leases.lease["spec"] == {
            "holderIdentity": "a",
            "leaseDurationSeconds": 15,
            "leaseTransitions": 0,
            "acquireTime": "2026-01-02T03:04:05.678901Z",
            "renewTime": "2026-01-02T03:04:05.678901Z",
        }

    asyncio.run(main())


def test_a_held_lease_is_taken_only_after_the_lease_duration_on_the_candidates_clock():
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        assert await elector(leases, "a", clock).try_acquire_or_renew()
        b = elector(leases, "b", clock)
        assert not await b.try_acquire_or_renew()  # observed now: valid for 15s from here
        clock.now += 14
        assert not await b.try_acquire_or_renew()
        assert b.get_leader() == "a" and not b.is_leader()
        clock.now += 2
        assert await b.try_acquire_or_renew()
        assert b.is_leader()
        assert leases.lease["spec"]["holderIdentity"] == "b"
        assert leases.lease["spec"]["leaseTransitions"] == 1

    asyncio.run(main())


def test_a_renewal_seen_by_a_candidate_restarts_its_wait():
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        a, b = elector(leases, "a", clock), elector(leases, "b", clock)
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
        clock.now += 10
        a.wall_clock = lambda: datetime(2026, 1, 2, 3, 4, 15, tzinfo=UTC)
        assert await a.try_acquire_or_renew()  # a renews: a new record
        assert leases.lease["spec"]["acquireTime"] == "2026-01-02T03:04:05.678901Z"
        assert leases.lease["spec"]["renewTime"] == "2026-01-02T03:04:15.000000Z"
        assert leases.lease["spec"]["leaseTransitions"] == 0
        clock.now += 10  # 20s after b first looked, 10s after the renewal it sees now
        assert not await b.try_acquire_or_renew()

    asyncio.run(main())


def test_release_empties_the_holder_so_the_next_candidate_acquires_at_once():
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        a, b = elector(leases, "a", clock), elector(leases, "b", clock)
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
        assert await a.release()
        assert leases.lease["spec"]["holderIdentity"] == ""
        assert leases.lease["spec"]["leaseDurationSeconds"] == 1
        assert await b.try_acquire_or_renew()
        assert leases.lease["spec"]["leaseTransitions"] == 1

    asyncio.run(main())


def test_release_after_a_renewal_written_but_not_observed_still_empties_the_holder():
    """A stop cancels the renew loop while its update is in flight: the lease was written (a newer
    resourceVersion) but the elector never saw the answer, so its release conflicts: it reads the lease
    again, finds itself holding it, and releases that."""

    async def main() -> None:
        leases = FakeLeases()
        a = elector(leases, "a")
        await a.try_acquire_or_renew()
        await leases.update(copy.deepcopy(leases.lease))  # the unobserved renewal
        assert await a.release()
        assert leases.lease["spec"]["holderIdentity"] == ""

    asyncio.run(main())


def test_release_leaves_a_lease_another_candidate_holds_now():
    async def main() -> None:
        leases = FakeLeases()
        a = elector(leases, "a")
        await a.try_acquire_or_renew()
        taken = copy.deepcopy(leases.lease)
        taken["spec"]["holderIdentity"] = "b"
        await leases.update(taken)
        assert not await a.release()
        assert leases.lease["spec"]["holderIdentity"] == "b"

    asyncio.run(main())


def test_a_sole_candidate_takes_a_dead_processs_lease_at_once():
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        await elector(leases, "crashed", clock).try_acquire_or_renew()
        restarted = elector(leases, "restarted", clock)
        restarted.candidates = "restarted"
        assert await restarted.try_acquire_or_renew()
        assert leases.lease["spec"]["holderIdentity"] == "restarted"
        assert leases.lease["spec"]["leaseTransitions"] == 1

    asyncio.run(main())


def test_an_update_on_a_stale_read_is_a_failed_attempt_not_an_error():
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        a = elector(leases, "a", clock)
        await a.try_acquire_or_renew()
        original = leases.get

        async def stale(namespace: str, name: str) -> dict | None:
            lease = await original(namespace, name)
            leases.revision += 1
            leases.lease["metadata"]["resourceVersion"] = str(leases.revision)
            return lease

        leases.get = stale
        assert not await a.try_acquire_or_renew()

    asyncio.run(main())


SHORT = LeaderElectionConfiguration(
    lease_duration=1.0, renew_deadline=0.5, retry_period=0.1
)  # whole seconds: the Lease stores an int


async def until(predicate, timeout: float = 10.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


def test_one_candidate_leads_and_a_clean_stop_hands_over_at_once():
    async def main() -> None:
        leases, events = FakeLeases(), []
        a = elector(leases, "a", config=SHORT, events=events)
        b = elector(leases, "b", config=SHORT, events=events)
        await a.start()
        await until(lambda: ("started", "a") in events)
        await b.start()
        await asyncio.sleep(0.2)
        assert events == [("started", "a")]
        await a.stop()
        await until(lambda: ("started", "b") in events)
        assert events == [("started", "a"), ("stopped", "a"), ("started", "b")]
        await b.stop()
        assert leases.lease["spec"]["holderIdentity"] == ""
        assert leases.lease["spec"]["leaseTransitions"] == 1

    asyncio.run(main())


def test_a_leader_that_cannot_renew_gives_up_and_another_takes_over_after_expiry():
    async def main() -> None:
        leases, events = FakeLeases(), []
        a = elector(leases, "a", config=SHORT, events=events)
        await a.start()
        await until(lambda: a.leading)
        b = elector(leases, "b", config=SHORT, events=events)
        await b.start()
        original_update = leases.update

        async def refuse_a(lease: dict) -> dict:
            if lease["spec"]["holderIdentity"] == "a":
                raise errors.internal_error("timeout")
            return await original_update(lease)

        leases.update = refuse_a  # a's renewals fail (as a partitioned replica's)
        await until(lambda: ("stopped", "a") in events)
        await until(lambda: ("started", "b") in events)
        assert events.index(("stopped", "a")) < events.index(("started", "b"))
        await b.stop()
        await a.stop()

    asyncio.run(main())


def test_the_configuration_is_checked_as_new_leader_elector_does():
    assert LeaderElectionConfiguration().validate() == []
    assert (
        LeaderElectionConfiguration(leader_elect=False, lease_duration=1, renew_deadline=5).validate() == []
    )
    assert LeaderElectionConfiguration(lease_duration=10, renew_deadline=10).validate() == [
        "leaseDuration must be greater than renewDeadline"
    ]
    assert LeaderElectionConfiguration(renew_deadline=2.4, retry_period=2).validate() == [
        "renewDeadline must be greater than retryPeriod*JitterFactor"
    ]


def test_the_identity_is_the_hostname_and_a_uuid():
    host, _, unique = new_identity("node-1").partition("_")
    assert host == "node-1" and len(unique) == 36
    assert new_identity("node-1") != new_identity("node-1")


def test_workers_take_a_lease_from_an_earlier_run_at_once_but_not_from_each_other():
    """--workers: every live candidate's identity starts with this run's prefix, so a holder without it is
    a process of an earlier run, gone; a holder with it is a live worker."""
    async def main() -> None:
        leases, clock = FakeLeases(), FakeClock()
        await elector(leases, "host_old-0", clock).try_acquire_or_renew()
        first, second = elector(leases, "host_new-0", clock), elector(leases, "host_new-1", clock)
        first.candidates = second.candidates = "host_new-"
        assert await first.try_acquire_or_renew()
        assert not await second.try_acquire_or_renew()
        assert leases.lease["spec"]["holderIdentity"] == "host_new-0"

    asyncio.run(main())



def test_a_release_with_the_store_out_of_reach_fails_in_one_line(caplog):
    """A --workers worker whose storage process is gone releases its lease as it stops: one error line,
    as upstream's "Failed to release lock", not a failed shutdown hook with a traceback."""

    async def main() -> None:
        leases = FakeLeases()
        a = elector(leases, "a")
        await a.try_acquire_or_renew()

        async def lost(lease: dict) -> dict:
            raise ConnectionError("the storage process closed the connection")

        leases.update = lost
        with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
            assert not await a.release()
        assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [
            (f"Failed to release lease {NS}/{NAME}: the storage process closed the connection", None)]

    asyncio.run(main())


def test_a_release_the_store_never_answers_ends_after_the_renew_deadline(caplog):
    """etcd out of reach: its client retries for 20 s before it fails, and a stopping server waited that long
    (22 s in all, with the shutdown around it). The release gives up after the renew deadline, as
    kube-controller-manager's leader-election client times its requests out, in one error line."""

    async def main() -> None:
        leases = FakeLeases()
        a = elector(leases, "a", config=LeaderElectionConfiguration(renew_deadline=0.05))
        await a.try_acquire_or_renew()

        async def unanswered(lease: dict) -> dict:
            await asyncio.sleep(3600)
            raise AssertionError("not reached")

        leases.update = unanswered
        with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
            assert not await asyncio.wait_for(a.release(), 30)
        assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [
            (f"Failed to release lease {NS}/{NAME}: no answer within 0.05s", None)]

    asyncio.run(main())


def test_a_renewal_with_the_store_out_of_reach_is_a_failed_attempt():
    """etcd gone: the renewal's error ended the elector's task, whose stop then failed the shutdown hook with a
    traceback. As client-go's tryAcquireOrRenew, any error is a failed attempt, retried until the deadline."""

    async def main() -> None:
        leases = FakeLeases()
        a = elector(leases, "a")
        assert await a.try_acquire_or_renew()

        async def unreachable(namespace: str, name: str) -> dict:
            raise StorageUnavailableError("etcd: failed to connect to all addresses")

        leases.get = unreachable
        assert not await a.try_acquire_or_renew()

    asyncio.run(main())
