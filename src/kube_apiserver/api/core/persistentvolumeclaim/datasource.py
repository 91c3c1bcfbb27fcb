"""The two data source fields of a claim kept consistent (EnforceDataSourceBackwardsCompatibility and
NormalizeDataSources of pkg/api/persistentvolumeclaim)."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


def _pvc_or_snapshot(source: Any) -> bool:
    if not isinstance(source, dict):
        return False
    kind, group = source.get("kind"), source.get("apiGroup") or ""
    return (kind, group) in (("PersistentVolumeClaim", ""), ("VolumeSnapshot", SNAPSHOT_GROUP))


def enforce_backwards_compatibility(spec: Object, old_spec: Object | None) -> None:
    """Without a dataSourceRef, a dataSource other than a claim or a snapshot is dropped (unless the stored
    claim already has a data source)."""
    if old_spec is not None and (old_spec.get("dataSource") is not None or old_spec.get("dataSourceRef") is not None):
        return
    if spec.get("dataSourceRef") is None and not _pvc_or_snapshot(spec.get("dataSource")):
        spec.pop("dataSource", None)


def _reference(source: Object) -> Object:
    ref = {"kind": source.get("kind", ""), "name": source.get("name", "")}
    if source.get("apiGroup") is not None:
        ref = {"apiGroup": source["apiGroup"], **ref}
    return ref


def normalize(spec: Object) -> None:
    """Either field set alone fills the other (a dataSourceRef naming a namespace does not)."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = _reference(source)
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = _reference(ref)
