"""The official kubernetes Python client: CRUD and watch of configmaps."""

from __future__ import annotations

import threading
import time

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config, watch  # noqa: E402


@pytest.fixture(scope="module")
def core(server):
    api_client = config.new_client_from_config(server.kubeconfig)
    yield client.CoreV1Api(api_client)
    api_client.close()


def test_list_namespaces(core):
    names = {ns.metadata.name for ns in core.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


def test_configmap_crud(core):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py"}), data={"a": "1"})
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.uid and created.metadata.resource_version
    read = core.read_namespaced_config_map("py-cm", "default")
    assert read.data == {"a": "1"}
    read.data["a"] = "2"
    replaced = core.replace_namespaced_config_map("py-cm", "default", read)
    assert replaced.data == {"a": "2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    stale = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm",
                                                            resource_version=created.metadata.resource_version))
    with pytest.raises(client.ApiException) as conflict:
        core.replace_namespaced_config_map("py-cm", "default", stale)
    assert conflict.value.status == 409
    status = core.delete_namespaced_config_map("py-cm", "default")
    status = status if isinstance(status, dict) else status.to_dict()
    assert status["status"] == "Success" and status["details"]["name"] == "py-cm"
    with pytest.raises(client.ApiException) as missing:
        core.read_namespaced_config_map("py-cm", "default")
    assert missing.value.status == 404


def test_watch_streams_events(core):
    w = watch.Watch()
    seen: list[tuple[str, str]] = []

    def produce():
        time.sleep(0.5)
        core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="py-watched")))
        core.delete_namespaced_config_map("py-watched", "default")

    threading.Thread(target=produce, daemon=True).start()
    start_rv = core.list_namespaced_config_map("default").metadata.resource_version
    for event in w.stream(core.list_namespaced_config_map, "default", resource_version=start_rv,
                          timeout_seconds=10):
        if event["object"].metadata.name == "py-watched":
            seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 2:
            w.stop()
    assert seen == [("ADDED", "py-watched"), ("DELETED", "py-watched")]
