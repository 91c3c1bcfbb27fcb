"""The evaluator: which checks a level and version run, in Kubernetes' order (pod-security-admission
policy/registry.go). Baseline checks first, then restricted ones, each group sorted by check ID; a version
newer than every check's (and `latest`) means the newest revision of every check."""

from __future__ import annotations

from functools import cache

from .api import BASELINE, PRIVILEGED, LevelVersion, Version
from .baseline import BASELINE_CHECKS
from .checks import Check, CheckPod, CheckResult, Object, VersionedCheck
from .restricted import RESTRICTED_CHECKS

DEFAULT_CHECKS: tuple[Check, ...] = BASELINE_CHECKS + RESTRICTED_CHECKS
# The newest policy version any check changed at: later versions (and latest) evaluate as this one.
MAX_VERSION = max(check.versions[-1].minimum_version for check in DEFAULT_CHECKS)
ORDERED_IDS = (sorted(c.id for c in DEFAULT_CHECKS if c.level == BASELINE)
               + sorted(c.id for c in DEFAULT_CHECKS if c.level != BASELINE))


def revision_at(check: Check, version: Version) -> VersionedCheck | None:
    """The revision of `check` in force at `version`, None before its first one."""
    current = None
    for revision in check.versions:
        if revision.minimum_version <= version:
            current = revision
    return current


@cache
def checks_for(level: str, version: Version) -> tuple[CheckPod, ...]:
    """The check functions of `level` at `version`, in evaluation order."""
    version = min(version, MAX_VERSION)
    revisions = {c.id: (c, r) for c in DEFAULT_CHECKS if (r := revision_at(c, version)) is not None}
    if level == BASELINE:
        chosen = {cid: rev for cid, (check, rev) in revisions.items() if check.level == BASELINE}
    else:
        overridden = {oid for check, rev in revisions.values() for oid in rev.override_check_ids}
        chosen = {cid: rev for cid, (_, rev) in revisions.items() if cid not in overridden}
    return tuple(chosen[cid].check_pod for cid in ORDERED_IDS if cid in chosen)


def evaluate_pod(lv: LevelVersion, meta: Object | None, spec: Object | None) -> list[CheckResult]:
    """Every check's result for a pod (its metadata and spec) at `lv`; privileged runs none."""
    if lv.level == PRIVILEGED:
        return []
    meta = meta if isinstance(meta, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    return [check(meta, spec) for check in checks_for(lv.level, lv.version)]
