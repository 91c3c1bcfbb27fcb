"""ValidateJob and ValidateJobUpdate (pkg/apis/batch/validation): the Job's metadata, the selector the
server generated, the spec, and what an update may change."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, labels, validation
from ..core.podspec import PodValidationOptions
from ..policy.poddisruptionbudget import selector_struct
from .jobspec import validate_job_spec_common

Object = dict[str, Any]
Path = field.Path
JOB_NAME, LEGACY_JOB_NAME = "batch.kubernetes.io/job-name", "job-name"
CONTROLLER_UID, LEGACY_CONTROLLER_UID = "batch.kubernetes.io/controller-uid", "controller-uid"
TEMPLATE_META = Path("spec", "template", "metadata")
IMMUTABLE = ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy")


def _template_labels(spec: Object) -> dict[str, str]:
    return ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}


def _selects(selector: Any, label_set: dict[str, str]) -> bool | None:
    """Whether LabelSelectorAsSelector(selector) matches; None when the selector does not parse."""
    try:
        return labels.selector_from_label_selector(selector if isinstance(selector, dict) else None).matches(label_set)
    except ValueError:
        return None


def validate_has_label(template_labels: dict[str, str], key: str, expected: str) -> field.ErrorList:
    """apivalidation.ValidateHasLabel on the pod template's metadata."""
    path = TEMPLATE_META.child("labels").key(key)
    if key not in template_labels:
        return [field.required(path, expected)]
    if template_labels[key] != expected:
        return [field.invalid(path, template_labels, f"must be '{expected}'")]
    return []


def validate_generated_selector(job: Object, prefixed_labels: bool) -> field.ErrorList:
    """validateGeneratedSelector: unless manualSelector, the template carries the generated labels and
    the selector selects them."""
    spec, meta = job.get("spec") or {}, job.get("metadata") or {}
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    uid, name = meta.get("uid") or "", meta.get("name") or ""
    errs = [] if uid else [field.required(Path("metadata", "uid"), "")]
    template_labels = _template_labels(spec)
    expected = {LEGACY_CONTROLLER_UID: uid, LEGACY_JOB_NAME: name}
    errs += validate_has_label(template_labels, LEGACY_CONTROLLER_UID, uid)
    errs += validate_has_label(template_labels, LEGACY_JOB_NAME, name)
    if prefixed_labels:
        errs += validate_has_label(template_labels, CONTROLLER_UID, uid)
        errs += validate_has_label(template_labels, JOB_NAME, name)
        expected.update({CONTROLLER_UID: uid, JOB_NAME: name})
    if _selects(spec["selector"], expected) is False:
        errs.append(field.invalid(Path("spec", "selector"), selector_struct(spec["selector"]),
                                  "`selector` not auto-generated"))
    return errs


def validate_job_spec(spec: Object, path: Path, opts: PodValidationOptions) -> field.ErrorList:
    """ValidateJobSpec: validateJobSpec, and the selector that must select the template's labels."""
    errs = validate_job_spec_common(spec, path, opts)
    selector = spec.get("selector")
    if selector is None:
        errs.append(field.required(path.child("selector"), ""))
    else:
        errs += validation.validate_label_selector(selector, path.child("selector"))
    raw_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if _selects(selector, raw_labels or {}) is False:
        errs.append(field.invalid(path.child("template", "metadata", "labels"), raw_labels,
                                  "`selector` does not match template `labels`"))
    return errs


def validate_job(job: Object, prefixed_labels: bool = True) -> field.ErrorList:
    """ValidateJob."""
    meta, spec = job.get("metadata") or {}, job.get("spec") or {}
    errs = validation.validate_object_meta(meta, True, validation.name_is_dns_subdomain, Path("metadata"))
    errs += validate_generated_selector(job, prefixed_labels)
    errs += validate_job_spec(spec, Path("spec"), PodValidationOptions())
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and completions is not None and completions > 0:
        hostname = f"{meta.get('name', '')}-{completions - 1}"
        if validation.is_dns1123_label(hostname):
            errs.append(field.invalid(Path("metadata", "name"), meta.get("name", ""),
                                      f"will not able to create pod with invalid DNS label: {hostname}"))
    return errs


def validate_job_update(job: Object, old: Object) -> field.ErrorList:
    """ValidateJobUpdate (after ValidateJob, as the job strategy runs them)."""
    spec, old_spec, path = job.get("spec") or {}, old.get("spec") or {}, Path("spec")
    errs = validation.validate_object_meta_update(job.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    errs += validate_job_spec(spec, path, PodValidationOptions())
    errs += _completions(spec, old_spec, path.child("completions"))
    errs += validation.validate_immutable_field(_selector_value(spec), _selector_value(old_spec),
                                                path.child("selector"))
    errs += _template_update(spec, old_spec, old, path)
    for key in IMMUTABLE:
        errs += validation.validate_immutable_field(spec.get(key), old_spec.get(key), path.child(key))
    return errs


def _selector_value(spec: Object) -> Any:
    return selector_struct(spec.get("selector")) if spec.get("selector") is not None else None


def _completions(spec: Object, old_spec: Object, path: Path) -> field.ErrorList:
    """validateCompletions with ElasticIndexedJob (GA): Indexed Jobs scale completions with parallelism."""
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return validation.validate_immutable_field(completions, old_spec.get("completions"), path)
    if completions == old_spec.get("completions") or completions is None:
        return []
    if completions != spec.get("parallelism"):
        return [field.invalid(path, completions, "can only be modified in tandem with spec.parallelism")]
    return []


def _template_update(spec: Object, old_spec: Object, old: Object, path: Path) -> field.ErrorList:
    """The template is immutable, except the scheduling directives of a suspended Job that never started."""
    template, old_template = spec.get("template") or {}, old_spec.get("template") or {}
    if old_spec.get("suspend") and not (old.get("status") or {}).get("startTime"):
        old_template = _with_scheduling_directives(old_template, template)
    return validation.validate_immutable_field(template, old_template, path.child("template"))


def _with_scheduling_directives(old_template: Object, template: Object) -> Object:
    """The old template with the new one's node affinity, node selector, tolerations, scheduling gates,
    labels and annotations: the parts a suspended Job may still change."""
    merged = {**old_template, "metadata": dict(old_template.get("metadata") or {}),
              "spec": dict(old_template.get("spec") or {})}
    new_meta, new_spec = template.get("metadata") or {}, template.get("spec") or {}
    for key in ("labels", "annotations"):
        _copy(new_meta, merged["metadata"], key)
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        _copy(new_spec, merged["spec"], key)
    affinity, old_affinity = new_spec.get("affinity"), merged["spec"].get("affinity")
    if affinity is None and old_affinity is not None:
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity"}
        _set(merged["spec"], "affinity", rest or None)
    elif affinity is not None:
        rest = {k: v for k, v in (old_affinity or {}).items() if k != "nodeAffinity"}
        _set(rest, "nodeAffinity", affinity.get("nodeAffinity"))
        merged["spec"]["affinity"] = rest
    return merged


def _copy(src: Object, dst: Object, key: str) -> None:
    _set(dst, key, src.get(key))


def _set(dst: Object, key: str, value: Any) -> None:
    if value is None:
        dst.pop(key, None)
    else:
        dst[key] = value
