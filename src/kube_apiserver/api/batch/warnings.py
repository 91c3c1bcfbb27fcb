"""The warnings the batch strategies return with a create or update (WarningsOnCreate,
WarningsOnUpdate, pkg/api/job.WarningsForJobSpec)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context

Object = dict[str, Any]
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_SOFT_LIMIT = 10_000
INDEXED_TRACKING = ("In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than "
                    "10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes "
                    "fail")


def add_warnings(ctx: Context, texts: list[str]) -> None:
    """Each warning once, however often an update is retried."""
    ctx.warnings.extend(t for t in texts if t not in ctx.warnings)


def name_warnings(obj: Object) -> list[str]:
    """The name becomes part of pod names and hostnames: a DNS label is recommended."""
    msgs = validation.is_dns1123_label((obj.get("metadata") or {}).get("name") or "")
    if not msgs:
        return []
    return ["metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
            f"a DNS label is recommended: [{' '.join(msgs)}]"]


def job_spec_warnings(spec: Object, path: field.Path) -> list[str]:
    """WarningsForJobSpec (the pod template's own warnings are not produced by this server)."""
    if spec.get("completionMode") != "Indexed":
        return []
    if (spec.get("completions") or 0) > COMPLETIONS_SOFT_LIMIT and (spec.get("parallelism") or 0) > \
            PARALLELISM_SOFT_LIMIT:
        return [f"{path}: {INDEXED_TRACKING}"]
    return []
