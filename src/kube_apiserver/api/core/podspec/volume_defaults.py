"""Volume source defaults (SetDefaults_Volume and the defaults of each source a Pod's volumes hold)."""

from __future__ import annotations

from typing import Any

from .images import pull_policy_for

Object = dict[str, Any]
FILE_MODE = 0o644  # 420: secret, configMap, downwardAPI and projected defaultMode
TOKEN_EXPIRATION = 3600
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image")
# Declarative (+default) values of the legacy in-tree sources.
SOURCE_DEFAULTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "iscsi": (("iscsiInterface", "default"),),
    "rbd": (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")),
    "azureDisk": (("cachingMode", "ReadWrite"), ("fsType", "ext4"), ("readOnly", False), ("kind", "Shared")),
    "scaleIO": (("storageMode", "ThinProvisioned"), ("fsType", "xfs")),
}


def _source(volume: Object, key: str) -> Object | None:
    value = volume.get(key)
    return value if isinstance(value, dict) else None


def _field_refs(items: Any) -> None:
    for item in items if isinstance(items, list) else []:
        ref = item.get("fieldRef") if isinstance(item, dict) else None
        if isinstance(ref, dict) and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"
        resource = item.get("resourceFieldRef") if isinstance(item, dict) else None
        if isinstance(resource, dict) and resource.get("divisor") is None:
            resource["divisor"] = "0"  # a Quantity struct: encoded even when unset


def _default_mode(source: Object | None) -> None:
    if source is not None and source.get("defaultMode") is None:
        source["defaultMode"] = FILE_MODE


def _default_projected(projected: Object | None) -> None:
    if projected is None:
        return
    _default_mode(projected)
    for item in projected.get("sources") or []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("downwardAPI"), dict):
            _field_refs(item["downwardAPI"].get("items"))
        token = item.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = TOKEN_EXPIRATION


def _default_claim_template(ephemeral: Object | None) -> None:
    template = (ephemeral or {}).get("volumeClaimTemplate")
    spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def default_volume(volume: Object) -> None:
    if not any(volume.get(key) is not None for key in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    host_path = _source(volume, "hostPath")
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""
    for key in ("secret", "configMap", "downwardAPI"):
        _default_mode(_source(volume, key))
    _field_refs((_source(volume, "downwardAPI") or {}).get("items"))
    _default_projected(_source(volume, "projected"))
    _default_claim_template(_source(volume, "ephemeral"))
    image = _source(volume, "image")
    if image is not None and not image.get("pullPolicy"):
        image["pullPolicy"] = pull_policy_for(image.get("reference") or "")
    for key, defaults in SOURCE_DEFAULTS.items():
        source = _source(volume, key)
        for name, value in defaults if source is not None else ():
            if source.get(name) is None:
                source[name] = value
