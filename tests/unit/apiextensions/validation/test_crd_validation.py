"""ValidateCustomResourceDefinition (create) on v1 CRDs: cases ported from upstream
TestValidateCustomResourceDefinition and TestSelectableFields, written in the v1 shape. Paths are the
internal ones kube-apiserver reports (a schema shared by all versions is spec.validation)."""

from __future__ import annotations

from typing import Any

import pytest
from crdtestutil import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    REQUIRED,
    TOO_MANY,
    UNSUPPORTED,
    assert_errors,
    example_cert_b64,
    make_crd,
    version,
    webhook,
)

from kube_apiserver.apiextensions.validation import validate_crd

TWO_VERSIONS = [version("version", schema={"type": "object"}),
                version("version2", storage=False, schema={"type": "object"})]
CONV = "spec.conversion"
CC = f"{CONV}.webhookClientConfig"


def two(**spec: Any) -> dict[str, Any]:
    return make_crd(versions=[dict(v) for v in TWO_VERSIONS], **spec)


def test_valid_crd() -> None:
    assert validate_crd(make_crd()) == []
    assert validate_crd(two()) == []


def test_invalid_types_disallowed() -> None:
    crd = make_crd(schema={"type": "object", "properties": {"foo": {"type": "bogus"}}})
    errs = validate_crd(crd)
    assert_errors(errs, (UNSUPPORTED, "spec.validation.openAPIV3Schema.properties[foo].type"))
    assert str(errs[0]) == ('spec.validation.openAPIV3Schema.properties[foo].type: Unsupported value: "bogus": '
                            'supported values: "array", "boolean", "integer", "number", "object", "string"')


@pytest.mark.parametrize("port", [0, 65536])
def test_webhook_invalid_port(port: int) -> None:
    errs = validate_crd(two(conversion=webhook(service={"name": "n", "namespace": "ns", "port": port})))
    assert [str(e) for e in errs] == [f"{CC}.service.port: Invalid value: {port}: port is not valid: must be between "
                                      "1 and 65535, inclusive"]


def test_webhook_invalid_ca_bundle_allowed_on_create() -> None:
    crd = two(conversion=webhook(service={"name": "n", "namespace": "ns", "port": 443}, caBundle="Cg=="))
    assert validate_crd(crd) == []
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = example_cert_b64()
    assert validate_crd(crd) == []


def test_webhook_both_service_and_url() -> None:
    crd = two(conversion=webhook(url="https://example.com/webhook", service={"name": "n", "namespace": "ns"}))
    assert [str(e) for e in validate_crd(crd)] == [f"{CC}: Required value: exactly one of url or service is required"]


def test_webhook_blank_url() -> None:
    errs = validate_crd(two(conversion=webhook(url="")))
    assert [str(e) for e in errs] == [
        f"{CC}.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
        f'{CC}.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
    ]


def test_webhook_url_details() -> None:
    errs = validate_crd(two(conversion=webhook(url="http://user@example.com/path?q=1#frag")))
    assert_errors(errs, (INVALID, f"{CC}.url", "'https' is the only allowed URL scheme"),
                  (INVALID, f"{CC}.url", "user information is not permitted in the URL"),
                  (INVALID, f"{CC}.url", "fragments are not permitted in the URL"),
                  (INVALID, f"{CC}.url", "query parameters are not permitted in the URL"))
    errs = validate_crd(two(conversion=webhook(url="https://example.com:abc/")))
    assert [str(e) for e in errs] == [f'{CC}.url: Required value: url must be a valid URL: parse '
                                      f'"https://example.com:abc/": invalid port ":abc" after host; desired format: '
                                      "https://host[/path]"]


def test_webhook_service_path() -> None:
    errs = validate_crd(two(conversion=webhook(service={"name": "n", "namespace": "ns", "port": 443,
                                                        "path": "/foo//Bar"})))
    assert_errors(errs, (INVALID, f"{CC}.service.path", "segment[1] may not be empty"),
                  (INVALID, f"{CC}.service.path", "segment[2]: a lowercase RFC 1123 subdomain"))


