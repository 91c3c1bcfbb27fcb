"""Label selector grammar, matching, canonical strings and k8s' error texts."""

import pytest

from kube_apiserver.apimachinery.field import Path
from kube_apiserver.apimachinery.labels import (
    Operator,
    Requirement,
    SelectorParseError,
    Token,
    everything,
    lex_all,
    new_requirement,
    nothing,
    parse_selector,
    selector_from_label_selector,
    selector_from_set,
    validated_selector_from_set,
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


@pytest.mark.parametrize(
    "text", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]
)
def test_good_selectors_restring(text: str) -> None:
    assert str(parse_selector(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["x=a||y=b", "x==a==b", "!x=a", "x<a"])
def test_bad_selectors(text: str) -> None:
    with pytest.raises(SelectorParseError):
        parse_selector(text)


def test_deterministic_parse() -> None:
    assert str(parse_selector("x=a,a=x")) == str(parse_selector("a=x,x=a")) == "a=x,x=a"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("\rx", "x"),
        ("this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"),
        ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
         "this-is-another-dns.domain.com/key-with-dash in (so,what)"),
        ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"),
        ("foo  in\t (abc)", "foo in (abc)"),
        ("x notin\n (abc)", "x notin (abc)"),
        ("x  notin\t\t(abc,def)", "x notin (abc,def)"),
        ("x in (abc,)", "x in (,abc)"),
        ("x in ()", "x in ()"),
        ("x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"),
        ("x,y in (a)", "x,y in (a)"),
        ("x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"),
        ("x notin ( )", "x notin ()"),
        ("x notin (, a)", "x notin (,a)"),
        ("a ", "a"),
        ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
        ("x==abc", "x==abc"),
        ("notin=in", "notin=in"),
        ("b in (z,a,a)", "b in (a,z)"),
    ],
)
def test_parse_canonical(text: str, canonical: str) -> None:
    assert str(parse_selector(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
        ("x nott in (y)", "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
        ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
        ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("x in a", "unable to parse requirement: found 'a' expected: '('"),
        ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("x=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": "
                "for 'Gt', 'Lt' operators, the value must be an integer"),
        ("x=a b", "found 'b', expected: ',' or 'end of string'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("Foo_bar-", 'unable to parse requirement: <nil>: Invalid value: "Foo_bar-": ' + QNAME_MSG),
        ("app=a||b", 'unable to parse requirement: values[0][app]: Invalid value: "a||b": ' + LABEL_VALUE_MSG),
        ("x=" + "a" * 64, 'unable to parse requirement: values[0][x]: Invalid value: "' + "a" * 64
         + '": must be no more than 63 characters'),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        parse_selector(text)
    assert str(info.value) == message


def test_parse_error_with_path() -> None:
    with pytest.raises(SelectorParseError) as info:
        parse_selector("x=a b c", Path("labelSelector"))
    assert str(info.value) == "found 'b', expected: ',' or 'end of string'"
    with pytest.raises(SelectorParseError) as info:
        parse_selector("-x", Path("labelSelector"))
    assert str(info.value).startswith('unable to parse requirement: labelSelector: Invalid value: "-x": ')


def test_lexer() -> None:
    kinds = [t for t, _ in lex_all("== != (), = notin")]
    assert kinds == [Token.DOUBLE_EQUALS, Token.NOT_EQUALS, Token.OPEN_PAR, Token.CLOSED_PAR, Token.COMMA,
                     Token.EQUALS, Token.NOT_IN, Token.END_OF_STRING]
    assert lex_all("~") == [(Token.IDENTIFIER, "~"), (Token.END_OF_STRING, "")]
    assert lex_all("||")[0] == (Token.IDENTIFIER, "||")
    assert [t for t, _ in lex_all("key>2")] == [Token.IDENTIFIER, Token.GREATER_THAN, Token.IDENTIFIER,
                                                Token.END_OF_STRING]
    assert lex_all("!!")[:2] == [(Token.DOES_NOT_EXIST, "!"), (Token.DOES_NOT_EXIST, "!")]


@pytest.mark.parametrize(
    ("text", "labels", "match"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x", {"x": "z"}, True),
        ("!x", {"y": "z"}, True),
        ("x>1", {"x": "2"}, True),
        ("x<1", {"x": "0"}, True),
        ("x=z", {}, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x", {"y": "z"}, False),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "0"}, False),
        ("x<1", {"x": "2"}, False),
        ("x>1", {"x": "v2"}, False),
        ("x>1", {}, False),
        ("x in (foo)", {"x": "foo", "y": "baz"}, True),
        ("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
        ("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
        ("x notin (),y", {"y": ""}, True),
        ("!x,y", {"y": ""}, True),
        ("x notin (),!y", {"y": ""}, False),
        ("x in ()", {"y": "baz"}, False),
        ("x in ()", {"x": ""}, True),
        ("x=", {"x": ""}, True),
        ("x!=", {}, True),
        ("x in (a,b)", {"x": "b"}, True),
        ("x notin (a,b)", {"x": "b"}, False),
        ("x notin (a,b)", {}, True),
        ("x>1", {"x": "+3"}, True),
        ("x<1", {"x": "-3"}, True),
    ],
)
def test_matches(text: str, labels: dict, match: bool) -> None:
    assert parse_selector(text).matches(labels) is match


def test_everything_nothing_empty() -> None:
    assert everything().empty() and everything().matches({"x": "y"}) and everything().matches(None)
    assert not nothing().empty() and not nothing().matches({}) and str(nothing()) == ""
    assert parse_selector("").empty()
    assert not parse_selector("x").empty()
    assert not parse_selector("x").matches(None)
    assert parse_selector("!x").matches(None)


def test_requires_exact_match() -> None:
    sel = parse_selector("a=1,b in (2),c in (3,4),d!=5")
    assert sel.requires_exact_match("a") == "1"
    assert sel.requires_exact_match("b") == "2"
    assert sel.requires_exact_match("c") is None
    assert sel.requires_exact_match("d") is None
    assert sel.requires_exact_match("e") is None


def test_new_requirement_errors() -> None:
    assert str(new_requirement("x", "in", ["b", "a"])) == "x in (a,b)"
    cases = [
        ("x1", "in", None, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
        ("x2", "notin", [], "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"),
        ("x5", "=", ["bar", "foo"], 'values: Invalid value: ["bar","foo"]: exact-match compatibility requires '
                                    "one single value"),
        ("x8", "exists", ["foo"], 'values: Invalid value: ["foo"]: values set must be empty for exists and does '
                                  "not exist"),
        ("x13", "gt", None, "values: Invalid value: null: for 'Gt', 'Lt' operators, exactly one value is required"),
        ("x14", "gt", ["bar"], "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be "
                               "an integer"),
        ("x18", "unsupportedOp", [], 'operator: Unsupported value: "unsupportedOp": supported values: "in", '
                                     '"notin", "=", "==", "!=", "gt", "lt", "exists", "!"'),
        ("x17", "in", ["a b"], 'values[0][x17]: Invalid value: "a b": ' + LABEL_VALUE_MSG),
    ]
    for key, op, values, message in cases:
        with pytest.raises(SelectorParseError) as info:
            new_requirement(key, op, values)
        assert str(info.value) == message, key
    with pytest.raises(SelectorParseError) as info:
        new_requirement("a" * 254, "exists", [])
    assert str(info.value) == 'key: Invalid value: "' + "a" * 254 + '": name part must be no more than 63 characters'
    with pytest.raises(SelectorParseError) as info:
        new_requirement("A" * 254 + "/" + "b" * 64, "exists", [])
    assert str(info.value).endswith('": prefix part must be no more than 253 characters; prefix part a lowercase '
                                    "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                                    "'.', and must start and end with an alphanumeric character (e.g. "
                                    "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                                    "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); name part must be no more than 63 "
                                    "characters")
    with pytest.raises(SelectorParseError) as info:
        new_requirement("-k", "=", ["a b", "c"])
    assert str(info.value).startswith('[key: Invalid value: "-k": name part must consist')
    assert ', values: Invalid value: ["a b","c"]: exact-match compatibility' in str(info.value)


def test_requirement_strings() -> None:
    reqs = [
        new_requirement("x", "notin", ["def", "abc"]),
        new_requirement("y", "!=", ["jkl"]),
        new_requirement("z", "!", []),
        new_requirement("w", "gt", ["2"]),
        new_requirement("v", "lt", ["8"]),
    ]
    assert [str(r) for r in reqs] == ["x notin (abc,def)", "y!=jkl", "!z", "w>2", "v<8"]
    assert everything().add(*reqs).requirements()[0] == Requirement("v", Operator.LESS_THAN, ("8",))


def test_selector_from_set() -> None:
    assert selector_from_set(None).empty()
    sel = selector_from_set({"z": "1", "a": "2"})
    assert str(sel) == "a=2,z=1"
    assert sel.matches({"a": "2", "z": "1", "q": "x"}) and not sel.matches({"a": "2"})
    with pytest.raises(SelectorParseError):
        validated_selector_from_set({"a": "b c"})


def test_selector_from_label_selector() -> None:
    assert selector_from_label_selector(None).matches_nothing()
    assert selector_from_label_selector({}).empty()
    sel = selector_from_label_selector({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["fe", "be"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "zone", "operator": "Exists"},
        ],
    })
    assert str(sel) == "app=web,!canary,env notin (prod),tier in (be,fe),zone"
    assert sel.matches({"app": "web", "tier": "fe", "zone": "a"})
    assert not sel.matches({"app": "web", "tier": "fe", "zone": "a", "canary": "1"})
    assert not sel.matches({"app": "web", "tier": "fe", "zone": "a", "env": "prod"})
    with pytest.raises(SelectorParseError) as info:
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Equals"}]})
    assert str(info.value) == '"Equals" is not a valid label selector operator'
    with pytest.raises(SelectorParseError) as info:
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert str(info.value) == "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    with pytest.raises(SelectorParseError) as info:
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
    assert str(info.value) == ('values: Invalid value: ["x"]: values set must be empty for exists and does '
                               "not exist")
