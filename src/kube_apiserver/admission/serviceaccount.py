"""ServiceAccount (plugin/pkg/admission/serviceaccount): a new pod runs as its service account
(`default` unless named), which must exist; unless automounting is off (pod first, then service
account), every container mounts the projected `kube-api-access-<random>` volume (token, cluster CA,
namespace); the account's imagePullSecrets are copied to a pod without any. Mirror pods may reference
neither service accounts nor secrets. Accounts annotated kubernetes.io/enforce-mountable-secrets limit
the secrets their pods reference."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ..client.informers import SharedInformerFactory
from ..registry.strategy import generate_name
from ..serviceaccount.claims import WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, ObjectGetter
from .interfaces import CREATE, UPDATE, Attributes, forbidden
from .lister import ObjectLookup
from .mountable_secrets import ephemeral_secret_error, mirror_pod_error, secret_reference_error

Object = dict[str, Any]
DEFAULT_SERVICE_ACCOUNT = "default"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_LOOKUP_ATTEMPTS = 10  # the default account is created by a controller: wait for it a little


def token_volume_source() -> Object:
    """TokenVolumeSource: the token, the cluster's CA bundle and the pod's namespace."""
    return {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"expirationSeconds": WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}


def _parse_bool(value: str) -> bool:
    """strconv.ParseBool, false when unparsable."""
    return value in ("1", "t", "T", "TRUE", "true", "True")


def _spec(pod: Object) -> Object:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        spec = pod["spec"] = {}
    return spec


def _is_mirror(pod: Object) -> bool:
    return MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def should_automount(sa: Object, spec: Object) -> bool:
    """The pod's preference wins, then the service account's; true by default."""
    for preference in (spec.get("automountServiceAccountToken"), sa.get("automountServiceAccountToken")):
        if preference is not None:
            return bool(preference)
    return True


def mount_service_account_token(spec: Object) -> None:
    """Every container without a mount at the token path mounts the token volume, added if needed."""
    volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict)]
    existing = next((v["name"] for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), "")
    volume_name = existing or generate_name(VOLUME_PREFIX)
    mount = {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
    needs_volume = False
    for key in ("initContainers", "containers"):
        for container in (c for c in spec.get(key) or [] if isinstance(c, dict)):
            mounts = container.get("volumeMounts") or []
            if not any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                container["volumeMounts"] = [*mounts, dict(mount)]
                needs_volume = True
    if needs_volume and not existing:
        spec["volumes"] = [*(spec.get("volumes") or []), {"name": volume_name, "projected": token_volume_source()}]


class ServiceAccount:
    name = "ServiceAccount"

    def __init__(self, get_object: ObjectGetter, mount_service_account_token: bool = True):
        # upstream's serviceAccountLister, then a live read
        self.service_accounts = ObjectLookup(lambda ns, name: get_object("serviceaccounts", ns, name),
                                             "serviceaccounts")
        self.mount_token = mount_service_account_token

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.service_accounts.set_informers(informers)

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE)

    @staticmethod
    def _pod(attrs: Attributes) -> Object | None:
        """shouldIgnore: only pods (and their ephemeralcontainers) are this plugin's."""
        if attrs.group or attrs.resource != "pods" or attrs.subresource not in ("", "ephemeralcontainers"):
            return None
        return attrs.object if isinstance(attrs.object, dict) else None

    async def _service_account(self, attrs: Attributes, name: str) -> Object:
        attempts = DEFAULT_LOOKUP_ATTEMPTS if name == DEFAULT_SERVICE_ACCOUNT else 1
        interval = random.uniform(0.1, 0.2)
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(interval)
            sa = await (self.service_accounts.live(attrs.namespace, name) if attempt else
                        self.service_accounts.get(attrs.namespace, name))
            if sa is not None:
                return sa
        raise forbidden(attrs, f"error looking up service account {attrs.namespace}/{name}: "
                               f'serviceaccount "{name}" not found')

    async def admit(self, attrs: Attributes) -> None:
        pod = self._pod(attrs)
        if pod is None or attrs.operation != CREATE or attrs.subresource or _is_mirror(pod):
            return
        spec = _spec(pod)
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccount"] = spec["serviceAccountName"]  # v1's deprecated alias, as conversion writes it
        sa = await self._service_account(attrs, spec["serviceAccountName"])
        if self.mount_token and should_automount(sa, spec):
            mount_service_account_token(spec)
        if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in sa["imagePullSecrets"]]

    async def validate(self, attrs: Attributes) -> None:
        pod = self._pod(attrs)
        if pod is None:
            return
        spec = _spec(pod)
        if attrs.operation == UPDATE and attrs.subresource == "ephemeralcontainers":
            await self._validate_ephemeral(attrs, spec)
            return
        if attrs.operation != CREATE or attrs.subresource:
            return
        if _is_mirror(pod):
            why = mirror_pod_error(spec)
            if why:
                raise forbidden(attrs, why)
            return
        sa = await self._service_account(attrs, spec.get("serviceAccountName") or "")
        why = secret_reference_error(sa, spec) if self._enforces(sa) else None
        if why:
            raise forbidden(attrs, why)

    async def _validate_ephemeral(self, attrs: Attributes, spec: Object) -> None:
        if not spec.get("serviceAccountName"):
            return
        sa = await self._service_account(attrs, spec["serviceAccountName"])
        why = ephemeral_secret_error(sa, spec) if self._enforces(sa) else None
        if why:
            raise forbidden(attrs, why)

    @staticmethod
    def _enforces(sa: Object) -> bool:
        annotations = (sa.get("metadata") or {}).get("annotations") or {}
        return _parse_bool(annotations.get(ENFORCE_MOUNTABLE_SECRETS, ""))
