"""compile(): syntax errors as cel-go prints them, undeclared references, caching, optionals."""

from __future__ import annotations

import pytest

from kube_apiserver import cel


def compile_error(expression: str, variables: list[str] | None = None) -> cel.CompileError:
    with pytest.raises(cel.CompileError) as caught:
        cel.compile(expression, variables=variables)
    return caught.value


def test_syntax_error_is_printed_as_cel_go_issues() -> None:
    error = compile_error("1 +")
    assert str(error) == (
        "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting "
        "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
        "BYTES, IDENTIFIER}\n | 1 +\n | ...^"
    )
    assert error.issues.startswith("ERROR: <input>:1:4: Syntax error:")


def test_syntax_error_position_on_later_line() -> None:
    assert "ERROR: <input>:2:" in str(compile_error("self.a == 1 &&\n  self.b ="))


def test_undeclared_variable() -> None:
    error = compile_error("self.a == other", variables=["self"])
    assert error.issues == "ERROR: <input>:1:11: undeclared reference to 'other' (in container '')\n" \
                           " | self.a == other\n | ..........^"


def test_undeclared_function_reported_at_the_call() -> None:
    issues = compile_error("self.a.frobnicate(1)", variables=["self"]).issues
    assert issues.startswith("ERROR: <input>:1:18: undeclared reference to 'frobnicate' (in container '')")


def test_every_issue_is_reported_in_source_order() -> None:
    issues = compile_error("a + b", variables=[]).issues
    assert [line for line in issues.split("\n") if line.startswith("ERROR")] == [
        "ERROR: <input>:1:1: undeclared reference to 'a' (in container '')",
        "ERROR: <input>:1:5: undeclared reference to 'b' (in container '')",
    ]


def test_without_declared_variables_any_identifier_is_accepted() -> None:
    assert cel.compile("anything + 1").evaluate({"anything": 1}) == 2


@pytest.mark.parametrize("expression", [
    "self.items.all(x, x > 0)",
    "self.items.exists(item, item.matches('a'))",
    "self.items.map(x, x * 2).filter(y, y > 2).size() > 0",
    "has(self.a) && type(self.a) == int",
    "sets.contains(self.items, [1])",
    "format.dns1123Label().validate('a').hasValue()",
    "optional.of(1).orValue(2) == 1",
    "ip.isCanonical('::1')",
    "self.x.y in ['a', 'b'] ? true : null == null",
])
def test_known_names_compile(expression: str) -> None:
    cel.compile(expression, variables=["self"])


def test_namespace_without_known_function_is_a_variable() -> None:
    assert "undeclared reference to 'sets'" in compile_error("sets.frob([1])", variables=[]).issues


def test_two_variable_comprehensions_are_refused() -> None:
    assert "two-variable comprehensions are not supported" in str(
        compile_error("self.all(k, v, v > 0)", variables=["self"]))


def test_programs_are_cached() -> None:
    first = cel.compile("self.a + 1", variables=["self"])
    assert cel.compile("self.a + 1", variables=("self",)) is first
    assert cel.compile("self.a + 1", variables=["self", "oldSelf"]) is not first


def test_program_reports_its_free_variables() -> None:
    program = cel.compile("self.a == oldSelf.a && self.items.all(x, x > 0)")
    assert program.variables == {"self", "oldSelf"}


# ---- the optional syntax, rewritten for the interpreter ----


@pytest.mark.parametrize(("expression", "expected"), [
    ("self.?a.orValue(0)", 1),
    ("self.?missing.orValue(0)", 0),
    ("self.?missing.?deeper.orValue(7)", 7),
    ("self.?nested.?b.orValue(0)", 2),
    ("self.?nested.b.orValue(0)", 2),
    ("self.?a.hasValue()", True),
    ("self.list[?1].orValue(0)", 20),
    ("self.list[?5].orValue(0)", 0),
    ("self.nested[?'b'].value()", 2),
    ("self['?'] == 'q'", True),
    ("self.a > 0 ? 'x' : 'y'", "x"),
])
def test_optional_selection(expression: str, expected: object) -> None:
    self = {"a": 1, "nested": {"b": 2}, "list": [10, 20], "?": "q"}
    assert cel.compile(expression, variables=["self"]).evaluate({"self": self}) == expected


def test_optional_rewrite_keeps_string_literals() -> None:
    assert cel.compile("'.?a' + self.?a.orValue('')", variables=["self"]).evaluate({"self": {"a": "b"}}) == ".?ab"


@pytest.mark.parametrize(("expression", "message"), [
    ("self.matches('(')", "ERROR: <input>:1:14: invalid matches argument"),
    ("duration('1x') > duration('0s')", "ERROR: <input>:1:10: invalid duration argument"),
    ("timestamp('now') > timestamp('2020-01-01T00:00:00Z')", "ERROR: <input>:1:11: invalid timestamp argument"),
])
def test_literal_arguments_are_validated(expression: str, message: str) -> None:
    assert compile_error(expression).issues.split("\n")[0] == message


def test_only_the_fields_read_cross_into_the_interpreter() -> None:
    program = cel.compile("self.spec.replicas > 0 && self.metadata.name != '' && has(self.status)")
    obj = {"spec": {"replicas": 1, "template": {"big": ["x"] * 100}}, "metadata": {"name": "a", "labels": {}},
           "status": {"ready": True}}
    assert program._fields["self"] == {"spec": {"replicas": None}, "metadata": {"name": None}, "status": None}
    assert program.evaluate({"self": obj}) is True
    assert cel.compile("self.spec.missing").variables == {"self"}
    with pytest.raises(cel.EvaluationError, match="no such key: missing"):
        cel.compile("self.spec.missing").evaluate({"self": obj})


@pytest.mark.parametrize("expression", [
    "self == oldSelf", "self.spec.all(k, k != '')", "size(self) == 3", "self['spec'].replicas == 1",
    "self.?spec.?replicas.orValue(0) == 1", "self.metadata.size() == 0",
])
def test_whole_values_are_passed_when_used_whole(expression: str) -> None:
    obj = {"spec": {"replicas": 1}, "metadata": {}, "status": {}}
    assert cel.compile(expression).evaluate({"self": obj, "oldSelf": obj}) in (True, False)


def test_list_elements_are_pruned_inside_elementwise_macros() -> None:
    program = cel.compile("self.items.all(x, x.name != '' && x.ports.exists(p, p.port > 0))")
    items = [{"name": "a", "image": "x" * 50, "ports": [{"port": 1, "protocol": "TCP"}]}]
    assert program._fields["self"] == {"items": {("*",): {"name": None, "ports": {("*",): {"port": None}}}}}
    assert program.evaluate({"self": {"items": items}}) is True


@pytest.mark.parametrize(("expression", "expected"), [
    ("self.items.filter(x, x.a > 0)[0].b == 2", True),
    ("self.items.map(x, x).size() == 1", True),
    ("self.items.all(x, x.b == 2) && self.items[0].a == 1", True),
    ("self.items.all(x, x.all(y, y != ''))", True),
    ("self.m.all(k, self.m[k] > 0)", True),
    ("self.items.exists(self, self.a == 1)", True),
])
def test_pruning_keeps_what_is_needed(expression: str, expected: bool) -> None:
    value = {"items": [{"a": 1, "b": 2}], "m": {"k": 1}}
    assert cel.compile(expression).evaluate({"self": value}) is expected
