"""The managed fields of a scale subresource (apimachinery managedfields.ScaleHandler): a workload's
entries that own spec.replicas become Scale entries owning spec.replicas, and a scale write's entries
take spec.replicas back in the workload's version."""

from __future__ import annotations

from typing import Any

from ...apimachinery.managedfields import managed as mf
from ...apimachinery.managedfields.fieldpath import FieldSet, make_path
from ...apimachinery.managedfields.updater import VersionedSet

Entries = list[dict[str, Any]] | None
PARENT_VERSION = "apps/v1"
SCALE_VERSION = "autoscaling/v1"
REPLICAS = make_path("spec", "replicas")  # the same path in the workload and in the Scale


def _decode(entries: Any) -> mf.Managed:
    try:
        return mf.decode(entries)
    except mf.ManagedFieldsError:
        return mf.Managed()


def to_subresource(parent_entries: Any) -> Entries:
    """ToSubresource: the Scale's managed fields."""
    parent = _decode(parent_entries)
    out = mf.Managed()
    for ident, owned in parent.fields.items():
        if owned.api_version == PARENT_VERSION and owned.fields.has(REPLICAS):
            out.fields[ident] = VersionedSet(FieldSet(REPLICAS), SCALE_VERSION, owned.applied)
            out.times[ident] = parent.times.get(ident)
    return mf.encode(out)


def to_parent(parent_entries: Any, scale_entries: Any) -> Entries:
    """ToParent: whoever no longer owns the Scale's replicas loses the workload's."""
    parent, scale = _decode(parent_entries), _decode(scale_entries)
    scale_fields = dict(scale.fields)
    out = mf.Managed()
    for ident, owned in parent.fields.items():
        if owned.api_version != PARENT_VERSION:
            continue
        if owned.fields.has(REPLICAS) and ident not in scale_fields:
            rest = owned.fields.difference(FieldSet(REPLICAS))
            if not rest.empty():
                out.fields[ident] = VersionedSet(rest, owned.api_version, owned.applied)
                out.times[ident] = parent.times.get(ident)
            continue
        scale_fields.pop(ident, None)
        out.fields[ident], out.times[ident] = owned, parent.times.get(ident)
    for ident, owned in scale_fields.items():
        if owned.fields.has(REPLICAS):
            out.fields[ident] = VersionedSet(FieldSet(REPLICAS), PARENT_VERSION, owned.applied)
            out.times[ident] = scale.times.get(ident)
    return mf.encode(out)
