"""The KMS v2 provider (storage/value/encrypt/envelope/kmsv2): envelope encryption with a data encryption key
(DEK) that a KMS plugin encrypts, reached over gRPC on a unix socket (k8s.io/kms apis/v2
`v2.KeyManagementService`: Status, Encrypt, Decrypt).

- A status probe asks the plugin for its health and current key ID. While the key ID stays the same the write
  DEK stays (its validity is extended by 3 minutes at each healthy probe); when it changes a new DEK source (a
  random 32-byte seed) is generated and encrypted by the plugin. Writes fail once the DEK source expired.
- A value is `k8s:enc:kms:v2:<name>:` then the protobuf EncryptedObject (encryptedData, keyID,
  encryptedDEKSource, annotations, encryptedDEKSourceType). With the seed type (HKDF_SHA256_XNONCE_AES_GCM_SEED,
  what is written) encryptedData is a random 32-byte info, then AES-GCM (nonce, ciphertext, tag) under the key
  HKDF-Expand(SHA-256, seed, info); AES_GCM_KEY values (the DEK itself) are read too.
- Read DEKs are cached by their encrypted form (24 hours): the plugin is asked to decrypt a DEK once. A value
  whose key ID or DEK source type differs from the current one reads as stale, so a rewrite moves it.

The transformers are synchronous (the store decodes values inline), so a DEK missing from the cache is
decrypted with a blocking call bounded by the provider's timeout; the probe runs in a worker thread."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import grpc
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from ...apimachinery.protowire import bytes_field, fields_of, varint_field
from .aes import GCMTransformer
from .transformer import KeyContext, TransformError

log = logging.getLogger("kube_apiserver")

SERVICE = "/v2.KeyManagementService/"
API_VERSIONS = ("v2", "v2beta1")
AES_GCM_KEY, HKDF_SHA256_XNONCE_AES_GCM_SEED = 0, 1
SEED_SIZE = INFO_SIZE = 32
KEY_ID_MAX_SIZE = 1024
DEK_SOURCE_MAX_SIZE = 1024
ANNOTATIONS_MAX_SIZE = 32 * 1024
WRITE_DEK_TTL = 180.0  # kmsv2PluginWriteDEKSourceMaxTTL
CACHE_TTL = 24 * 3600.0
CACHE_MAX = 4096  # read DEKs kept at most (kube-apiserver bounds them by time only)
INFO_CACHE_MAX = 1024
# How often the probe runs: every minute while healthy, every 10 s after a failure (module values: tests shorten them).
POSITIVE_INTERVAL = 60.0
NEGATIVE_INTERVAL = 10.0
HEALTHZ_POSITIVE_TTL, HEALTHZ_NEGATIVE_TTL = 20.0, 3.0
_FQDN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")


# ---- messages ----


@dataclass
class EncryptedObject:
    encrypted_data: bytes = b""
    key_id: str = ""
    encrypted_dek_source: bytes = b""
    annotations: dict[str, bytes] = field(default_factory=dict)
    source_type: int = AES_GCM_KEY

    def encode(self) -> bytes:
        out = bytes_field(1, self.encrypted_data) if self.encrypted_data else b""
        out += bytes_field(2, self.key_id.encode()) if self.key_id else b""
        out += bytes_field(3, self.encrypted_dek_source) if self.encrypted_dek_source else b""
        out += _encode_map(4, self.annotations)
        return out + varint_field(5, self.source_type) if self.source_type else out

    @classmethod
    def decode(cls, data: bytes) -> EncryptedObject:
        obj = cls()
        for number, wire, value in fields_of(data):
            if number == 1 and wire == 2:
                obj.encrypted_data = bytes(value)
            elif number == 2 and wire == 2:
                obj.key_id = bytes(value).decode()
            elif number == 3 and wire == 2:
                obj.encrypted_dek_source = bytes(value)
            elif number == 4 and wire == 2:
                key, item = _map_entry(value)
                obj.annotations[key] = item
            elif number == 5 and wire == 0:
                obj.source_type = value
        return obj


def _encode_map(number: int, entries: dict[str, bytes]) -> bytes:
    return b"".join(
        bytes_field(number, bytes_field(1, k.encode()) + bytes_field(2, v)) for k, v in entries.items()
    )


def _map_entry(data: bytes) -> tuple[str, bytes]:
    key, value = "", b""
    for number, wire, item in fields_of(data):
        if number == 1 and wire == 2:
            key = bytes(item).decode()
        elif number == 2 and wire == 2:
            value = bytes(item)
    return key, value


def _parse(
    data: bytes, map_numbers: tuple[int, ...] = ()
) -> tuple[dict[int, bytes], dict[int, dict[str, bytes]]]:
    """A response's length-delimited fields by number, and the entries of its map fields (`map_numbers`)."""
    scalars: dict[int, bytes] = {}
    maps: dict[int, dict[str, bytes]] = {}
    try:
        for number, wire, value in fields_of(data):
            if wire != 2:
                continue
            if number in map_numbers:
                key, item = _map_entry(value)
                maps.setdefault(number, {})[key] = item
            else:
                scalars[number] = bytes(value)
    except (ValueError, UnicodeDecodeError) as err:
        raise TransformError(f"grpc: error unmarshalling response: {err}") from None
    return scalars, maps


