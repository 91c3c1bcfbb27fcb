"""Value transformers: what happens to a stored value between the codec and the KV (encryption at rest;
k8s.io/apiserver/pkg/storage/value).

A transformer works on whole values and never sees keys: the key is only its authenticated data (AES-GCM
binds a value to the etcd key it is stored under, so a value copied under another key does not decrypt).
Reads return `(data, stale)`: stale when the value was read by a provider other than the first one, so the
store writes it again on the next update even when the object did not change."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from ..interface import StorageError
from .metrics import TransformationMetrics

FROM_STORAGE = "from_storage"
TO_STORAGE = "to_storage"
ENCRYPTED_PREFIX = b"k8s:enc:"
NO_MATCHING_PREFIX = "no matching prefix found"
DEFAULT_NO_MATCH = "the provided value does not match any of the supported transformers"


class TransformError(StorageError):
    """A value that could not be encrypted or decrypted; the registry answers it as an internal error (500)
    with this message, as kube-apiserver's storage.NewInternalError. `code` is the gRPC status code name of a
    KMS failure (the metrics' status label), else empty."""

    def __init__(self, message: str, code: str = ""):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class KeyContext:
    """What a transformation knows of the value: the etcd key it is stored under (the authenticated data
    of the AEAD providers) and the resource it belongs to (the metrics' resource label)."""

    authenticated_data: bytes
    resource: str = ""


class Transformer(Protocol):
    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]: ...

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes: ...


class IdentityTransformer:
    """Writes values as they are; refuses to read an encrypted one as plain (identity.NewEncryptCheckTransformer),
    so that the prefix transformer goes on to the provider that can."""

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return data, False

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        return data


IDENTITY = IdentityTransformer()


@dataclass(frozen=True, slots=True)
class PrefixTransformer:
    prefix: bytes
    transformer: Transformer


class PrefixTransformers:
    """Reads with the first transformer whose prefix the value starts with; writes with the first one,
    prefixing its output (value.NewPrefixTransformers). `no_match` is the error of a value no prefix fits."""

    def __init__(
        self,
        transformers: list[PrefixTransformer],
        no_match: str = DEFAULT_NO_MATCH,
        metrics: TransformationMetrics | None = None,
    ):
        if not transformers:
            raise ValueError("at least one transformer is required")
        self.transformers = transformers
        self.no_match = no_match
        self.metrics = metrics

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        start = time.perf_counter()
        errors: list[TransformError] = []
        for index, entry in enumerate(self.transformers):
            if not data.startswith(entry.prefix):
                continue
            label = entry.prefix.decode(errors="replace") if entry.prefix else "identity"
            try:
                result, stale = entry.transformer.transform_from_storage(data[len(entry.prefix) :], context)
            except TransformError as err:
                if not entry.prefix:
                    continue  # identity on encrypted data: another provider may read it
                self._record(context, FROM_STORAGE, label, start, err)
                errors.append(err)
                continue
            self._record(context, FROM_STORAGE, label, start, None)
            return result, stale or index != 0
        if errors:
            raise _reduce(errors)
        err = TransformError(self.no_match)
        self._record(context, FROM_STORAGE, "unknown", start, err)
        raise err

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        start = time.perf_counter()
        entry = self.transformers[0]
        label = entry.prefix.decode(errors="replace")
        try:
            result = entry.transformer.transform_to_storage(data, context)
        except TransformError as err:
            self._record(context, TO_STORAGE, label, start, err)
            raise
        self._record(context, TO_STORAGE, label, start, None)
        return entry.prefix + result

    def _record(
        self, context: KeyContext, kind: str, prefix: str, start: float, err: TransformError | None
    ) -> None:
        if self.metrics is not None:
            self.metrics.record(context.resource, kind, prefix, time.perf_counter() - start, err)


def _reduce(errors: list[TransformError]) -> TransformError:
    """utilerrors.Reduce(NewAggregate(errs)): one error as itself, several as `[a, b]`."""
    if len(errors) == 1:
        return errors[0]
    return TransformError("[" + ", ".join(str(e) for e in errors) + "]", errors[0].code)
