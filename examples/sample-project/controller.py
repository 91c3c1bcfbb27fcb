"""A small controller written as a plain loop with the official `kubernetes` client: every ConfigMap labelled
`sample.example.com/watched=true` gets the annotation `sample.example.com/keys` listing its data keys.

It lists, then watches from the list's resourceVersion; when the watch ends (the server closed it) it watches
again from the last resourceVersion it saw, and lists again if that is too old (410 Gone). Its write is a
read-modify-write: an update refused with 409 Conflict (someone else wrote first) is retried on a fresh read.

    stop = threading.Event()
    threading.Thread(target=run, args=(api_client, "default", stop)).start()
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

LABEL_SELECTOR = "sample.example.com/watched=true"
ANNOTATION = "sample.example.com/keys"
WATCH_SECONDS = 5  # a watch ends at least this often, so the loop sees `stop` in time (by default)
MAX_CONFLICT_RETRIES = 10


def desired_annotation(configmap: client.V1ConfigMap) -> str:
    return ",".join(sorted(configmap.data or {}))


def reconcile(core: client.CoreV1Api, namespace: str, name: str) -> None:
    """Sets the annotation, reading the ConfigMap again after each 409 Conflict."""
    for _ in range(MAX_CONFLICT_RETRIES):
        try:
            configmap = core.read_namespaced_config_map(name, namespace)
        except ApiException as e:
            if e.status == 404:
                return  # deleted meanwhile: nothing to do
            raise
        wanted = desired_annotation(configmap)
        annotations = configmap.metadata.annotations or {}
        if annotations.get(ANNOTATION) == wanted:
            return
        configmap.metadata.annotations = {**annotations, ANNOTATION: wanted}
        try:
            core.replace_namespaced_config_map(name, namespace, configmap)  # carries the resourceVersion read
            return
        except ApiException as e:
            if e.status != 409:
                raise
    raise RuntimeError(f"configmap {namespace}/{name}: still conflicting after {MAX_CONFLICT_RETRIES} tries")


def run(
    api_client: client.ApiClient, namespace: str, stop: threading.Event, watch_seconds: int = WATCH_SECONDS
) -> None:
    core = client.CoreV1Api(api_client)
    resource_version = ""
    while not stop.is_set():
        if not resource_version:
            resource_version = _list_and_reconcile(core, namespace)
        try:
            resource_version = _watch_and_reconcile(core, namespace, resource_version, stop, watch_seconds)
        except ApiException as e:
            if e.status != 410:
                raise
            resource_version = ""  # too old: list again


def _list_and_reconcile(core: client.CoreV1Api, namespace: str) -> str:
    listed = core.list_namespaced_config_map(namespace, label_selector=LABEL_SELECTOR)
    for configmap in listed.items:
        reconcile(core, namespace, configmap.metadata.name)
    return listed.metadata.resource_version


def _watch_and_reconcile(
    core: client.CoreV1Api, namespace: str, resource_version: str, stop: threading.Event, seconds: int
) -> str:
    """One watch, until the server ends it; returns the last resourceVersion seen."""
    events: Any = watch.Watch().stream(
        core.list_namespaced_config_map,
        namespace,
        label_selector=LABEL_SELECTOR,
        resource_version=resource_version,
        timeout_seconds=seconds,  # with a timeout the client does not reconnect by itself: we do
    )
    for event in events:
        raw = event["raw_object"]  # the JSON as sent
        if event["type"] == "ERROR":
            raise ApiException(status=raw.get("code", 500), reason=raw.get("reason", "watch error"))
        resource_version = raw["metadata"]["resourceVersion"]
        if event["type"] in ("ADDED", "MODIFIED"):
            reconcile(core, namespace, raw["metadata"]["name"])
        if stop.is_set():
            break
    return resource_version
