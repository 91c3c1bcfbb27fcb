"""The shared informer factory on the loopback client: a list then a watch into an indexer with a
namespace index, handlers told of adds, updates and deletes, resync, lazy start, and admission's
listers reading from it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from inprocess import in_process_server
from kube_apiserver.admission.lister import NamespacedLister
from kube_apiserver.admission.webhook.serviceresolution import ServiceResolver
from kube_apiserver.client.informers import EventHandler, Lister, SharedInformerFactory


async def _eventually(predicate, timeout: float = 5.0) -> None:  # noqa: ANN001
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


def test_an_informer_lists_then_follows_the_watch(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            client = srv.client
            for name in ("n1", "n2"):
                await client.resource("", "v1", "namespaces").create({"metadata": {"name": name}})
            cms = client.resource("", "v1", "configmaps")
            await cms.namespace("n1").create({"metadata": {"name": "before"}})
            factory = SharedInformerFactory(client)
            informer = factory.for_resource("", "v1", "configmaps")
            seen: list[tuple[str, str]] = []
            informer.add_event_handler(
                EventHandler(
                    on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                    on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
                    on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])),
                )
            )
            assert not informer.started  # nothing is listed before the factory starts
            factory.start()
            assert await informer.wait_for_sync()
            before = informer.indexer.get_by_name("n1", "before")
            assert before is not None and before["kind"] == "ConfigMap" and before["apiVersion"] == "v1"
            await cms.namespace("n2").create({"metadata": {"name": "after"}})
            await cms.namespace("n1").patch("before", {"data": {"k": "v"}})
            await cms.namespace("n1").delete("before")
            await _eventually(lambda: ("delete", "before") in seen)
            assert [e for e in seen if e[1] in ("before", "after")] == [
                ("add", "before"),
                ("add", "after"),
                ("update", "before"),
                ("delete", "before"),
            ]
            assert [o["metadata"]["name"] for o in informer.indexer.list("n2")] == ["after"]
            assert informer.indexer.list("n1") == []
            assert informer.lists == 1
            await factory.stop()

    asyncio.run(main())


def test_resync_tells_handlers_of_every_object_again(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "resynced"}})
            factory = SharedInformerFactory(srv.client, default_resync=0.05)
            informer = factory.for_resource("", "v1", "namespaces")
            updates: list[str] = []
            informer.add_event_handler(
                EventHandler(on_update=lambda old, new: updates.append(new["metadata"]["name"]))
            )
            factory.start()
            await informer.wait_for_sync()
            await _eventually(
                lambda: updates.count("resynced") >= 2
            )  # no change made: only resyncs tell of it
            await factory.stop()

    asyncio.run(main())


def test_a_late_handler_hears_of_what_the_informer_holds(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "late"}})
            factory = SharedInformerFactory(srv.client)
            factory.start()
            informer = factory.for_resource("", "v1", "namespaces")  # started as it is asked for
            assert informer.started and await informer.wait_for_sync()
            added: list[str] = []
            informer.add_event_handler(EventHandler(on_add=lambda o: added.append(o["metadata"]["name"])))
            await _eventually(lambda: "late" in added)
            await factory.stop()

    asyncio.run(main())


def test_a_lister_starts_its_informer_on_first_read(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            informers = srv.config.informers
            assert informers is not None
            key = ("", "v1", "limitranges")
            assert key not in informers.informers  # admission's informers start lazily, not with the server
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "lr"}})
            limits = srv.client.resource("", "v1", "limitranges").namespace("lr")
            await limits.create({"metadata": {"name": "l"}, "spec": {"limits": [{"type": "Container"}]}})
            lister = NamespacedLister(informers, "limitranges")
            assert [o["metadata"]["name"] for o in await lister.list("lr")] == ["l"]
            assert informers.informers[key].synced.is_set()
            got = await Lister(informers.informers[key]).get("l", "lr")
            assert got is not None and got["kind"] == "LimitRange"
            # a copy: what the caller changes does not change the informer's object
            (await lister.list("lr"))[0]["metadata"]["name"] = "changed"
            assert (await lister.list("lr"))[0]["metadata"]["name"] == "l"
            # shared: the informer's own objects, for a caller that only reads them (no copy per pod create)
            assert (await lister.list("lr", shared=True))[0] is informers.informers[key].indexer.get("lr/l")

    asyncio.run(main())


def test_a_resource_that_is_not_served_lists_as_empty(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            factory = SharedInformerFactory(srv.client)
            lister = Lister(factory.for_resource("example.com", "v1", "widgets"))
            assert await lister.list() == []
            assert NamespacedLister(None, "limitranges") is not None
            await factory.stop()

    asyncio.run(main())


def test_admission_reads_its_configurations_from_shared_informers(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            informers = srv.config.informers
            assert informers is not None
            group = "admissionregistration.k8s.io"
            wanted = [
                (group, "v1", r)
                for r in (
                    "mutatingwebhookconfigurations",
                    "validatingwebhookconfigurations",
                    "validatingadmissionpolicies",
                    "validatingadmissionpolicybindings",
                )
            ]
            assert not any(informers.informers[key].started for key in wanted)  # none listed at start
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "first-write"}})
            assert all(
                informers.informers[key].synced.is_set() for key in wanted
            )  # the first write listed them

    asyncio.run(main())


def test_a_webhook_service_resolves_through_the_informers(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            client, informers = srv.client, srv.config.informers
            assert informers is not None
            await client.resource("", "v1", "namespaces").create({"metadata": {"name": "hooks"}})
            service = {"metadata": {"name": "svc"}, "spec": {"ports": [{"name": "https", "port": 443}]}}
            await client.resource("", "v1", "services").namespace("hooks").create(service)
            endpoint_slice = {
                "metadata": {"name": "svc-1", "labels": {"kubernetes.io/service-name": "svc"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": 8443}],
            }
            await (
                client.resource("discovery.k8s.io", "v1", "endpointslices")
                .namespace("hooks")
                .create(endpoint_slice)
            )
            resolver = ServiceResolver(informers)
            assert await resolver.resolve("hooks", "svc", 443) == ("10.1.2.3", 8443)
            assert informers.informers[("", "v1", "services")].synced.is_set()

    asyncio.run(main())


def test_limit_ranger_lists_a_namespace_without_limit_ranges_live_once_per_ttl(
    tmp_path: Path, monkeypatch
) -> None:
    """NewLimitRanger's live-lookup LRU: pods created in a namespace without limit ranges (the usual case)
    do not each list them through the loopback client; the list made for the first one answers 30 s."""
    live_lists: list[str] = []
    live = NamespacedLister._live

    async def counting(self: NamespacedLister, namespace: str) -> list[dict]:
        live_lists.append(self.resource)
        return await live(self, namespace)

    monkeypatch.setattr(NamespacedLister, "_live", counting)

    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "lr"}})
            await (
                srv.client.resource("", "v1", "serviceaccounts")
                .namespace("lr")
                .create({"metadata": {"name": "default"}})
            )
            pods = srv.client.resource("", "v1", "pods").namespace("lr")
            for i in range(4):
                await pods.create(
                    {
                        "metadata": {"name": f"p{i}"},
                        "spec": {
                            "automountServiceAccountToken": False,
                            "containers": [{"name": "c", "image": "busybox"}],
                        },
                    }
                )
            assert live_lists.count("limitranges") == 1

    asyncio.run(main())


def test_writes_in_a_namespace_known_without_quotas_are_not_queued_for_quota(
    tmp_path: Path, monkeypatch
) -> None:
    """ResourceQuota admission: once the informer shows no quota in a namespace and the live lookup kept for
    30 s found none, a write there is admitted at once (what the namespace's worker would decide) instead of
    being queued to a worker task and waited for."""
    from kube_apiserver.admission.resourcequota.controller import QuotaEvaluator

    batches: list[str] = []
    work = QuotaEvaluator._work

    async def counting(self: QuotaEvaluator, namespace: str) -> None:
        batches.append(namespace)
        await work(self, namespace)

    monkeypatch.setattr(QuotaEvaluator, "_work", counting)

    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "nq"}})
            configmaps = srv.client.resource("", "v1", "configmaps").namespace("nq")
            for i in range(4):
                await configmaps.create({"metadata": {"name": f"c{i}"}})
            assert batches.count("nq") == 1  # the first write's worker looked the namespace up live

    asyncio.run(main())
