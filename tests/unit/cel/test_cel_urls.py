"""Kubernetes' URL library (examples from k8s.io/apiserver/pkg/cel/library/urls.go), Go net/url parsing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize(("expression", "expected"), [
    ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
    ("isURL('/absolute-path')", True), ("isURL('https://a:b:c/')", False), ("isURL('../relative-path')", False),
    ("isURL('')", False), ("isURL('http://exa mple.com/')", False), ("isURL('mailto:x@y.z')", True),
    ("url('/path').getScheme()", ""), ("url('https://example.com/').getScheme()", "https"),
    ("url('HTTPS://example.com/').getScheme()", "https"),
    ("url('https://example.com:80/').getHost()", "example.com:80"),
    ("url('https://example.com/').getHost()", "example.com"), ("url('https://[::1]:80/').getHost()", "[::1]:80"),
    ("url('https://[::1]/').getHost()", "[::1]"), ("url('/path').getHost()", ""),
    ("url('https://user:pass@example.com/').getHost()", "example.com"),
    ("url('https://example.com:80/').getHostname()", "example.com"),
    ("url('https://127.0.0.1:80/').getHostname()", "127.0.0.1"),
    ("url('https://[::1]:80/').getHostname()", "::1"), ("url('/path').getHostname()", ""),
    ("url('https://example.com:80/').getPort()", "80"), ("url('https://example.com/').getPort()", ""),
    ("url('/path').getPort()", ""),
    ("url('https://example.com/path').getEscapedPath()", "/path"),
    ("url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
    ("url('https://example.com').getEscapedPath()", ""),
    ("url('https://example.com/a%2Fb').getEscapedPath()", "/a%2Fb"),
    ("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
    ("url('https://example.com/path?key with spaces=value with spaces').getQuery()",
     {"key with spaces": ["value with spaces"]}),
    ("url('https://example.com/path?a=1+2&b=%20&c').getQuery()", {"a": ["1 2"], "b": [" "], "c": [""]}),
    ("url('https://example.com/path?').getQuery()", {}), ("url('https://example.com/path').getQuery()", {}),
    ("url('https://example.com/p#frag').getEscapedPath()", "/p"),
    ("url('https://example.com/') == url('https://example.com/')", True),
])
def test_urls(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("url('https://a:b:c/')", 'URL parse error during conversion from string: parse "https://a:b:c/": '
                              'invalid port ":c" after host'),
    ("url('../relative-path')", 'URL parse error during conversion from string: parse "../relative-path": '
                                "invalid URI for request"),
    ("url('')", 'URL parse error during conversion from string: parse "": empty url'),
    ("url(':x')", 'URL parse error during conversion from string: parse ":x": missing protocol scheme'),
    ("url('/a%zz')", 'URL parse error during conversion from string: parse "/a%zz": invalid URL escape "%zz"'),
    ("url('https://[::1/')", 'URL parse error during conversion from string: parse "https://[::1/": '
                             "missing ']' in host"),
    ("url('/p').getScheme(1)", "no such overload"),
    ("'https://x/'.getHost()", "no such overload"),
])
def test_url_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression) == message
