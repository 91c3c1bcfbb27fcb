"""String validators, IP/CIDR checks and ObjectMeta validation, with k8s' texts."""

import pytest

from kube_apiserver.apimachinery.field import Path
from kube_apiserver.apimachinery.validation import (
    is_c_identifier,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_var_name,
    is_fully_qualified_domain_name,
    is_qualified_name,
    is_valid_cidr,
    is_valid_cidr_for_legacy_field,
    is_valid_ip,
    is_valid_ip_for_legacy_field,
    is_valid_label_value,
    is_valid_percent,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_delete_options,
    validate_dry_run,
    validate_field_manager,
    validate_field_validation,
    validate_label_selector,
    validate_managed_fields,
    validate_object_meta,
    validate_object_meta_update,
    validate_patch_options,
    validate_path_segment_name,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_dns1123_subdomain() -> None:
    for good in ("a", "ab", "a-b", "0", "a.b", "1.2.3.4", "a" * 253, "a-1.b-2"):
        assert is_dns1123_subdomain(good) == [], good
    assert is_dns1123_subdomain("Foo_bar") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a..b") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a\n") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]


def test_dns1123_label() -> None:
    assert is_dns1123_label("my-name") == []
    assert is_dns1123_label("a" * 63) == []
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("-a") == [LABEL_MSG]
    assert is_dns1123_label("A" * 64) == ["must be no more than 63 characters", LABEL_MSG]


def test_dns1035_label() -> None:
    assert is_dns1035_label("abc-123") == []
    assert is_dns1035_label("1abc") == [DNS1035_MSG]


def test_qualified_name() -> None:
    for good in ("simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple",
                 "now-with.dashes-and.dots/simple", "a" * 63, "a" * 253 + "/" + "b" * 63, "MyName"):
        assert is_qualified_name(good) == [], good
    assert is_qualified_name("") == ["name part must be non-empty", QNAME_MSG]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 characters"]
    assert is_qualified_name("/b") == ["prefix part must be non-empty"]
    assert is_qualified_name("Foo.com/b") == ["prefix part " + SUBDOMAIN_MSG]
    assert is_qualified_name("-x") == [QNAME_MSG]
    assert is_qualified_name("a/b/c") == [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
        "and '/' (e.g. 'example.com/MyName')"
    ]


def test_label_value() -> None:
    for good in ("", "simple", "now-with-dashes", "1234", "a_b.c", "a" * 63):
        assert is_valid_label_value(good) == [], good
    assert is_valid_label_value("a" * 64) == ["must be no more than 63 characters"]
    assert is_valid_label_value("a b") == [LABEL_VALUE_MSG]
    assert is_valid_label_value("é") == [LABEL_VALUE_MSG]


