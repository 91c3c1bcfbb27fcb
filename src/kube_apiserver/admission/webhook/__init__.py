"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins
(k8s.io/apiserver/pkg/admission/plugin/webhook), calling the webhooks that
admissionregistration.k8s.io/v1 configurations register.

The matching helpers are shared with the admission policies: rules.py (rules, the request view,
exempt resources), predicates.py (namespace and object selectors), conditions.py (CEL match conditions
and the `request` variable), resources.py (equivalent resources), matching.py (a policy binding's
MatchResources)."""

from __future__ import annotations

from .mutating import MutatingAdmissionWebhook
from .validating import ValidatingAdmissionWebhook

__all__ = ["MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"]
