"""The endpointslice controller (pkg/controller/endpointslice): for each Service with a selector, the
EndpointSlices (discovery.k8s.io/v1) of its pods, per address type and set of ports, at most
--max-endpoints-per-slice endpoints each, written by the Reconciler. It waits for its informer to have
seen its own writes (the EndpointSliceTracker) before it reconciles a Service again."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery import errors
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import WARNING, EventRecorder
from ...client.rest import Client
from ..controller_utils import NAMESPACE_TERMINATING_CAUSE
from ..queue_controller import QueueController
from .config import DEFAULT_MAX_ENDPOINTS_PER_SLICE
from .endpointutil import (
    LAST_CHANGE_TRIGGER_TIME,
    TriggerTimeTracker,
    format_trigger_time,
    service_selector,
    services_selecting,
    services_to_update_on_pod_change,
)
from .reconciler import (
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
    Changes,
    Reconciler,
)

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
COMPONENT = "endpoint-slice-controller"
DELETION_EXPECTED = -1


def service_key_of_slice(endpoint_slice: Object) -> str:
    meta = endpoint_slice["metadata"]
    return f"{meta.get('namespace', '')}/{(meta.get('labels') or {}).get(SERVICE_NAME_LABEL, '')}"


class StaleInformerCacheError(Exception):
    """The informer has not yet seen a write this controller made: the sync is retried."""


@dataclass
class EndpointSliceTracker:
    """EndpointSliceTracker: per Service, the generation of each slice this controller last wrote (or
    DELETION_EXPECTED), to tell a stale informer cache from the current state."""

    generations: dict[str, dict[str, int]] = field(default_factory=dict)

    def update(self, endpoint_slice: Object) -> None:
        meta = endpoint_slice["metadata"]
        service = service_key_of_slice(endpoint_slice)
        self.generations.setdefault(service, {})[meta.get("uid", "")] = int(meta.get("generation") or 0)

    def expect_deletion(self, endpoint_slice: Object) -> None:
        service = service_key_of_slice(endpoint_slice)
        self.generations.setdefault(service, {})[endpoint_slice["metadata"].get("uid", "")] = (
            DELETION_EXPECTED
        )

    def should_sync(self, endpoint_slice: Object) -> bool:
        """A slice the informer shows newer than what this controller wrote was changed by someone else."""
        meta = endpoint_slice["metadata"]
        generation = self.generations.get(service_key_of_slice(endpoint_slice), {}).get(meta.get("uid", ""))
        return generation is None or int(meta.get("generation") or 0) > generation

    def handle_deletion(self, endpoint_slice: Object) -> bool:
        """Forgets the slice; True when its deletion was this controller's."""
        service = service_key_of_slice(endpoint_slice)
        tracked = self.generations.get(service, {})
        generation = tracked.pop(endpoint_slice["metadata"].get("uid", ""), None)
        if not tracked:
            self.generations.pop(service, None)
        return generation == DELETION_EXPECTED

    def stale(self, service_key: str, slices: list[Object]) -> bool:
        tracked = self.generations.get(service_key)
        if not tracked:
            return False
        seen = set()
        for endpoint_slice in slices:
            uid = endpoint_slice["metadata"].get("uid", "")
            seen.add(uid)
            generation = tracked.get(uid)
            if generation is not None and (
                generation == DELETION_EXPECTED
                or generation > int(endpoint_slice["metadata"].get("generation") or 0)
            ):
                return True
        return any(g != DELETION_EXPECTED and uid not in seen for uid, g in tracked.items())

    def delete_service(self, service_key: str) -> None:
        self.generations.pop(service_key, None)