def test_misc_string_checks() -> None:
    assert is_c_identifier("_my_name1") == []
    assert is_c_identifier("1x") == [
        "a valid C identifier must start with alphabetic character or '_', followed by a string of "
        "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
        "validation is '[A-Za-z_][A-Za-z0-9_]*')"
    ]
    assert is_valid_port_num(1) == [] and is_valid_port_num(65535) == []
    assert is_valid_port_num(0) == ["must be between 1 and 65535, inclusive"]
    assert is_valid_port_name("http") == []
    assert is_valid_port_name("-1--") == [
        "must contain at least one letter (a-z)",
        "must not contain consecutive hyphens",
        "must not begin or end with a hyphen",
    ]
    assert is_valid_port_name("a" * 16) == ["must be no more than 15 characters"]
    assert is_valid_percent("93%") == []
    assert is_config_map_key("key.name") == []
    assert is_config_map_key("..a") == ["must not start with '..'"]
    assert is_config_map_key(".") == ["must not be '.'"]
    assert is_config_map_key("a b")[0].startswith(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', ")
    assert is_env_var_name("MY_ENV.NAME") == []
    assert is_env_var_name("1a")[0].startswith("a valid environment variable name must consist")


def test_fully_qualified_domain_name() -> None:
    assert is_fully_qualified_domain_name(Path("f"), "example.com.") == []
    assert [str(e) for e in is_fully_qualified_domain_name(Path("f"), "example")] == [
        'f: Invalid value: "example": should be a domain with at least two segments separated by dots']
    assert [str(e) for e in is_fully_qualified_domain_name(Path("f"), "")] == ["f: Required value"]


@pytest.mark.parametrize(
    ("value", "err", "legacy_err", "legacy_strict_err"),
    [
        ("1.2.3.4", "", "", ""),
        ("0.0.0.0", "", "", ""),
        ("255.255.255.255", "", "", ""),
        ("1234::abcd", "", "", ""),
        ("::", "", "", ""),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "", ""),
        ("0:0:0:0:0:0:0:0", 'must be in canonical form ("::")', "", ""),
        ("0001:002:03:4::", 'must be in canonical form ("1:2:3:4::")', "", ""),
        ("1234::ABCD", 'must be in canonical form ("1234::abcd")', "", ""),
        ("1.1.1.01", "must not have leading 0s", "", "must not have leading 0s"),
        ("::ffff:1.1.1.1", "must not be an IPv4-mapped IPv6 address", "",
         "must not be an IPv4-mapped IPv6 address"),
        *[(bad, "must be a valid IP address", "must be a valid IP address", "must be a valid IP address")
          for bad in ("", "aaaaaaa", "myhost.mydomain", "1.2.3.0/24", "1.2.3.400", "-1.0.0.0",
                      "2001:db8::10005", "1.2.3.4:80", "[2001:db8::1]", "[2001:db8::1]:80",
                      "example.com:80", "1234::abcd%eth0", "169.254.0.0%eth0")],
    ],
)
def test_ip(value: str, err: str, legacy_err: str, legacy_strict_err: str) -> None:
    for errs, want in (
        (is_valid_ip(Path("ip"), value), err),
        (is_valid_ip_for_legacy_field(Path("ip"), value, strict=False), legacy_err),
        (is_valid_ip_for_legacy_field(Path("ip"), value, strict=True), legacy_strict_err),
    ):
        assert [e.detail for e in errs if want in e.detail] == [e.detail for e in errs]
        assert len(errs) == (1 if want else 0)
    assert is_valid_ip_for_legacy_field(Path("ip"), value, True, [value]) == []


def test_ip_message() -> None:
    errs = is_valid_ip(Path("spec", "clusterIP"), "10.0.0.1a")
    assert [str(e) for e in errs] == [
        'spec.clusterIP: Invalid value: "10.0.0.1a": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']


@pytest.mark.parametrize(
    ("value", "err", "legacy_err"),
    [
        ("1.0.0.0/8", "", ""),
        ("0.0.0.0/0", "", ""),
        ("1.1.1.1/32", "", ""),
        ("2001:4860:4860::/48", "", ""),
        ("::/0", "", ""),
        ("::1/128", "", ""),
        ("2a00:79e0:2:0::/64", 'must be in canonical form ("2a00:79e0:2::/64")', ""),
        ("2001:DB8::/64", 'must be in canonical form ("2001:db8::/64")', ""),
        ("1.1.01.0/24", "must not have leading 0s in IP", ""),
        ("::ffff:1.1.1.0/24", "must not have an IPv4-mapped IPv6 address", ""),
        ("::ffff:1.1.1.0/120", "must not have an IPv4-mapped IPv6 address", ""),
        ("1.2.3.4/24", "must not have bits set beyond the prefix length", ""),
        ("2001:db8::1/64", "must not have bits set beyond the prefix length", ""),
        ("192.168.0.0/016", "must not have leading 0s", ""),
        *[(bad, "must be a valid CIDR value", "must be a valid CIDR value")
          for bad in ("", "aaaaaaa", "1.2.3.4", "192.168.0.1/healthz", "192.168.0.1/0/99",
                      "192.168.0.0/-16", "192.168.0.0/+16", "1.2.3.0/33")],
    ],
)
def test_cidr(value: str, err: str, legacy_err: str) -> None:
    errs = is_valid_cidr(Path("cidr"), value)
    assert len(errs) == (1 if err else 0) and all(err in e.detail for e in errs)
    legacy = is_valid_cidr_for_legacy_field(Path("cidr"), value, strict=False)
    assert len(legacy) == (1 if legacy_err else 0)


def test_name_functions() -> None:
    assert name_is_dns_subdomain("foo-", True) == []
    assert name_is_dns_subdomain("foo-", False) == [SUBDOMAIN_MSG]
    assert name_is_dns_label("a.b", False) == ["must not contain dots"]
    assert name_is_dns1035_label("abc-", True) == []
    assert validate_path_segment_name(".", False) == ["may not be '.'"]
    assert validate_path_segment_name("..", False) == ["may not be '..'"]
    assert validate_path_segment_name("a/b%c", False) == ["may not contain '/'", "may not contain '%'"]
    assert validate_path_segment_name(".", True) == []
    assert validate_path_segment_name("Any_Thing", False) == []


