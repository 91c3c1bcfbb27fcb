"""The apiextensions server's controllers, fed by one informer on CustomResourceDefinitions: naming
(NamesAccepted, conflicts within a group), establishing (Established), serving (routes, discovery,
OpenAPI) and the finalizer (a deleted CRD's custom resources go first)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from typing import Any

from ..apimachinery import errors
from ..apimachinery.meta import parse_resource_version
from ..controllers.informer import CONTROLLER_USER, Informer, InformerController, Resource
from ..registry.context import Context
from ..registry.options import ListQuery
from ..registry.rest import UpdatedObjectInfo
from ..storage.interface import DELETED
from . import conditions
from .crd import GROUP, INFO, CRDStore
from .customresource.serving import CustomResourceServing

log = logging.getLogger("kube_apiserver.apiextensions")
Object = dict[str, Any]
CLEANUP_POLL_SECONDS = 0.2


def _in_use(crds: list[Object], group: str, skip: str) -> tuple[set[str], set[str]]:
    """The resource names and kinds other CRDs of the group have been given (getAcceptedNamesForGroup)."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for crd in crds:
        if crd["spec"]["group"] != group or crd["metadata"]["name"] == skip:
            continue
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        resources.update([accepted.get("plural", ""), accepted.get("singular", ""),
                          *(accepted.get("shortNames") or [])])
        kinds.update([accepted.get("kind", ""), accepted.get("listKind", "")])
    return resources - {""}, kinds - {""}


def _fresh(requested: str, accepted: str, used: set[str]) -> str:
    """equalToAcceptedOrFresh: an empty string when the name may be taken, else why not."""
    if requested == accepted or requested not in used:
        return ""
    return f'"{requested}" is already in use'


def accepted_names(crd: Object, others: list[Object]) -> tuple[Object, tuple[str, str, str]]:
    """calculateNamesAndConditions: the names this CRD may have, and (status, reason, message) of
    NamesAccepted."""
    resources, kinds = _in_use(others, crd["spec"]["group"], crd["metadata"]["name"])
    requested = crd["spec"]["names"]
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    names = dict(accepted)
    problem = ("", "")
    for key, reason, used in (("plural", "PluralConflict", resources), ("singular", "SingularConflict", resources)):
        why = _fresh(requested.get(key, ""), accepted.get(key, ""), used)
        problem = (reason, why) if why else problem
        if not why:
            names[key] = requested.get(key, "")
    if requested.get("shortNames") != accepted.get("shortNames"):
        taken = [_fresh(s, "", resources) for s in requested.get("shortNames") or []
                 if s not in (accepted.get("shortNames") or [])]
        taken = [why for why in taken if why]
        if taken:
            problem = ("ShortNamesConflict", taken[0] if len(taken) == 1 else "[" + ", ".join(taken) + "]")
        else:
            names["shortNames"] = requested.get("shortNames")
    for key, reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        why = _fresh(requested.get(key, ""), accepted.get(key, ""), kinds)
        problem = (reason, why) if why else problem
        if not why:
            names[key] = requested.get(key, "")
    names["categories"] = requested.get("categories")
    names = {k: v for k, v in names.items() if v not in (None, [])}
    if problem[0]:
        return names, ("False", *problem)
    return names, ("True", "NoConflicts", "no conflicts found")


