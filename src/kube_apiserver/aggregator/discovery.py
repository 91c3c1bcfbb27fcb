"""Discovery as the aggregator serves it (k8s.io/kube-aggregator pkg/apiserver/handler_apis.go and the
aggregated ResourceManager): /apis and /apis/<group> list the APIServices' groups in priority order;
aggregated discovery (apidiscovery.k8s.io/v2) lists the chain's own groups and the aggregated servers'
(remote.py fetches those), ordered by the same priorities."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..endpoints import discovery
from ..endpoints.discovery import DiscoveryManager
from ..endpoints.http import Handler, Request, Response
from .helpers import GROUP, compare_kube_aware_versions, sorted_by_group_and_version, spec_of
from .lister import APIServiceLister
from .priorities import APIREGISTRATION_GROUP_PRIORITY, Priority, builtin_priority

Object = dict[str, Any]
REGISTRATION_GROUP = {"name": GROUP, "versions": [{"groupVersion": f"{GROUP}/v1", "version": "v1"}],
                      "preferredVersion": {"groupVersion": f"{GROUP}/v1", "version": "v1"}}


def discovery_group(api_services: list[Object]) -> Object:
    """convertToDiscoveryAPIGroup: the group's versions by priority, the first preferred."""
    members = sorted_by_group_and_version(api_services)[0]
    group = spec_of(members[0]).get("group", "")
    versions = [{"groupVersion": f"{group}/{spec_of(s).get('version', '')}", "version": spec_of(s).get("version", "")}
                for s in members]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(api_services: list[Object]) -> Object:
    """apisHandler: the aggregator's own group first, then every APIService group (not the legacy one)."""
    groups = [REGISTRATION_GROUP]
    for members in sorted_by_group_and_version(api_services):
        if spec_of(members[0]).get("group"):
            groups.append(discovery_group(members))
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


# group version -> its aggregated entry ({"version", "resources", "freshness"}) and its priority
RemoteEntries = Callable[[], dict[tuple[str, str], tuple[Object, Priority]]]


class AggregatedDiscovery:
    """The aggregated /apis document: local groups (the shared discovery manager), remote ones merged in
    (an aggregated server's version wins over a local one), groups and versions in priority order."""

    def __init__(self, manager: DiscoveryManager, lister: APIServiceLister, remote: RemoteEntries):
        self.manager, self.lister, self.remote = manager, lister, remote

    def _priority(self, group: str, version: str) -> Priority:
        if group == GROUP:
            return Priority(APIREGISTRATION_GROUP_PRIORITY, 0)
        builtin = builtin_priority(group, version)
        if builtin is not None:
            return builtin
        api_service = self.lister.get(f"{version}.{group}")
        if api_service is None:
            return Priority(0, 0)
        spec = spec_of(api_service)
        return Priority(spec.get("groupPriorityMinimum", 0), spec.get("versionPriority", 0))

    def document(self) -> Object:
        doc = self.manager.aggregated(core=False)
        groups = {item["metadata"].get("name", ""): item for item in doc["items"]}
        priorities = {(name, v["version"]): self._priority(name, v["version"])
                      for name, item in groups.items() for v in item["versions"]}
        for (group, version), (entry, priority) in self.remote().items():
            item = groups.setdefault(group, {"metadata": {"name": group, "creationTimestamp": None}, "versions": []})
            item["versions"] = [v for v in item["versions"] if v["version"] != version] + [entry]
            priorities[(group, version)] = priority
        for name, item in groups.items():
            item["versions"].sort(key=functools.cmp_to_key(
                lambda a, b, g=name: _compare_versions(priorities, g, a["version"], b["version"])))
        group_priority = {name: max(priorities[(name, v["version"])].group for v in item["versions"])
                          for name, item in groups.items() if item["versions"]}
        doc["items"] = sorted((item for item in groups.values() if item["versions"]),
                              key=lambda i: (-group_priority[i["metadata"]["name"]], i["metadata"]["name"]))
        return doc


def _compare_versions(priorities: dict[tuple[str, str], Priority], group: str, a: str, b: str) -> int:
    pa, pb = priorities[(group, a)].version, priorities[(group, b)].version
    if pa != pb:
        return pb - pa
    return -compare_kube_aware_versions(a, b)


class APIsHandler:
    """/apis: aggregated discovery when asked for it, else the APIGroupList."""

    def __init__(self, lister: APIServiceLister, aggregated: AggregatedDiscovery):
        self.lister, self.aggregated = lister, aggregated

    async def __call__(self, req: Request) -> Response:
        if discovery.wants_aggregated(req):
            return discovery.discovery_response(req, self.aggregated.document(), discovery.AGGREGATED_CONTENT_TYPE)
        return discovery.discovery_response(req, api_group_list(self.lister.list()))


class APIGroupHandler:
    """/apis/<group>: the APIGroup of the group's APIServices; a group without any is the delegate's."""

    def __init__(self, group: str, lister: APIServiceLister, delegate: Handler):
        self.group, self.lister, self.delegate = group, lister, delegate

    async def __call__(self, req: Request) -> Response:
        members = [s for s in self.lister.list() if spec_of(s).get("group") == self.group]
        if not members:
            return await self.delegate(req)
        return discovery.discovery_response(req, {"kind": "APIGroup", "apiVersion": "v1", **discovery_group(members)})