def _msgs(errs: list) -> list[str]:
    return [str(e) for e in errs]


def test_object_meta_names() -> None:
    ok = {"name": "foo", "namespace": "default"}
    assert validate_object_meta(ok, True, name_is_dns_subdomain) == []
    assert _msgs(validate_object_meta({"namespace": "ns"}, True, name_is_dns_subdomain)) == [
        "metadata.name: Required value: name or generateName is required"]
    assert _msgs(validate_object_meta({"name": "Foo_bar", "namespace": "ns"}, True, name_is_dns_subdomain)) == [
        'metadata.name: Invalid value: "Foo_bar": ' + SUBDOMAIN_MSG]
    assert _msgs(validate_object_meta({"name": "a"}, True, name_is_dns_subdomain)) == [
        "metadata.namespace: Required value"]
    assert _msgs(validate_object_meta({"name": "a", "namespace": "ns"}, False, name_is_dns_subdomain)) == [
        "metadata.namespace: Forbidden: not allowed on this type"]
    assert _msgs(validate_object_meta({"name": "a", "namespace": "foo.bar"}, True, name_is_dns_subdomain)) == [
        'metadata.namespace: Invalid value: "foo.bar": must not contain dots']
    gen = {"generateName": "Foo-", "name": "x", "namespace": "ns"}
    assert _msgs(validate_object_meta(gen, True, name_is_dns_subdomain)) == [
        'metadata.generateName: Invalid value: "Foo-": ' + SUBDOMAIN_MSG]
    assert validate_object_meta({"generateName": "foo-", "name": "foo-x1"}, False, name_is_dns_subdomain) == []
    neg = {"name": "a", "generation": -1}
    assert _msgs(validate_object_meta(neg, False, name_is_dns_subdomain)) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"]
    custom = validate_object_meta({"name": "x"}, False, lambda n, p: ["name-gen"], Path("field"))
    assert _msgs(custom) == ['field.name: Invalid value: "x": name-gen']


def test_object_meta_labels_annotations() -> None:
    meta = {"name": "a", "labels": {"app": "a b", "-bad": "v"}, "annotations": {"x/y/z": "v", "OK.io/Key": "v"}}
    assert _msgs(validate_object_meta(meta, False, name_is_dns_subdomain)) == [
        'metadata.labels: Invalid value: "a b": ' + LABEL_VALUE_MSG,
        'metadata.labels: Invalid value: "-bad": ' + QNAME_MSG,
        'metadata.annotations: Invalid value: "x/y/z": a qualified name must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',"
        "  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
        "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]
    big = {"a": "x" * (256 * 1024)}
    assert _msgs(validate_annotations(big, Path("metadata", "annotations"))) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert validate_annotations({"a": "x" * (256 * 1024 - 1)}, Path("a")) == []


def test_owner_references() -> None:
    def ref(kind: str, uid: str, controller: bool | None = None) -> dict:
        r = {"apiVersion": "customresourceVersion", "kind": kind, "name": "name", "uid": uid}
        if controller is not None:
            r["controller"] = controller
        return r

    meta = {"name": "a", "ownerReferences": [ref("K1", "1", False), ref("K2", "2", True),
                                             ref("K3", "3", True), ref("K4", "4")]}
    errs = _msgs(validate_object_meta(meta, False, name_is_dns_subdomain))
    assert len(errs) == 1
    assert errs[0].startswith('metadata.ownerReferences: Invalid value: [{"apiVersion":"customresourceVersion",'
                              '"kind":"K1","name":"name","uid":"1","controller":false},')
    assert errs[0].endswith(': Only one reference can have Controller set to true. Found "true" in references '
                            "for K2/name and K3/name")
    event = {"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}]}
    assert _msgs(validate_object_meta(event, False, name_is_dns_subdomain)) == [
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"1"}: '
        "/v1, Kind=Event is disallowed from being an owner"]
    empty = {"name": "a", "ownerReferences": [{"apiVersion": "g/"}]}
    assert _msgs(validate_object_meta(empty, False, name_is_dns_subdomain)) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "g/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]


def test_finalizers_and_managed_fields() -> None:
    meta = {"name": "a", "finalizers": ["orphan", "foregroundDeletion", "bad/x/y"]}
    errs = _msgs(validate_object_meta(meta, False, name_is_dns_subdomain))
    assert errs[-1] == ('metadata.finalizers: Invalid value: ["orphan","foregroundDeletion","bad/x/y"]: '
                        "finalizer orphan and foregroundDeletion cannot be both set")
    assert errs[0].startswith('metadata.finalizers: Invalid value: "bad/x/y": a qualified name must')
    managed = [{"manager": "m\x07", "operation": "Patch", "fieldsType": "FieldsV2"}]
    assert _msgs(validate_managed_fields(managed, Path("metadata", "managedFields"))) == [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        'metadata.managedFields[0].manager: Invalid value: "m\\a": invalid character U+0007 (at position 1)',
    ]
    assert _msgs(validate_field_manager("x" * 129, Path("fieldManager"))) == [
        "fieldManager: Too long: may not be more than 128 bytes"]


def test_object_meta_update() -> None:
    old = {"name": "test", "namespace": "ns", "uid": "u1", "resourceVersion": "1", "generation": 5,
           "creationTimestamp": "2024-01-01T00:00:00Z"}
    assert validate_object_meta_update(dict(old), old) == []
    same_instant = dict(old, creationTimestamp="2024-01-01T01:00:00+01:00")
    assert validate_object_meta_update(same_instant, old) == []
    new = dict(old, name="other", namespace="ns2", uid="u2", resourceVersion="", generation=4,
               creationTimestamp="2025-01-01T00:00:00Z", deletionTimestamp="2025-01-01T00:00:00Z",
               deletionGracePeriodSeconds=30)
    assert _msgs(validate_object_meta_update(new, old)) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "metadata.generation: Invalid value: 4: must not be decremented",
        'metadata.name: Invalid value: "other": field is immutable',
        'metadata.namespace: Invalid value: "ns2": field is immutable',
        'metadata.uid: Invalid value: "u2": field is immutable',
        'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
        'metadata.deletionTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
        "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
    ]
    deleting = dict(old, deletionTimestamp="2025-01-01T00:00:00Z", finalizers=["x/a"])
    cleared = {k: v for k, v in deleting.items() if k != "deletionTimestamp"}
    assert _msgs(validate_object_meta_update(cleared, deleting, Path("field"))) == [
        "field.deletionTimestamp: Invalid value: null: field is immutable"]
    added = dict(deleting, finalizers=["x/a", "y/b", "a/c"])
    assert _msgs(validate_object_meta_update(added, deleting)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"a/c", "y/b"}']


