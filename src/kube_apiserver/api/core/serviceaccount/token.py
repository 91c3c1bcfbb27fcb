"""serviceaccounts/token: TokenRequest (pkg/registry/core/serviceaccount/storage/token.go), a signed JWT
for the service account, optionally bound to a pod, secret or node of its namespace."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from ....apimachinery import errors, field
from ....apimachinery.jsontypes import Struct
from ....registry.context import Context
from ....registry.rest import ResourceInfo, ValidateObjectFunc
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....serviceaccount.claims import WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, new_claims
from ....serviceaccount.getter import storage_getter
from ....serviceaccount.issuer import TokenConfig
from ....storage.factory import StorageFactory
from ..gotypes import OBJECT_META, check_decodable

Object = dict[str, Any]
GROUP = "authentication.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "serviceaccounts", "TokenRequest", "", True, subresource="token")
DEFAULT_EXPIRATION_SECONDS = 60 * 60
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32
SPEC = field.Path("spec")


TOKEN_REQUEST = Struct("TokenRequest", "v1.TokenRequest", {
    "metadata": OBJECT_META,
    "spec": Struct("TokenRequestSpec", "v1.TokenRequestSpec", {
        "audiences": "[]string", "expirationSeconds": "int64",
        "boundObjectRef": Struct("BoundObjectReference", "v1.BoundObjectReference", {
            "kind": "string", "apiVersion": "string", "name": "string", "uid": "string"})})})


class TokenRequestStrategy(Strategy):
    def default(self, obj: Object) -> None:
        """Decoding (a body that does not fit the Go types is a 400), then SetDefaults_TokenRequestSpec:
        an hour unless asked otherwise."""
        check_decodable(INFO.kind, obj, TOKEN_REQUEST)
        spec = obj.get("spec")
        if spec is None:
            spec = obj["spec"] = {}
        if isinstance(spec, dict) and spec.get("expirationSeconds") is None:
            spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS


def validate_token_request(obj: Object) -> field.ErrorList:
    """ValidateTokenRequest."""
    seconds = (obj.get("spec") or {}).get("expirationSeconds") or 0
    errs: field.ErrorList = []
    if seconds < MIN_EXPIRATION_SECONDS:
        errs.append(field.invalid(SPEC.child("expirationSeconds"), seconds,
                                  "may not specify a duration less than 10 minutes"))
    if seconds > MAX_EXPIRATION_SECONDS:
        errs.append(field.invalid(SPEC.child("expirationSeconds"), seconds,
                                  "may not specify a duration larger than 2^32 seconds"))
    return errs


def _check_names(meta: Object, name: str, namespace: str) -> None:
    """The name and namespace in the body, when given, are the service account's."""
    errs: field.ErrorList = []
    if meta.get("name") and meta["name"] != name:
        errs.append(field.invalid(field.Path("metadata", "name"), meta["name"],
                                  "must match the service account name if specified"))
    if meta.get("namespace") and meta["namespace"] != namespace:
        errs.append(field.invalid(field.Path("metadata", "namespace"), meta["namespace"],
                                  "must match the service account namespace if specified"))
    if errs:
        raise errors.invalid(INFO.kind, GROUP, name, errs)


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _gvk_string(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind.String() of FromAPIVersionAndKind."""
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    return f"{group}/{version}, Kind={kind}"


class TokenREST:
    """POST a TokenRequest for a service account: the token in status."""

    def __init__(self, accounts: Store, pods: Store, secrets: Store, storage: StorageFactory, config: TokenConfig):
        self.info = INFO
        self.strategy = TokenRequestStrategy(INFO)
        self.accounts, self.pods, self.secrets = accounts, pods, secrets
        self.get_object = storage_getter(storage.store)
        if config.generator is None:
            raise ValueError("serviceaccounts/token needs a signing key")
        self.config, self.generator = config, config.generator

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        name = (options or {}).get("name") or ""
        meta = obj.setdefault("metadata", {})
        _check_names(meta, name, ctx.namespace)
        sa = await self.accounts.get(ctx, name)
        spec = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
        obj["spec"] = spec
        spec["audiences"] = spec.get("audiences") or list(self.config.api_audiences)
        meta.setdefault("name", sa["metadata"]["name"])
        meta.setdefault("namespace", sa["metadata"]["namespace"])
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        meta["creationTimestamp"] = _rfc3339(now)
        obj.pop("status", None)
        errs = validate_token_request(obj)
        if errs:
            raise errors.invalid(INFO.kind, GROUP, "", errs)
        if create_validation is not None:
            await create_validation(ctx, copy.deepcopy(obj))
        bound = await self._bound_objects(ctx, name, spec.get("boundObjectRef"))
        token = self._token(ctx, sa, spec, bound, int(now.timestamp()))
        expires = now + datetime.timedelta(seconds=spec["expirationSeconds"])
        return {**obj, "status": {"token": token, "expirationTimestamp": _rfc3339(expires)}}

    def _token(self, ctx: Context, sa: Object, spec: Object, bound: dict[str, Object | None], now: int) -> str:
        """Caps the expiration at the maximum, extends admission's default pod tokens, signs the claims."""
        maximum = self.config.max_expiration_seconds
        if maximum > 0 and spec["expirationSeconds"] > maximum:
            ctx.warnings.append(f"requested expiration of {spec['expirationSeconds']} seconds shortened to "
                                f"{maximum} seconds")
            spec["expirationSeconds"] = maximum
        expiration, warnafter = spec["expirationSeconds"], 0
        if self.config.extend_expiration and bound["pod"] is not None and \
                expiration == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS and \
                self.config.is_kube_audiences(spec["audiences"]):
            warnafter, expiration = expiration, self.config.max_extended_expiration_seconds
        claims = new_claims(sa, spec["audiences"], expiration, warnafter=warnafter, now=now, **bound)
        return self.generator.generate(claims)

    async def _bound_objects(self, ctx: Context, name: str, ref: Any) -> dict[str, Object | None]:
        bound: dict[str, Object | None] = {"pod": None, "secret": None, "node": None}
        if not isinstance(ref, dict):
            return bound
        api_version, kind, ref_name = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
        if "/" in api_version or kind not in ("Pod", "Secret", "Node"):
            raise errors.bad_request(f'cannot bind token for serviceaccount "{name}" to object of type '
                                     f"{_gvk_string(api_version, kind)}")
        if kind == "Pod":
            bound["pod"] = obj = await self.pods.get(ctx, ref_name)
            if (obj.get("spec") or {}).get("serviceAccountName") != name:
                raise errors.bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with '
                                         f"different serviceaccount name.")
            bound["node"] = await self._pod_node(obj)
        elif kind == "Secret":
            bound["secret"] = obj = await self.secrets.get(ctx, ref_name)
        else:
            bound["node"] = obj = await self._node(ref_name)
        uid = (obj.get("metadata") or {}).get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.conflict(kind, "", ref_name, f"the UID in the bound object reference ({ref['uid']}) does "
                                                      f"not match the UID in record. The object might have been "
                                                      f"deleted and then recreated")
        return bound

    async def _node(self, name: str) -> Object:
        node = await self.get_object("nodes", "", name)
        if node is None:
            raise errors.not_found("nodes", "", name)
        return node

    async def _pod_node(self, pod: Object) -> Object | None:
        """A scheduled pod's node goes into the claims too; by name alone when it does not exist."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return None
        return await self.get_object("nodes", "", node_name) or {"metadata": {"name": node_name}}
