"""The semver library (examples from k8s.io/apiserver/pkg/cel/library/semverlib.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize(("expression", "expected"), [
    ("isSemver('1.0.0')", True), ("isSemver('hello')", False), ("isSemver('v1.0')", False),
    ("isSemver('v1.0', true)", True), ("isSemver('1.0', true)", True), ("isSemver('01.01.01', true)", True),
    ("isSemver('1.0.0-alpha.1+build.5')", True), ("isSemver('1.0.0-01')", False), ("isSemver('1.0.0+')", False),
    ("semver('v1.0.0', true) == semver('1.0.0')", True),
    ("semver('1.0', true) == semver('1.0.0')", True),
    ("semver('01.01.01', true) == semver('1.1.1')", True),
    ("semver('1.0.0+build1') == semver('1.0.0+build2')", True),
    ("semver('1.2.3').major()", 1), ("semver('1.2.3').minor()", 2), ("semver('1.2.3').patch()", 3),
    ("semver('1.2.3').compareTo(semver('1.2.3'))", 0),
    ("semver('1.2.3').compareTo(semver('2.0.0'))", -1),
    ("semver('1.2.3').compareTo(semver('0.1.2'))", 1),
    ("semver('1.10.0').isGreaterThan(semver('1.9.0'))", True),
    ("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", True),
    ("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))", True),
    ("semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))", True),
    ("semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))", True),
    ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0-rc.1.1'))", True),
])
def test_semver(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("semver('200K')", "No Major.Minor.Patch elements found"),
    ("semver('1.2.x')", 'Invalid character(s) found in patch number "x"'),
    ("semver('01.2.3')", 'Major number must not contain leading zeroes "01"'),
    ("semver('1..3')", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("semver('')", "Version string empty"),
    ("semver('1.0-rc', true)", "short version cannot contain PreRelease/Build meta data"),
])
def test_semver_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression) == message