def test_label_selector_validation() -> None:
    selector = {
        "matchLabels": {"app": "a b"},
        "matchExpressions": [
            {"key": "k", "operator": "In", "values": []},
            {"key": "k", "operator": "Exists", "values": ["x"]},
            {"key": "k", "operator": "Foo"},
            {"key": "k", "operator": "NotIn", "values": ["ok", "no way"]},
        ],
    }
    assert _msgs(validate_label_selector(selector, Path("spec", "selector"))) == [
        'spec.selector.matchLabels: Invalid value: "a b": ' + LABEL_VALUE_MSG,
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is "
        "'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Foo": not a valid selector operator',
        'spec.selector.matchExpressions[3].values[1]: Invalid value: "no way": ' + LABEL_VALUE_MSG,
    ]
    assert validate_label_selector(None, Path("s")) == []


def test_request_options() -> None:
    assert validate_dry_run(Path("dryRun"), ["All"]) == []
    assert _msgs(validate_dry_run(Path("dryRun"), ["foo"])) == [
        'dryRun: Unsupported value: ["foo"]: supported values: "All"']
    assert _msgs(validate_field_validation(Path("fieldValidation"), "x")) == [
        'fieldValidation: Unsupported value: "x": supported values: "", "Ignore", "Strict", "Warn"']
    assert _msgs(validate_delete_options({"propagationPolicy": "Bad"})) == [
        'propagationPolicy: Unsupported value: "Bad": supported values: "Foreground", "Background", '
        '"Orphan", "nil"']
    assert _msgs(validate_delete_options({"propagationPolicy": "Orphan", "orphanDependents": True})) == [
        'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set']
    assert _msgs(validate_delete_options({"ignoreStoreReadErrorWithClusterBreakingPotential": True,
                                          "gracePeriodSeconds": 0})) == [
        "ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together "
        "with .gracePeriodSeconds"]
    assert _msgs(validate_patch_options({}, "application/apply-patch+yaml")) == [
        "fieldManager: Required value: is required for apply patch"]
    assert _msgs(validate_patch_options({"force": True}, "application/merge-patch+json")) == [
        "force: Forbidden: may not be specified for non-apply patch"]
