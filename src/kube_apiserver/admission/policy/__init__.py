"""The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver/pkg/admission/plugin/policy): CEL
policies (admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy) applied to requests through their
ValidatingAdmissionPolicyBindings.

source.py reads and compiles the policies (compile.py), params.py finds a binding's params,
plugin.py matches and dispatches (reusing the webhook plugins' matching), validator.py evaluates one
policy for one param with the values of inputs.py."""

from __future__ import annotations

from .plugin import PLUGIN_NAME, ValidatingAdmissionPolicy

__all__ = ["PLUGIN_NAME", "ValidatingAdmissionPolicy"]
