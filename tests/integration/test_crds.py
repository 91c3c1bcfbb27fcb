"""CustomResourceDefinitions end to end: a CRD applied with kubectl becomes Established, its custom
resources are served with every verb (kubectl and raw HTTP), validated, pruned and defaulted by their
schema, printed with their columns, scaled, selected by their selectable fields, and removed with the
CRD."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


def widget_crd(**overrides) -> dict:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "string", "enum": ["small", "large"]},
            "replicas": {"type": "integer", "minimum": 0, "default": 1},
            "color": {"type": "string", "default": "blue", "maxLength": 10},
            "selector": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        }, "x-kubernetes-validations": [
            {"rule": "self.replicas <= 10", "message": "too many replicas"}]},
        "status": {"type": "object", "properties": {
            "ready": {"type": "integer"}, "phase": {"type": "string"}}},
    }}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"],
                              "categories": ["all"]},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema},
                                  "subresources": {"status": {}, "scale": {
                                      "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.ready",
                                      "labelSelectorPath": ".spec.selector"}},
                                  "selectableFields": [{"jsonPath": ".spec.size"}],
                                  "additionalPrinterColumns": [
                                      {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                                      {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                                      {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}
    crd["spec"].update(overrides)
    return crd


def widget(name: str, **spec) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": "small", **spec}}




def established(server, name: str) -> bool:
    out = server.request("GET", f"{CRDS}/{name}")
    conditions = (out.json().get("status") or {}).get("conditions") or [] if out.status == 200 else []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


@pytest.fixture(scope="module")
def widgets(server, tmp_path_factory):
    path = tmp_path_factory.mktemp("crd") / "crd.yaml"
    path.write_text(yaml.safe_dump(widget_crd()))
    server.kubectl("apply", "-f", str(path))
    wait_for(lambda: established(server, "widgets.example.com"))
    return server


def test_crd_is_established_with_defaults_and_conditions(widgets):
    crd = widgets.request("GET", f"{CRDS}/widgets.example.com").json()
    assert crd["spec"]["names"]["listKind"] == "WidgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    status = crd["status"]
    assert status["acceptedNames"]["kind"] == "Widget" and status["storedVersions"] == ["v1"]
    names = {c["type"]: c for c in status["conditions"]}
    assert names["NamesAccepted"]["reason"] == "NoConflicts"
    assert names["Established"]["reason"] == "InitialNamesAccepted"


def test_discovery_and_kubectl_api_resources(widgets):
    resources = widgets.request("GET", "/apis/example.com/v1").json()["resources"]
    by_name = {r["name"]: r for r in resources}
    assert by_name["widgets"]["kind"] == "Widget" and by_name["widgets"]["shortNames"] == ["wd"]
    assert by_name["widgets/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["widgets/scale"]["kind"] == "Scale"
    # /apis lists the group once the CRD's APIService is registered with the aggregator: after Established,
    # not at once (kube-apiserver's crdRegistrationController and establishing controller run independently)
    wait_for(lambda: "example.com" in [g["name"] for g in widgets.request("GET", "/apis").json()["groups"]])
    listed = widgets.kubectl("api-resources", "--api-group=example.com").stdout
    assert "widgets" in listed and "wd" in listed and "Widget" in listed


def test_create_defaults_prunes_and_validates(widgets):
    body = widget("w1")
    body["spec"]["unknown"] = "dropped"
    created = widgets.request("POST", WIDGETS, body)
    assert created.status == 201, created.body
    obj = created.json()
    assert obj["spec"] == {"size": "small", "replicas": 1, "color": "blue"}
    assert obj["metadata"]["generation"] == 1
    assert created.headers["warning"] == '299 - "unknown field \\"spec.unknown\\""'
    bad = widgets.request("POST", WIDGETS, widget("w-bad", size="medium", replicas=-1))
    assert bad.status == 422
    causes = {c["field"]: c for c in bad.json()["details"]["causes"]}
    assert causes["spec.size"]["reason"] == "FieldValueNotSupported"
    assert causes["spec.size"]["message"] == 'Unsupported value: "medium": supported values: "small", "large"'
    assert causes["spec.replicas"]["message"] == "Invalid value: -1: spec.replicas in body should be greater " \
                                                 "than or equal to 0"
    missing = widgets.request("POST", WIDGETS, {**widget("w-missing"), "spec": {}}).json()
    assert missing["details"]["causes"][0]["field"] == "spec.size"
    rule = widgets.request("POST", WIDGETS, widget("w-rule", replicas=11)).json()
    assert rule["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec",
                                          "message": "Invalid value: \"object\": too many replicas"}]


def test_kubectl_get_prints_columns_and_wide(widgets):
    widgets.request("POST", WIDGETS, widget("w-print", size="large", replicas=3))
    out = widgets.kubectl("get", "widgets", "w-print").stdout.splitlines()
    assert out[0].split() == ["NAME", "SIZE", "REPLICAS", "AGE"]
    assert out[1].split()[:3] == ["w-print", "large", "3"]
    assert "w-print" in widgets.kubectl("get", "wd").stdout
    assert "widget.example.com/w-print" in widgets.kubectl("get", "all").stdout


def test_status_subresource_and_generation(widgets):
    widgets.request("POST", WIDGETS, widget("w-status"))
    merge = {"Content-Type": "application/merge-patch+json"}
    ignored = widgets.request("PATCH", f"{WIDGETS}/w-status", {"status": {"phase": "Ready"}}, merge).json()
    assert "status" not in ignored and ignored["metadata"]["generation"] == 1
    status = widgets.request("PATCH", f"{WIDGETS}/w-status/status", {"status": {"phase": "Ready"},
                                                                      "spec": {"size": "large"}}, merge).json()
    assert status["status"] == {"phase": "Ready"} and status["spec"]["size"] == "small"
    spec = widgets.request("PATCH", f"{WIDGETS}/w-status", {"spec": {"color": "red"}}, merge).json()
    assert spec["metadata"]["generation"] == 2 and spec["status"] == {"phase": "Ready"}
    smp = widgets.request("PATCH", f"{WIDGETS}/w-status", {"spec": {}},
                          {"Content-Type": "application/strategic-merge-patch+json"})
    assert smp.status == 415


def test_scale_subresource_and_kubectl_scale(widgets):
    widgets.request("POST", WIDGETS, widget("w-scale", replicas=2, selector="app=w"))
    scale = widgets.request("GET", f"{WIDGETS}/w-scale/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"] == {"replicas": 2}
    assert scale["status"]["selector"] == "app=w"
    widgets.kubectl("scale", "widget", "w-scale", "--replicas=5")
    scaled = widgets.request("GET", f"{WIDGETS}/w-scale").json()
    assert scaled["spec"]["replicas"] == 5
    # The Scale writer owns the CRD's replicas path, recorded in the custom resource's version.
    entry = next(e for e in scaled["metadata"]["managedFields"] if e.get("subresource") == "scale")
    assert entry["apiVersion"] == "example.com/v1" and entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_field_selectors_on_selectable_fields(widgets):
    widgets.request("POST", WIDGETS, widget("w-sel-large", size="large"))
    listed = widgets.request("GET", f"{WIDGETS}?fieldSelector=spec.size%3Dlarge").json()["items"]
    assert {i["metadata"]["name"] for i in listed} >= {"w-sel-large"}
    assert all(i["spec"]["size"] == "large" for i in listed)
    bad = widgets.request("GET", f"{WIDGETS}?fieldSelector=spec.color%3Dred")
    assert bad.status == 400
    assert bad.json()["message"] == "field label not supported: spec.color"


def test_server_side_apply_and_kubectl_round_trip(widgets, tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(widget("w-apply", color="green")))
    widgets.kubectl("apply", "--server-side", "-f", str(path))
    obj = json.loads(widgets.kubectl("get", "widget", "w-apply", "-o", "json").stdout)
    assert obj["spec"] == {"size": "small", "color": "green", "replicas": 1}
    managed = widgets.request("GET", f"{WIDGETS}/w-apply").json()["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("kubectl", "Apply")]
    assert managed[0]["fieldsV1"] == {"f:spec": {"f:color": {}, "f:size": {}}}
    widgets.kubectl("delete", "widget", "w-apply")
    assert widgets.request("GET", f"{WIDGETS}/w-apply").status == 404


def test_explain_uses_the_crd_schema(widgets):
    out = widgets.kubectl("explain", "widgets.spec").stdout
    assert "size" in out and "replicas" in out


def test_deleting_the_crd_removes_its_objects(server, tmp_path):
    crd = widget_crd(names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
    crd["metadata"]["name"] = "gadgets.example.com"
    crd["spec"]["versions"][0].pop("additionalPrinterColumns")
    assert server.request("POST", CRDS, crd).status == 201
    wait_for(lambda: established(server, "gadgets.example.com"))
    gadgets = "/apis/example.com/v1/namespaces/default/gadgets"
    body = {**widget("g1"), "kind": "Gadget"}
    assert wait_for(lambda: server.request("POST", gadgets, body).status == 201)
    deleted = server.request("DELETE", f"{CRDS}/gadgets.example.com")
    assert deleted.status == 200
    wait_for(lambda: server.request("GET", f"{CRDS}/gadgets.example.com").status == 404)
    assert server.request("GET", gadgets).status == 404
    names = [r["name"] for r in server.request("GET", "/apis/example.com/v1").json()["resources"]]
    assert "gadgets" not in names and "widgets" in names
