"""The quantity library (examples from k8s.io/apiserver/pkg/cel/library/quantity.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize(("expression", "expected"), [
    ('isQuantity("1.3G")', True), ('isQuantity("1.3Gi")', True), ('isQuantity("1,3G")', False),
    ('isQuantity("10000k")', True), ('isQuantity("200K")', False), ('isQuantity("Three")', False),
    ('quantity("50000000G").isInteger()', True), ('quantity("50k").isInteger()', True),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("1.5").isInteger()', False),
    ('quantity("50k").asInteger() == 50000', True),
    ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
    ('quantity("50k").add(quantity("20k")) == quantity("70k")', True),
    ('quantity("50k").add(20) == quantity("50020")', True),
    ('quantity("50k").sub(quantity("20k")) == quantity("30k")', True),
    ('quantity("50k").sub(20000) == quantity("30k")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")', True),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50Mi").isGreaterThan(quantity("100Mi"))', False),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("1Ki") == quantity("1024")', True),
    ('quantity("-1").sign()', -1), ('quantity("0").sign()', 0), ('quantity("1m").sign()', 1),
    ('quantity("1e400").asApproximateFloat() > 1.0e300', True),
])
def test_quantity(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


def test_quantity_errors(err: Callable[..., str]) -> None:
    assert err('quantity("9999999999999999999999999999999999999G").asInteger()') == "cannot convert value to integer"
    assert err('quantity("200K")') == "unable to parse quantity's suffix"
    assert err('quantity("1").compareTo(semver("1.0.0"))') == "no such overload"


def test_quantity_from_object(ev: Callable[..., Any]) -> None:
    limits = {"cpu": "500m", "memory": "1Gi"}
    assert ev("quantity(self.cpu).isLessThan(quantity('1')) && quantity(self.memory).asInteger() == 1073741824",
              self=limits) is True
