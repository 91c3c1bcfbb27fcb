"""Conversion by webhook (pkg/apiserver/conversion/webhook_converter.go): the objects not yet in the
wanted version are sent in one ConversionReview to the CRD's webhook; what comes back is checked
(uid, count, apiVersion, kind) and keeps the original metadata but for labels and annotations."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from ...admission.webhook.client import CallError, WebhookClient
from ...admission.webhook.hooks import client_config
from ...apimachinery import deepjson, errors, field, validation
from .conversion import rewrite_api_version

Object = dict[str, Any]
REVIEW_VERSIONS = ("v1", "v1beta1")
TIMEOUT_SECONDS = 30


class ConversionError(Exception):
    pass


def _gvk(obj: Object) -> str:
    """schema.GroupVersionKind.String() of the object converted."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind', '')}"


def _restore_metadata(original: Object, converted: Object) -> None:
    """restoreObjectMeta: only labels and annotations may change, and must stay valid."""
    answered = converted.get("metadata")
    if not isinstance(answered, dict):
        raise ConversionError("missing metadata in converted object" if answered is None
                              else "invalid metadata of type map in converted object")
    meta = copy.deepcopy(original.get("metadata") or {})
    for key, path in (("labels", field.Path("metadata", "labels")),
                      ("annotations", field.Path("metadata", "annotation"))):
        value = answered.get(key)
        if value is None:
            meta.pop(key, None)
            continue
        for k, v in value.items():
            if not isinstance(v, str):
                raise ConversionError(f"metadata.{key}[{k}] must be a string, but is {type(v).__name__} in "
                                      f"converted object")
        if value != meta.get(key):
            check = validation.validate_labels if key == "labels" else validation.validate_annotations
            errs = check(value, path)
            if errs:
                raise ConversionError(f"invalid metadata.{key}: {errs[0]}")
        meta[key] = value
    converted["metadata"] = meta


class WebhookConverter:
    def __init__(self, crd: Object, client: WebhookClient):
        webhook = (crd["spec"].get("conversion") or {}).get("webhook") or {}
        self.config = client_config(webhook.get("clientConfig") or {})
        self.review_version = next((v for v in webhook.get("conversionReviewVersions") or []
                                    if v in REVIEW_VERSIONS), "")
        self.client = client

    def convert_now(self, obj: Object, api_version: str) -> Object:
        return rewrite_api_version(obj, api_version)

    async def convert(self, objects: list[Object], api_version: str) -> list[Object]:
        pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != api_version]
        if not pending:
            return objects
        first = objects[pending[0]]
        try:
            converted = await self._call([objects[i] for i in pending], api_version)
        except ConversionError as err:
            how = str(err) if str(err).startswith("returned ") else f"failed: {err}"
            raise errors.internal_error(f"conversion webhook for {_gvk(first)} {how}") from None
        out = list(objects)
        for index, obj in zip(pending, converted, strict=True):
            out[index] = obj
        return out

    async def _call(self, objects: list[Object], api_version: str) -> list[Object]:
        if not self.review_version:
            raise ConversionError("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {"kind": "ConversionReview", "apiVersion": f"apiextensions.k8s.io/{self.review_version}",
                  "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects}}
        try:
            answer = await self.client.post(self.config, deepjson.dumps(review), TIMEOUT_SECONDS)
        except CallError as err:
            raise ConversionError(err.reason.removeprefix("failed to call webhook: ")) from None
        converted = self._checked_response(answer, uid)
        if len(converted) != len(objects):
            raise ConversionError(f"returned {len(converted)} objects, expected {len(objects)}")
        for i, (original, obj) in enumerate(zip(objects, converted, strict=True)):
            self._check_object(i, original, obj, api_version)
        return converted

    @staticmethod
    def _checked_response(answer: Any, uid: str) -> list[Object]:
        response = answer.get("response") if isinstance(answer, dict) else None
        if not isinstance(response, dict):
            raise ConversionError("no response provided")
        if response.get("uid") != uid:
            raise ConversionError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        result = response.get("result") or {}
        if result.get("status") != "Success":
            raise ConversionError(result.get("message") or
                                  f"response.result.status was '{result.get('status', '')}', not 'Success'")
        return list(response.get("convertedObjects") or [])

    @staticmethod
    def _check_object(index: int, original: Object, obj: Any, api_version: str) -> None:
        prefix = f"returned invalid converted object at index {index}"
        if not isinstance(obj, dict):
            raise ConversionError(f"{prefix}: invalid type")
        if obj.get("apiVersion") != api_version:
            raise ConversionError(f"{prefix}: invalid groupVersion (expected {api_version}, received "
                                  f"{obj.get('apiVersion', '')})")
        if obj.get("kind") != original.get("kind"):
            raise ConversionError(f"{prefix}: invalid kind (expected {original.get('kind')}, received "
                                  f"{obj.get('kind', '')})")
        try:
            _restore_metadata(original, obj)
        except ConversionError as err:
            raise ConversionError(f"returned invalid metadata in object at index {index}: {err}") from None
