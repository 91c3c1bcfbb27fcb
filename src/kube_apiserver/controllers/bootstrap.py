"""The bootstrap token controllers kubeadm turns on (pkg/controller/bootstrap; off by default in
kube-controller-manager, so here too: `--controllers=*,bootstrapsigner,tokencleaner`):

- bootstrapsigner keeps kube-public/cluster-info signed: a detached JWS (HS256, the token secret as key, its
  id as kid) of its `kubeconfig` under `jws-kubeconfig-<token id>` for every bootstrap token marked for
  signing, which is how `kubeadm join` trusts the cluster it discovers with a token;
- tokencleaner deletes bootstrap token Secrets once their expiration has passed."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from datetime import datetime
from typing import Any

import orjson

from ..apimachinery import errors
from ..apimachinery.clock import wall_now
from ..authentication.bootstrap import NAMESPACE, SECRET_PREFIX, SECRET_TYPE, TOKEN, has_expired, secret_data
from ..client.informers import EventHandler, SharedInformerFactory
from ..client.rest import Client
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
CLUSTER_INFO_NAMESPACE, CLUSTER_INFO = "kube-public", "cluster-info"
KUBECONFIG_KEY = "kubeconfig"
SIGNATURE_PREFIX = "jws-kubeconfig-"
SIGN_KEY = "cluster-info"  # the signer's one work item: the ConfigMap


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def detached_signature(content: str, token_id: str, token_secret: str) -> str:
    """jws.ComputeDetachedSignature: the compact JWS of `content` with its payload left out ("header..sig")."""
    header = _b64url(orjson.dumps({"alg": "HS256", "kid": token_id}))  # go-jose writes the keys sorted
    signing_input = f"{header}.{_b64url(content.encode())}"
    signature = hmac.new(token_secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return f"{header}..{_b64url(signature)}"


def _bootstrap_token(secret: Object) -> tuple[str, str] | None:
    """(id, secret) of a well-formed bootstrap token Secret, or None."""
    meta = secret.get("metadata") or {}
    if secret.get("type") != SECRET_TYPE or meta.get("namespace") != NAMESPACE:
        return None
    token_id, token_secret = secret_data(secret, "token-id"), secret_data(secret, "token-secret")
    if meta.get("name") != SECRET_PREFIX + token_id or not TOKEN.match(f"{token_id}.{token_secret}"):
        return None
    return token_id, token_secret


def signing_tokens(secrets: list[Object]) -> dict[str, str]:
    """getTokens: the live, unexpired tokens marked usage-bootstrap-signing=true."""
    tokens = {}
    for secret in secrets:
        token = _bootstrap_token(secret)
        if token is None or (secret.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if has_expired(secret_data(secret, "expiration")):
            continue
        if secret_data(secret, "usage-bootstrap-signing") != "true":
            continue
        tokens[token[0]] = token[1]
    return tokens


def signed_data(data: dict[str, str], tokens: dict[str, str]) -> dict[str, str] | None:
    """The ConfigMap's data with exactly the current tokens' signatures, or None when nothing changes."""
    content = data.get(KUBECONFIG_KEY)
    if content is None:
        return None
    kept = {key: value for key, value in data.items() if not key.startswith(SIGNATURE_PREFIX)}
    wanted = {SIGNATURE_PREFIX + token_id: detached_signature(content, token_id, token_secret)
              for token_id, token_secret in sorted(tokens.items())}
    current = {key: value for key, value in data.items() if key.startswith(SIGNATURE_PREFIX)}
    if current == wanted:
        return None
    return {**kept, **wanted}


class BootstrapSignerController(QueueController):
    def __init__(self, client: Client, informers: SharedInformerFactory):
        super().__init__("bootstrapsigner", client, None, 1, "bootstrap_signer_queue")
        self.configmaps = informers.for_resource("", "v1", "configmaps")
        self.secrets = informers.for_resource("", "v1", "secrets")
        self.informers = (self.configmaps, self.secrets)

    def register_handlers(self) -> None:
        def configmap_changed(obj: Object) -> None:
            meta = obj.get("metadata") or {}
            if (meta.get("namespace"), meta.get("name")) == (CLUSTER_INFO_NAMESPACE, CLUSTER_INFO):
                self.queue.add(SIGN_KEY)

        def secret_changed(obj: Object) -> None:
            if (obj.get("metadata") or {}).get("namespace") == NAMESPACE and obj.get("type") == SECRET_TYPE:
                self.queue.add(SIGN_KEY)

        self.configmaps.add_event_handler(_on_every_change(configmap_changed))
        self.secrets.add_event_handler(_on_every_change(secret_changed))

    async def sync_handler(self, key: Any) -> None:
        cluster_info = self.configmaps.indexer.get_by_name(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
        if cluster_info is None:
            return
        data = signed_data(cluster_info.get("data") or {}, signing_tokens(self.secrets.indexer.list()))
        if data is None:
            return
        api = self.client.resource("", "v1", "configmaps").namespace(CLUSTER_INFO_NAMESPACE)
        try:
            await api.update({**cluster_info, "data": data})
        except errors.StatusError as err:
            if err.code != 409:
                raise
            self.queue.add(SIGN_KEY)  # changed meanwhile: signed again from the new one


class TokenCleanerController(QueueController):
    def __init__(self, client: Client, informers: SharedInformerFactory):
        super().__init__("tokencleaner", client, None, 1, "token_cleaner")
        self.secrets = informers.for_resource("", "v1", "secrets")
        self.informers = (self.secrets,)

    def register_handlers(self) -> None:
        def secret_changed(obj: Object) -> None:
            if obj.get("type") == SECRET_TYPE:
                meta = obj.get("metadata") or {}
                self.queue.add((meta.get("namespace", ""), meta.get("name", "")))

        self.secrets.add_event_handler(EventHandler(secret_changed, lambda _old, new: secret_changed(new)))

    async def sync_handler(self, key: Any) -> None:
        namespace, name = key
        secret = self.secrets.indexer.get_by_name(namespace, name)
        if secret is None or namespace != NAMESPACE or secret.get("type") != SECRET_TYPE:
            return
        expiration = secret_data(secret, "expiration")
        if not expiration:
            return
        if has_expired(expiration):
            uid = (secret.get("metadata") or {}).get("uid")
            log.info("Deleting expired secret %s/%s", namespace, name)
            try:
                await self.client.resource("", "v1", "secrets").namespace(namespace).delete(
                    name, {"preconditions": {"uid": uid}})
            except errors.StatusError as err:
                if err.code not in (404, 409):
                    raise
            return
        when = _parse(expiration)
        if when is not None:  # looked at again once it expires
            self.queue.add_after(key, max((when - wall_now()).total_seconds(), 0.0))


def _on_every_change(handler: Any) -> EventHandler:
    return EventHandler(handler, lambda _old, new: handler(new), handler)


def _parse(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
