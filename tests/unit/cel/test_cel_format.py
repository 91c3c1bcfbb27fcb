"""Kubernetes' format library (cases from k8s.io/apiserver/pkg/cel/library/format_test.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_apiserver.cel.library.format import VALIDATORS

LABEL_ERROR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
               "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
               "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


@pytest.mark.parametrize("expression", [
    'format.dns1123Label().validate("my-label-name")', 'format.dns1123Subdomain().validate("apiextensions.k8s.io")',
    'format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")',
    'format.dns1123LabelPrefix().validate("my-label-prefix-")',
    'format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")',
    'format.dns1035LabelPrefix().validate("my-label-prefix-")', 'format.uri().validate("http://example.com")',
    'format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', 'format.byte().validate("aGVsbG8=")',
    'format.date().validate("2021-01-01")', 'format.datetime().validate("2021-01-01T00:00:00Z")',
    'format.labelValue().validate("my-cool-label-Value")', 'format.dns1035Label().validate("my-label-name")',
])
def test_valid(ev: Callable[..., Any], expression: str) -> None:
    assert ev(f"{expression}.hasValue()") is False


@pytest.mark.parametrize(("expression", "errors"), [
    ('format.dns1123Label().validate("contains a space")', [LABEL_ERROR]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL_ERROR]),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.uuid().validate("nope")', ["does not match the UUID format"]),
    ('format.uri().validate("relative")', ['parse "relative": invalid URI for request']),
])
def test_invalid(ev: Callable[..., Any], expression: str, errors: list[str]) -> None:
    assert ev(f"{expression}.value()") == errors


@pytest.mark.parametrize("name", sorted(VALIDATORS))
def test_named(ev: Callable[..., Any], name: str) -> None:
    assert ev(f'format.named("{name}").hasValue() && format.named("{name}").value() == format.{name}()') is True


def test_named_unknown_and_distinct(ev: Callable[..., Any]) -> None:
    assert ev('format.named("unknown").hasValue()') is False
    assert ev("format.dns1123Label() == format.dns1035Label()") is False


def test_in_a_rule(ev: Callable[..., Any]) -> None:
    rule = "!format.dns1123Label().validate(self.name).hasValue()"
    assert ev(rule, self={"name": "ok-name"}) is True
    assert ev(rule, self={"name": "Not OK"}) is False
