"""Static cost estimates of x-kubernetes-validations rules, and the type errors of rule compilation,
against upstream's expectations (apiextensions-apiserver pkg/apiserver/schema/cel compilation_test.go
TestCostEstimation: each rule once with the bounds derived from the request size, once with
maxItems/maxProperties/maxLength set)."""

from __future__ import annotations

from typing import Any

import pytest

from kube_apiserver.apiextensions.schema import compile_node, new_structural

Schema = dict[str, Any]
LIMIT = 10_000_000


def _typed(kind: str) -> Schema:
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": kind}


def _bounded(schema: Schema, key: str, bound: int | None) -> Schema:
    return schema if bound is None else {**schema, key: bound}


def array(kind: str) -> Any:
    return lambda n: _bounded({"type": "array", "items": _typed(kind)}, "maxItems", n)


def array_of_arrays(kind: str) -> Any:
    return lambda n: _bounded({"type": "array", "items": {"type": "array", "items": {"type": kind}}}, "maxItems", n)


OBJECT = {"type": "object", "required": ["required"],
          "properties": {"required": {"type": "string"}, "optional": {"type": "string"}}}


def object_array(n: int | None) -> Schema:
    return _bounded({"type": "array", "items": OBJECT}, "maxItems", n)


def map_array(kind: str) -> Any:
    return lambda n: _bounded({"type": "array", "items": {"type": "object", "additionalProperties": {"type": kind}}},
                              "maxItems", n)


def map_of(item: Schema) -> Any:
    return lambda n: _bounded({"type": "object", "additionalProperties": item}, "maxProperties", n)


def string(n: int | None) -> Schema:
    return _bounded({"type": "string"}, "maxLength", n)


def nested_spec(n: int | None) -> Schema:
    return _bounded({"type": "object", "additionalProperties": string(n)}, "maxProperties", n)


def nested_root(all_bounded: bool) -> Any:
    def gen(n: int | None) -> Schema:
        inner = _bounded(OBJECT, "maxProperties", n) if all_bounded else OBJECT
        items = _bounded({"type": "object", "additionalProperties": inner}, "maxProperties", n)
        return _bounded({"type": "array", "items": items}, "maxItems", n) if all_bounded else {
            "type": "array", "items": items}
    return gen


def string_list(n: int | None) -> Schema:
    return _bounded({"type": "array", "items": string(n)}, "maxItems", n)


def object_of(props: dict[str, Any]) -> Any:
    return lambda n: {"type": "object", "properties": {k: v(n) if callable(v) else v for k, v in props.items()}}


