"""The fast paths of ObjectMeta's validation (one regex match for the usual valid label, annotation key, name
and config key; no paths made for a valid managedFields entry or an absent collection) give what the generic
checks give, on valid and invalid values: over-long names and values, bad characters, non-ASCII, prefixes."""

from __future__ import annotations

import random

from kube_apiserver.apimachinery import validation as v
from kube_apiserver.apimachinery.field import ErrorList, Path, invalid, too_long

ALPHABET = "aAzZ09-_./ %é\x00\u212a"
EDGES = [
    "",
    ".",
    "..",
    "..a",
    "a",
    "-a",
    "a-",
    "a.b",
    "a/b",
    "/b",
    "a/",
    "a/b/c",
    "a" * 63,
    "a" * 64,
    "a" * 253,
    "a" * 254,
    "b" * 253 + "/" + "c" * 63,
    "b" * 254 + "/c",
    "b/" + "c" * 64,
    "A.B_c-d",
    "example.com/MyName",
    "Example.com/name",
    "ex_ample.com/n",
    "k" * 128,
    "k" * 129,
    "é",
    "a\x00b",
]


def _strings(seed: str, count: int = 3000) -> list[str]:
    rng = random.Random(seed)
    made = [
        rng.choice(EDGES) + "".join(rng.choice(ALPHABET) for _ in range(rng.choice([0, 1, 3, 8])))
        for _ in range(count)
    ]
    return (
        EDGES
        + made
        + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(count)]
    )


# The generic checks as they were before the fast paths.


def _blen(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def _dns1123_label(value: str) -> list[str]:
    errs = [v.max_len_error(63)] if _blen(value) > 63 else []
    if not v._dns1123_label(value):
        errs.append(
            "must not contain dots"
            if v._dns1123_subdomain(value)
            else v.regex_error(v._DNS1123_LABEL_MSG, v.DNS1123_LABEL_FMT, "my-name", "123-abc")
        )
    return errs


def _dns1123_subdomain(value: str) -> list[str]:
    errs = [v.max_len_error(253)] if _blen(value) > 253 else []
    if not v._dns1123_subdomain(value):
        errs.append(v.regex_error(v._DNS1123_SUBDOMAIN_MSG, v.DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _config_map_key(value: str) -> list[str]:
    errs = [v.max_len_error(253)] if _blen(value) > 253 else []
    if not v._config_map_key(value):
        errs.append(
            v.regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                v._CONFIG_MAP_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    return errs + v._has_chdir_prefix(value)


def _labels(labels: dict[str, str], path: Path) -> ErrorList:
    errs: ErrorList = []
    for key, value in labels.items():
        errs.extend(v.validate_label_name(key, path))
        errs.extend(invalid(path, value, m) for m in v.is_valid_label_value(value))
    return errs


def _field_manager(manager: str, path: Path) -> ErrorList:
    errs: ErrorList = [too_long(path, "", 128)] if _blen(manager) > 128 else []
    pos = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(invalid(path, manager, f"invalid character U+{ord(ch):04X} (at position {pos})"))
        pos += _blen(ch)
    return errs


def _shown(errs: ErrorList) -> list[tuple[str, str, str]]:
    return [(str(e), e.reason, e.field) for e in errs]


def test_names_and_keys():
    for value in _strings("names"):
        assert v.is_dns1123_label(value) == _dns1123_label(value), value
        assert v.is_dns1123_subdomain(value) == _dns1123_subdomain(value), value
        assert v.is_config_map_key(value) == _config_map_key(value), value
        assert v._is_valid_qualified_name(value) == (v.is_qualified_name(value) == []), value


def test_labels_and_annotations():
    path = Path("metadata", "labels")
    keys, values = _strings("keys", 500), _strings("values", 500)
    rng = random.Random("labels")
    for _ in range(1500):
        labels = {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(0, 4))}
        assert _shown(v.validate_labels(labels, path)) == _shown(_labels(labels, path)), labels
        expected = [invalid(path, key, m) for key in labels for m in v.is_qualified_name(key.lower())]
        assert _shown(v.validate_annotations(labels, path)) == _shown(expected), labels


def test_managed_fields_entries():
    path = Path("metadata", "managedFields")
    managers = _strings("managers", 300) + ["m\x7f", "m\u200b", "k" * 128 + "é"]
    rng = random.Random("managed")
    for _ in range(2000):
        entry = {
            "manager": rng.choice(managers),
            "operation": rng.choice(["Update", "Apply", "", "update"]),
            "fieldsType": rng.choice(["FieldsV1", "", "FieldsV2"]),
            "subresource": rng.choice(["", "status", "s" * 256, "s" * 257, "é" * 129]),
        }
        expected: ErrorList = []
        entry_path = path.index(0)
        if entry["operation"] not in ("Apply", "Update"):
            expected.append(
                invalid(entry_path.child("operation"), entry["operation"], "must be `Apply` or `Update`")
            )
        if entry["fieldsType"] not in ("", "FieldsV1"):
            expected.append(
                invalid(entry_path.child("fieldsType"), entry["fieldsType"], "must be `FieldsV1`")
            )
        expected += _field_manager(entry["manager"], entry_path.child("manager"))
        if _blen(entry["subresource"]) > 256:
            expected.append(too_long(entry_path.child("subresource"), "", 256))
        assert _shown(v.validate_managed_fields([entry], path)) == _shown(expected), entry
        assert _shown(v.validate_field_manager(entry["manager"], path)) == _shown(
            _field_manager(entry["manager"], path)
        )


def test_absent_or_empty_collections_report_nothing():
    for empty in (None, {}, []):
        meta = {
            "name": "n",
            "namespace": "ns",
            "labels": empty,
            "annotations": empty,
            "finalizers": empty,
            "ownerReferences": empty,
            "managedFields": empty,
        }
        assert v.validate_object_meta(meta, True, v.name_is_dns_subdomain) == []
    meta = {"name": "n", "namespace": "ns", "labels": {"a" * 64: "b" * 64}}
    assert [e.field for e in v.validate_object_meta(meta, True, v.name_is_dns_subdomain)] == [
        "metadata.labels",
        "metadata.labels",
    ]