class CRDControllers(InformerController):
    def __init__(self, crds: CRDStore, status: Any, serving: CustomResourceServing):
        self.crds = crds
        self.status = status
        self.serving = serving
        # The informer's CRDs, and those this process wrote since, while newer (see _remember).
        self.cache: dict[str, Object] = {}
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self._requeued: set[str] = set()  # names a sync is scheduled for (_requeue_later)
        resource = Resource(GROUP, "v1", INFO.resource, INFO.kind, False, crds)
        self.informers = [Informer(resource, self._on_event)]
        self.ctx = Context("", CONTROLLER_USER)

    async def stop(self) -> None:
        await super().stop()
        await self.serving.stop()

    async def _on_event(self, resource: Resource, event_type: str, obj: Object) -> None:
        name = obj["metadata"]["name"]
        if event_type == DELETED:
            self.cache.pop(name, None)
        else:
            self.cache[name] = obj
        self.queue.put_nowait(name)

    async def _work(self) -> None:
        while True:
            name = await self.queue.get()
            try:
                await self.sync(name)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one CRD's failure must not stop the others
                log.exception("syncing CustomResourceDefinition %s failed", name)

    async def sync(self, name: str) -> None:
        crd = self.cache.get(name)
        if crd is not None and not conditions.is_terminating(crd):
            crd = await self._name(crd) or crd
        await self.serving.sync(name, crd)
        if crd is not None and crd["metadata"].get("deletionTimestamp") and \
                conditions.CLEANUP_FINALIZER in (crd["metadata"].get("finalizers") or []):
            await self._finalize(crd)

    async def _name(self, crd: Object) -> Object | None:
        """Naming and establishing: accepted names, NamesAccepted, then Established once accepted."""
        names, (status, reason, message) = accepted_names(crd, list(self.cache.values()))
        wanted = copy.deepcopy(crd)
        wanted.setdefault("status", {})["acceptedNames"] = names
        conditions.set_condition(wanted, conditions.NAMES_ACCEPTED, status, reason, message)
        if status == "True":
            conditions.set_condition(wanted, conditions.ESTABLISHED, "True", "InitialNamesAccepted",
                                     "the initial names have been accepted")
        elif not conditions.is_true(crd, conditions.ESTABLISHED):
            conditions.set_condition(wanted, conditions.ESTABLISHED, "False", "NotAccepted",
                                     "not all names are accepted")
        if wanted.get("status") == crd.get("status"):
            return None
        return await self._write_status(crd, wanted["status"])

    async def _write_status(self, crd: Object, status: Object) -> Object | None:
        async def transform(ctx: Context, old: Object | None) -> Object:
            assert old is not None
            if old["metadata"].get("uid") != crd["metadata"].get("uid"):
                raise errors.conflict(INFO.resource, GROUP, crd["metadata"]["name"], "the object was replaced")
            return {**old, "status": status}

        name = crd["metadata"]["name"]
        try:
            out, _ = await self.status.update(self.ctx, name, UpdatedObjectInfo(name, transform))
        except errors.StatusError as err:
            if err.code in (404, 409):
                return None
            raise
        self._remember(out)
        return out

    def _remember(self, written: Object) -> None:
        """What was written replaces the informer's copy when it is newer, so that the next sync (another
        CRD of the group being named) sees it before the informer does; it never brings back a CRD the
        informer has seen go meanwhile (upstream's crdMutationCache, without adds): with replicas sharing
        the storage, another one may release and so delete the CRD while this one's write is answered."""
        meta = written["metadata"]
        cached = self.cache.get(meta["name"])
        if cached is not None and cached["metadata"].get("uid") == meta.get("uid") and \
                parse_resource_version(cached["metadata"].get("resourceVersion")) < \
                parse_resource_version(meta.get("resourceVersion")):
            self.cache[meta["name"]] = written

    def _requeue_later(self, name: str, delay: float) -> None:
        """One sync of `name` in `delay` seconds, however many times this is asked for meanwhile."""
        if name in self._requeued:
            return

        def requeue() -> None:
            self._requeued.discard(name)
            self.queue.put_nowait(name)

        self._requeued.add(name)
        asyncio.get_running_loop().call_later(delay, requeue)

    async def _finalize(self, crd: Object) -> None:
        """CRDFinalizer.sync: delete every custom resource, and once none is left, release the CRD. While
        some are left (finalizers of their own) this is synced again shortly: the one worker every CRD
        is named, established and served by is never held waiting for them."""
        name = crd["metadata"]["name"]
        status = copy.deepcopy(crd.get("status") or {})
        if conditions.is_true(crd, conditions.ESTABLISHED):
            conditions.set_condition({"status": status}, conditions.TERMINATING, "True",
                                     "InstanceDeletionInProgress", "CustomResource deletion is in progress")
            if status != crd.get("status"):
                crd = await self._write_status(crd, status) or crd
            outcome = await self._delete_instances(crd)
        else:
            outcome = ("False", "NeverEstablished", "resource was never established")
        if outcome is None:  # instances left: checked again shortly
            self._requeue_later(name, CLEANUP_POLL_SECONDS)
            return
        status = copy.deepcopy(crd.get("status") or {})
        conditions.set_condition({"status": status}, conditions.TERMINATING, *outcome)
        if outcome[0] == "True":  # deletion failed: report it, retry later
            await self._write_status(crd, status)
            self._requeue_later(name, 1.0)
            return
        crd = await self._write_status(crd, status) or crd
        await self._release(crd)

    async def _delete_instances(self, crd: Object) -> tuple[str, str, str] | None:
        """Deletes the custom resources not being deleted yet: the Terminating condition's outcome once
        none is left or a delete failed, None while some are left."""
        store = self.serving.store_of(crd["metadata"]["name"])
        if store is None:
            return "False", "InstanceDeletionCompleted", "removed all instances"
        try:
            items = (await store.list(Context("", CONTROLLER_USER), ListQuery()))["items"]
        except errors.StatusError as err:
            return "True", "InstanceDeletionFailed", f"could not list instances: {err.message}"
        failures = []
        for item in items:
            meta = item["metadata"]
            if meta.get("deletionTimestamp"):
                continue  # deleted already, waiting for its own finalizers
            try:
                await store.delete(Context(meta.get("namespace", ""), CONTROLLER_USER), meta["name"])
            except errors.StatusError as err:
                if err.code != 404:
                    failures.append(err.message)
        if failures:
            return "True", "InstanceDeletionFailed", f"could not issue all deletes: {failures[0]}"
        try:
            left = (await store.list(Context("", CONTROLLER_USER), ListQuery()))["items"]
        except errors.StatusError as err:
            return "True", "InstanceDeletionCheck", f"could not confirm zero CustomResources remaining: {err.message}"
        if left:
            return None
        return "False", "InstanceDeletionCompleted", "removed all instances"

    async def _release(self, crd: Object) -> None:
        async def transform(ctx: Context, old: Object | None) -> Object:
            assert old is not None
            out = dict(old)
            out["metadata"] = {**old["metadata"], "finalizers": [
                f for f in old["metadata"].get("finalizers") or [] if f != conditions.CLEANUP_FINALIZER]}
            return out

        name = crd["metadata"]["name"]
        with contextlib.suppress(errors.StatusError):
            await self.crds.update(self.ctx, name, UpdatedObjectInfo(name, transform))
