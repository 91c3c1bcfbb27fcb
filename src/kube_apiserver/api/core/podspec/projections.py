"""Files projected into volumes: KeyToPath items, downward API files and projected volumes
(validateKeyToPath, validateDownwardAPIVolumeFile, validateProjectionSources)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions
from .paths import file_mode, local_non_reserved
from .selectors import VOLUME_FIELD_PATHS, validate_object_field_selector, validate_resource_field_selector

Object = dict[str, Any]
MIN_TOKEN_EXPIRATION = 10 * 60
MAX_TOKEN_EXPIRATION = 1 << 32


def validate_key_to_path(item: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not item.get("key"):
        errs.append(field.required(path.child("key"), ""))
    if not item.get("path"):
        errs.append(field.required(path.child("path"), ""))
    errs += local_non_reserved(item.get("path") or "", path.child("path"))
    return errs + file_mode(item.get("mode"), path.child("mode"))


def validate_downward_api_file(item: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    """validateDownwardAPIVolumeFile (reported under the volume's path, as Kubernetes does)."""
    errs: ErrorList = []
    if not item.get("path"):
        errs.append(field.required(path.child("path"), ""))
    errs += local_non_reserved(item.get("path") or "", path.child("path"))
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, dict):
        errs += validate_object_field_selector(field_ref, VOLUME_FIELD_PATHS, path.child("fieldRef"))
        if resource_ref is not None:
            errs.append(field.invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified "
                                                        "simultaneously"))
    elif isinstance(resource_ref, dict):
        errs += validate_resource_field_selector(resource_ref, path.child("resourceFieldRef"), True)
    else:
        errs.append(field.required(path, "one of fieldRef and resourceFieldRef is required"))
    return errs + file_mode(item.get("mode"), path.child("mode"))


def _named_items(source: Object, src_path: Path, path: Path, seen: set[str]) -> ErrorList:
    errs: ErrorList = [] if source.get("name") else [field.required(src_path.child("name"), "")]
    for i, item in enumerate(source.get("items") or []):
        errs += validate_key_to_path(item, src_path.child("items").index(i))
        if item.get("path"):
            if item["path"] in seen:
                errs.append(field.invalid(path, source.get("name") or "", "conflicting duplicate paths"))
            seen.add(item["path"])
    return errs


def _token(token: Object, src_path: Path, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    seconds = token.get("expirationSeconds") or 0
    if seconds < MIN_TOKEN_EXPIRATION:
        errs.append(field.invalid(src_path.child("expirationSeconds"), seconds,
                                  "may not specify a duration less than 10 minutes"))
    if seconds > MAX_TOKEN_EXPIRATION:
        errs.append(field.invalid(src_path.child("expirationSeconds"), seconds,
                                  "may not specify a duration larger than 2^32 seconds"))
    if not token.get("path"):
        errs.append(field.required(path.child("path"), ""))
    elif not opts.allow_non_local_projected_token_path:
        errs += local_non_reserved(token["path"], path.child("path"))
    return errs


def _source(source: Object, src_path: Path, path: Path, seen: set[str], opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    count = 0
    for key in ("secret", "configMap"):
        if isinstance(source.get(key), dict):
            count += 1
            errs += _named_items(source[key], src_path.child(key), path, seen)
    if isinstance(source.get("downwardAPI"), dict):
        count += 1
        for item in source["downwardAPI"].get("items") or []:
            errs += validate_downward_api_file(item, src_path.child("downwardAPI"), opts)
            if item.get("path"):
                if item["path"] in seen:
                    errs.append(field.invalid(path, item["path"], "conflicting duplicate paths"))
                seen.add(item["path"])
    if isinstance(source.get("serviceAccountToken"), dict):
        count += 1
        errs += _token(source["serviceAccountToken"], src_path.child("serviceAccountToken"), path, opts)
    count += sum(1 for key in ("clusterTrustBundle", "podCertificate") if source.get(key) is not None)
    if count > 1:
        errs.append(field.forbidden(src_path, "may not specify more than 1 volume type per source"))
    return errs


def validate_projected(projected: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = file_mode(projected.get("defaultMode"), path.child("defaultMode"))
    seen: set[str] = set()
    for i, source in enumerate(projected.get("sources") or []):
        errs += _source(source, path.child("sources").index(i), path, seen, opts)
    return errs
