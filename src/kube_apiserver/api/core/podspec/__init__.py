"""The PodSpec machinery shared by every resource that holds one (pods, pod templates, workloads):
defaulting, validation and the QoS class."""

from __future__ import annotations

from .defaults import default_pod, default_pod_spec
from .options import PodValidationOptions, allow_privileged, set_allow_privileged
from .qos import compute_qos
from .validation import validate_pod_spec, validate_pod_template_spec

__all__ = ["PodValidationOptions", "allow_privileged", "compute_qos", "default_pod", "default_pod_spec",
           "default_pod_template_spec", "set_allow_privileged", "validate_pod_spec", "validate_pod_template_spec"]


def default_pod_template_spec(template: dict) -> None:
    """The defaults of a PodTemplateSpec (SetObjectDefaults_PodTemplate and its workload siblings)."""
    spec = template.get("spec")
    if not isinstance(spec, dict):
        spec = template["spec"] = {}
    default_pod_spec(spec)
