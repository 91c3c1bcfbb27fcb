"""A PodSpec's volumes (ValidateVolumes): names DNS labels and unique, exactly one source each."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions
from .volume_sources import validate_volume_source

Object = dict[str, Any]


def validate_dns1123_label(value: str, path: Path) -> ErrorList:
    return [field.invalid(path, value, m).with_origin("format=dns-label") for m in validation.is_dns1123_label(value)]


def _ephemeral_claim_name(volume: Object, pod_name: str, path: Path) -> ErrorList:
    if volume.get("ephemeral") is None or not pod_name or not volume.get("name"):
        return []
    claim = f"{pod_name}-{volume['name']}"
    return [field.invalid(path.child("name"), volume["name"], f'PVC name "{claim}": {m}')
            for m in validation.name_is_dns_subdomain(claim, False)]


def validate_volumes(volumes: Any, pod_name: str, path: Path,
                     opts: PodValidationOptions) -> tuple[dict[str, Object], ErrorList]:
    """The valid volumes by name, and the errors."""
    errs: ErrorList = []
    valid: dict[str, Object] = {}
    volumes = [v for v in volumes if isinstance(v, dict)] if isinstance(volumes, list) else []
    created_claims = {f"{pod_name}-{v.get('name', '')}" for v in volumes if pod_name and v.get("ephemeral")}
    for i, volume in enumerate(volumes):
        vol_path, name = path.index(i), volume.get("name") or ""
        errors = validate_volume_source(volume, vol_path, opts) + _ephemeral_claim_name(volume, pod_name, vol_path)
        errors += validate_dns1123_label(name, vol_path.child("name")) if name else \
            [field.required(vol_path.child("name"), "")]
        if name in valid:
            errors.append(field.duplicate(vol_path.child("name"), name))
        if errors:
            errs += errors
        else:
            valid[name] = volume
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName") if isinstance(
            volume.get("persistentVolumeClaim"), dict) else None
        if claim in created_claims:
            errs.append(field.invalid(vol_path.child("persistentVolumeClaim", "claimName"), claim,
                                      "must not reference a PVC that gets created for an ephemeral volume"))
    return valid, errs