def test_webhook_config_should_not_be_set_for_none() -> None:
    crd = two(conversion={"strategy": "None", "webhook": {"clientConfig": {"url": "https://example.com/webhook"},
                                                          "conversionReviewVersions": ["v1beta1"]}})
    assert [str(e) for e in validate_crd(crd)] == [
        f"{CC}: Forbidden: should not be set when strategy is not set to Webhook",
        f"{CONV}.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"]


@pytest.mark.parametrize(("versions", "expected"), [
    (["invalid-version"], ((INVALID, f"{CONV}.conversionReviewVersions", "must include at least one of v1, v1beta1"),)),
    (["0v"], ((INVALID, f"{CONV}.conversionReviewVersions[0]", "a DNS-1035 label"),
              (INVALID, f"{CONV}.conversionReviewVersions"))),
    (["invalid-version", "v1beta1"], ()),
    (["v1beta1", "v1beta1"], ((INVALID, f"{CONV}.conversionReviewVersions[1]", "duplicate version"),)),
    ([], ((REQUIRED, f"{CONV}.conversionReviewVersions"),)),
])
def test_conversion_review_versions(versions: list[str], expected: Any) -> None:
    conversion = webhook(url="https://example.com/webhook")
    conversion["webhook"]["conversionReviewVersions"] = versions
    assert_errors(validate_crd(two(conversion=conversion)), *expected)


def test_missing_webhook_config_and_bad_strategy() -> None:
    crd = two(conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}})
    assert [str(e) for e in validate_crd(crd)] == [f"{CC}: Required value: required when strategy is set to Webhook"]
    crd = two(conversion={"strategy": "non_existing_conversion"})
    assert [str(e) for e in validate_crd(crd)] == [
        f'{CONV}.strategy: Unsupported value: "non_existing_conversion": supported values: "None", "Webhook"']


def test_webhook_conversion_with_preserve_unknown_fields() -> None:
    crd = two(conversion=webhook(url="https://example.com/webhook"), preserveUnknownFields=True)
    assert_errors(validate_crd(crd), (INVALID, f"{CONV}.strategy", "must be None if spec.preserveUnknownFields"),
                  (INVALID, "spec.preserveUnknownFields", "cannot set to true"))


@pytest.mark.parametrize(("storage", "expected"), [
    ((False, False), ((INVALID, "spec.versions", "must have exactly one version marked as storage version"),
                      (INVALID, "status.storedVersions", "must have the storage version"))),
    ((True, True), ((INVALID, "spec.versions", "must have exactly one version marked as storage version"),
                    (INVALID, "status.storedVersions", "must have the storage version version2"))),
])
def test_storage_version_count(storage: tuple[bool, bool], expected: Any) -> None:
    versions = [version("version", storage=storage[0], schema={"type": "object"}),
                version("version2", storage=storage[1], schema={"type": "object"})]
    crd = make_crd(versions=versions)
    crd["status"]["storedVersions"] = ["version"] if storage[0] else ["version2x"]
    if not storage[0]:
        expected = ((INVALID, "status.storedVersions[0]", "missing from spec.versions"),
                    (INVALID, "spec.versions"))
    assert_errors(validate_crd(crd), *expected)


def test_stored_versions() -> None:
    crd = make_crd()
    crd["status"]["storedVersions"] = []
    assert [str(e) for e in validate_crd(crd)] == [
        "status.storedVersions: Invalid value: []: must have at least one stored version"]
    crd["status"]["storedVersions"] = ["version", "gone"]
    assert [str(e) for e in validate_crd(crd)] == [
        'status.storedVersions[1]: Invalid value: "gone": missing from spec.versions; gone was previously a storage '
        "version, and must remain in spec.versions until a storage migration ensures no data remains persisted in "
        "gone and removes gone from status.storedVersions"]


