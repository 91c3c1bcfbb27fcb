"""events.k8s.io/v1: the core events, converted, with its own stricter create validation."""

from __future__ import annotations

import json

EV = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE = "/api/v1/namespaces/default/events"


def v1_event(name: str, **extra) -> dict:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-11-21T10:00:00.000000Z", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"}, "note": "all good", **extra}


def test_created_in_one_group_read_in_the_other(server):
    assert server.request("POST", EV, v1_event("ev-a")).status == 201
    core = server.request("GET", f"{CORE}/ev-a").json()
    assert (core["apiVersion"], core["message"], core["reportingComponent"], core["involvedObject"]["name"]) == (
        "v1", "all good", "example.com/ctl", "x")
    legacy = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-b"}, "message": "old style",
              "reason": "Old", "type": "Warning", "count": 3, "involvedObject": {"kind": "Pod", "name": "p"}}
    assert server.request("POST", CORE, legacy).status == 201
    new = server.request("GET", f"{EV}/ev-b").json()
    assert (new["apiVersion"], new["note"], new["deprecatedCount"], new["regarding"]["kind"]) == (
        "events.k8s.io/v1", "old style", 3, "Pod")
    listed = server.request("GET", EV).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert {"ev-a", "ev-b"} <= {i["metadata"]["name"] for i in listed["items"]}


def test_strict_validation_for_this_group(server):
    r = server.request("POST", EV, v1_event("ev-bad", eventTime=None, deprecatedCount=2, type="Odd"))
    assert r.status == 422
    fields = [c["field"] for c in r.json()["details"]["causes"]]
    assert fields == ["eventTime", "type", "deprecatedCount"]
    assert r.json()["details"]["causes"][1]["message"] == 'Invalid value: "": has invalid value: Odd'


def test_watch_through_the_group(server):
    rv = server.request("GET", EV).json()["metadata"]["resourceVersion"]
    server.request("POST", CORE, {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-w"},
                                  "message": "watched", "involvedObject": {"kind": "Pod", "name": "p"}})
    r = server.request("GET", f"{EV}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    events = [json.loads(line) for line in r.body.splitlines()]
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["note"]) for e in events] == [
        ("ADDED", "events.k8s.io/v1", "watched")]


def names(server, path: str) -> list[str]:
    answer = server.request("GET", path)
    assert answer.status == 200, answer.body
    return sorted(i["metadata"]["name"] for i in answer.json()["items"])


def test_core_source_selector_falls_back_to_the_reporting_controller(server):
    """ToSelectableFields: source is source.component, else reportingController (reportingComponent)."""
    assert server.request("POST", EV, v1_event("src-new", reportingController="example.com/src-ctl")).status == 201
    legacy = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "src-old"}, "message": "m", "reason": "R",
              "involvedObject": {"kind": "Pod", "name": "p"}, "source": {"component": "example.com/src-ctl"}}
    assert server.request("POST", CORE, legacy).status == 201
    both = {**legacy, "metadata": {"name": "src-both"}, "source": {"component": "kubelet"},
            "reportingComponent": "example.com/src-ctl"}
    assert server.request("POST", CORE, both).status == 201
    assert names(server, f"{CORE}?fieldSelector=source%3Dexample.com/src-ctl") == ["src-new", "src-old"]
    assert "src-both" in names(server, f"{CORE}?fieldSelector=source%3Dkubelet")
    assert names(server, f"{CORE}?fieldSelector=reportingComponent%3Dexample.com/src-ctl") == [
        "src-both", "src-new"]


def test_events_group_field_labels_are_converted_to_the_stored_ones(server):
    regarding = {"kind": "ConfigMap", "name": "selected", "namespace": "default", "uid": "u-1",
                 "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "data"}
    assert server.request("POST", EV, v1_event("sel-a", regarding=regarding, reason="Picked",
                                               reportingController="example.com/sel")).status == 201
    assert server.request("POST", EV, v1_event("sel-b", type="Warning")).status == 201
    for selector in ("regarding.name=selected", "regarding.kind=ConfigMap,regarding.name=selected",
                     "regarding.namespace=default,regarding.uid=u-1", "regarding.apiVersion=v1,regarding.uid=u-1",
                     "regarding.resourceVersion=7", "regarding.fieldPath=data", "reason=Picked",
                     "reportingController=example.com/sel", "source=example.com/sel",
                     "metadata.name=sel-a", "metadata.namespace=default,reason=Picked"):
        assert names(server, f"{EV}?fieldSelector={selector}") == ["sel-a"], selector
    assert "sel-b" in names(server, f"{EV}?fieldSelector=type%3DWarning")
    assert "sel-a" not in names(server, f"{EV}?fieldSelector=type%3DWarning")
    assert "sel-a" not in names(server, "/apis/events.k8s.io/v1/events?fieldSelector=regarding.name!%3Dselected")
    for label in ("involvedObject.name", "reportingComponent", "deprecatedSource.component", "note"):
        refused = server.request("GET", f"{EV}?fieldSelector={label}%3Dx")
        assert refused.status == 400 and refused.json()["message"] == f"field label not supported: {label}"
    r = server.request("GET", f"{EV}?watch=1&timeoutSeconds=1&fieldSelector=regarding.name%3Dselected")
    events = [json.loads(line) for line in r.body.splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "sel-a")]
