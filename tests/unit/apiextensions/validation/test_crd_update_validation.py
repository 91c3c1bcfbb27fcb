"""ValidateCustomResourceDefinitionUpdate and the status update, ported from upstream
TestValidateCustomResourceDefinitionUpdate: ratcheting keeps formerly accepted objects updatable."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from crdtestutil import (
    FORBIDDEN,
    INVALID,
    REQUIRED,
    UNSUPPORTED,
    assert_errors,
    established,
    example_cert_b64,
    make_crd,
    version,
    webhook,
)

from kube_apiserver.apiextensions.validation import (
    validate_crd,
    validate_crd_status,
    validate_crd_status_update,
    validate_crd_update,
)
from kube_apiserver.apiextensions.validation.status import validate_stored_versions
from kube_apiserver.apimachinery.field import Path


def stored(crd: dict[str, Any]) -> dict[str, Any]:
    crd = copy.deepcopy(crd)
    crd["metadata"]["resourceVersion"] = "42"
    return crd


def with_schema(crd: dict[str, Any], schema: dict[str, Any], index: int = 0) -> dict[str, Any]:
    crd = copy.deepcopy(crd)
    crd["spec"]["versions"][index]["schema"] = {"openAPIV3Schema": schema}
    return crd


BOGUS = {"type": "object", "properties": {"foo": {"type": "bogus"}}}
BOGUS2 = {"type": "object", "properties": {"foo": {"type": "bogus2"}}}
NON_ATOMIC_SET = {"type": "object", "properties": {"foo": {"type": "array", "x-kubernetes-list-type": "set",
                                                           "items": {"type": "object", "properties": {
                                                               "a": {"type": "string"}}}}}}


def test_unchanged_is_valid() -> None:
    crd = stored(make_crd())
    assert validate_crd_update(crd, crd) == []
    assert validate_crd_update(established(crd), established(crd)) == []


def test_invalid_types_ratcheting() -> None:
    old = stored(make_crd())
    assert_errors(validate_crd_update(with_schema(old, BOGUS), old),
                  (UNSUPPORTED, "spec.validation.openAPIV3Schema.properties[foo].type"))
    # the old object already had an invalid type: new invalid types are tolerated (structurally still wrong)
    errs = validate_crd_update(with_schema(old, BOGUS2), with_schema(old, BOGUS))
    assert all(e.type.value != UNSUPPORTED for e in errs)


def test_non_atomic_set_items_ratcheting() -> None:
    old = stored(make_crd())
    new = with_schema(old, NON_ATOMIC_SET)
    assert_errors(validate_crd_update(new, old),
                  (INVALID, "spec.validation.openAPIV3Schema.properties[foo].items.x-kubernetes-map-type"))
    assert validate_crd_update(new, new) == []


def test_structural_to_non_structural_not_allowed() -> None:
    old = stored(make_crd())
    new = with_schema(old, {"type": "object", "properties": {"foo": {}}})
    assert_errors(validate_crd_update(new, old), (REQUIRED, "spec.validation.openAPIV3Schema.properties[foo].type"))


def test_non_structural_allowed_if_old_non_structural() -> None:
    versions = [version("version", schema={"type": "object", "properties": {"foo": {}}}),
                version("version2", storage=False, schema={"type": "object", "properties": {"foo": {"type": "number"}}})]
    old = stored(make_crd(versions=versions, preserveUnknownFields=True))
    new = with_schema(with_schema(old, {"type": "object", "properties": {"foo": {"description": "b"}}}),
                      {"type": "object", "properties": {"foo": {"description": "a"}}}, 1)
    assert validate_crd_update(new, old) == []


def test_conversion_review_versions_ratcheting() -> None:
    conversion = webhook(url="https://example.com/webhook")
    conversion["webhook"]["conversionReviewVersions"] = ["invalid-version"]
    versions = [version("version", schema={"type": "object"}), version("version2", storage=False,
                                                                       schema={"type": "object"})]
    new = stored(make_crd(versions=versions, conversion=conversion))
    old_invalid = copy.deepcopy(new)
    old_invalid["spec"]["conversion"]["webhook"]["conversionReviewVersions"] = ["invalid-version-old"]
    assert validate_crd_update(new, old_invalid) == []
    old_valid = copy.deepcopy(new)
    old_valid["spec"]["conversion"]["webhook"]["conversionReviewVersions"] = ["v1beta1", "invalid-version"]
    assert_errors(validate_crd_update(new, old_valid), (INVALID, "spec.conversion.conversionReviewVersions"))
    old_missing = copy.deepcopy(new)
    old_missing["spec"]["conversion"]["webhook"]["conversionReviewVersions"] = []
    assert_errors(validate_crd_update(new, old_missing), (INVALID, "spec.conversion.conversionReviewVersions"))


def test_ca_bundle_ratcheting() -> None:
    versions = [version("version", schema={"type": "object"}), version("version2", storage=False,
                                                                       schema={"type": "object"})]
    good = stored(make_crd(versions=versions, conversion=webhook(
        service={"name": "n", "namespace": "ns", "port": 443}, caBundle=example_cert_b64())))
    bad = copy.deepcopy(good)
    bad["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = "Cg=="
    # the existing bundle is already invalid: keeping an invalid one is fine
    assert validate_crd_update(established(bad), established(bad)) == []
    # not established yet: transitioning to an invalid bundle is fine
    assert validate_crd_update(bad, good) == []
    # established with a valid bundle: it may not become invalid
    errs = validate_crd_update(established(bad), established(good))
    assert [str(e) for e in errs] == [
        'spec.conversion.webhookClientConfig.caBundle: Invalid value: "Cg==": unable to load root certificates: '
        "unable to parse bytes as PEM block"]


def test_immutable_names_when_established() -> None:
    old = stored(make_crd())
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Namespaced"
    new["spec"]["names"].update(kind="Other", listKind="OtherList")
    assert validate_crd_update(new, old) == []
    errs = validate_crd_update(established(new), established(old))
    assert [str(e) for e in errs] == ['spec.scope: Invalid value: "Namespaced": field is immutable',
                                      'spec.names.kind: Invalid value: "Other": field is immutable']


def test_group_and_plural_always_immutable() -> None:
    old = stored(make_crd())
    new = copy.deepcopy(old)
    new["spec"]["group"] = "other.com"
    new["spec"]["names"]["plural"] = "others"
    new["metadata"]["name"] = "others.other.com"
    assert_errors(validate_crd_update(new, old), (INVALID, "spec.group", "field is immutable"),
                  (INVALID, "spec.names.plural", "field is immutable"),
                  (INVALID, "metadata.name", "field is immutable"))


def test_version_deleted_from_stored_versions() -> None:
    versions = [version("version", schema={"type": "object"}), version("version2", storage=False,
                                                                       schema={"type": "object"})]
    old = stored(make_crd(versions=versions))
    old["status"]["storedVersions"] = ["version", "version2"]
    new = copy.deepcopy(old)
    new["spec"]["versions"] = new["spec"]["versions"][:1]
    assert_errors(validate_crd_update(new, old), (INVALID, "status.storedVersions[1]"))


def test_preserve_unknown_fields_switch() -> None:
    old = stored(make_crd())
    new = copy.deepcopy(old)
    new["spec"]["preserveUnknownFields"] = True
    assert_errors(validate_crd_update(new, old), (INVALID, "spec.preserveUnknownFields"))
    assert validate_crd_update(new, new) == []
    # switching it off needs a structural schema: a non-structural one is rejected
    off = with_schema(copy.deepcopy(new), {"type": "object", "properties": {"foo": {}}})
    off["spec"]["preserveUnknownFields"] = False
    assert_errors(validate_crd_update(off, with_schema(new, {"type": "object", "properties": {"foo": {}}})),
                  (REQUIRED, "spec.validation.openAPIV3Schema.properties[foo].type"))


def test_schema_required_ratcheting() -> None:
    versions = [version("version"), version("version2", storage=False)]
    old = stored(make_crd(versions=versions, preserveUnknownFields=True))
    assert validate_crd_update(old, old) == []
    partly = with_schema(old, {"type": "object"})
    assert validate_crd_update(partly, partly) == []
    full = with_schema(partly, {"type": "object"}, 1)
    new = copy.deepcopy(full)
    new["spec"]["versions"][1].pop("schema")
    assert_errors(validate_crd_update(new, full), (REQUIRED, "spec.versions[1].schema.openAPIV3Schema"))


MAP_LIST = {"type": "object", "properties": {"list": {
    "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key"],
    "items": {"type": "object", "properties": {"key": {"type": "string"}}}}}}


def test_map_list_keys_ratcheting() -> None:
    old = stored(make_crd())
    new = with_schema(old, MAP_LIST)
    assert_errors(validate_crd_update(new, old),
                  (REQUIRED, "spec.validation.openAPIV3Schema.properties[list].items.properties[key].default"))
    changed = copy.deepcopy(MAP_LIST)
    changed["properties"]["list"]["description"] = "changed"
    assert validate_crd_update(with_schema(old, changed), new) == []


def test_nullable_set_items_ratcheting() -> None:
    schema = {"type": "object", "properties": {"set": {"type": "array", "x-kubernetes-list-type": "set",
                                                       "items": {"type": "string", "nullable": True}}}}
    old = stored(make_crd())
    new = with_schema(old, schema)
    assert_errors(validate_crd_update(new, old),
                  (FORBIDDEN, "spec.validation.openAPIV3Schema.properties[set].items.nullable"))
    assert validate_crd_update(new, new) == []


def test_update_requires_resource_version() -> None:
    old = stored(make_crd())
    new = copy.deepcopy(old)
    del new["metadata"]["resourceVersion"]
    assert_errors(validate_crd_update(new, old), (INVALID, "metadata.resourceVersion", "must be specified"))


def test_api_approval_only_on_change() -> None:
    old = stored(make_crd(group="group.k8s.io"))
    old["metadata"]["name"] = "plural.group.k8s.io"
    # an unapproved protected CRD stored earlier stays updatable while its approval state is unchanged
    assert validate_crd_update(old, old) == []
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {"api-approved.kubernetes.io": "bogus"}
    assert_errors(validate_crd_update(new, old), (INVALID, "metadata.annotations[api-approved.kubernetes.io]"))


def test_status_update() -> None:
    old = stored(make_crd())
    new = copy.deepcopy(old)
    new["status"]["acceptedNames"] = {"plural": "Bad_Plural", "kind": "Plural", "listKind": "Plural"}
    errs = validate_crd_status_update(new, old)
    assert_errors(errs, (INVALID, "status.acceptedNames.plural"),
                  (INVALID, "status.acceptedNames.listKind", "kind and listKind may not be the same"))
    assert validate_crd_status({"acceptedNames": {"plural": "ok"}}, Path("status")) == []


# a messageExpression over the per-expression limit (10M), far below the per-CRD one (100M)
EXPENSIVE = {"type": "object", "properties": {"f": {
    "type": "array", "maxItems": 1000, "items": {"type": "string", "maxLength": 100000},
    "x-kubernetes-validations": [{"rule": "true", "messageExpression": "self.all(x, x.contains('ab')) ? 'a' : 'b'"}]}}}


def test_per_expression_cost_suppressed_for_unchanged_versions() -> None:
    old = stored(make_crd(versions=[version("v1", schema=EXPENSIVE)]))
    changed = copy.deepcopy(EXPENSIVE)
    changed["description"] = "v2"
    new = copy.deepcopy(old)
    new["spec"]["versions"].append(version("v2", storage=False, schema=changed))
    new["metadata"]["labels"] = {"changed": "yes"}
    # versions[0] existed unchanged in the old object: only the new version is held to the limit
    assert_errors(validate_crd_update(new, old), (
        FORBIDDEN, "spec.versions[1].schema.openAPIV3Schema.properties[f].x-kubernetes-validations[0]."
        "messageExpression", "estimated messageExpression cost exceeds budget"))
    # the same schema in both versions becomes the top-level one, exempted through spec.version (v1)
    new["spec"]["versions"][1]["schema"] = {"openAPIV3Schema": copy.deepcopy(EXPENSIVE)}
    assert validate_crd_update(new, old) == []
    assert_errors(validate_crd(new), (FORBIDDEN, "spec.validation.openAPIV3Schema.properties[f]."
                                      "x-kubernetes-validations[0].messageExpression"))


@pytest.mark.parametrize(("versions", "storage", "stored", "expected"), [
    (["v1"], "v1", ["v1"], ()),
    (["v1"], "v1", [], ((INVALID, "status.storedVersions", "Invalid value: []: must have at least one stored version"),)),
    (["v1alpha", "v1beta1", "v1"], "v1", ["v1alpha", "v1"], ()),
    (["v1beta1", "v1"], "v1", ["v1alpha", "v1beta1", "v1"],
     ((INVALID, "status.storedVersions[0]", 'Invalid value: "v1alpha": missing from spec.versions'),)),
    (["v1alpha", "v1beta1", "v1"], "v1", ["v1alpha", "v1beta1"],
     ((INVALID, "status.storedVersions", 'Invalid value: ["v1alpha","v1beta1"]: must have the storage version v1'),)),
])
def test_stored_versions_table(versions: list[str], storage: str, stored: list[str], expected: Any) -> None:
    spec_versions = [{"name": v, "storage": v == storage} for v in versions]
    errs = validate_stored_versions(stored, spec_versions, Path("status", "storedVersions"))
    assert_errors(errs, *expected)
