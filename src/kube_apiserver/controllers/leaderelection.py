"""Leader election through a coordination.k8s.io/v1 Lease (client-go tools/leaderelection with its
LeaseLock, as kube-controller-manager runs it): a candidate acquires the lease once its holder's record
has not changed for leaseDurationSeconds (measured on the candidate's own clock, from when it first saw
that record, so clocks of different machines never need to agree), renews it every retry period, and
gives leadership up when it could not renew for the renew deadline. With release_on_cancel a clean stop
empties the holder, so the next candidate takes over at once instead of after the lease duration."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from ..apimachinery import errors
from ..apimachinery.clock import current_clock, current_ids, wall_now
from ..apimachinery.wait import cancel_and_wait
from ..registry.context import Context, UserInfo
from ..registry.rest import UpdatedObjectInfo

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
JITTER_FACTOR = 1.2  # client-go's JitterFactor: acquisition retries wait retry_period * [1, 2.2)
LEASE_API_VERSION = "coordination.k8s.io/v1"
# kube-controller-manager's identity: the user its loopback requests would carry.
CONTROLLER_MANAGER_USER = UserInfo("system:kube-controller-manager")


@dataclass
class LeaderElectionConfiguration:
    """kube-controller-manager's --leader-elect* flags (component-base LeaderElectionConfiguration)."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = "kube-controller-manager"
    resource_namespace: str = "kube-system"

    def validate(self) -> list[str]:
        """The checks NewLeaderElector makes (its error texts), only when leader election is on."""
        if not self.leader_elect:
            return []
        problems = []
        if self.lease_duration <= self.renew_deadline:
            problems.append("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            problems.append("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.lease_duration <= 0:
            problems.append("leaseDuration must be greater than zero")
        if self.renew_deadline <= 0:
            problems.append("renewDeadline must be greater than zero")
        if self.retry_period <= 0:
            problems.append("retryPeriod must be greater than zero")
        return problems


def new_identity(hostname: str | None = None) -> str:
    """kube-controller-manager's: the hostname and a UUID, so two processes on one host differ."""
    hostname = hostname or socket.gethostname()
    return f"{hostname}_{current_ids().uid('identity', '', hostname)}"


def micro_time(moment: datetime) -> str:
    """metav1.MicroTime's RFC 3339 form with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseClient(Protocol):
    """What the elector needs of the Lease API: get (None when absent), create, and an update that
    refuses (409) when the lease changed since its resourceVersion."""

    async def get(self, namespace: str, name: str) -> Object | None: ...

    async def create(self, lease: Object) -> Object: ...

    async def update(self, lease: Object) -> Object: ...


class StoreLeaseClient:
    """LeaseClient over the leases registry Store (the in-process path to the Lease API)."""

    def __init__(self, store: Any, user: UserInfo = CONTROLLER_MANAGER_USER):
        self.store = store
        self.user = user

    def _ctx(self, namespace: str) -> Context:
        return Context(namespace, self.user)

    async def get(self, namespace: str, name: str) -> Object | None:
        try:
            return await self.store.get(self._ctx(namespace), name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def create(self, lease: Object) -> Object:
        meta = lease["metadata"]
        self.store.strategy.default(lease)
        return await self.store.create(self._ctx(meta["namespace"]), lease)

    async def update(self, lease: Object) -> Object:
        meta = lease["metadata"]

        async def replace(_ctx: Context, _old: Object | None) -> Object:
            return lease

        updated, _ = await self.store.update(
            self._ctx(meta["namespace"]), meta["name"], UpdatedObjectInfo(meta["name"], replace)
        )
        return updated


@dataclass(frozen=True)
class LeaderElectionRecord:
    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: Object) -> LeaderElectionRecord:
        spec = lease.get("spec") or {}
        return cls(
            spec.get("holderIdentity") or "",
            spec.get("leaseDurationSeconds") or 0,
            spec.get("acquireTime"),
            spec.get("renewTime"),
            spec.get("leaseTransitions") or 0,
        )

    def spec(self) -> Object:
        spec: Object = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


class LeaderElector:
    """Runs `on_started_leading` when it acquires the lease and `on_stopped_leading` when it loses it
    (or is stopped while leading); then it is a candidate again."""

    def __init__(
        self,
        config: LeaderElectionConfiguration,
        client: LeaseClient,
        identity: str,
        on_started_leading: Callable[[], Awaitable[None]],
        on_stopped_leading: Callable[[], Awaitable[None]],
        release_on_cancel: bool = True,
        candidates: str | None = None,
        clock: Callable[[], float] | None = None,
        wall_clock: Callable[[], datetime] = wall_now,
    ):
        self.config = config
        self.client = client
        self.identity = identity
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.release_on_cancel = release_on_cancel
        # Set when the storage admits only known processes (SQLite's lock: this one; --workers: the storage
        # process's workers), whose identities all start with it: a lease another identity holds is a dead
        # process's, taken at once rather than after its duration.
        self.candidates = candidates
        # The server's clock (apimachinery/clock.py): under --deterministic the lease is renewed, and may
        # expire, only as the test advances time.
        self.clock = clock or (lambda: current_clock().monotonic())
        self.wall_clock = wall_clock
        self.observed_record: LeaderElectionRecord | None = None
        self.observed_lease: Object | None = None
        self.observed_time = 0.0
        self.leading = False
        self._task: asyncio.Task[None] | None = None
        self._leading_work: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return f"{self.config.resource_namespace}/{self.config.resource_name}"

    def is_leader(self) -> bool:
        return self.observed_record is not None and self.observed_record.holder_identity == self.identity

    def get_leader(self) -> str:
        return self.observed_record.holder_identity if self.observed_record else ""

    async def start(self) -> None:
        """Campaigns in the background. When the first attempt acquires the lease, the leader's work has
        started by the time this returns (a lone server's controllers run as soon as it is ready, and a
        failure to start them is the caller's, as without leader election)."""
        if self._task is not None:
            return
        acquired = await self.try_acquire_or_renew()
        if acquired:
            self.leading = True
            log.info("successfully acquired lease %s", self.name)
            await self.on_started_leading()
        self._task = asyncio.get_running_loop().create_task(self._run(acquired))

    async def stop(self) -> None:
        """Stops campaigning; a leader stops its work first, then (release_on_cancel) frees the lease."""
        await cancel_and_wait(self._task)
        self._task = None
        if self.leading:
            await self._stop_leading()
            if self.release_on_cancel:
                await self.release()

    async def _run(self, leading: bool) -> None:
        while True:
            if not leading:
                await self._acquire()
                self.leading = True
                log.info("successfully acquired lease %s", self.name)
                self._leading_work = asyncio.get_running_loop().create_task(self._lead())
            await self._renew()
            log.info("failed to renew lease %s: timed out waiting for the condition", self.name)
            await self._stop_leading()
            leading = False

    async def _lead(self) -> None:
        try:
            await self.on_started_leading()
        except Exception:  # noqa: BLE001 - the leader keeps its lease; what failed says so in the log
            log.exception("starting the work of the leader of %s failed", self.name)

    async def _stop_leading(self) -> None:
        self.leading = False
        work, self._leading_work = self._leading_work, None
        if work is not None and not work.done():
            work.cancel()
        if work is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work
        log.info("leaderelection lost for %s", self.name)
        await self.on_stopped_leading()

    async def _acquire(self) -> None:
        log.info("attempting to acquire leader lease %s...", self.name)
        while not await self.try_acquire_or_renew():
            await current_clock().sleep(self.config.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def _renew(self) -> None:
        """Returns once a renewal has failed for longer than the renew deadline."""
        while True:
            await current_clock().sleep(self.config.retry_period)
            deadline = self.clock() + self.config.renew_deadline
            while not await self.try_acquire_or_renew():
                if self.clock() >= deadline:
                    return
                await current_clock().sleep(self.config.retry_period)

    def _lease_valid(self) -> bool:
        duration = self.observed_record.lease_duration_seconds if self.observed_record else 0
        return self.observed_time + duration > self.clock()

    def _observe(self, lease: Object) -> None:
        record = LeaderElectionRecord.from_lease(lease)
        if record != self.observed_record:
            self.observed_record = record
            self.observed_time = self.clock()
        self.observed_lease = lease

    async def try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's tryAcquireOrRenew); any API error is a failed attempt."""
        try:
            return await self._try_acquire_or_renew()
        except errors.StatusError as err:
            log.debug("error acquiring or renewing lease %s: %s", self.name, err.message)
            return False
        except ConnectionError as err:  # the store is out of reach: renewed again, until the renew deadline
            log.debug("error acquiring or renewing lease %s: %s", self.name, err)
            return False

    def _dead(self, holder: str) -> bool:
        return self.candidates is not None and not holder.startswith(self.candidates)

    async def _try_acquire_or_renew(self) -> bool:
        now = micro_time(self.wall_clock())
        record = LeaderElectionRecord(self.identity, int(self.config.lease_duration), now, now)
        lease = await self.client.get(self.config.resource_namespace, self.config.resource_name)
        if lease is None:
            created = await self.client.create(self._lease_object(record, None))
            self.observed_record, self.observed_time = None, 0.0
            self._observe(created)
            return True
        self._observe(lease)
        old = self.observed_record
        assert old is not None
        if old.holder_identity and self._lease_valid() and not self.is_leader() and not self._dead(old.holder_identity):
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False
        if self.is_leader():
            record = LeaderElectionRecord(
                self.identity,
                record.lease_duration_seconds,
                old.acquire_time or now,
                now,
                old.leader_transitions,
            )
        else:
            record = LeaderElectionRecord(
                self.identity, record.lease_duration_seconds, now, now, old.leader_transitions + 1
            )
        updated = await self.client.update(self._lease_object(record, lease))
        self._observe(updated)
        return True

    async def release(self) -> bool:
        """Empties the holder (duration 1s) so another candidate acquires without waiting."""
        if not self.is_leader() or self.observed_lease is None or self.observed_record is None:
            return True
        now = micro_time(self.wall_clock())
        record = LeaderElectionRecord("", 1, now, now, self.observed_record.leader_transitions)
        lease = self.observed_lease
        try:
            # kube-controller-manager's leader-election client times its requests out after the renew deadline:
            # a store out of reach holds a stopping server that long at most, not for its client's retries.
            async with asyncio.timeout(self.config.renew_deadline):
                try:
                    updated = await self.client.update(self._lease_object(record, lease))
                except errors.StatusError as err:
                    if err.code != 409:
                        raise
                    # a renewal cancelled by the stop may have been written without being observed
                    lease = await self.client.get(self.config.resource_namespace, self.config.resource_name)
                    if lease is None or self._holder(lease) != self.identity:
                        raise
                    updated = await self.client.update(self._lease_object(record, lease))
        except errors.StatusError as err:
            log.error("Failed to release lease %s: %s", self.name, err.message)
            return False
        except ConnectionError as err:  # the store is out of reach (its storage process gone, no etcd member up)
            log.error("Failed to release lease %s: %s", self.name, err)
            return False
        except TimeoutError:
            log.error("Failed to release lease %s: no answer within %ss", self.name, f"{self.config.renew_deadline:g}")
            return False
        self._observe(updated)
        return True

    @staticmethod
    def _holder(lease: Object) -> str:
        return (lease.get("spec") or {}).get("holderIdentity") or ""

    def _lease_object(self, record: LeaderElectionRecord, current: Object | None) -> Object:
        meta: Object = {"name": self.config.resource_name, "namespace": self.config.resource_namespace}
        if current is not None:
            meta = dict(current["metadata"])
        return {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": meta,
            "spec": {**((current or {}).get("spec") or {}), **record.spec()},
        }
