"""The union of request authenticators (k8s union.New + NewFailOnError with anonymous) and the request-header
authenticator's reading of headers."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.authentication.interfaces import AuthenticationError
from kube_apiserver.authentication.request import AnonymousAuthenticator, UnionAuthenticator
from kube_apiserver.authentication.requestheader import (
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
    _path_unescape,
)
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.context import UserInfo
from kube_apiserver.testing.certs import CertificateAuthority


class Fixed:
    def __init__(self, answer):
        self.answer = answer

    async def authenticate(self, req):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _request(headers=None, cert=None) -> Request:
    return Request("GET", "/api", b"", dict(headers or {}), client_cert=cert)


def test_a_failing_authenticator_does_not_stop_the_next():
    union = UnionAuthenticator([Fixed(AuthenticationError("bad")), Fixed(UserInfo("jane"))], None)
    user = asyncio.run(union.authenticate(_request()))
    assert user.name == "jane" and "system:authenticated" in user.groups


def test_a_failure_without_a_user_fails_even_with_anonymous():
    union = UnionAuthenticator([Fixed(AuthenticationError("a")), Fixed(None), Fixed(AuthenticationError("b"))],
                               AnonymousAuthenticator())
    with pytest.raises(AuthenticationError, match=r"^\[a, b\]$"):
        asyncio.run(union.authenticate(_request()))
    anonymous = asyncio.run(UnionAuthenticator([Fixed(None)], AnonymousAuthenticator()).authenticate(_request()))
    assert anonymous.name == "system:anonymous"


@pytest.mark.parametrize(("raw", "key"), [("scopes", "scopes"), ("example.com%2fteam", "example.com/team"),
                                          ("bad%zz", "bad%zz"), ("cut%2", "cut%2"), ("%41", "A")])
def test_extra_keys_are_path_unescaped_or_kept(raw, key):
    assert _path_unescape(raw) == key


def _proxy_cert(ca: CertificateAuthority, name: str) -> bytes:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    pem, _ = ca.issue(name, client=True)
    return x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)


def test_the_headers_are_read_and_dropped():
    ca = CertificateAuthority.generate("front-proxy-ca")
    authenticator = RequestHeaderAuthenticator(RequestHeaderConfig(
        ca.cert_pem, username_headers=["X-Remote-User"], uid_headers=["X-Remote-Uid"],
        group_headers=["X-Remote-Group"], extra_headers_prefixes=["X-Remote-Extra-"]))
    req = _request({"x-remote-user": "alice, bob", "x-remote-group": "a, b", "x-remote-extra-scopes": "x",
                    "x-other": "kept"}, _proxy_cert(ca, "proxy"))
    user = asyncio.run(authenticator.authenticate(req))
    assert (user.name, user.groups, user.extra) == ("alice", ("a", "b"), {"scopes": ["x"]})
    assert req.headers == {"x-other": "kept"}


def test_another_authority_s_certificate_is_refused():
    ca, other = CertificateAuthority.generate("front-proxy-ca"), CertificateAuthority.generate("client-ca")
    authenticator = RequestHeaderAuthenticator(RequestHeaderConfig(ca.cert_pem, username_headers=["X-Remote-User"]))
    with pytest.raises(AuthenticationError, match="x509: certificate signed by unknown authority"):
        asyncio.run(authenticator.authenticate(_request({"x-remote-user": "a"}, _proxy_cert(other, "proxy"))))
