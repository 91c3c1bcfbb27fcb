"""Which addresses the `kubernetes` Service's endpoints list (pkg/controlplane/reconcilers),
--endpoint-reconciler-type:

- `lease` (the default): each replica keeps `/registry/masterleases/<its advertise address>` in storage
  under a TTL (15s, renewed every reconcile interval); the endpoints list every address with a live key,
  sorted. A replica that stops cleanly deletes its key at once; a dead one's key expires.
- `master-count` (deprecated upstream): this address is added to those listed, which are cut to
  --apiserver-count after it.
- `none`: the endpoints are left alone.

`addresses()` answers None when the endpoints must not be touched (`none`, or no live lease listed:
kube-apiserver refuses to erase every endpoint of the kubernetes Service)."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any, Protocol

from ..storage import interface as storage
from ..storage.objectstore import ObjectStore

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
MASTER_LEASES_PREFIX = "/registry/masterleases/"
DEFAULT_ENDPOINT_RECONCILER_TTL = 15.0
LEASE = "lease"
MASTER_COUNT = "master-count"
NONE = "none"


class EndpointReconciler(Protocol):
    async def addresses(self, ip: str, current: list[str]) -> list[str] | None:
        """The addresses the endpoints should list, given this replica's and those listed now."""
        ...

    async def remove(self, ip: str, current: list[str]) -> list[str] | None:
        """The same, once this replica stops serving (RemoveEndpoints)."""
        ...


class NoneReconciler:
    async def addresses(self, ip: str, current: list[str]) -> list[str] | None:
        return None

    async def remove(self, ip: str, current: list[str]) -> list[str] | None:
        return None


class MasterCountReconciler:
    def __init__(self, master_count: int):
        self.master_count = master_count

    async def addresses(self, ip: str, current: list[str]) -> list[str] | None:
        if ip in current:
            return current
        # We always add our own address; too many then, the ones after ours (wrapping around) are removed.
        addresses = sorted({*current, ip})
        mine = addresses.index(ip)
        while len(addresses) > self.master_count:
            del addresses[(mine + 1) % len(addresses)]
            mine = addresses.index(ip)
        return addresses

    async def remove(self, ip: str, current: list[str]) -> list[str] | None:
        remaining = [a for a in current if a != ip]
        return remaining or None


class LeaseReconciler:
    def __init__(
        self,
        store: ObjectStore,
        ttl: float = DEFAULT_ENDPOINT_RECONCILER_TTL,
        prefix: str = MASTER_LEASES_PREFIX,
    ):
        self.store = store
        self.ttl = ttl
        self.prefix = prefix

    async def update_lease(self, ip: str) -> None:
        """Writes this replica's key anew (its generation moves, so the write happens and renews the TTL)."""

        async def renew(existing: Object) -> Object:
            meta = dict(existing.get("metadata") or {"name": ip})
            meta["generation"] = int(meta.get("generation") or 0) + 1
            return {
                "kind": "Endpoints",
                "apiVersion": "v1",
                "metadata": meta,
                "subsets": [{"addresses": [{"ip": ip}]}],
            }

        await self.store.guaranteed_update(
            self.prefix + ip, renew, ignore_not_found=True, ttl=lambda _: self.ttl
        )

    async def list_leases(self) -> list[str]:
        listed = await self.store.get_list(self.prefix, storage.ListOptions())
        ips = []
        for item in listed.items:
            subsets = item.get("subsets") or []
            addresses = subsets[0].get("addresses") if subsets else None
            if addresses and addresses[0].get("ip"):
                ips.append(addresses[0]["ip"])
        return sorted(ips)  # as strings: kube-apiserver's sort.Strings

    async def remove_lease(self, ip: str) -> None:
        try:
            await self.store.delete(self.prefix + ip)
        except storage.KeyNotFoundError:
            pass

    async def addresses(self, ip: str, current: list[str]) -> list[str] | None:
        await self.update_lease(ip)
        return await self._live()

    async def remove(self, ip: str, current: list[str]) -> list[str] | None:
        await self.remove_lease(ip)
        return await self._live()

    async def _live(self) -> list[str] | None:
        ips = await self.list_leases()
        if not ips:
            log.error(
                "no API server IP addresses were listed in storage, refusing to erase all endpoints "
                "for the kubernetes Service"
            )
            return None
        return ips


def new_endpoint_reconciler(
    kind: str, store: ObjectStore, master_count: int = 1, ttl: float = DEFAULT_ENDPOINT_RECONCILER_TTL
) -> EndpointReconciler:
    if kind == MASTER_COUNT:
        return MasterCountReconciler(master_count)
    if kind == NONE:
        return NoneReconciler()
    return LeaseReconciler(store, ttl)


def address_type(ip: str) -> str:
    return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
