"""What a pod subresource write keeps of the stored metadata."""

from __future__ import annotations

import copy
from typing import Any

Object = dict[str, Any]
STATUS_META = ("labels", "annotations", "finalizers", "ownerReferences")


def reset_meta_for_status(new: Object, old: Object) -> Object:
    """metav1.ResetObjectMetaForStatus: a subresource write keeps the stored labels, annotations,
    finalizers and owner references."""
    meta = dict(new.get("metadata") or {})
    for key in STATUS_META:
        if key in old["metadata"]:
            meta[key] = copy.deepcopy(old["metadata"][key])
        else:
            meta.pop(key, None)
    return meta
