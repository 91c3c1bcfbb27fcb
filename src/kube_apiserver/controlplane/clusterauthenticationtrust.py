"""kube-system/extension-apiserver-authentication (pkg/controlplane/controller/clusterauthenticationtrust):
the client CA and the front proxy's request-header configuration, published for aggregated API servers and
webhooks to authenticate the requests this server proxies. What is already there (other replicas' or other
servers' values) is kept: CA bundles and header lists are merged, without duplicates."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from ..apimachinery import errors
from ..apimachinery.wait import Periodic
from ..registry.context import Context
from ..registry.rest import UpdatedObjectInfo
from ..registry.store import Store
from .bootstrap import SYSTEM_USER

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"
RESYNC_SECONDS = 60.0  # upstream's controller re-queues itself every minute


@dataclass
class ClusterAuthenticationInfo:
    client_ca: bytes = b""
    requestheader_ca: bytes = b""
    requestheader_allowed_names: list[str] = field(default_factory=list)
    requestheader_username_headers: list[str] = field(default_factory=list)
    requestheader_uid_headers: list[str] = field(default_factory=list)
    requestheader_group_headers: list[str] = field(default_factory=list)
    requestheader_extra_headers_prefix: list[str] = field(default_factory=list)


_LISTS = (("requestheader-username-headers", "requestheader_username_headers"),
          ("requestheader-uid-headers", "requestheader_uid_headers"),
          ("requestheader-group-headers", "requestheader_group_headers"),
          ("requestheader-extra-headers-prefix", "requestheader_extra_headers_prefix"),
          ("requestheader-allowed-names", "requestheader_allowed_names"))


def combined(existing: dict[str, str], required: ClusterAuthenticationInfo) -> dict[str, str]:
    """getConfigMapDataFor(combinedClusterAuthenticationInfo(existing, required)); raises ValueError for
    data that does not decode."""
    data: dict[str, str] = {}
    client_ca = _combine_certs(existing.get("client-ca-file", ""), required.client_ca)
    if client_ca:
        data["client-ca-file"] = client_ca
    requestheader_ca = _combine_certs(existing.get("requestheader-client-ca-file", ""), required.requestheader_ca)
    if not requestheader_ca:
        return data
    for key, attribute in _LISTS:
        values = _combine_unique(_string_list(existing.get(key, "")), getattr(required, attribute))
        if key == "requestheader-uid-headers" and not values:
            continue  # written only when set (the key is newer than the others)
        data[key] = json.dumps(values, separators=(",", ":"))
    data["requestheader-client-ca-file"] = requestheader_ca
    return {key: data[key] for key in sorted(data)}


def _string_list(raw: str) -> list[str]:
    if not raw:
        return []
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"not a list of strings: {raw}")
    return value


def _combine_unique(lhs: list[str], rhs: list[str]) -> list[str]:
    return list(dict.fromkeys([*lhs, *rhs]))


def _combine_certs(existing: str, required: bytes) -> str:
    """combineCertLists: the certificates of both, without duplicates or expired ones, existing first."""
    certs = [*_certs(existing.encode()), *_certs(required)]
    now = datetime.now(UTC)
    seen: set[bytes] = set()
    out: list[str] = []
    for cert in certs:
        der = cert.public_bytes(Encoding.DER)
        if der in seen or cert.not_valid_after_utc < now:
            continue
        seen.add(der)
        out.append(cert.public_bytes(Encoding.PEM).decode())
    return "".join(out)


def _certs(pem: bytes) -> list[x509.Certificate]:
    if not pem.strip():
        return []
    return x509.load_pem_x509_certificates(pem)


class ClusterAuthenticationTrustController:
    """The post-start hook start-cluster-authentication-info-controller: writes the ConfigMap at start and
    keeps it so every minute (a value removed by hand comes back)."""

    def __init__(self, configmaps: Store, required: ClusterAuthenticationInfo):
        self.configmaps = configmaps
        self.required = required
        self._periodic = Periodic("cluster authentication trust controller", RESYNC_SECONDS, self.sync)

    async def start(self) -> None:
        try:
            await self.sync()
        except (errors.StatusError, ValueError) as err:
            log.error("failed to publish %s/%s: %s", NAMESPACE, NAME, err)
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def sync(self) -> None:
        async def publish(_ctx: Context, old: Object | None) -> Object:
            current = old or {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": NAME, "namespace": NAMESPACE}}
            data = combined(current.get("data") or {}, self.required)
            if old and (old.get("data") or {}) == data:
                return old  # unchanged: no write
            log.info("writing updated authentication info to %s configmaps/%s", NAMESPACE, NAME)
            return {**current, "data": data}

        await self.configmaps.update(Context(NAMESPACE, SYSTEM_USER), NAME, UpdatedObjectInfo(NAME, publish),
                                     force_allow_create=True)
