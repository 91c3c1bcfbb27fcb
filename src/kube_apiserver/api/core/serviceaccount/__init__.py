"""serviceaccounts (pkg/registry/core/serviceaccount) and their `token` subresource (TokenRequest)."""

from __future__ import annotations

from typing import Any

from ....apimachinery.jsontypes import ListOf, Struct
from ....registry.context import Context
from ....registry.rest import ResourceInfo, TableColumn
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.table import AGE, NAME, TableConvertor, age, name
from ....serviceaccount.issuer import TokenConfig
from ....storage.factory import StorageFactory
from ..gotypes import OBJECT_META, check_decodable
from .token import TokenREST

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "serviceaccounts", "ServiceAccount", "serviceaccount", True, short_names=("sa",))
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
ENFORCE_WARNING = (f"metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate "
                   "namespaces to isolate access to mounted secrets")
SECRETS_DESCRIPTION = (
    'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are '
    'allowed to use. Pods are only limited to this list if this service account has a '
    '"kubernetes.io/enforce-mountable-secrets" annotation set to "true". The '
    '"kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to '
    'isolate access to mounted secrets. This field should not be used to find auto-generated service account token '
    'secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or '
    'service account token secrets can be manually created. More info: '
    'https://kubernetes.io/docs/concepts/configuration/secret')


def _clean_secret_references(obj: Object) -> None:
    """cleanSecretReferences: a secret reference keeps only its name."""
    secrets = obj.get("secrets")
    if isinstance(secrets, list):
        obj["secrets"] = [{"name": s.get("name", "")} if isinstance(s, dict) else s for s in secrets]


def _annotated(obj: Object) -> bool:
    return bool(((obj.get("metadata") or {}).get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS))


SERVICE_ACCOUNT = Struct("ServiceAccount", "v1.ServiceAccount", {
    "metadata": OBJECT_META,
    "secrets": ListOf(Struct("ObjectReference", "v1.ObjectReference", {
        "kind": "string", "namespace": "string", "name": "string", "uid": "string", "apiVersion": "string",
        "resourceVersion": "string", "fieldPath": "string"})),
    "imagePullSecrets": ListOf(Struct("LocalObjectReference", "v1.LocalObjectReference", {"name": "string"})),
    "automountServiceAccountToken": "bool"})


class ServiceAccountStrategy(Strategy):
    def default(self, obj: Object) -> None:
        check_decodable(INFO.kind, obj, SERVICE_ACCOUNT)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        _clean_secret_references(obj)
        if _annotated(obj):
            ctx.warnings.append(ENFORCE_WARNING)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        _clean_secret_references(obj)
        if _annotated(obj) and not _annotated(old):
            ctx.warnings.append(ENFORCE_WARNING)


TABLE = TableConvertor((NAME, TableColumn("Secrets", "string", "", SECRETS_DESCRIPTION), AGE),
                       lambda o: [name(o), len(o.get("secrets") or []), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ServiceAccountStrategy(INFO), storage, "/registry/serviceaccounts", TABLE)
    return {"serviceaccounts": store}


def token_rest(rest: dict[str, Any], storage: StorageFactory, config: TokenConfig) -> dict[str, Any]:
    """serviceaccounts/token, served only when a signing key is configured (an issuer exists)."""
    if config.generator is None:
        return {}
    return {"serviceaccounts/token": TokenREST(rest["serviceaccounts"], rest["pods"], rest["secrets"],
                                               storage, config)}
