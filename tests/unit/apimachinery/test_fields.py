"""Field selector parsing, escaping, matching and k8s' error texts."""

import pytest

from kube_apiserver.apimachinery.fields import (
    FieldSelectorParseError,
    Requirement,
    escape_value,
    everything,
    nothing,
    one_term_equal_selector,
    parse_field_selector,
    selector_from_set,
    split_term,
    split_terms,
    unescape_value,
)


@pytest.mark.parametrize(
    ("selector", "terms"),
    [
        ("a", ["a"]),
        ("a=avalue", ["a=avalue"]),
        ("a=avalue,b=bvalue", ["a=avalue", "b=bvalue"]),
        ("a=avalue,b==bvalue,c!=cvalue", ["a=avalue", "b==bvalue", "c!=cvalue"]),
        ("", []),
        ("a=a,", ["a=a", ""]),
        (",a=a", ["", "a=a"]),
        ("k=\\,,k2=v2", ["k=\\,", "k2=v2"]),
        ("k=\\\\,k2=v2", ["k=\\\\", "k2=v2"]),
        ("k=\\\\\\,,k2=v2", ["k=\\\\\\,", "k2=v2"]),
        ("k=\\a\\b\\", ["k=\\a\\b\\"]),
        ("k=\\", ["k=\\"]),
        ("함=수,목=록", ["함=수", "목=록"]),
    ],
)
def test_split_terms(selector: str, terms: list[str]) -> None:
    assert split_terms(selector) == terms


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("a=value", ("a", "=", "value")),
        ("b==value", ("b", "==", "value")),
        ("c!=value", ("c", "!=", "value")),
        ("", None),
        ("a", None),
        ("k=\\,", ("k", "=", "\\,")),
        ("k=\\=", ("k", "=", "\\=")),
        ("k=\\\\\\a\\b\\=\\,\\", ("k", "=", "\\\\\\a\\b\\=\\,\\")),
        ("함=수", ("함", "=", "수")),
    ],
)
def test_split_term(term: str, expected: tuple | None) -> None:
    assert split_term(term) == expected


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [("", ""), ("a", "a"), ("=", "\\="), (",", "\\,"), ("\\", "\\\\"), ("\\=\\,\\", "\\\\\\=\\\\\\,\\\\")],
)
def test_escape_roundtrip(raw: str, escaped: str) -> None:
    assert escape_value(raw) == escaped
    assert unescape_value(escaped) == raw


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("\\", "invalid field selector: invalid escape sequence: \\"),
        ("\\\\\\", "invalid field selector: invalid escape sequence: \\"),
        ("\\a", "invalid field selector: invalid escape sequence: \\a"),
        ("a=b", "invalid field selector: unescaped character in value: 61"),
        ("a,b", "invalid field selector: unescaped character in value: 44"),
    ],
)
def test_unescape_errors(value: str, message: str) -> None:
    with pytest.raises(FieldSelectorParseError) as info:
        unescape_value(value)
    assert str(info.value) == message


@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=a||y\\=b", "x=a\\=\\=b"])
def test_good_selectors_restring(text: str) -> None:
    assert str(parse_field_selector(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("x==a==b", "invalid field selector: unescaped character in value: 61"),
        ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
        ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
        ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
        ("x", "invalid selector: 'x'; can't understand 'x'"),
    ],
)
def test_bad_selectors(text: str, message: str) -> None:
    with pytest.raises(FieldSelectorParseError) as info:
        parse_field_selector(text)
    assert str(info.value) == message


def test_deterministic_parse_and_canonical_form() -> None:
    assert str(parse_field_selector("x=a,a=x")) == str(parse_field_selector("a=x,x=a")) == "a=x,x=a"
    assert str(parse_field_selector("b==1,,a!=2,")) == "a!=2,b=1"


@pytest.mark.parametrize(
    ("text", "fields", "match"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x=z", {}, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x=", {}, True),
        ("x!=y", {}, True),
        ("x==y", {"x": "y"}, True),
        ("x=a\\,b", {"x": "a,b"}, True),
    ],
)
def test_matches(text: str, fields: dict, match: bool) -> None:
    assert parse_field_selector(text).matches(fields) is match


def test_requirements_and_exact_match() -> None:
    sel = parse_field_selector("metadata.name==foo,status.phase!=Running,spec.nodeName=")
    assert sel.requirements() == [
        Requirement("metadata.name", "=", "foo"),
        Requirement("spec.nodeName", "=", ""),
        Requirement("status.phase", "!=", "Running"),
    ]
    assert sel.requires_exact_match("metadata.name") == "foo"
    assert sel.requires_exact_match("status.phase") is None
    assert sel.requires_exact_match("missing") is None


def test_empty_everything_nothing() -> None:
    assert parse_field_selector("").empty()
    assert parse_field_selector(",").empty()
    assert parse_field_selector("=").empty()  # ("", "") terms drop out, as in Go's Transform
    assert not parse_field_selector("a=b").empty()
    assert everything().empty() and everything().matches({})
    assert not nothing().empty() and not nothing().matches({})
    assert one_term_equal_selector("a", "b").matches({"a": "b"})
    assert str(selector_from_set({"a": "b"})) == "a=b"


def test_transform() -> None:
    def rename(field: str, value: str) -> tuple[str, str]:
        if field == "drop":
            return "", ""
        if field == "bad":
            raise FieldSelectorParseError(f'field label not supported: {field}')
        return ("metadata.name" if field == "name" else field), value

    sel = parse_field_selector("name=x,drop=y", rename)
    assert str(sel) == "metadata.name=x"
    with pytest.raises(FieldSelectorParseError, match="field label not supported: bad"):
        parse_field_selector("bad=1", rename)
