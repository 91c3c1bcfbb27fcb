"""SetDefaults for v1 CRDs, the strategy's format warnings, ValidFieldPath (ported from upstream
TestValidateFieldPath) and the v1 -> internal view validation works on."""

from __future__ import annotations

from typing import Any

import pytest
from crdtestutil import make_crd, version

from kube_apiserver.apiextensions.validation import default_crd, warnings_on_create, warnings_on_update
from kube_apiserver.apiextensions.validation.fieldpath import FieldPathError, valid_field_path
from kube_apiserver.apiextensions.validation.internal import spec_to_internal
from kube_apiserver.apiextensions.validation.versions import deprecation_warning_errors


def test_defaults_names_conversion_and_stored_versions() -> None:
    crd: dict[str, Any] = {"spec": {"names": {"plural": "foos", "kind": "Foo"},
                                    "versions": [version("v1", storage=False), version("v2")]}}
    default_crd(crd)
    assert crd["spec"]["names"] == {"plural": "foos", "kind": "Foo", "singular": "foo", "listKind": "FooList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"] == {"storedVersions": ["v2"]}


def test_defaults_keep_set_values() -> None:
    crd: dict[str, Any] = {"spec": {"names": {"kind": "Foo", "singular": "bar", "listKind": "Bars"},
                                    "conversion": {"strategy": "Webhook"}, "versions": [version("v1")]},
                           "status": {"storedVersions": ["v0", "v1"]}}
    default_crd(crd)
    assert crd["spec"]["names"] == {"kind": "Foo", "singular": "bar", "listKind": "Bars"}
    assert crd["spec"]["conversion"] == {"strategy": "Webhook"}
    assert crd["status"]["storedVersions"] == ["v0", "v1"]


def test_defaults_without_kind_or_storage() -> None:
    crd: dict[str, Any] = {"spec": {"names": {"plural": "foos"}, "versions": [version("v1", storage=False)]}}
    default_crd(crd)
    assert crd["spec"]["names"] == {"plural": "foos"}
    assert "status" not in crd
    empty: dict[str, Any] = {}
    default_crd(empty)
    assert empty == {"spec": {"conversion": {"strategy": "None"}}}


def test_defaults_webhook_service_port() -> None:
    crd: dict[str, Any] = {"spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {
        "service": {"name": "n", "namespace": "ns"}}}}}}
    default_crd(crd)
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] = 8443
    default_crd(crd)
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 8443


def test_internal_view_hoists_identical_per_version_fields() -> None:
    schema = {"openAPIV3Schema": {"type": "object", "required": []}}
    spec = make_crd(versions=[
        version("v1", schema={"type": "object"}, subresources={"status": {}}),
        version("v2", storage=False, schema={"type": "object"}, subresources={"status": {}, "scale": None}),
    ])["spec"]
    spec["versions"][1]["schema"] = schema  # nil and empty slices are semantically equal
    internal = spec_to_internal(spec)
    assert internal["version"] == "v1"
    assert internal["validation"] == {"openAPIV3Schema": {"type": "object"}}
    assert internal["subresources"] == {"status": {}}
    assert all("schema" not in v and "subresources" not in v for v in internal["versions"])


def test_internal_view_keeps_differing_fields_per_version() -> None:
    spec = make_crd(versions=[version("v1", schema={"type": "object"}, subresources={"status": {}}),
                              version("v2", storage=False, schema={"type": "object"}, subresources={})])["spec"]
    spec["versions"][1]["schema"]["openAPIV3Schema"]["default"] = {}
    spec["versions"][1]["conversion"] = None
    internal = spec_to_internal(spec)
    assert internal["validation"] is None and internal["subresources"] is None
    assert [v["subresources"] for v in internal["versions"]] == [{"status": {}}, {}]
    assert internal["preserveUnknownFields"] is False


