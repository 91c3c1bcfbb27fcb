"""The apiserver identity Lease (KEP-1965, pkg/controlplane/apiserver): each replica keeps
`kube-system/apiserver-<hash of its hostname>` renewed (the component-helpers lease controller), labelled
`apiserver.kubernetes.io/identity=kube-apiserver`; a garbage collector deletes identity leases whose
renewTime + leaseDurationSeconds has passed (pkg/controlplane/apiserver/apiserverleasegc)."""

from __future__ import annotations

import base64
import hashlib
import logging
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import current_ids, wall_now
from ..apimachinery.wait import Periodic
from ..registry.context import Context
from ..registry.options import DeleteOptions, ListQuery
from ..registry.rest import UpdatedObjectInfo
from ..registry.store import Store
from .bootstrap import SYSTEM_USER

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
IDENTITY_LEASE_COMPONENT_LABEL_KEY = "apiserver.kubernetes.io/identity"
KUBE_APISERVER = "kube-apiserver"
KUBE_APISERVER_IDENTITY_LEASE_LABEL_SELECTOR = f"{IDENTITY_LEASE_COMPONENT_LABEL_KEY}={KUBE_APISERVER}"
LABEL_HOSTNAME = "kubernetes.io/hostname"
IDENTITY_LEASE_DURATION_SECONDS = 3600
IDENTITY_LEASE_RENEW_INTERVAL_SECONDS = 10.0
IDENTITY_LEASE_GC_PERIOD_SECONDS = 3600.0
NAMESPACE = "kube-system"


def _length_prefixed(data: bytes) -> bytes:
    return struct.pack(">H", len(data)) + data  # cryptobyte's AddUint16LengthPrefixed


def identity_lease_name(hostname: str) -> str:
    """The generic server's APIServerID: "apiserver-" and the lowercase unpadded base32 of the first 16
    bytes of sha256(hostname, "kube-apiserver"), each uint16-length-prefixed."""
    digest = hashlib.sha256(_length_prefixed(hostname.encode()) + _length_prefixed(KUBE_APISERVER.encode()))
    return "apiserver-" + base64.b32encode(digest.digest()[:16]).decode().rstrip("=").lower()


def _micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


class IdentityLeaseController:
    """Creates the lease when missing and renews renewTime every interval; its labels are set on each
    write. An existing lease keeps its holderIdentity, as the lease controller does."""

    def __init__(
        self,
        leases: Store,
        hostname: str,
        duration_seconds: int = IDENTITY_LEASE_DURATION_SECONDS,
        renew_interval: float = IDENTITY_LEASE_RENEW_INTERVAL_SECONDS,
        now: Callable[[], datetime] = wall_now,
    ):
        self.leases = leases
        self.hostname = hostname
        self.name = identity_lease_name(hostname)
        self.holder_identity = f"{self.name}_{current_ids().uid('identity', NAMESPACE, self.name)}"
        self.duration_seconds = duration_seconds
        self.now = now
        self._periodic = Periodic("apiserver identity lease controller", renew_interval, self.sync, clocked=True)

    async def start(self) -> None:
        try:
            await self.sync()
        except errors.StatusError as err:  # tried again at the next interval, as the lease controller does
            log.error("failed to ensure the apiserver identity lease %s exists: %s", self.name, err.message)
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    def _ctx(self) -> Context:
        return Context(NAMESPACE, SYSTEM_USER)

    def _with_labels(self, lease: Object) -> Object:
        meta = lease.setdefault("metadata", {})
        meta["labels"] = {
            **(meta.get("labels") or {}),
            IDENTITY_LEASE_COMPONENT_LABEL_KEY: KUBE_APISERVER,
            LABEL_HOSTNAME: self.hostname,
        }
        return lease

    async def sync(self) -> None:
        renew_time = _micro_time(self.now())

        async def renew(_ctx: Context, old: Object | None) -> Object:
            if not old:
                return self._with_labels(
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": NAMESPACE},
                        "spec": {
                            "holderIdentity": self.holder_identity,
                            "leaseDurationSeconds": self.duration_seconds,
                            "renewTime": renew_time,
                        },
                    }
                )
            lease = {
                **old,
                "metadata": dict(old["metadata"]),
                "spec": {**(old.get("spec") or {}), "renewTime": renew_time},
            }
            return self._with_labels(lease)

        await self.leases.update(
            self._ctx(), self.name, UpdatedObjectInfo(self.name, renew), force_allow_create=True
        )


def lease_expired(lease: Object, now: datetime) -> bool:
    """An identity lease without renewTime or leaseDurationSeconds is invalid, hence collected too."""
    spec = lease.get("spec") or {}
    renewed = _parse_time(spec.get("renewTime") or "")
    duration = spec.get("leaseDurationSeconds")
    return renewed is None or duration is None or renewed + timedelta(seconds=duration) < now


class IdentityLeaseGarbageCollector:
    """Every period (and once at start), deletes the expired kube-apiserver identity leases; the delete
    is conditional on the resourceVersion read, so a lease renewed meanwhile stays."""

    def __init__(
        self,
        leases: Store,
        period: float = IDENTITY_LEASE_GC_PERIOD_SECONDS,
        now: Callable[[], datetime] = wall_now,
    ):
        self.leases = leases
        self.now = now
        self._periodic = Periodic("apiserver identity lease garbage collector", period, self.collect, clocked=True)

    async def start(self) -> None:
        try:
            await self.collect()
        except errors.StatusError as err:
            log.error("Error while listing apiserver leases: %s", err.message)
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def collect(self) -> None:
        ctx = Context(NAMESPACE, SYSTEM_USER)
        listed = await self.leases.list(
            ctx, ListQuery(label_selector=KUBE_APISERVER_IDENTITY_LEASE_LABEL_SELECTOR)
        )
        now = self.now()
        for lease in listed.get("items") or []:
            if not lease_expired(lease, now):
                continue
            meta = lease["metadata"]
            options = DeleteOptions(preconditions_resource_version=meta.get("resourceVersion"))
            try:
                await self.leases.delete(ctx, meta["name"], options=options)
                log.info("deleted expired apiserver identity lease %s", meta["name"])
            except errors.StatusError as err:
                if err.code not in (404, 409):  # gone already, or renewed since it was listed
                    log.error("Error deleting lease %s: %s", meta["name"], err.message)
