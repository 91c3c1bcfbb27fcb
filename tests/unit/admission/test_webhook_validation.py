"""Webhook configuration validation details the API cannot show directly: an update is held only to
what the stored configuration already met, and the resource list rules' upstream quirks."""

from __future__ import annotations

from kube_apiserver.api.admissionregistration.validation import (
    Options,
    update_options,
    validate_resources,
    validate_webhook_configuration,
)
from kube_apiserver.apimachinery.field import Path


def hook(**extra) -> dict:
    return {"name": "a.example.com", "clientConfig": {"url": "https://h/x"}, "sideEffects": "None",
            "admissionReviewVersions": ["v1"], **extra}


def messages(errs) -> list[str]:
    return [str(e) for e in errs]


def test_update_keeps_what_the_stored_configuration_had():
    old = {"webhooks": [hook(sideEffects="Unknown", admissionReviewVersions=["v0"]), hook()]}
    new = {"webhooks": [hook(sideEffects="Some", admissionReviewVersions=["v0"]), hook()]}
    opts = update_options(new, old)
    assert opts == Options(ignore_match_conditions=True, require_no_side_effects=False,
                           require_recognized_review_version=False, require_unique_webhook_names=False)
    assert validate_webhook_configuration(new, opts, False) == []
    strict = messages(validate_webhook_configuration(new, Options(), False))
    assert 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"' in strict
    assert 'webhooks[1].name: Duplicate value: "a.example.com"' in strict


def test_invalid_label_values_stay_allowed_once_stored():
    bad = hook(objectSelector={"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]})
    assert update_options({"webhooks": [bad]}, {"webhooks": [bad]}).allow_invalid_label_value_in_selector
    assert validate_webhook_configuration({"webhooks": [bad]}, update_options({"webhooks": [bad]},
                                                                              {"webhooks": [bad]}), False) == []
    assert validate_webhook_configuration({"webhooks": [bad]}, Options(), False)


def test_changed_match_conditions_are_validated_again():
    old = {"webhooks": [hook(matchConditions=[{"name": "a", "expression": "true"}])]}
    new = {"webhooks": [hook(matchConditions=[{"name": "a", "expression": " "}])]}
    assert not update_options(new, old).ignore_match_conditions
    assert update_options(old, old).ignore_match_conditions


def test_resources_rules():
    path = Path("resources")
    assert messages(validate_resources(["*", "pods"], path)) == [
        'resources: Invalid value: ["*","pods"]: if \'*\' is present, must not specify other resources without '
        "subresources"]
    # Upstream only remembers whether the last plain resource was "*".
    assert validate_resources(["pods", "*"], path) == []
    assert messages(validate_resources(["*/status", "pods/status"], path)) == [
        "resources[1]: Invalid value: \"pods/status\": if '*/status' is present, must not specify pods/status"]
    assert messages(validate_resources([], path)) == ["resources: Required value"]