def test_versions_rendered_as_go_structs() -> None:
    crd = make_crd(versions=[version("v1", schema={"type": "object"}), version("v1", schema={"type": "object"})])
    crd["status"]["storedVersions"] = ["v1"]
    errs = validate_crd(crd)
    assert_errors(errs, (INVALID, "spec.versions", "must contain unique version names"),
                  (INVALID, "spec.versions", "must have exactly one version marked as storage version"),
                  (INVALID, "status.storedVersions", "must have the storage version v1"))
    assert str(errs[0]).startswith('spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,'
                                   '"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,'
                                   '"AdditionalPrinterColumns":null,"SelectableFields":null},')


def test_mismatched_name_and_missing_values() -> None:
    crd = make_crd(scope="", names={"plural": "plural"})
    crd["metadata"]["name"] = "plural.not.group.com"
    assert_errors(validate_crd(crd), (INVALID, "metadata.name", 'must be spec.names.plural+"."+spec.group'),
                  (REQUIRED, "spec.scope"), (REQUIRED, "spec.names.singular"), (REQUIRED, "spec.names.kind"),
                  (REQUIRED, "spec.names.listKind"))
    crd = {"metadata": {"name": "plural.group.com"}, "spec": {}}
    assert_errors(validate_crd(crd), (INVALID, "status.storedVersions"), (INVALID, "metadata.name"),
                  (INVALID, "spec.versions"), (REQUIRED, "spec.group"), (REQUIRED, "spec.scope"),
                  (REQUIRED, "spec.names.plural"), (REQUIRED, "spec.names.singular"),
                  (REQUIRED, "spec.names.kind"), (REQUIRED, "spec.names.listKind"))


def test_bad_names() -> None:
    bad = {"plural": "pl()*ural", "singular": "value()*a", "kind": "value()*a", "listKind": "value()*a"}
    crd = make_crd(group="group", scope="foo", names=dict(bad), versions=[version("ve()*rsion",
                                                                                  schema={"type": "object"})])
    crd["metadata"]["name"] = "plural.group"
    crd["status"] = {"acceptedNames": dict(bad), "storedVersions": ["ve()*rsion"]}
    assert_errors(validate_crd(crd), (INVALID, "metadata.name"), (INVALID, "spec.group"), (UNSUPPORTED, "spec.scope"),
                  (INVALID, "spec.names.plural"), (INVALID, "spec.names.singular"), (INVALID, "spec.names.kind"),
                  (INVALID, "spec.names.listKind", "may have mixed case"),
                  (INVALID, "spec.names.listKind", "kind and listKind may not be the same"),
                  (INVALID, "status.acceptedNames.plural"), (INVALID, "status.acceptedNames.singular"),
                  (INVALID, "status.acceptedNames.kind"), (INVALID, "status.acceptedNames.listKind"),
                  (INVALID, "status.acceptedNames.listKind"), (INVALID, "spec.versions[0].name"),
                  (INVALID, "spec.version"))


def test_bad_group_and_short_names() -> None:
    crd = make_crd(group="group.c(*&om", names={"plural": "plural", "singular": "singular", "kind": "matching",
                                                "listKind": "matching", "shortNames": ["ok", "Bad"],
                                                "categories": ["all", "x_y"]})
    errs = validate_crd(crd)
    assert_errors(errs, (INVALID, "metadata.name"), (INVALID, "spec.group"), (INVALID, "spec.names.listKind"),
                  (INVALID, "spec.names.shortNames[1]"), (INVALID, "spec.names.categories[1]"))
    crd = make_crd(group="group", names={"plural": "plural", "singular": "singular", "kind": "Plural",
                                         "listKind": "PluralList"})
    crd["metadata"]["name"] = "plural.group"
    assert [str(e) for e in validate_crd(crd)] == [
        'spec.group: Invalid value: "group": should be a domain with at least one dot']