class EndpointSliceController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        max_endpoints_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE,
        workers: int = 5,
    ):
        super().__init__("endpointslice", client, recorder, workers)
        self.services = informers.for_resource("", "v1", "services")
        self.pods = informers.for_resource("", "v1", "pods")
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.slices = informers.for_resource("discovery.k8s.io", "v1", "endpointslices")
        self.trigger_times = TriggerTimeTracker()
        self.tracker = EndpointSliceTracker()
        self.reconciler = Reconciler(
            CONTROLLER_NAME, max_endpoints_per_slice, lambda name: self.nodes.indexer.get_by_name("", name)
        )
        self.informers = (self.services, self.pods, self.nodes, self.slices)

    def register_handlers(self) -> None:
        self.services.add_event_handler(
            EventHandler(self._enqueue, lambda old, new: self._enqueue(new), self._enqueue)
        )
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._add_pod))
        self.slices.add_event_handler(EventHandler(self._add_slice, self._update_slice, self._delete_slice))

    # ---- informer handlers ----

    def _enqueue(self, obj: Object) -> None:
        self.queue.add(object_key(obj))

    def _add_pod(self, pod: Object) -> None:
        for key in services_selecting(self.services.indexer.list(pod["metadata"].get("namespace", "")), pod):
            self.queue.add(key)

    def _update_pod(self, old: Object, new: Object) -> None:
        services = self.services.indexer.list(new["metadata"].get("namespace", ""))
        for key in services_to_update_on_pod_change(services, old, new):
            self.queue.add(key)

    def _managed(self, endpoint_slice: Object) -> bool:
        labels = endpoint_slice["metadata"].get("labels") or {}
        return labels.get(MANAGED_BY_LABEL) == CONTROLLER_NAME and bool(labels.get(SERVICE_NAME_LABEL))

    def _add_slice(self, endpoint_slice: Object) -> None:
        if self._managed(endpoint_slice) and self.tracker.should_sync(endpoint_slice):
            self.queue.add(service_key_of_slice(endpoint_slice))

    def _update_slice(self, old: Object, new: Object) -> None:
        """A slice someone else changed, or one that changed hands (its labels), brings its Services back."""
        if self._managed(new) and self.tracker.should_sync(new):
            self.queue.add(service_key_of_slice(new))
        if self._managed(old) and (
            not self._managed(new) or service_key_of_slice(old) != service_key_of_slice(new)
        ):
            self.queue.add(service_key_of_slice(old))

    def _delete_slice(self, endpoint_slice: Object) -> None:
        if self._managed(endpoint_slice) and not self.tracker.handle_deletion(endpoint_slice):
            self.queue.add(service_key_of_slice(endpoint_slice))

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.indexer.get(key)
        if service is None:
            self.trigger_times.delete(key)
            self.tracker.delete_service(key)
            return  # the garbage collector deletes its slices (their owner reference)
        if (service.get("spec") or {}).get("type") == "ExternalName":
            return
        selector = service_selector(service)
        if selector is None:
            return  # its slices are written by hand or mirrored from its Endpoints
        pods = [
            p
            for p in self.pods.indexer.list(namespace)
            if selector.matches(p["metadata"].get("labels") or {})
        ]
        slices = [
            s
            for s in self.slices.indexer.list(namespace)
            if self._managed(s)
            and s["metadata"]["labels"][SERVICE_NAME_LABEL] == name
            and not s["metadata"].get("deletionTimestamp")
        ]
        if self.tracker.stale(key, slices):
            raise StaleInformerCacheError("EndpointSlice informer cache is out of date")
        trigger_time = self.trigger_times.compute(key, service, pods)
        changes = self.reconciler.reconcile(service, pods, slices)
        try:
            await self._finalize(service, changes, trigger_time)
        except errors.StatusError as err:
            self.recorder.event(
                service,
                WARNING,
                "FailedToUpdateEndpointSlices",
                f"Error updating Endpoint Slices for Service {key}: {err.message}",
            )
            raise
        if changes.errors:
            raise ValueError("; ".join(changes.errors[:5]))  # retried: the nodes may show up

    async def _finalize(self, service: Object, changes: Changes, trigger_time: float | None) -> None:
        api = self.client.resource("discovery.k8s.io", "v1", "endpointslices").namespace(
            service["metadata"].get("namespace", "")
        )
        if not service["metadata"].get("deletionTimestamp"):  # no race with the garbage collector
            for endpoint_slice in changes.create:
                _set_trigger_time(endpoint_slice, trigger_time)
                try:
                    self.tracker.update(await api.create(endpoint_slice))
                except errors.StatusError as err:
                    causes = (err.details or {}).get("causes") or ()
                    if any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes):
                        return
                    raise
        for endpoint_slice in changes.update:
            _set_trigger_time(endpoint_slice, trigger_time)
            self.tracker.update(await api.update(endpoint_slice))
        for endpoint_slice in changes.delete:
            try:
                await api.delete(endpoint_slice["metadata"]["name"])
            except errors.StatusError as err:
                if err.code != 404:
                    raise
            self.tracker.expect_deletion(endpoint_slice)


def _set_trigger_time(endpoint_slice: Object, trigger_time: float | None) -> None:
    annotations = dict(endpoint_slice["metadata"].get("annotations") or {})
    if trigger_time is not None:
        annotations[LAST_CHANGE_TRIGGER_TIME] = format_trigger_time(trigger_time)
    else:
        annotations.pop(LAST_CHANGE_TRIGGER_TIME, None)
    if annotations:
        endpoint_slice["metadata"]["annotations"] = annotations
    else:
        endpoint_slice["metadata"].pop("annotations", None)
