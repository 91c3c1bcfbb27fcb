"""CustomResourceDefinition defaulting, validation and warnings (apiextensions-apiserver
pkg/apis/apiextensions/v1/defaults.go, pkg/apis/apiextensions/validation/validation.go, and the
warnings of pkg/registry/customresourcedefinition/strategy.go), on v1 CRDs as plain dicts.

Validation runs, as upstream's, on the internal form of the CRD (see :mod:`.internal`), so error
paths are those kube-apiserver reports (``spec.validation.openAPIV3Schema...`` when every version
shares one schema).
"""

from .crd import validate_crd, validate_crd_status, validate_crd_status_update, validate_crd_update
from .defaults import default_crd
from .warnings import warnings_on_create, warnings_on_update

__all__ = [
    "default_crd",
    "validate_crd",
    "validate_crd_status",
    "validate_crd_status_update",
    "validate_crd_update",
    "warnings_on_create",
    "warnings_on_update",
]