def test_internal_conversion_view() -> None:
    spec = {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x"},
                                                              "conversionReviewVersions": ["v1"]}}}
    assert spec_to_internal(spec)["conversion"] == {
        "strategy": "Webhook", "webhookClientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}


def test_warnings_on_create() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "format": "date-time"}, "b": {"type": "string", "format": "foo"},
        "c": {"type": "integer", "format": "int32"}, "d": {"type": "string", "format": "k8s-short-name"},
        "e": {"type": "array", "items": {"type": "string", "format": "bar"}}}}
    crd = make_crd(schema=schema)
    assert warnings_on_create(crd) == ['unrecognized format "foo"', 'unrecognized format "k8s-short-name"',
                                       'unrecognized format "bar"']
    # one schema shared by two versions is one internal schema: one warning
    shared = make_crd(versions=[version("v1", schema={"type": "string", "format": "x"}),
                                version("v2", storage=False, schema={"type": "string", "format": "x"})])
    assert warnings_on_create(shared) == ['unrecognized format "x"']


def test_warnings_on_update_only_new_formats() -> None:
    old = make_crd(schema={"type": "object", "properties": {"a": {"type": "string", "format": "foo"}}})
    new = make_crd(schema={"type": "object", "properties": {"a": {"type": "string", "format": "foo"},
                                                            "b": {"type": "string", "format": "baz"}}})
    assert warnings_on_update(new, old) == ['unrecognized format "baz"']
    assert warnings_on_update(old, old) == []


FIELD_SCHEMA = {"type": "object", "properties": {
    "foo": {"type": "object", "additionalProperties": {"type": "object", "properties": {"f1": {"type": "number"}}}},
    "a": {"type": "object", "properties": {
        "bbb": {"type": "object", "properties": {"c": {"type": "number"}, "34": {"type": "number"}}},
        "bbb.c": {"type": "object", "properties": {"a-b34": {"type": "number"}}}}},
    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "number"},
                                                                         "a-b.34": {"type": "number"}}}}}}


@pytest.mark.parametrize(("path", "error"), [
    (".a", ""), (".a.bbb", ""), (".foo.f1", ""), (".a['bbb']", ""), (".a['bbb.c']", ""),
    (".a['bbb.c'].a-b34", ""), (".a['bbb.c']['a-b34']", ""), (".a.bbb.c", ""), (".a.bbb['34']", ""),
    (".a.foo", "does not refer to a valid field"), (".a.bbb[0]", "expected single quoted string but got 0"),
    (".a.bbb.34", ""), (".list", ""), (".list[1]", "expected single quoted string but got 1"),
    (".list.a", "does not refer to a valid field"), (".list['a-b.34']", "does not refer to a valid field"),
    (".list.a-b.34", "does not refer to a valid field"), ("a", "expected [ or . but got: a"),
    (".c", "does not refer to a valid field"), (".a..b", "does not refer to a valid field"),
    (".list[-1]", "expected single quoted string but got -1"),
    (".list[1.0]", "expected single quoted string but got 1"),
])
def test_valid_field_path(path: str, error: str) -> None:
    if not error:
        valid_field_path(path, FIELD_SCHEMA)
        return
    with pytest.raises(FieldPathError, match=error.replace("[", r"\[").replace(".", r"\.")):
        valid_field_path(path, FIELD_SCHEMA)


def test_valid_field_path_results() -> None:
    found = valid_field_path(".foo.f1", FIELD_SCHEMA)
    assert (found.path, found.root, found.schema) == ("foo[f1]", "foo", FIELD_SCHEMA["properties"]["foo"][
        "additionalProperties"])
    assert valid_field_path(".a['bbb.c']", FIELD_SCHEMA).path == "a.bbb.c"


@pytest.mark.parametrize(("deprecated", "warning", "errors"), [
    (False, None, []), (False, "", ["can only be set for deprecated versions"]),
    (True, None, []), (True, "", ["must not be an empty string"]),
    (True, "x" * 257, ["must be <= 256 characters long"]), (True, "ok warning", []),
    (True, "a\u00e9\u0007", ["must only contain printable UTF-8 characters; non-printable character found at "
                             "index 3"]),
])
def test_deprecation_warning(deprecated: bool, warning: str | None, errors: list[str]) -> None:
    assert deprecation_warning_errors(deprecated, warning) == errors
