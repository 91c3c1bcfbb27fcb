"""The discovery REST mapper over the loopback client: kinds and resources both ways (subresources'
kinds too), a miss read again from discovery at most once per refresh period, reset() reading it again,
and what is served after the first reading found by a later lookup."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inprocess import in_process_server
from kube_apiserver.client.discovery import (
    GroupVersionKind,
    GroupVersionResource,
    NoMatchError,
    RESTMapper,
)

WIDGET = GroupVersionKind("mapper.example.com", "v1", "Widget")


def test_mappings_both_ways(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            mapper = RESTMapper(srv.client.discovery)
            pods = await mapper.rest_mapping(GroupVersionKind("", "v1", "Pod"))
            assert pods.resource == GroupVersionResource("", "v1", "pods") and pods.namespaced
            nodes = await mapper.kind_for(GroupVersionResource("", "v1", "nodes"))
            assert nodes.kind == GroupVersionKind("", "v1", "Node") and not nodes.namespaced
            scale = await mapper.kind_for(GroupVersionResource("apps", "v1", "deployments"), "scale")
            assert scale.kind == GroupVersionKind("autoscaling", "v1", "Scale")
            assert mapper.reads == 1
            with pytest.raises(NoMatchError, match='no matches for kind "Nope" in version "example.com/v1"'):
                await mapper.rest_mapping(GroupVersionKind("example.com", "v1", "Nope"))

    asyncio.run(main())


class FakeDiscovery:
    """Aggregated discovery serving pods, and widgets once `add_widgets()` says the CRD is served."""

    def __init__(self) -> None:
        self.groups = [_group("", "v1", "pods", "Pod", "Namespaced")]

    def add_widgets(self) -> None:
        self.groups.append(_group("mapper.example.com", "v1", "widgets", "Widget", "Cluster"))

    async def aggregated(self) -> list[dict]:
        return list(self.groups)


def _group(group: str, version: str, resource: str, kind: str, scope: str) -> dict:
    response_kind = {"group": group, "version": version, "kind": kind}
    return {
        "metadata": {"name": group},
        "versions": [
            {
                "version": version,
                "resources": [
                    {"resource": resource, "responseKind": response_kind, "scope": scope, "verbs": ["get"]}
                ],
            }
        ],
    }


def test_a_miss_reads_discovery_again_at_most_once_per_period() -> None:
    async def main() -> None:
        discovery = FakeDiscovery()
        mapper = RESTMapper(discovery, min_refresh=3600.0)  # type: ignore[arg-type]
        await mapper.rest_mapping(GroupVersionKind("", "v1", "Pod"))
        discovery.add_widgets()  # a CRD is served now
        # read just now: the miss does not read again within the period
        with pytest.raises(NoMatchError):
            await mapper.rest_mapping(WIDGET)
        assert mapper.reads == 1
        mapper.reset()  # a CRD changed
        widgets = await mapper.rest_mapping(WIDGET)
        assert widgets.resource == GroupVersionResource("mapper.example.com", "v1", "widgets")
        assert not widgets.namespaced and mapper.reads == 2
        # a miss after the period reads again, and finds what is served since
        eager_discovery = FakeDiscovery()
        eager = RESTMapper(eager_discovery, min_refresh=0.0)  # type: ignore[arg-type]
        await eager.rest_mapping(GroupVersionKind("", "v1", "Pod"))
        eager_discovery.add_widgets()
        assert (await eager.rest_mapping(WIDGET)).resource.resource == "widgets"
        assert eager.reads == 2

    asyncio.run(main())


def test_concurrent_lookups_share_one_reading(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            mapper = RESTMapper(srv.client.discovery)
            kinds = [GroupVersionKind("", "v1", kind) for kind in ("Pod", "Service", "ConfigMap", "Secret")]
            found = await asyncio.gather(*(mapper.rest_mapping(kind) for kind in kinds))
            assert [m.resource.resource for m in found] == ["pods", "services", "configmaps", "secrets"]
            assert mapper.reads == 1

    asyncio.run(main())