def test_additional_properties_and_properties_forbidden() -> None:
    crd = make_crd(schema={"type": "object", "properties": {"foo": {
        "type": "object", "properties": {"bar": {"type": "object"}}, "additionalProperties": False}}})
    assert_errors(validate_crd(crd), (FORBIDDEN, "spec.validation.openAPIV3Schema.properties[foo].additionalProperties"))
    # at the root, ValidateStructural forbids it as well
    crd = make_crd(schema={"type": "object", "properties": {"foo": {"type": "string"}}, "additionalProperties": False})
    assert_errors(validate_crd(crd), (FORBIDDEN, "spec.validation.openAPIV3Schema.additionalProperties", "mutual"),
                  (FORBIDDEN, "spec.validation.openAPIV3Schema.additionalProperties", "must not be used at the root"))


def test_additional_properties_without_properties_allowed() -> None:
    crd = make_crd(schema={"type": "object", "properties": {"foo": {"type": "object", "additionalProperties": {
        "type": "string"}}}})
    assert validate_crd(crd) == []


def test_per_version_schemas_stay_per_version() -> None:
    versions = [version("version", schema={"type": "object", "properties": {"a": {"type": "bogus"}}}),
                version("version2", storage=False, schema={"type": "object"})]
    errs = validate_crd(make_crd(versions=versions))
    assert_errors(errs, (UNSUPPORTED, "spec.versions[0].schema.openAPIV3Schema.properties[a].type"))


def test_x_preserve_unknown_fields_false() -> None:
    crd = make_crd(schema={"x-kubernetes-preserve-unknown-fields": False})
    assert_errors(validate_crd(crd), (INVALID, "spec.validation.openAPIV3Schema.x-kubernetes-preserve-unknown-fields"))


def test_schema_is_required() -> None:
    versions = [version("version"), version("version2", storage=False, schema=None)]
    versions[1]["schema"] = {}
    crd = make_crd(versions=versions)
    assert_errors(validate_crd(crd), (REQUIRED, "spec.versions[0].schema.openAPIV3Schema"),
                  (REQUIRED, "spec.versions[1].schema.openAPIV3Schema"))


def test_preserve_unknown_fields_true() -> None:
    errs = validate_crd(make_crd(preserveUnknownFields=True))
    assert [str(e) for e in errs] == [
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields "
        "to true in spec.versions[*].schema instead"]


def test_label_selector_path_outside_spec_and_status() -> None:
    def scale(selector: str | None) -> dict[str, Any]:
        s: dict[str, Any] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
        if selector is not None:
            s["labelSelectorPath"] = selector
        return {"scale": s}

    versions = [version(f"version{i}", storage=i == 0, schema={"type": "object"}, subresources=scale(sel))
                for i, sel in enumerate([None, ".status.labelSelector", ".spec.labelSelector", ".labelSelector"])]
    errs = validate_crd(make_crd(versions=versions))
    assert [str(e) for e in errs] == ['spec.versions[3].subresources.scale.labelSelectorPath: Invalid value: '
                                      '".labelSelector": should be a json path under either .spec or .status']


def test_scale_paths() -> None:
    crd = make_crd(versions=[version("version", schema={"type": "object"}, subresources={
        "scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas"}})])
    assert [str(e) for e in validate_crd(crd)] == [
        'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path '
        "starting with .",
        'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under '
        ".status"]
    crd["spec"]["versions"][0]["subresources"]["scale"] = {}
    assert_errors(validate_crd(crd), (REQUIRED, "spec.subresources.scale.specReplicasPath"),
                  (REQUIRED, "spec.subresources.scale.statusReplicasPath"))


def test_status_subresource_root_schema() -> None:
    crd = make_crd(versions=[version("version", schema={"type": "object", "anyOf": [{"required": ["a"]}]},
                                     subresources={"status": {}})])
    assert_errors(validate_crd(crd), (INVALID, "spec.validation.openAPIV3Schema", "only [Description Type"))


