"""Discovery documents: /api, /apis, /apis/<group>, the APIResourceLists, and aggregated discovery
(apidiscovery.k8s.io/v2). One manager holds every installed group version; servers of the chain
share it, so the outermost one answers for all."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import serializer
from . import negotiation
from .http import Request, Response

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


@dataclass
class GroupVersionDiscovery:
    group: str
    version: str
    resources: list[dict[str, Any]]  # APIResource entries, subresources as "name/sub"

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass
class DiscoveryManager:
    server_address: str = ""
    # group -> versions in preference order
    groups: dict[str, list[GroupVersionDiscovery]] = field(default_factory=dict)

    def add(self, gv: GroupVersionDiscovery) -> None:
        versions = [v for v in self.groups.setdefault(gv.group, []) if v.version != gv.version]
        versions.append(gv)
        self.groups[gv.group] = versions

    def remove_group(self, group: str) -> None:
        self.groups.pop(group, None)

    def remove(self, group: str, version: str) -> None:
        versions = [v for v in self.groups.get(group, []) if v.version != version]
        if versions:
            self.groups[group] = versions
        else:
            self.groups.pop(group, None)

    def order_versions(self, group: str, versions: list[str]) -> None:
        """Puts a group's versions in preference order (the first is the preferred version)."""
        rank = {version: i for i, version in enumerate(versions)}
        self.groups[group] = sorted(self.groups.get(group, []), key=lambda v: rank.get(v.version, len(rank)))

    def lookup(self, group: str, version: str) -> GroupVersionDiscovery | None:
        return next((v for v in self.groups.get(group, []) if v.version == version), None)

    # ---- documents ----

    def api_versions(self) -> dict[str, Any]:
        return {"kind": "APIVersions", "versions": [v.version for v in self.groups.get("", [])],
                "serverAddressByClientCIDRs": self._addresses()}

    def _addresses(self) -> list[dict[str, str]]:
        return [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}] if self.server_address else []

    def api_group(self, group: str) -> dict[str, Any] | None:
        versions = self.groups.get(group)
        if not versions:
            return None
        listed = [{"groupVersion": v.group_version, "version": v.version} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": listed,
                "preferredVersion": listed[0]}

    def api_group_list(self) -> dict[str, Any]:
        groups = []
        for name in self.groups:
            if name:
                group = self.api_group(name)
                assert group is not None
                del group["kind"], group["apiVersion"]
                groups.append(group)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_resource_list(self, gv: GroupVersionDiscovery) -> dict[str, Any]:
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv.group_version,
                "resources": gv.resources}

    def aggregated(self, core: bool) -> dict[str, Any]:
        items = [self._aggregated_group(name, versions) for name, versions in self.groups.items()
                 if (name == "") == core]
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
                "items": items}

    @staticmethod
    def _aggregated_group(name: str, versions: list[GroupVersionDiscovery]) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name} if name else {}
        meta["creationTimestamp"] = None
        return {"metadata": meta, "versions": [
            {"version": v.version, "resources": _aggregated_resources(v), "freshness": "Current"} for v in versions]}


def _aggregated_resources(gv: GroupVersionDiscovery) -> list[dict[str, Any]]:
    parents: dict[str, dict[str, Any]] = {}
    for r in gv.resources:
        kind = {"group": r.get("group", gv.group), "version": r.get("version", gv.version), "kind": r["kind"]}
        if "/" in r["name"]:
            parent, sub = r["name"].split("/", 1)
            if parent in parents:
                parents[parent].setdefault("subresources", []).append(
                    {"subresource": sub, "responseKind": kind, "verbs": r["verbs"]})
            continue
        entry: dict[str, Any] = {"resource": r["name"], "responseKind": kind,
                                 "scope": "Namespaced" if r["namespaced"] else "Cluster",
                                 "singularResource": r["singularName"], "verbs": r["verbs"]}
        for key in ("shortNames", "categories"):
            if r.get(key):
                entry[key] = r[key]
        parents[r["name"]] = entry
    return list(parents.values())


def wants_aggregated(req: Request) -> bool:
    try:
        media = negotiation.negotiate(req.headers.get("accept", ""), negotiation.DISCOVERY_CONVERSIONS,
                                      protobuf=True)
    except Exception:  # noqa: BLE001 - an unacceptable Accept is answered by the plain document path
        return False
    return media.convert == "APIGroupDiscoveryList"


# Discovery documents are written by the server's own serializers, protobuf among them.
PROTOBUF_DOCUMENTS = frozenset({"APIVersions", "APIGroupList", "APIGroup", "APIResourceList", "APIGroupDiscoveryList"})


def discovery_response(req: Request, doc: dict[str, Any], content_type: str = "application/json") -> Response:
    media = negotiation.negotiate(req.headers.get("accept", ""), negotiation.DISCOVERY_CONVERSIONS,
                                  protobuf=doc.get("kind") in PROTOBUF_DOCUMENTS)
    if media.media == negotiation.YAML:
        body = serializer.encode_yaml(doc)
    elif media.media == negotiation.PROTOBUF:
        # The unaggregated documents are registered unversioned, as v1.
        body = negotiation.encode({"apiVersion": "v1", **doc}, media)
        content_type = content_type.replace(negotiation.JSON, negotiation.PROTOBUF, 1)
    else:
        body = serializer.encode_json(doc, negotiation.pretty_requested(req))
    headers = [("vary", "Accept"), ("etag", '"' + hashlib.sha256(body).hexdigest() + '"')]
    return Response(200, body, content_type if media.media != negotiation.YAML else media.media, headers)
