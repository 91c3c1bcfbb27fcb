"""Auto-registration (k8s.io/kube-aggregator pkg/controllers/autoregister, and kube-apiserver's
apiServicesToRegister): every group version the delegates serve gets a local APIService. Built-in ones
are synced once at start (label automanaged=onstart); CRD group versions are kept in sync for as long
as they are registered (automanaged=true) through register_local / unregister_local."""

from __future__ import annotations

import copy
from typing import Any

from ..apimachinery import errors
from ..registry.context import Context, UserInfo
from ..registry.options import DeleteOptions
from ..registry.rest import UpdatedObjectInfo
from ..registry.store import Store
from ..server.healthz import HealthChecker, HealthCheckError
from .helpers import GROUP, api_service_name, is_available
from .lister import APIServiceLister
from .priorities import CRD_PRIORITY, Priority, builtin_priority
from .workqueue import Workers, WorkQueue

Object = dict[str, Any]
MANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"
MANAGE_ON_START = "onstart"
MANAGE_CONTINUOUSLY = "true"
AGGREGATOR_USER = UserInfo("system:kube-aggregator", groups=("system:masters",))


def make_api_service(group: str, version: str, priority: Priority, managed: str) -> Object:
    return {"apiVersion": f"{GROUP}/v1", "kind": "APIService",
            "metadata": {"name": api_service_name(group, version), "labels": {MANAGED_LABEL: managed}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": priority.group,
                     "versionPriority": priority.version}}


def served_group_versions(listed_paths: list[str]) -> list[tuple[str, str]]:
    """The group versions in a delegate's listed paths: /api/v1 and /apis/<group>/<version>."""
    found = []
    for path in listed_paths:
        if path == "/api/v1":
            found.append(("", "v1"))
            continue
        tokens = path.split("/")
        if path.startswith("/apis/") and len(tokens) == 4:
            found.append((tokens[2], tokens[3]))
    return found


def _managed(obj: Object | None) -> str:
    return ((obj or {}).get("metadata", {}).get("labels") or {}).get(MANAGED_LABEL, "")


class AutoRegisterController:
    def __init__(self, lister: APIServiceLister, store: Store):
        self.lister, self.store = lister, store
        self.to_sync: dict[str, Object] = {}
        self.synced_successfully: set[str] = set()
        self.at_start: set[str] = set()
        self.queue = WorkQueue("autoregister")
        self._workers = Workers(self.queue, self.check_api_service, count=5)
        lister.add_handler(lambda _event, obj: self.queue.add(obj["metadata"]["name"]))

    # ---- what to sync ----

    def add_to_sync_on_start(self, obj: Object) -> None:
        self._add_to_sync(obj, MANAGE_ON_START)

    def add_to_sync(self, obj: Object) -> None:
        self._add_to_sync(obj, MANAGE_CONTINUOUSLY)

    def _add_to_sync(self, obj: Object, managed: str) -> None:
        desired = copy.deepcopy(obj)
        desired["metadata"].setdefault("labels", {})[MANAGED_LABEL] = managed
        self.to_sync[desired["metadata"]["name"]] = desired
        self.queue.add(desired["metadata"]["name"])

    def remove_to_sync(self, name: str) -> None:
        self.to_sync.pop(name, None)
        self.queue.add(name)

    def register_local(self, group: str, version: str) -> None:
        """A group version a delegate now serves (a CRD's): kept as a local APIService until unregistered.
        Built-in group versions stay as registered at start (a CRD cannot take them over)."""
        if self._builtin(group, version):
            return
        self.add_to_sync(make_api_service(group, version, CRD_PRIORITY, MANAGE_CONTINUOUSLY))

    def unregister_local(self, group: str, version: str) -> None:
        """The group version is no longer served: its automanaged APIService is deleted."""
        if not self._builtin(group, version):
            self.remove_to_sync(api_service_name(group, version))

    def _builtin(self, group: str, version: str) -> bool:
        return _managed(self.to_sync.get(api_service_name(group, version))) == MANAGE_ON_START

    # ---- running ----

    async def run(self) -> None:
        await self.lister.start()
        self.at_start = set(self.lister.items)
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()

    async def check_api_service(self, name: str) -> None:
        """checkAPIService: create what is missing, update what differs, delete what is no longer wanted;
        APIServices managed once (onstart) are left alone after their first successful sync."""
        desired, current = self.to_sync.get(name), self.lister.get(name)
        synced = name in self.synced_successfully
        await self._reconcile(name, desired, current, synced)
        self.synced_successfully.add(name)

    async def _reconcile(self, name: str, desired: Object | None, current: Object | None, synced: bool) -> None:
        if current is None and desired is None:
            return
        if _managed(desired) == MANAGE_ON_START and synced:
            return
        if current is None:
            await self._create(desired)
            return
        managed = _managed(current)
        if managed not in (MANAGE_ON_START, MANAGE_CONTINUOUSLY):
            return  # not ours
        if managed == MANAGE_ON_START and (name not in self.at_start or synced):
            return
        if desired is None:
            await self._delete(current)
        elif current.get("spec") != desired["spec"]:
            await self._update(current, desired)

    def _ctx(self) -> Context:
        return Context(user=AGGREGATOR_USER)

    async def _create(self, desired: Any) -> None:
        obj = copy.deepcopy(desired)
        self.store.strategy.default(obj)
        try:
            await self.store.create(self._ctx(), obj)
        except errors.StatusError as err:
            if err.code != 409:
                raise

    async def _delete(self, current: Object) -> None:
        options = DeleteOptions(preconditions_uid=current["metadata"].get("uid"))
        try:
            await self.store.delete(self._ctx(), current["metadata"]["name"], options=options)
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise

    async def _update(self, current: Object, desired: Object) -> None:
        updated = copy.deepcopy(current)
        updated["spec"] = copy.deepcopy(desired["spec"])
        self.store.strategy.default(updated)

        async def transform(ctx: Context, old: Object | None) -> Object:
            return copy.deepcopy(updated)
        try:
            await self.store.update(self._ctx(), updated["metadata"]["name"],
                                    UpdatedObjectInfo(updated["metadata"]["name"], transform))
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise


class AvailableHealthCheck:
    """makeAPIServiceAvailableHealthCheck: healthy once every APIService registered at start has been seen
    Available at least once."""

    def __init__(self, name: str, api_services: list[Object], lister: APIServiceLister):
        self.name = name
        self.pending = {obj["metadata"]["name"] for obj in api_services}
        lister.add_handler(self._observe)

    def _observe(self, event_type: str, obj: Object) -> None:
        if obj["metadata"]["name"] in self.pending and is_available(obj):
            self.pending.discard(obj["metadata"]["name"])

    async def check(self) -> None:
        if self.pending:
            raise HealthCheckError(f"missing APIService: [{' '.join(sorted(self.pending))}]")

    def health_checker(self) -> HealthChecker:
        return HealthChecker(self.name, self.check)


def register_delegates(controller: AutoRegisterController, listed_paths: list[str]) -> list[Object]:
    """apiServicesToRegister: one onstart APIService per built-in group version the delegates serve
    (a group version without a known priority is skipped, as it could be a CRD's)."""
    registered = []
    for group, version in served_group_versions(listed_paths):
        priority = builtin_priority(group, version)
        if priority is None:
            continue
        obj = make_api_service(group, version, priority, MANAGE_ON_START)
        controller.add_to_sync_on_start(obj)
        registered.append(obj)
    return registered