def test_printer_columns() -> None:
    columns = [{"name": "", "type": "bogus", "format": "hex", "jsonPath": "spec"},
               {"name": "ok", "type": "string", "jsonPath": ".spec.x"},
               {"name": "Name", "type": "", "jsonPath": ""}]
    crd = make_crd(versions=[version("version", schema={"type": "object"}, additionalPrinterColumns=columns)])
    assert [str(e) for e in validate_crd(crd)] == [
        "spec.additionalPrinterColumns[0].name: Required value",
        'spec.additionalPrinterColumns[0].type: Invalid value: "bogus": must be one of '
        "boolean,date,integer,number,string",
        'spec.additionalPrinterColumns[0].format: Invalid value: "hex": must be one of '
        "byte,date,date-time,double,float,int32,int64,password",
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple json path starting with .',
        "spec.additionalPrinterColumns[2].type: Required value: must be one of boolean,date,integer,number,string",
        "spec.additionalPrinterColumns[2].JSONPath: Required value"]


def test_deprecation_warning() -> None:
    versions = [version("version", schema={"type": "object"}, deprecationWarning="x"),
                version("version2", storage=False, schema={"type": "object"}, deprecated=True,
                        deprecationWarning="bad\tchar")]
    errs = validate_crd(make_crd(versions=versions))
    assert [str(e) for e in errs] == [
        'spec.versions[0].deprecationWarning: Invalid value: "x": can only be set for deprecated versions',
        'spec.versions[1].deprecationWarning: Invalid value: "bad\\tchar": must only contain printable UTF-8 '
        "characters; non-printable character found at index 3"]


def test_defaults_require_pruning_and_structural() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    assert validate_crd(make_crd(schema=schema)) == []
    errs = validate_crd(make_crd(schema=schema, preserveUnknownFields=True))
    assert_errors(errs, (INVALID, "spec.preserveUnknownFields", "must be false in order to use defaults"),
                  (INVALID, "spec.preserveUnknownFields", "cannot set to true"))


def test_top_level_metadata_default_forbidden() -> None:
    crd = make_crd(schema={"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}})
    assert_errors(validate_crd(crd), (FORBIDDEN, "spec.validation.openAPIV3Schema.properties[metadata].default",
                                      "must not be set in top-level metadata"))


def test_api_approval() -> None:
    crd = make_crd(group="group.k8s.io")
    crd["metadata"]["name"] = "plural.group.k8s.io"
    assert [str(e) for e in validate_crd(crd)] == [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
        'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111']
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "yes"}
    assert_errors(validate_crd(crd), (INVALID, "metadata.annotations[api-approved.kubernetes.io]",
                                      'with either a URL or a reason starting with "unapproved"'))
    for value in ("unapproved, experimental", "https://github.com/kubernetes/kubernetes/pull/78458"):
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": value}
        assert validate_crd(crd) == []


SELECTABLE_SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "color": {"type": "string"}, "quantity": {"type": "integer"}, "size": {"type": "string",
                                                                              "enum": ["S", "M"]},
        "obj": {"type": "object"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "metadata": {"type": "object", "properties": {"name": {"type": "string"}}}}}


def selectable(*paths: str) -> dict[str, Any]:
    return make_crd(versions=[version("version", schema=SELECTABLE_SCHEMA,
                                      selectableFields=[{"jsonPath": p} for p in paths])])


def test_selectable_fields_valid() -> None:
    assert validate_crd(selectable(".spec.color", ".spec.quantity", ".spec.size", ".spec.labels.x")) == []


