"""The disruption budget check of an eviction (EvictionREST.checkAndDecrement and its helpers):
which PodDisruptionBudgets cover a pod, and whether one more disruption is allowed."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import errors, labels
from ....apimachinery.meta import now_rfc3339

Object = dict[str, Any]
MAX_DISRUPTED_PODS = 2000
EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."


def too_many_requests(cause: str, retry_after: int) -> errors.StatusError:
    """errors.NewTooManyRequests with a DisruptionBudget cause."""
    details: Object = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.StatusError(429, "TooManyRequests", EVICTION_REFUSED, details)


def still_processing(pdb_name: str) -> errors.StatusError:
    return too_many_requests(f"The disruption budget {pdb_name} is still being processed by the server.", 10)


def covering(pdbs: list[Object], pod: Object) -> list[Object]:
    """getPodDisruptionBudgets: the budgets whose (valid) selector matches the pod; unlike v1beta1's, a
    policy/v1 budget's empty selector matches every pod."""
    pod_labels = pod["metadata"].get("labels") or {}
    out = []
    for pdb in pdbs:
        try:
            selector = labels.selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
        except (ValueError, TypeError):
            continue
        if not selector.matches(pod_labels):
            continue
        out.append(pdb)
    return out


def is_ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def unhealthy_may_go(pod: Object, pdb: Object) -> bool:
    """An unready pod counts for no budget: it may go when the policy says so or the budget is met."""
    if is_ready(pod):
        return False
    if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    status = pdb.get("status") or {}
    desired = status.get("desiredHealthy") or 0
    return (status.get("currentHealthy") or 0) >= desired > 0


def _disruption_condition(status: Object, generation: int) -> None:
    """pdbhelper.UpdateDisruptionAllowedCondition for a budget that just reached zero."""
    conditions = status.setdefault("conditions", [])
    wanted = {"type": "DisruptionAllowed", "status": "False", "observedGeneration": generation,
              "reason": "InsufficientPods", "message": ""}
    for condition in conditions:
        if condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != "False":
                condition["lastTransitionTime"] = now_rfc3339()
            condition.update(wanted)
            return
    conditions.append({**wanted, "lastTransitionTime": now_rfc3339()})


def decremented(pdb: Object, pod_name: str, dry_run: bool) -> Object | None:
    """checkAndDecrement: the budget with one disruption spent (None for a dry run), or the error."""
    meta, status = pdb.get("metadata") or {}, pdb.get("status") or {}
    name = meta.get("name", "")
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        raise still_processing(name)
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise errors.forbidden("poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.forbidden("poddisruptionbudget", "policy", name,
                               "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        raise too_many_requests(f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} healthy "
                                f"pods and has {status.get('currentHealthy') or 0} currently", 0)
    if dry_run:
        return None
    updated = copy.deepcopy(pdb)
    new_status = updated.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        _disruption_condition(new_status, new_status.get("observedGeneration") or 0)
    new_status.setdefault("disruptedPods", {})[pod_name] = now_rfc3339()
    return updated
