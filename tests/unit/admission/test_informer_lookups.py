"""What admission plugins read from the shared informers, as upstream's listers: NamespaceLifecycle (live when the
informer has not seen the namespace or when this server admitted its deletion in the last 30 s), ServiceAccount and
PodSecurity."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.admission.interfaces import CREATE, DELETE, Attributes
from kube_apiserver.admission.namespace_lifecycle import FORCE_LIVE_LOOKUP_TTL, NamespaceLifecycle
from kube_apiserver.apimachinery import errors
from kube_apiserver.client.informers import SharedIndexInformer
from kube_apiserver.registry.context import UserInfo


def namespace(name: str, phase: str = "Active") -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"phase": phase}}


class ListedInformers:
    def __init__(self, items: list[dict[str, Any]]):
        self.informer = SharedIndexInformer(None)  # type: ignore[arg-type]  # never started: nothing to list
        self.informer.start = lambda: None  # type: ignore[method-assign]
        for item in items:
            self.informer.indexer.upsert(item)
        self.informer.synced.set()

    def for_resource(self, group: str, version: str, resource: str) -> SharedIndexInformer:
        return self.informer


class Live:
    def __init__(self, **namespaces: dict[str, Any]):
        self.namespaces, self.reads = namespaces, 0

    async def __call__(self, name: str) -> dict[str, Any] | None:
        self.reads += 1
        return self.namespaces.get(name)


def attrs(operation: str, resource: str, namespace: str, name: str = "x") -> Attributes:
    return Attributes(operation, "", "v1", "", resource, "", namespace, name, {}, None, UserInfo("u"))


def test_a_create_reads_the_informers_namespace_and_storage_only_for_one_it_has_not_seen() -> None:
    live = Live(fresh=namespace("fresh"))
    plugin = NamespaceLifecycle(live)
    plugin.set_informers(ListedInformers([namespace("known")]))  # type: ignore[arg-type]
    asyncio.run(plugin.validate(attrs(CREATE, "configmaps", "known")))
    assert live.reads == 0
    asyncio.run(plugin.validate(attrs(CREATE, "configmaps", "fresh")))
    assert live.reads == 1
    with pytest.raises(errors.StatusError) as missing:
        asyncio.run(plugin.validate(attrs(CREATE, "configmaps", "absent")))
    assert missing.value.code == 404


def test_after_admitting_a_namespaces_deletion_creates_in_it_look_up_live_for_30_seconds() -> None:
    now = [100.0]
    live = Live(going=namespace("going", "Terminating"))
    plugin = NamespaceLifecycle(live, clock=lambda: now[0])
    plugin.set_informers(ListedInformers([namespace("going")]))  # type: ignore[arg-type]  # not seen yet
    asyncio.run(plugin.validate(attrs(DELETE, "namespaces", "", "going")))
    with pytest.raises(errors.StatusError) as terminating:
        asyncio.run(plugin.validate(attrs(CREATE, "configmaps", "going")))
    assert terminating.value.code == 403
    now[0] += FORCE_LIVE_LOOKUP_TTL
    asyncio.run(plugin.validate(attrs(CREATE, "configmaps", "going")))  # the informer's view again
    assert live.reads == 1


def test_a_pods_service_account_and_namespace_policy_come_from_the_informers() -> None:
    """ServiceAccount and PodSecurity admission read what the shared informers hold (upstream's listers)
    and storage only for what they do not: a pod create costs no storage read."""
    from kube_apiserver.admission.podsecurity.admission import PodSecurity
    from kube_apiserver.admission.serviceaccount import ServiceAccount

    reads: list[tuple[str, str]] = []

    async def get_object(resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        reads.append((resource, name))
        return None

    async def get_namespace(name: str) -> dict[str, Any] | None:
        reads.append(("namespaces", name))
        return None

    informers = ListedInformers([
        {"metadata": {"name": "default", "namespace": "team"}},
        namespace("team"),
    ])
    service_accounts, pod_security = ServiceAccount(get_object), PodSecurity(get_namespace, None)  # type: ignore[arg-type]
    service_accounts.set_informers(informers)  # type: ignore[arg-type]
    pod_security.set_informers(informers)  # type: ignore[arg-type]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    create = Attributes(CREATE, "", "v1", "Pod", "pods", "", "team", "p", pod, None, UserInfo("u"))
    asyncio.run(service_accounts.admit(create))
    asyncio.run(service_accounts.validate(create))
    asyncio.run(pod_security.validate(create))
    assert reads == []


def test_service_account_admission_keeps_its_token_mount_setting_with_or_without_informers() -> None:
    """The setting came to be assigned in set_informers, from the module's function of the same name (always
    true); without informers the plugin had none at all."""
    from kube_apiserver.admission.serviceaccount import ServiceAccount

    async def get_object(resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return {"metadata": {"name": name, "namespace": namespace}}

    for informers in (None, ListedInformers([])):
        plugin = ServiceAccount(get_object, mount_service_account_token=False)
        if informers is not None:
            plugin.set_informers(informers)  # type: ignore[arg-type]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
               "spec": {"containers": [{"name": "c", "image": "i"}]}}
        asyncio.run(plugin.admit(Attributes(CREATE, "", "v1", "Pod", "pods", "", "team", "p", pod, None,
                                            UserInfo("u"))))
        assert pod["spec"]["serviceAccountName"] == "default"
        assert "volumes" not in pod["spec"] and "volumeMounts" not in pod["spec"]["containers"][0]