# ---- validation (ValidateEncryptedObject) ----


def validate_key_id(key_id: str) -> str:
    """An error text, or "" when the key ID is valid."""
    if not key_id:
        return "keyID is empty"
    if len(key_id.encode()) > KEY_ID_MAX_SIZE:
        return f"keyID is {len(key_id.encode())} bytes, which exceeds the max size of {KEY_ID_MAX_SIZE}"
    return ""


def validate_encrypted_object(obj: EncryptedObject) -> None:
    if obj.source_type not in (AES_GCM_KEY, HKDF_SHA256_XNONCE_AES_GCM_SEED):
        raise TransformError(f"unknown encryptedDEKSourceType: {obj.source_type}")
    if not obj.encrypted_data:
        raise TransformError("encrypted data is empty")
    source = obj.encrypted_dek_source
    if not source:
        raise TransformError("failed to validate encrypted DEK source: encrypted DEK source is empty")
    if len(source) > DEK_SOURCE_MAX_SIZE:
        raise TransformError(
            f"failed to validate encrypted DEK source: encrypted DEK source is {len(source)} bytes, which exceeds "
            f"the max size of {DEK_SOURCE_MAX_SIZE}"
        )
    problem = validate_key_id(obj.key_id)
    if problem:
        raise TransformError(f"failed to validate key id: {problem}")
    total = sum(len(k) + len(v) for k, v in obj.annotations.items())
    bad = [k for k in obj.annotations if not _FQDN.match(k) or len(k) > 253]
    if bad or total > ANNOTATIONS_MAX_SIZE:
        problems = [
            f"annotations: Invalid value: {k!r}: should be a domain with at least two segments" for k in bad
        ]
        if total > ANNOTATIONS_MAX_SIZE:
            problems.append(
                f"total size of annotations is {total}, which exceeds the max size of {ANNOTATIONS_MAX_SIZE}"
            )
        raise TransformError(f"failed to validate annotations: {', '.join(problems)}")


def key_id_hash(key_id: str) -> str:
    return f"sha256:{hashlib.sha256(key_id.encode()).hexdigest()}" if key_id else ""


def cache_key(source_type: int, source: bytes, key_id: str, annotations: dict[str, bytes]) -> bytes:
    """generateCacheKey: what identifies a DEK, length-prefixed as cryptobyte builds it."""
    out = source_type.to_bytes(4, "big") + _u16(source) + _u16(key_id.encode())
    if annotations:
        out += len(annotations).to_bytes(4, "big")
        for name in sorted(annotations):
            out += _u16(name.encode()) + _u16(annotations[name])
    return out


