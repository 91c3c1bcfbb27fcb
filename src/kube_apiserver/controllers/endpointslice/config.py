"""kube-controller-manager's EndpointSliceControllerConfiguration and
EndpointSliceMirroringControllerConfiguration: how many endpoints a slice holds."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100
DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET = 1000
MIN_MAX_ENDPOINTS = 1
MAX_MAX_ENDPOINTS = 1000

MAX_ENDPOINTS_PER_SLICE_HELP = (
    "The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will "
    "result in less endpoint slices, but larger resources. Defaults to 100."
)
MIRRORING_MAX_ENDPOINTS_PER_SUBSET_HELP = (
    "The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring "
    "controller. More endpoints per slice will result in less endpoint slices, but larger resources. "
    "Defaults to 100."
)


@dataclass
class EndpointSliceConfiguration:
    max_endpoints_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE
    mirroring_max_endpoints_per_subset: int = DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET

    def validate(self) -> list[str]:
        errs = []
        for flag, value in (
            ("max-endpoints-per-slice", self.max_endpoints_per_slice),
            ("mirroring-max-endpoints-per-subset", self.mirroring_max_endpoints_per_subset),
        ):
            if value < MIN_MAX_ENDPOINTS:
                errs.append(f"{flag} must be at least {MIN_MAX_ENDPOINTS}, got {value}")
            elif value > MAX_MAX_ENDPOINTS:
                errs.append(f"{flag} must be less than or equal to {MAX_MAX_ENDPOINTS}, got {value}")
        return errs
