"""The whole custom resource write path of the package docstring, on one object."""

from __future__ import annotations

from kube_apiserver.apiextensions.schema import (
    SchemaValidator,
    coerce,
    default,
    get_object_meta,
    has_blocking_err,
    new_rule_validator,
    new_structural,
    prune,
    prune_non_nullable_nulls_without_defaults,
    set_object_meta,
    validate_list_sets_and_maps,
    validate_object_meta,
)

SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["secretName"], "properties": {
        "secretName": {"type": "string", "maxLength": 253},
        "duration": {"type": "string", "default": "2160h"},
        "usages": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "enum": ["a", "b"]}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True},
        "nullable": {"type": "string", "nullable": True}},
        "x-kubernetes-validations": [{"rule": "self.secretName != 'forbidden'", "reason": "FieldValueForbidden",
                                      "fieldPath": ".secretName"}]}}}


def write(obj: dict, old: dict | None = None) -> tuple[list[str], list[str]]:
    s = new_structural(SCHEMA)
    meta, found, unknown = get_object_meta(obj, return_unknown=True)
    unknown += prune(obj, s)
    prune_non_nullable_nulls_without_defaults(obj, s)
    err, embedded_unknown = coerce(None, obj, s, False, return_unknown=True)
    assert err is None
    unknown += embedded_unknown
    if found:
        set_object_meta(obj, meta)
    default(obj, s)
    validator = SchemaValidator(SCHEMA)
    errs = validator.validate(obj) if old is None else validator.validate_update(obj, old)
    errs += validate_object_meta(None, obj, s, False)
    errs += validate_list_sets_and_maps(None, s, obj)
    rules = new_rule_validator(s)
    if rules is not None and not has_blocking_err(errs):
        errs += rules.validate(obj, old)
    return unknown, [str(e) for e in errs]


def test_write_path():
    obj = {"apiVersion": "g/v1", "kind": "Cert", "metadata": {"name": "a", "bogus": 1},
           "spec": {"secretName": "forbidden", "foo": 1, "nullable": None, "usages": ["a", "a"],
                    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "x": 1}, "spec": {}}},
           "status": {"x": 1}}
    unknown, errs = write(obj)
    assert unknown == ["metadata.bogus", "spec.foo", "status", "spec.template.metadata.x"]
    assert obj == {"apiVersion": "g/v1", "kind": "Cert", "metadata": {"creationTimestamp": None, "name": "a"},
                   "spec": {"secretName": "forbidden", "nullable": None, "usages": ["a", "a"], "duration": "2160h",
                            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}}}
    assert errs == ['spec.usages[1]: Duplicate value: "a"', "spec.secretName: Forbidden: failed rule: "
                                                            "self.secretName != 'forbidden'"]


def test_blocking_errors_skip_rules():
    unknown, errs = write({"apiVersion": "g/v1", "kind": "Cert", "metadata": {"name": "a"},
                           "spec": {"secretName": "forbidden", "usages": ["c"]}})
    assert unknown == [] and errs == ['spec.usages[0]: Unsupported value: "c": supported values: "a", "b"']
