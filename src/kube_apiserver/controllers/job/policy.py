"""A Job's podFailurePolicy and successPolicy (pkg/controller/job/pod_failure_policy.go and
success_policy.go): which rule a failed pod matches and what the Job does about it, and whether the
succeeded indexes meet a success rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .indexes import parse_indexes

Object = dict[str, Any]
FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"


@dataclass(frozen=True)
class PolicyMatch:
    action: str  # COUNT when no rule matched
    message: str = ""  # for FailJob: the Failed condition's message


def _terminated_with(statuses: Any, requirement: Object) -> Object | None:
    """getMatchingContainerFromList: a terminated container (of the named one, if named) whose non-zero
    exit code meets the requirement; success (0) is never a match."""
    name = requirement.get("containerName")
    values = requirement.get("values") or []
    for status in statuses if isinstance(statuses, list) else ():
        terminated = ((status or {}).get("state") or {}).get("terminated")
        if not isinstance(terminated, dict) or (name is not None and status.get("name") != name):
            continue
        code = terminated.get("exitCode") or 0
        if code != 0 and (code in values) == (requirement.get("operator") == "In"):
            return status
    return None


def _matching_condition(pod: Object, patterns: list[Object]) -> Object | None:
    for pattern in patterns:
        for condition in (pod.get("status") or {}).get("conditions") or ():
            if condition.get("type") == pattern.get("type") and condition.get("status") == (
                pattern.get("status") or "True"
            ):
                return condition
    return None


def match_pod_failure_policy(policy: Object | None, pod: Object) -> PolicyMatch:
    """matchPodFailurePolicy: the action of the first rule the failed pod matches."""
    meta, status = pod["metadata"], pod.get("status") or {}
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    for index, rule in enumerate((policy or {}).get("rules") or ()):
        action = rule.get("action")
        if isinstance(rule.get("onExitCodes"), dict):
            container = _terminated_with(
                status.get("containerStatuses"), rule["onExitCodes"]
            ) or _terminated_with(status.get("initContainerStatuses"), rule["onExitCodes"])
            if container is None:
                continue
            code = container["state"]["terminated"].get("exitCode")
            message = (
                f"Container {container.get('name', '')} for pod {where} failed with exit code {code} "
                f"matching {action} rule at index {index}"
            )
        elif isinstance(rule.get("onPodConditions"), list):
            condition = _matching_condition(pod, rule["onPodConditions"])
            if condition is None:
                continue
            message = (
                f"Pod {where} has condition {condition.get('type')} matching {action} rule at index {index}"
            )
        else:
            continue
        if action in (FAIL_JOB, IGNORE, COUNT, FAIL_INDEX):
            return PolicyMatch(action, message if action == FAIL_JOB else "")
    return PolicyMatch(COUNT)


def match_success_policy(policy: Object | None, completions: int, succeeded: set[int]) -> str:
    """matchSuccessPolicy: "Matched rules at index N" for the first rule met, else ""."""
    if not policy or not succeeded:
        return ""
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if not required:
                continue
            matched = len(required & succeeded)
            if (count is None and matched == len(required)) or (count is not None and matched >= count):
                return f"Matched rules at index {index}"
        elif count is not None and len(succeeded) >= count:
            return f"Matched rules at index {index}"
    return ""
