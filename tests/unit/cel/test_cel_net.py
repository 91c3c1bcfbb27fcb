"""The ip and cidr libraries (cases from k8s.io/apiserver/pkg/cel/library ip_test.go, cidr_test.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize("expression", [
    'isIP("192.168.0.1")', 'ip.isCanonical("127.0.0.1")', 'ip("192.168.0.1").family() == 4',
    'ip("0.0.0.0").isUnspecified()', 'ip("127.0.0.1").isLoopback()', 'ip("224.0.0.1").isLinkLocalMulticast()',
    'ip("169.254.169.254").isLinkLocalUnicast()', 'ip("192.168.0.1").isGlobalUnicast()',
    'isIP("2001:db8::68")', 'ip.isCanonical("2001:db8::68")', 'ip("2001:db8::68").family() == 6',
    'ip("::").isUnspecified()', 'ip("::1").isLoopback()', 'ip("ff02::1").isLinkLocalMulticast()',
    'ip("fe80::1").isLinkLocalUnicast()', 'ip("2001:db8::abcd").isGlobalUnicast()',
    'ip("10.0.0.1") == ip("10.0.0.1")', 'ip("::1") == cidr("::1/128").ip()',
    'string(ip("2001:db8:0:0:0:0:0:68")) == "2001:db8::68"', 'isIP("::1.2.3.4")',
    'cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', 'cidr("192.168.0.0/24").containsIP("192.168.0.1")',
    'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))',
    'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))',
    'cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', 'cidr("192.168.0.0/24").ip() == ip("192.168.0.0")',
    'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', 'cidr("192.168.0.0/24").prefixLength() == 24',
    'cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', 'cidr("2001:db8::/32").containsCIDR("2001:db8::/33")',
    'cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', 'string(cidr("192.168.0.0/24")) == "192.168.0.0/24"',
    'isCIDR("10.0.0.0/8")', 'cidr("10.0.0.0/0").containsIP("1.2.3.4")',
])
def test_true(ev: Callable[..., Any], expression: str) -> None:
    assert ev(expression) is True


@pytest.mark.parametrize("expression", [
    'isIP("192.168.0.1.0")', 'ip("127.0.0.1").isUnspecified()', 'ip("1.2.3.4").isLoopback()',
    'ip("224.0.1.1").isLinkLocalMulticast()', 'ip("192.168.0.1").isLinkLocalUnicast()',
    'ip("255.255.255.255").isGlobalUnicast()', 'isIP("2001:db8:::68")', 'ip.isCanonical("2001:DB8::68")',
    'ip("fd00::1").isLinkLocalMulticast()', 'ip("fd80::1").isLinkLocalUnicast()', 'ip("ff00::1").isGlobalUnicast()',
    'isIP("::ffff:1.2.3.4")', 'isIP("fe80::1%eth0")', 'isIP("010.0.0.1")',
    'cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', 'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))',
    'cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))', 'cidr("2001:db8::/32").containsCIDR("2001:db8::/31")',
    'cidr("10.0.0.1/8") == cidr("10.0.0.0/8")', 'cidr("::/0").containsIP("1.2.3.4")',
    'isCIDR("10.0.0.0/33")', 'isCIDR("10.0.0.0/08")', 'isCIDR("10.0.0.0")',
])
def test_false(ev: Callable[..., Any], expression: str) -> None:
    assert ev(expression) is False


@pytest.mark.parametrize(("expression", "message"), [
    ('ip("192.168.0.1.0")', 'IP Address "192.168.0.1.0" parse error during conversion from string: '
                            'ParseAddr("192.168.0.1.0"): IPv4 address too long'),
    ('ip("2001:db8:::68")', 'IP Address "2001:db8:::68" parse error during conversion from string: '
                            'ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit '
                            '(at ":68")'),
    ('ip("1.2.3.256")', 'IP Address "1.2.3.256" parse error during conversion from string: '
                        'ParseAddr("1.2.3.256"): IPv4 field has value >255'),
    ('ip("fe80::1%eth0")', 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('ip("::ffff:1.2.3.4")', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('ip("abc")', 'IP Address "abc" parse error during conversion from string: ParseAddr("abc"): unable to parse IP'),
    ('cidr("192.168.0.0/")', 'network address parse error during conversion from string: network address parse '
                             'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): '
                             'bad bits after slash: ""'),
    ('cidr("2001:db8::/129")', 'network address parse error during conversion from string: network address parse '
                               'error during conversion from string: netip.ParsePrefix("2001:db8::/129"): '
                               'prefix length out of range'),
    ('ip(1)', "no such overload"),
    ('ip("1.2.3.4").prefixLength()', "no such overload"),
])
def test_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression) == message


def test_ip_results(ev: Callable[..., Any]) -> None:
    assert str(ev('cidr("2001:db8:1::/32").masked()')) == "2001:db8::/32"
    assert str(ev('ip("::1.2.3.4")')) == "::102:304"
