"""managedFields entries: decoding errors, manager identifiers, encoding order."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from mf_support import deployment, deployments, stored

from kube_apiserver.apimachinery.managedfields import ADMISSION_WARNING, validate_managed_fields
from kube_apiserver.apimachinery.managedfields.conflict import Conflict
from kube_apiserver.apimachinery.managedfields.fieldpath import make_path
from kube_apiserver.apimachinery.managedfields.managed import decode, encode, identifier


def entry(**overrides: Any) -> dict[str, Any]:
    base = {"manager": "foo", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:field": {}}}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(("overrides", "message"), [
    ({}, None),
    ({"fieldsType": "FieldsV2"}, 'invalid fieldsType "FieldsV2" in managed fields entry 0'),
    ({"fieldsType": None}, "missing fieldsType in managed fields entry 0"),
    ({"apiVersion": None}, "apiVersion must not be empty"),
    ({"operation": "Invalid"}, "operation must be `Apply` or `Update`"),
    ({"operation": None}, "operation must be `Apply` or `Update`"),
])
def test_decoding_checks_entries_as_kubernetes_does(overrides: dict[str, Any], message: str | None) -> None:
    assert validate_managed_fields([entry(**overrides)]) == message


def test_unparseable_fields_are_a_decoding_error() -> None:
    error = validate_managed_fields([entry(fieldsV1={"i:x": {}})])
    assert error is not None and "error decoding set" in error
    assert ADMISSION_WARNING.format(error).startswith(".metadata.managedFields was in an invalid state after admission")


def test_identifiers_are_the_json_of_the_entry_without_time_and_fields() -> None:
    assert identifier("kubectl", "Update", "apps/v1") == '{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1"}'
    assert identifier("kubectl", "Apply", "apps/v1") == '{"manager":"kubectl","operation":"Apply"}'
    assert identifier("k", "Update", "v1", "status") == (
        '{"manager":"k","operation":"Update","apiVersion":"v1","subresource":"status"}')


def test_round_trip_normalizes_time_and_orders_entries() -> None:
    raw = [entry(manager="b", operation="Update", time="2024-01-01T02:00:00+02:00"),
           entry(manager="a", operation="Update", time="2024-01-01T00:00:01Z"),
           entry(manager="z")]
    out = encode(decode(raw))
    assert out is not None
    assert [(e["manager"], e.get("time")) for e in out] == [
        ("z", None), ("b", "2024-01-01T00:00:00Z"), ("a", "2024-01-01T00:00:01Z")]
    assert list(out[1]) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]


def test_conflict_wording_for_subresources_and_appliers() -> None:
    path = make_path("status", "replicas")
    updater = Conflict.of(identifier("kcm", "Update", "apps/v1", "status"), path)
    applier = Conflict.of(identifier("alice", "Apply", "apps/v1"), path)
    assert updater.who() == '"kcm" with subresource "status" using apps/v1'
    assert applier.who() == '"alice"'
    assert updater.field == ".status.replicas"


def test_inputs_are_not_mutated() -> None:
    fm = deployments()
    config = deployment(replicas=1)
    before = copy.deepcopy(config)
    live = stored(fm.apply(None, config, "kubectl", force=False))
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
    live_before = copy.deepcopy(live)
    fm.apply(live, deployment(replicas=1), "kubectl", force=False)
    fm.update(live, deployment(replicas=4), "editor")
    assert config == before and live == live_before