# (name, schema generator, rule, calc cost or None when only "exceeds the limit", bound, set cost)
CASES = [
    ("number array with all", array("number"), "self.all(x, true)", 4718591, 10, 32),
    ("string array with all", array("string"), "self.all(x, true)", 3145727, 20, 62),
    ("boolean array with all", array("boolean"), "self.all(x, true)", 1887437, 5, 17),
    ("array of number arrays with all", array_of_arrays("number"), "self.all(x, true)", 3145727, 100, 302),
    ("array of objects with all", object_array, "self.all(x, true)", 555128, 50, 152),
    ("map of numbers with all", map_of({"type": "number"}), "self.all(x, true)", 1348169, 10, 32),
    ("map of strings with all", map_of({"type": "string"}), "self.all(x, true)", 1179647, 3, 11),
    ("map of booleans with all", map_of({"type": "boolean"}), "self.all(x, true)", 943718, 100, 302),
    ("string with contains", string, "self.contains('test')", 314574, 10, 5),
    ("string with startsWith", string, "self.startsWith('test')", 2, 15, 2),
    ("concat string", string, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    ("index of array with numbers", array("number"), "self[1] == 0.0", 2, 5000, 2),
    ("index of array with strings", array("string"), "self[1] == self[1]", 314577, 8, 314577),
    ("O(n^2) loop with numbers", array("number"), "self.all(x, self.all(y, true))", None, 10, 352),
    ("O(n^3) loop with numbers", array("number"), "self.all(x, self.all(y, self.all(z, true)))", None, 10, 3552),
    ("regex matches simple", string, 'self.matches("x")', 314574, 50, 22),
    ("regex matches empty string", string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    ("regex matches empty regex", string, 'self.matches("")', 1, 100, 1),
    ("map of strings with value length", nested_spec, "self.all(x, x.contains(self[x]))", 2752507, 10, 72),
    ("set array maxLength to zero", array("number"), "self[3] == 0.0", 2, 0, 2),
    ("set map maxLength to zero", map_of({"type": "number"}), 'self["x"] == 0.0', 2, 0, 2),
    ("set string maxLength to zero", string, 'self == "x"', 2, 0, 1),
    ("set maxLength greater than estimated", array("number"), "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048,
     25165826),
    ("nested root rule, all bounded", nested_root(True), 'self.all(x, x["y"].required == "z")', 7340027, 10, 72),
    ("nested root rule, one bounded", nested_root(False), 'self.all(x, x["y"].required == "z")', 7340027, 10,
     7340027),
    ("int-or-string array with all", array("int-or-string"), "self.all(x, true)", 4718591, 10, 32),
    ("index of array with int-or-strings", array("int-or-string"), "self[0] == 5", 3, 10, 3),
    ("index of array of objects", object_array, "self[0] == null", 2, 422, 2),
    ("index of array of arrays", array_of_arrays("number"), "self[0][0] == -1.0", 3, 51, 3),
    ("array of number maps with all", map_array("number"), "self.all(x, x.y == 25.2)", 6291452, 12, 74),
    ("index of array of number maps", map_array("number"), "self[0].x > 2.0", 4, 3000, 4),
    ("duration array with all", array("duration"), "self.all(x, true)", 2359295, 5, 17),
    ("index of duration array", array("duration"), "self[0].getHours() == 2", 4, 525, 4),
    ("date array with all", array("date"), "self.all(x, true)", 725936, 15, 47),
    ("date-time array with all", array("date-time"), "self.all(x, true)", 428963, 25, 77),
    ("map of objects with all", map_of(OBJECT), "self.all(x, true)", 428963, 20, 62),
    ("map of number arrays with all", map_of({"type": "array", "items": {"type": "number"}}), "self.all(x, true)",
     1179647, 25, 77),
    ("map of durations with all", map_of(_typed("duration")), "self.all(x, true)", 1048577, 5, 17),
    ("map of date-times with all", map_of(_typed("date-time")), "self.all(x, true)", 349526, 25, 77),
    ("regex find", string, "self.find('[0-9]+') == ''", 629147, 10, 11),
    ("join", string_list, "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    ("isSorted", string_list, "self.isSorted() == true", 329854432052, 10, 52),
    ("replace", object_of({"str": string, "before": {"type": "string", "maxLength": 2},
                           "after": {"type": "string", "maxLength": 4}}),
     "self.str.replace(self.before, self.after) == 'does not matter'", 629154, 4, 12),
    ("split", object_of({"str": string, "separator": string}), "self.str.split(self.separator) == []", 629160, 10,
     22),
    ("lowerAscii", string, "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    ("size call", map_of({"type": "integer"}), "oldSelf.size() == self.size()", 5, 10, 5),
    ("timestamp comparison", map_of(_typed("date-time")), 'self["a"] == self["b"]', 8, 7, 8),
    ("duration comparison", map_of(_typed("duration")), 'self["c"] == self["d"]', 8, 42, 8),
    ("int-or-string with quantity", lambda n: _bounded(_typed("int-or-string"), "maxLength", n), "isQuantity(self)",
     314574, 20, 9),
]


def _cost(schema: Schema, rule: str) -> int:
    (result,) = compile_node(new_structural({**schema, "x-kubernetes-validations": [{"rule": rule}]}))
    assert result.error is None, result.error
    return result.max_cost


@pytest.mark.parametrize(("name", "gen", "rule", "calc", "bound", "bounded"), CASES, ids=[c[0] for c in CASES])
def test_cost_estimation_matches_upstream(name, gen, rule, calc, bound, bounded):
    cost = _cost(gen(None), rule)
    if calc is None:
        assert cost >= LIMIT
    else:
        assert cost == calc
    assert _cost(gen(bound), rule) == bounded


def test_enum_bounds_strings_like_max_length():
    enum = {"type": "string", "enum": ["A", "B", "C", "LongValue"]}
    assert _cost(enum, "self.contains('A')") == 2
    assert _cost({**enum, "maxLength": 1000}, "self.contains('A')") == 401


def _error(schema: Schema, rule: str, **extra: Any) -> str | None:
    (result,) = compile_node(new_structural({**schema, "x-kubernetes-validations": [{"rule": rule, **extra}]}))
    return result.error or result.message_error


SPEC = {"type": "object", "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"},
                                         "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                         "any": {"x-kubernetes-int-or-string": True},
                                         "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}


def test_type_errors_are_compile_errors():
    assert _error(SPEC, "self.replicass > 1") == ("compilation failed: ERROR: <input>:1:5: undefined field "
                                                  "'replicass'\n | self.replicass > 1\n | ....^")
    assert _error(SPEC, "has(self.nope)").startswith("compilation failed: ERROR: <input>:1:4: undefined field 'nope'")
    assert _error(SPEC, "self.free.anything == 1").startswith(
        "compilation failed: ERROR: <input>:1:10: undefined field 'anything'")
    assert _error(SPEC, "self.replicas") == "cel expression must evaluate to a bool"
    assert _error(SPEC, "self.name + 1 == 'x'").startswith(
        "compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'")
    assert _error(SPEC, "self.replicas > 1", messageExpression="self.replicas") == (
        "messageExpression must evaluate to a string")


def test_dynamic_values_and_maps_are_not_type_errors():
    for rule in ("self.labels.foo == 'x'", "self.any == 5 || self.any == 'x'", "self.labels.all(k, k != '')",
                 "type(self.any) == string ? self.any.matches('^[0-9]+%$') : self.any > 0"):
        assert _error(SPEC, rule) is None, rule


def test_resource_roots_expose_type_and_metadata():
    root = {"type": "object", "properties": {"spec": {"type": "object"}}}
    (result,) = compile_node(new_structural({**root, "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith('a') && self.kind == 'X'"}]}), None, True)
    assert result.error is None
    (result,) = compile_node(new_structural({**root, "x-kubernetes-validations": [
        {"rule": "self.metadata.labels.size() > 0"}]}), None, True)
    assert "undefined field 'labels'" in result.error
