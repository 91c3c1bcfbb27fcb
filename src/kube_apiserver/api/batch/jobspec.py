"""validateJobSpec (pkg/apis/batch/validation): the rules a JobSpec meets in a Job and in a CronJob's
jobTemplate, with the pod template checked by the shared PodTemplateSpec validation."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ..core.podspec import PodValidationOptions, validate_pod_template_spec
from .failurepolicy import validate_pod_failure_policy
from .indexes import IndexesError, count_indexes

Object = dict[str, Any]
Path = field.Path
MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_MANAGED_BY_LENGTH = 63
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20
COMPLETION_MODES = ("NonIndexed", "Indexed")
REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
JOB_RESTART_POLICIES = ("OnFailure", "Never")
NONNEGATIVE = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
               "backoffLimitPerIndex")


def validate_job_spec_common(spec: Object, path: Path, opts: PodValidationOptions) -> field.ErrorList:
    """validateJobSpec."""
    errs: field.ErrorList = []
    for key in NONNEGATIVE:
        if spec.get(key) is not None:
            errs += validation.validate_nonnegative_field(spec[key], path.child(key))
    errs += _max_failed_indexes(spec, path) + _managed_by(spec.get("managedBy"), path.child("managedBy"))
    errs += _completion_mode(spec, path)
    if spec.get("podFailurePolicy") is not None:
        errs += validate_pod_failure_policy(spec, path.child("podFailurePolicy"))
    if spec.get("successPolicy") is not None:
        errs += _success_policy(spec, path.child("successPolicy"))
    errs += _replacement_policy(spec, path.child("podReplacementPolicy"))
    errs += validate_pod_template_spec(spec.get("template"), path.child("template"), opts)
    return errs + _restart_policy(spec, path)


def _max_failed_indexes(spec: Object, path: Path) -> field.ErrorList:
    if spec.get("maxFailedIndexes") is None:
        return []
    errs = validation.validate_nonnegative_field(spec["maxFailedIndexes"], path.child("maxFailedIndexes"))
    if spec.get("backoffLimitPerIndex") is None:
        errs.append(field.required(path.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
    return errs


def _managed_by(managed_by: str | None, path: Path) -> field.ErrorList:
    if managed_by is None:
        return []
    errs = validation.is_domain_prefixed_path(path, managed_by)
    if len(managed_by) > MAX_MANAGED_BY_LENGTH:
        errs.append(field.too_long(path, managed_by, MAX_MANAGED_BY_LENGTH))
    return errs


def _completion_mode(spec: Object, path: Path) -> field.ErrorList:
    mode = spec.get("completionMode")
    errs: field.ErrorList = []
    if mode is not None and mode not in COMPLETION_MODES:
        errs.append(field.not_supported(path.child("completionMode"), mode, COMPLETION_MODES))
    if mode == "Indexed":
        errs += _indexed(spec, path)
    if mode is None or mode == "NonIndexed":
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errs.append(field.invalid(path.child(key), spec[key], "requires indexed completion mode"))
    return errs


def _indexed(spec: Object, path: Path) -> field.ErrorList:
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed, per_index = spec.get("maxFailedIndexes"), spec.get("backoffLimitPerIndex")
    errs: field.ErrorList = []
    if completions is None:
        errs.append(field.required(path.child("completions"), "when completion mode is Indexed"))
    if parallelism is not None and parallelism > MAX_PARALLELISM_INDEXED:
        errs.append(field.invalid(path.child("parallelism"), parallelism, f"must be less than or equal to "
                                  f"{MAX_PARALLELISM_INDEXED} when completion mode is Indexed"))
    if completions is not None and max_failed is not None and max_failed > completions:
        errs.append(field.invalid(path.child("maxFailedIndexes"), max_failed,
                                  "must be less than or equal to completions"))
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
        errs.append(field.invalid(path.child("maxFailedIndexes"), max_failed,
                                  f"must be less than or equal to {MAX_FAILED_INDEXES}"))
    if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
        errs += _high_completions(parallelism, max_failed, path)
    return errs


def _high_completions(parallelism: int | None, max_failed: int | None, path: Path) -> field.ErrorList:
    suffix = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    errs: field.ErrorList = []
    if max_failed is None:
        errs.append(field.required(path.child("maxFailedIndexes"),
                                   f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
    if parallelism is not None and parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
        errs.append(field.invalid(path.child("parallelism"), parallelism,
                                  f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {suffix}"))
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
        errs.append(field.invalid(path.child("maxFailedIndexes"), max_failed,
                                  f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {suffix}"))
    return errs


def _success_policy(spec: Object, path: Path) -> field.ErrorList:
    policy = spec["successPolicy"]
    if spec.get("completionMode") != "Indexed":
        return [field.invalid(path, _success_policy_struct(policy), "requires indexed completion mode")]
    rules = policy.get("rules") or [] if isinstance(policy, dict) else []
    errs: field.ErrorList = []
    if not rules:
        errs.append(field.required(path.child("rules"),
                                   "at least one rules must be specified when the successPolicy is specified"))
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(field.too_many(path.child("rules"), len(rules), MAX_SUCCESS_POLICY_RULES))
    for i, rule in enumerate(rules):
        errs += _success_rule(rule, spec.get("completions") or 0, path.child("rules").index(i))
    return errs


def _success_policy_struct(policy: Any) -> field.OrderedStruct:
    rules = policy.get("rules") if isinstance(policy, dict) else None
    return field.OrderedStruct((("rules", rules),))


def _success_rule(rule: Object, completions: int, path: Path) -> field.ErrorList:
    indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
    errs: field.ErrorList = []
    if indexes is None and count is None:
        errs.append(field.required(path, "at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if indexes is not None:
        if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
            errs.append(field.too_long(path.child("succeededIndexes"), indexes, MAX_SUCCEEDED_INDEXES_LENGTH))
        try:
            total = count_indexes(indexes, completions)
        except IndexesError as err:
            errs.append(field.invalid(path.child("succeededIndexes"), indexes,
                                      f"error parsing succeededIndexes: {err}"))
    if count is not None:
        count_path = path.child("succeededCount")
        errs += validation.validate_nonnegative_field(count, count_path)
        if count > completions:
            errs.append(field.invalid(count_path, count, f"must be less than or equal to {completions} (the "
                                                         f"number of specified completions)"))
        if indexes is not None and count > total:
            errs.append(field.invalid(count_path, count, f"must be less than or equal to {total} (the number "
                                                         f"of indexes in the specified succeededIndexes field)"))
    return errs


def _replacement_policy(spec: Object, path: Path) -> field.ErrorList:
    policy = spec.get("podReplacementPolicy")
    if policy is None:
        return []
    if spec.get("podFailurePolicy") is not None:
        return [] if policy == "Failed" else [field.not_supported(path, policy, ("Failed",))]
    return [] if policy in REPLACEMENT_POLICIES else [field.not_supported(path, policy, REPLACEMENT_POLICIES)]


def _restart_policy(spec: Object, path: Path) -> field.ErrorList:
    """Only OnFailure and Never (a defaulted Always counts as unset)."""
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    restart, restart_path = pod_spec.get("restartPolicy") or "", path.child("template", "spec", "restartPolicy")
    if restart in ("Always", ""):
        return [field.required(restart_path, 'valid values: "OnFailure", "Never"')]
    if restart not in JOB_RESTART_POLICIES:
        return [field.not_supported(restart_path, restart, JOB_RESTART_POLICIES)]
    if spec.get("podFailurePolicy") is not None and restart != "Never":
        return [field.invalid(restart_path, restart, 'only "Never" is supported when podFailurePolicy is specified')]
    return []
