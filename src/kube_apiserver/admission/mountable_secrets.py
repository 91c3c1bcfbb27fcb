"""The secret checks of the ServiceAccount admission plugin: the secrets a pod references
(podutil.VisitPodSecretNames), what a mirror pod may not reference, and the limits of an account
annotated kubernetes.io/enforce-mountable-secrets (limitSecretReferences)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Object = dict[str, Any]
# volume source -> the field naming its secret ("secretRef"-like fields hold {"name": ...})
VOLUME_SECRET_FIELDS = {"azureFile": "secretName", "cephfs": "secretRef", "cinder": "secretRef",
                        "flexVolume": "secretRef", "rbd": "secretRef", "secret": "secretName",
                        "scaleIO": "secretRef", "iscsi": "secretRef", "storageos": "secretRef",
                        "csi": "nodePublishSecretRef"}
CONTAINER_KINDS = (("initContainers", "init container"), ("containers", "container"),
                   ("ephemeralContainers", "ephemeral container"))


def _name(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or "")
    return value if isinstance(value, str) else ""


def _volume_secrets(volume: Object) -> Iterator[str]:
    for source, key in VOLUME_SECRET_FIELDS.items():
        if isinstance(volume.get(source), dict):
            yield _name(volume[source].get(key))
    for projection in (volume.get("projected") or {}).get("sources") or []:
        if isinstance(projection.get("secret"), dict):
            yield _name(projection["secret"])


def _container_secrets(container: Object) -> Iterator[str]:
    for env_from in container.get("envFrom") or []:
        if isinstance(env_from.get("secretRef"), dict):
            yield _name(env_from["secretRef"])
    for env in container.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("secretKeyRef")
        if isinstance(ref, dict):
            yield _name(ref)


def pod_secret_names(spec: Object) -> list[str]:
    """VisitPodSecretNames over all containers: pull secrets, container references, volumes."""
    names = [_name(s) for s in spec.get("imagePullSecrets") or []]
    for key, _kind in CONTAINER_KINDS:
        for container in spec.get(key) or []:
            names += _container_secrets(container)
    for volume in spec.get("volumes") or []:
        names += _volume_secrets(volume)
    return [n for n in names if n]


def mirror_pod_error(spec: Object) -> str | None:
    if spec.get("serviceAccountName"):
        return "a mirror pod may not reference service accounts"
    if pod_secret_names(spec):
        return "a mirror pod may not reference secrets"
    for volume in spec.get("volumes") or []:
        if any(s.get("serviceAccountToken") is not None for s in (volume.get("projected") or {}).get("sources") or []):
            return "a mirror pod may not use ServiceAccountToken volume projections"
    return None


def _mountable(sa: Object, key: str) -> set[str]:
    return {_name(s) for s in sa.get(key) or []}


def _container_error(sa: Object, container: Object, kind: str, allowed: set[str]) -> str | None:
    sa_name, name = (sa.get("metadata") or {}).get("name", ""), container.get("name", "")
    for env in container.get("env") or []:
        secret = _name((env.get("valueFrom") or {}).get("secretKeyRef"))
        if secret and secret not in allowed:
            return (f'{kind} {name} with envVar {env.get("name", "")} referencing secret.secretName="{secret}" is '
                    f"not allowed because service account {sa_name} does not reference that secret")
    for env_from in container.get("envFrom") or []:
        secret = _name(env_from.get("secretRef"))
        if secret and secret not in allowed:
            return (f'{kind} {name} with envFrom referencing secret.secretName="{secret}" is not allowed because '
                    f"service account {sa_name} does not reference that secret")
    return None


def secret_reference_error(sa: Object, spec: Object) -> str | None:
    """limitSecretReferences: every secret volume, container reference and pull secret is the account's."""
    sa_name, allowed = (sa.get("metadata") or {}).get("name", ""), _mountable(sa, "secrets")
    for volume in spec.get("volumes") or []:
        source = volume.get("secret")
        secret = _name(source.get("secretName")) if isinstance(source, dict) else ""
        if secret and secret not in allowed:
            return (f'volume with secret.secretName="{secret}" is not allowed because service account {sa_name} '
                    f"does not reference that secret")
    for key, kind in CONTAINER_KINDS[:2]:
        for container in spec.get(key) or []:
            why = _container_error(sa, container, kind, allowed)
            if why:
                return why
    pull_secrets = _mountable(sa, "imagePullSecrets")
    for i, ref in enumerate(spec.get("imagePullSecrets") or []):
        if _name(ref) not in pull_secrets:
            return (f'imagePullSecrets[{i}].name="{_name(ref)}" is not allowed because service account {sa_name} '
                    f"does not reference that imagePullSecret")
    return None


def ephemeral_secret_error(sa: Object, spec: Object) -> str | None:
    """limitEphemeralContainerSecretReferences."""
    allowed = _mountable(sa, "secrets")
    for container in spec.get("ephemeralContainers") or []:
        why = _container_error(sa, container, "ephemeral container", allowed)
        if why:
            return why
    return None
