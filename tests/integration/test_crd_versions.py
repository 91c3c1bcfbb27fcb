"""Several versions of one CRD: served and storage flags, the None strategy's apiVersion rewrite, a
deprecated version's warning, status.storedVersions, defaults applied on read, and a conversion
webhook (a small HTTPS server) converting between two shapes end to end."""

from __future__ import annotations

import copy

import pytest

from conftest import wait_for
from httpsserver import HTTPSJSONServer

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = {"Content-Type": "application/merge-patch+json"}




def version(name: str, storage: bool, props: dict, **extra) -> dict:
    return {"name": name, "served": True, "storage": storage, **extra,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": props}}}}}


def crd(plural: str, kind: str, versions: list[dict], **spec) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.versions.example.com"},
            "spec": {"group": "versions.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind}, "versions": versions,
                     **spec}}


def install(server, body: dict) -> None:
    created = server.request("POST", CRDS, body)
    assert created.status == 201, created.body
    group, plural = body["spec"]["group"], body["spec"]["names"]["plural"]
    for v in body["spec"]["versions"]:
        path = f"/apis/{group}/{v['name']}/namespaces/default/{plural}"
        wait_for(lambda path=path: server.request("GET", path).status == 200)


def test_none_conversion_deprecation_and_stored_versions(server):
    install(server, crd("thingies", "Thingy", [
        version("v1beta1", False, {"size": {"type": "string"}}, deprecated=True),
        version("v1", True, {"size": {"type": "string"}})]))
    beta = "/apis/versions.example.com/v1beta1/namespaces/default/thingies"
    body = {"apiVersion": "versions.example.com/v1beta1", "kind": "Thingy", "metadata": {"name": "t1"},
            "spec": {"size": "m"}}
    created = server.request("POST", beta, body)
    assert created.status == 201
    assert created.headers["warning"] == '299 - "versions.example.com/v1beta1 Thingy is deprecated; use ' \
                                         'versions.example.com/v1 Thingy"'
    as_v1 = server.request("GET", "/apis/versions.example.com/v1/namespaces/default/thingies/t1").json()
    assert as_v1["apiVersion"] == "versions.example.com/v1" and as_v1["spec"] == {"size": "m"}
    listed = server.request("GET", beta).json()
    assert listed["apiVersion"] == "versions.example.com/v1beta1"
    assert [i["apiVersion"] for i in listed["items"]] == ["versions.example.com/v1beta1"]
    group = server.request("GET", "/apis/versions.example.com").json()
    assert group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    stored = server.request("GET", f"{CRDS}/thingies.versions.example.com").json()["status"]["storedVersions"]
    assert stored == ["v1"]
    # Switching the storage version records it too.
    patch = {"spec": {"versions": [
        version("v1beta1", True, {"size": {"type": "string"}}, deprecated=True),
        version("v1", False, {"size": {"type": "string"}})]}}
    assert server.request("PATCH", f"{CRDS}/thingies.versions.example.com", patch, MERGE).status == 200
    stored = server.request("GET", f"{CRDS}/thingies.versions.example.com").json()["status"]["storedVersions"]
    assert stored == ["v1", "v1beta1"]


def test_defaults_added_later_apply_on_read(server):
    install(server, crd("gizmos", "Gizmo", [version("v1", True, {"size": {"type": "string"}})]))
    path = "/apis/versions.example.com/v1/namespaces/default/gizmos"
    body = {"apiVersion": "versions.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g1"}, "spec": {}}
    assert server.request("POST", path, body).status == 201
    patch = {"spec": {"versions": [version("v1", True, {"size": {"type": "string", "default": "small"}})]}}
    assert server.request("PATCH", f"{CRDS}/gizmos.versions.example.com", patch, MERGE).status == 200
    wait_for(lambda: server.request("GET", f"{path}/g1").json()["spec"] == {"size": "small"})
    assert server.request("GET", path).json()["items"][0]["spec"] == {"size": "small"}


@pytest.fixture
def converter():
    hooks = HTTPSJSONServer()

    def convert(review):
        request = review["request"]
        out = []
        for obj in request["objects"]:
            obj = copy.deepcopy(obj)
            spec = obj.get("spec") or {}
            if request["desiredAPIVersion"].endswith("/v2"):  # v1 {host, port} -> v2 {address: "host:port"}
                obj["spec"] = {"address": f"{spec.pop('host', '')}:{spec.pop('port', 0)}"}
            else:
                host, _, port = (spec.get("address") or ":0").rpartition(":")
                obj["spec"] = {"host": host, "port": int(port)}
            obj["apiVersion"] = request["desiredAPIVersion"]
            out.append(obj)
        return 200, {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                     "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": out}}

    hooks.answers["/convert"] = convert
    hooks.answers["/broken"] = lambda review: (200, {"apiVersion": "apiextensions.k8s.io/v1",
                                                     "kind": "ConversionReview", "response": {
                                                         "uid": review["request"]["uid"],
                                                         "result": {"status": "Failure", "message": "nope"}}})
    yield hooks
    hooks.stop()


def test_conversion_webhook_converts_between_versions(server, converter):
    webhook = {"clientConfig": {"url": converter.url("/convert"), "caBundle": converter.ca_bundle},
               "conversionReviewVersions": ["v1"]}
    install(server, crd("endpoints", "Endpoint", [
        version("v1", True, {"host": {"type": "string"}, "port": {"type": "integer"}}),
        version("v2", False, {"address": {"type": "string"}})],
        conversion={"strategy": "Webhook", "webhook": webhook}))
    v1 = "/apis/versions.example.com/v1/namespaces/default/endpoints"
    v2 = "/apis/versions.example.com/v2/namespaces/default/endpoints"
    body = {"apiVersion": "versions.example.com/v2", "kind": "Endpoint",
            "metadata": {"name": "e1", "labels": {"a": "b"}}, "spec": {"address": "db.local:5432"}}
    created = server.request("POST", v2, body)
    assert created.status == 201, created.body
    assert created.json()["spec"] == {"address": "db.local:5432"}
    stored = server.request("GET", f"{v1}/e1").json()
    assert stored["apiVersion"] == "versions.example.com/v1" and stored["spec"] == {"host": "db.local", "port": 5432}
    assert stored["metadata"]["labels"] == {"a": "b"}
    listed = server.request("GET", v2).json()["items"]
    assert [i["spec"] for i in listed] == [{"address": "db.local:5432"}]
    reviews = converter.received["/convert"]
    assert reviews[0]["kind"] == "ConversionReview" and reviews[0]["request"]["desiredAPIVersion"] in (
        "versions.example.com/v1", "versions.example.com/v2")

    broken = {"spec": {"conversion": {"strategy": "Webhook", "webhook": {
        **webhook, "clientConfig": {"url": converter.url("/broken"), "caBundle": converter.ca_bundle}}}}}
    assert server.request("PATCH", f"{CRDS}/endpoints.versions.example.com", broken, MERGE).status == 200

    def fails():
        out = server.request("GET", f"{v2}/e1")
        return out if out.status == 500 else None

    failed = wait_for(fails).json()
    assert failed["message"] == "Internal error occurred: conversion webhook for versions.example.com/v1, " \
                                "Kind=Endpoint failed: nope"
