"""Client certificates (--client-ca-file): the TLS layer has verified the chain against the CAs it trusts,
and the certificate must be issued by the client CA (not the request-header CA, which TLS trusts too); the
user is the subject's CommonName and the groups its Organizations (k8s x509 CommonNameUserConversion)."""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import NameOID

from ..endpoints.http import Request
from ..registry.context import UserInfo
from .interfaces import AuthenticationError
from .requestheader import IssuerCheck


class X509Authenticator:
    def __init__(self, issuer: IssuerCheck | None = None):
        self.issuer = issuer

    async def authenticate(self, req: Request) -> UserInfo | None:
        der = req.client_cert
        if not der:
            return None
        if self.issuer is not None:
            subject = self.issuer.verified(der).subject
        else:
            try:
                subject = x509.load_der_x509_certificate(der).subject
            except ValueError as err:
                raise AuthenticationError(f"unreadable client certificate: {err}") from None
        names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if not names or not str(names[0].value):
            raise AuthenticationError("common name of the client certificate is empty")
        groups = tuple(str(o.value) for o in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(str(names[0].value), groups=groups)