def _u16(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


# ---- the extended-nonce AES-GCM of a seed (aes_extended_nonce.go) ----


class ExtendedNonceGCM:
    """A value is a random 32-byte info, then AES-GCM under HKDF-Expand(SHA-256, seed, info)."""

    def __init__(self, seed: bytes, random: Any = os.urandom):
        if len(seed) < SEED_SIZE:
            raise TransformError(f"invalid seed length {len(seed)} used for key generation")
        self._seed = seed
        self._random = random
        self._keys: OrderedDict[bytes, GCMTransformer] = OrderedDict()
        self._lock = threading.Lock()

    def _transformer(self, info: bytes) -> GCMTransformer:
        with self._lock:
            found = self._keys.get(info)
            if found is not None:
                return found
        key = HKDFExpand(hashes.SHA256(), 32, info).derive(self._seed)
        transformer = GCMTransformer(key, self._random)
        with self._lock:
            self._keys[info] = transformer
            while len(self._keys) > INFO_CACHE_MAX:
                self._keys.popitem(last=False)
        return transformer

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        if len(data) < INFO_SIZE:
            raise TransformError("the stored data was shorter than the required size")
        return self._transformer(bytes(data[:INFO_SIZE])).transform_from_storage(data[INFO_SIZE:], context)

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        info = self._random(INFO_SIZE)
        return info + GCMTransformer(
            HKDFExpand(hashes.SHA256(), 32, info).derive(self._seed), self._random
        ).transform_to_storage(data, context)


# ---- the plugin ----


def _go_code(code: grpc.StatusCode) -> str:
    """codes.Code.String(): DEADLINE_EXCEEDED -> DeadlineExceeded (the metrics' status label)."""
    return "OK" if code == grpc.StatusCode.OK else "".join(p.capitalize() for p in code.name.split("_"))


def _rpc_error(err: grpc.RpcError) -> TransformError:
    code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
    details = err.details() if callable(getattr(err, "details", None)) else str(err)
    return TransformError(f"rpc error: code = {_go_code(code)} desc = {details}", _go_code(code))


def parse_endpoint(endpoint: str) -> str:
    """util.ParseEndpoint: `unix:///path` -> the gRPC target of the socket (an abstract `/@name` too)."""
    if not endpoint.startswith("unix://"):
        scheme = endpoint.split(":", 1)[0] if ":" in endpoint else ""
        raise TransformError(f'unsupported endpoint protocol "{scheme}"')
    path = endpoint[len("unix://") :]
    if path.startswith("/@"):
        return f"unix-abstract:{path[2:]}"
    return f"unix:{path}"


@dataclass
class StatusResponse:
    version: str
    healthz: str
    key_id: str


class KMSService:
    """The plugin's three calls, each bounded by the provider's timeout (gRPCService)."""

    def __init__(self, endpoint: str, timeout: float):
        self.timeout = timeout
        self._channel = grpc.insecure_channel(
            parse_endpoint(endpoint), options=[("grpc.default_authority", "localhost")]
        )
        self._calls = {
            name: self._channel.unary_unary(SERVICE + name) for name in ("Status", "Encrypt", "Decrypt")
        }

    def _call(self, name: str, request: bytes) -> bytes:
        try:
            return self._calls[name](request, timeout=self.timeout, wait_for_ready=True)
        except grpc.RpcError as err:
            raise _rpc_error(err) from None

    def status(self) -> StatusResponse:
        fields, _ = _parse(self._call("Status", b""))
        return StatusResponse(*(fields.get(n, b"").decode(errors="replace") for n in (1, 2, 3)))

    def encrypt(self, uid: str, plaintext: bytes) -> EncryptedObject:
        fields, maps = _parse(
            self._call("Encrypt", bytes_field(1, plaintext) + bytes_field(2, uid.encode())), (3,)
        )
        key_id = fields.get(2, b"").decode(errors="replace")
        return EncryptedObject(b"", key_id, fields.get(1, b""), maps.get(3, {}))

    def decrypt(self, uid: str, source: bytes, key_id: str, annotations: dict[str, bytes]) -> bytes:
        request = bytes_field(1, source) + bytes_field(2, uid.encode()) + bytes_field(3, key_id.encode())
        fields, _ = _parse(self._call("Decrypt", request + _encode_map(4, annotations)))
        return fields.get(1, b"")

    def close(self) -> None:
        self._channel.close()


@dataclass
class State:
    """The write DEK and what is stored with it (envelopekmsv2.State)."""

    transformer: ExtendedNonceGCM
    key_id: str
    encrypted_source: bytes
    annotations: dict[str, bytes]
    source_type: int
    expires: float
    cache_key: bytes


class KMSv2Provider:
    """The provider's transformer (after its prefix) and its status probe."""

    def __init__(self, name: str, service: KMSService, random: Any = os.urandom):
        self.name = name
        self.service = service
        self._random = random
        self._state: State | None = None
        self._cache: OrderedDict[bytes, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.version = ""
        self.last_error = ""
        self.checked_at = -1e18  # time.monotonic() of the last probe

    def healthz(self) -> None:
        """The health check's answer: the last probe's while it is fresh (20 s after a success, 3 s after a
        failure, as kube-apiserver's kmsv2PluginProbe), else a new probe. Blocking: run it in a thread."""
        ttl = HEALTHZ_NEGATIVE_TTL if self.last_error else HEALTHZ_POSITIVE_TTL
        if time.monotonic() - self.checked_at < ttl:
            if self.last_error:
                raise TransformError(self.last_error)
            return
        self.check()

    # ---- the probe ----

    def check(self) -> None:
        """One status probe; raises TransformError when the plugin is not healthy (the write DEK then stays as
        it is, and expires in at most 3 minutes)."""
        self.checked_at = time.monotonic()
        try:
            status = self.service.status()
        except TransformError as err:
            self.last_error = f"failed to perform status section of the healthz check for KMS Provider {self.name}, error: {err}"
            raise TransformError(self.last_error, err.code) from None
        errors = []
        if status.healthz != "ok":
            errors.append(f"got unexpected healthz status: {status.healthz}")
        if status.version not in API_VERSIONS:
            errors.append(f"expected KMSv2 API version v2, got {status.version}")
        elif self.version and status.version != self.version:
            errors.append(
                "KMSv2 API version should not change after the initial status response version "
                f"{self.version}, got {status.version}"
            )
        else:
            self.version = status.version
        problem = validate_key_id(status.key_id)
        if problem:
            errors.append(f'got invalid KMSv2 KeyID hash "{key_id_hash(status.key_id)}": {problem}')
        else:
            rotation = self._rotate_on_key_id_change(status.key_id)
            if rotation:
                errors.append(rotation)
        if errors:
            joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            self.last_error = f"kmsv2 Provider {self.name} is not healthy, error: {joined}"
            raise TransformError(self.last_error)
        self.last_error = ""

    def _rotate_on_key_id_change(self, key_id: str) -> str:
        expires = time.time() + WRITE_DEK_TTL
        state = self._state
        if (
            state is not None
            and state.key_id == key_id
            and state.source_type == HKDF_SHA256_XNONCE_AES_GCM_SEED
        ):
            state.expires = expires
            return ""
        uid = str(uuid.uuid4())
        seed = self._random(SEED_SIZE)
        try:
            encrypted = self.service.encrypt(uid, seed)
        except TransformError as err:
            return f"failed to rotate DEK uid={uid!r}, errGen=failed to encrypt DEK, error: {err}"
        encrypted.encrypted_data, encrypted.source_type = b"\0", HKDF_SHA256_XNONCE_AES_GCM_SEED
        try:
            validate_encrypted_object(encrypted)
        except TransformError as err:
            return f"failed to rotate DEK uid={uid!r}, errGen={err}"
        if encrypted.key_id != key_id:
            return (
                f'failed to rotate DEK uid="{uid}", statusKeyIDHash="{key_id_hash(key_id)}", '
                f'encryptKeyIDHash="{key_id_hash(encrypted.key_id)}"'
            )
        key = cache_key(
            HKDF_SHA256_XNONCE_AES_GCM_SEED, encrypted.encrypted_dek_source, key_id, encrypted.annotations
        )
        transformer = ExtendedNonceGCM(seed, self._random)
        self._state = State(
            transformer,
            key_id,
            encrypted.encrypted_dek_source,
            encrypted.annotations,
            HKDF_SHA256_XNONCE_AES_GCM_SEED,
            expires,
            key,
        )
        self._remember(key, transformer)
        log.info("KMSv2 provider %s: new DEK for key ID hash %s", self.name, key_id_hash(key_id))
        return ""

    def _current(self) -> State:
        state = self._state
        if state is None:
            raise TransformError("got unexpected nil transformer")
        return state

    # ---- the DEK cache ----

    def _cached(self, key: bytes) -> Any:
        with self._lock:
            entry = self._cache.get(key)
            if entry is None or entry[0] < time.time():
                return None
            self._cache.move_to_end(key)
            return entry[1]

    def _remember(self, key: bytes, transformer: Any) -> None:
        with self._lock:
            self._cache[key] = (time.time() + CACHE_TTL, transformer)
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_MAX:
                self._cache.popitem(last=False)

    # ---- the transformer ----

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        state = self._current()
        if time.time() > state.expires:
            raise TransformError(
                f'encryptedDEKSource with keyID hash "{key_id_hash(state.key_id)}" expired at '
                f"{_rfc3339(state.expires)} (current time is {_rfc3339(time.time())})"
            )
        self._remember(state.cache_key, state.transformer)
        encrypted = EncryptedObject(
            state.transformer.transform_to_storage(data, context),
            state.key_id,
            state.encrypted_source,
            state.annotations,
            state.source_type,
        )
        validate_encrypted_object(encrypted)
        return encrypted.encode()

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        try:
            obj = EncryptedObject.decode(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise TransformError(f"proto: cannot parse invalid wire-format data: {err}") from None
        validate_encrypted_object(obj)
        state = self._current()
        key = cache_key(obj.source_type, obj.encrypted_dek_source, obj.key_id, obj.annotations)
        transformer = self._cached(key)
        if transformer is None:
            try:
                dek = self.service.decrypt(
                    str(uuid.uuid4()), obj.encrypted_dek_source, obj.key_id, obj.annotations
                )
            except TransformError as err:
                raise TransformError(f"failed to decrypt DEK, error: {err}", err.code) from None
            if obj.source_type == HKDF_SHA256_XNONCE_AES_GCM_SEED:
                transformer = ExtendedNonceGCM(dek, self._random)
            else:
                if len(dek) not in (16, 24, 32):
                    raise TransformError(f"crypto/aes: invalid key size {len(dek)}")
                transformer = GCMTransformer(dek, self._random)
            self._remember(key, transformer)
        plain, stale = transformer.transform_from_storage(obj.encrypted_data, context)
        return plain, stale or obj.key_id != state.key_id or obj.source_type != state.source_type


def _rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


class Prober:
    """Probes the KMS providers of the configuration in force, each in a worker thread (a probe may wait for
    its plugin up to the timeout): every POSITIVE_INTERVAL while it is healthy, every NEGATIVE_INTERVAL after
    a failure. `tick` is called often (a Periodic); `close` closes every provider's channel it has seen."""

    def __init__(self, providers: Any):
        self.providers = providers  # () -> the KMSv2Providers in force
        self._due: dict[KMSv2Provider, float] = {}
        self._seen: set[KMSv2Provider] = set()

    async def tick(self) -> None:
        import asyncio

        now = time.monotonic()
        current = list(self.providers())
        for provider in current:
            self._seen.add(provider)
            due = self._due.get(provider)
            if due is None:  # probed when it was loaded
                self._due[provider] = now + (NEGATIVE_INTERVAL if provider.last_error else POSITIVE_INTERVAL)
                continue
            if due > now:
                continue
            try:
                await asyncio.to_thread(provider.check)
                self._due[provider] = time.monotonic() + POSITIVE_INTERVAL
            except TransformError as err:
                log.error("kms plugin failed health check probe name=%s: %s", provider.name, err)
                self._due[provider] = time.monotonic() + NEGATIVE_INTERVAL
        for gone in set(self._due) - set(current):
            del self._due[gone]

    async def close(self) -> None:
        for provider in self._seen | set(self.providers()):
            provider.service.close()
