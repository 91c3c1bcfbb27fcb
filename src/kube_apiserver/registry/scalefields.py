"""The managed fields of a scale subresource (apimachinery managedfields.ScaleHandler): the parent's
entries that own its replicas field become Scale entries owning spec.replicas, and a scale write's
entries take the replicas field back in the parent's version."""

from __future__ import annotations

from typing import Any

from ..apimachinery.managedfields import managed as mf
from ..apimachinery.managedfields.fieldpath import FieldSet, Path, make_path
from ..apimachinery.managedfields.updater import VersionedSet

Entries = list[dict[str, Any]] | None
SCALE_VERSION = "autoscaling/v1"
SCALE_REPLICAS = make_path("spec", "replicas")


def _decode(entries: Any) -> mf.Managed:
    try:
        return mf.decode(entries)
    except mf.ManagedFieldsError:
        return mf.Managed()


def to_subresource(parent_entries: Any, parent_version: str, replicas: Path) -> Entries:
    """ToSubresource: the Scale's managed fields."""
    parent = _decode(parent_entries)
    out = mf.Managed()
    for ident, owned in parent.fields.items():
        if owned.api_version == parent_version and owned.fields.has(replicas):
            out.fields[ident] = VersionedSet(FieldSet(SCALE_REPLICAS), SCALE_VERSION, owned.applied)
            out.times[ident] = parent.times.get(ident)
    return mf.encode(out)


def to_parent(parent_entries: Any, scale_entries: Any, parent_version: str, replicas: Path) -> Entries:
    """ToParent: whoever no longer owns the Scale's replicas loses the workload's."""
    parent, scale = _decode(parent_entries), _decode(scale_entries)
    scale_fields = dict(scale.fields)
    out = mf.Managed()
    for ident, owned in parent.fields.items():
        if owned.api_version != parent_version:
            continue
        if owned.fields.has(replicas) and ident not in scale_fields:
            rest = owned.fields.difference(FieldSet(replicas))
            if not rest.empty():
                out.fields[ident] = VersionedSet(rest, owned.api_version, owned.applied)
                out.times[ident] = parent.times.get(ident)
            continue
        scale_fields.pop(ident, None)
        out.fields[ident], out.times[ident] = owned, parent.times.get(ident)
    for ident, owned in scale_fields.items():
        if owned.fields.has(SCALE_REPLICAS):
            out.fields[ident] = VersionedSet(FieldSet(replicas), parent_version, owned.applied)
            out.times[ident] = scale.times.get(ident)
    return mf.encode(out)