def test_selectable_fields_invalid() -> None:
    errs = validate_crd(selectable(".spec.nope", ".spec.obj", "", ".spec.color", ".spec.color", ".spec['color']",
                                   ".metadata.name"))
    sf = "spec.selectableFields"
    assert [str(e) for e in errs] == [
        f'{sf}[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
        f'{sf}[1].jsonPath: Invalid value: ".spec.obj": must point to a field of type string, boolean or integer. '
        "Enum string fields and strings with formats are allowed.",
        f"{sf}[2].jsonPath: Required value",
        f'{sf}[4].jsonPath: Duplicate value: ".spec.color"',
        f"{sf}[5].jsonPath: Invalid value: \".spec['color']\": is an invalid path: array notation is not allowed",
        f'{sf}[6].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata']


def test_selectable_fields_too_many() -> None:
    properties = {f"f{i}": {"type": "string"} for i in range(9)}
    crd = make_crd(versions=[version("version", schema={"type": "object", "properties": properties},
                                     selectableFields=[{"jsonPath": f".f{i}"} for i in range(9)])])
    assert_errors(validate_crd(crd), (TOO_MANY, "spec.selectableFields"))
    assert str(validate_crd(crd)[0]) == "spec.selectableFields: Too many: 9: must have at most 8 items"


def test_selectable_fields_per_version_without_schema() -> None:
    versions = [version("version", schema={"type": "object"}, selectableFields=[{"jsonPath": ".a"}]),
                version("version2", storage=False, schema={"type": "object", "properties": {"a": {"type": "string"}}})]
    errs = validate_crd(make_crd(versions=versions))
    assert_errors(errs, (INVALID, "spec.versions[0].selectableFields[0].jsonPath", "does not refer to a valid field"))


def test_duplicate_selectable_field_reports_duplicate() -> None:
    errs = validate_crd(selectable(".spec.color", ".spec.color"))
    assert_errors(errs, (DUPLICATE, "spec.selectableFields[1].jsonPath"))


def _embedded(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-embedded-resource": True, "properties": properties}


def test_v115_era_metadata_defaults() -> None:
    """Upstream's "v1.15 era tests for metadata defaults": defaults in top-level metadata are forbidden,
    defaults in embedded metadata and type meta must validate."""
    string = {"type": "string"}
    schemas = [
        {"type": "object", "properties": {
            "metadata": {"type": "object", "default": {"name": "foo"}},
            "embedded": _embedded({"metadata": {"type": "object", "default": {"name": "foo", "unknown": 42}}})}},
        {"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {**string, "default": "foo"}}},
            "embedded": _embedded({"apiVersion": {**string, "default": "v1"}, "kind": {**string, "default": "Pod"},
                                   "metadata": {"type": "object", "properties": {
                                       "name": {**string, "default": "foo"}}}})}},
        {"type": "object", "properties": {
            "embedded": _embedded({"apiVersion": {**string, "default": "v1"}, "kind": {**string, "default": "%"},
                                   "metadata": {"type": "object", "default": {"labels": {"bar": "x y"}}}})}},
        {"type": "object", "properties": {
            "embedded": _embedded({"metadata": {"type": "object", "properties": {
                "name": {**string, "default": 42},
                "labels": {"type": "object", "properties": {"bar": {**string, "default": 42}}}}}})}},
    ]
    versions = [version(f"v{i + 1}", storage=i == 0, schema=s) for i, s in enumerate(schemas)]
    errs = validate_crd(make_crd(versions=versions))
    v = "spec.versions[{}].schema.openAPIV3Schema"
    assert_errors(errs, (FORBIDDEN, v.format(0) + ".properties[metadata].default"),
                  (FORBIDDEN, v.format(1) + ".properties[metadata].properties[name].default"),
                  (INVALID, v.format(2) + ".properties[embedded].properties[metadata].default"),
                  (INVALID, v.format(2) + ".properties[embedded].properties[kind].default"),
                  (INVALID, v.format(3) + ".properties[embedded].properties[metadata].properties[labels]"
                                          ".properties[bar].default"),
                  (INVALID, v.format(3) + ".properties[embedded].properties[metadata].properties[name].default"))
