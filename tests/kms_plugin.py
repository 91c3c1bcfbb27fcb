"""A KMS v2 plugin for tests: k8s.io/kms `v2.KeyManagementService` (Status, Encrypt, Decrypt) served over a unix
socket with grpcio, the messages on the protobuf wire by hand. It wraps DEKs with AES-GCM under a key encryption
key per key ID, counts the calls, and can change its key ID (a KMS key rotation) or report itself unhealthy.

    with KMSPlugin(str(tmp_path / "kms.sock")) as plugin:
        plugin.endpoint        # "unix:///.../kms.sock", for the EncryptionConfiguration
        plugin.key_id = "k2"   # the next status reports it: the server generates a new DEK
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import Counter
from concurrent import futures

import grpc
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kube_apiserver.apimachinery.protowire import bytes_field, fields_of

SERVICE = "v2.KeyManagementService"


def _fields(data: bytes) -> dict[int, bytes]:
    return {number: bytes(value) for number, wire, value in fields_of(data) if wire == 2 and number != 4}


class KMSPlugin:
    def __init__(self, socket_path: str, key_id: str = "key-1"):
        self.socket_path = socket_path
        self.key_id = key_id
        self.healthz = "ok"
        self.version = "v2"
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: grpc.Server | None = None

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket_path}"

    def _kek(self, key_id: str) -> AESGCM:
        return AESGCM(hashlib.sha256(f"kek:{key_id}".encode()).digest())

    def _count(self, name: str) -> None:
        with self._lock:
            self.calls[name] += 1

    def status(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        self._count("Status")
        return (
            bytes_field(1, self.version.encode())
            + bytes_field(2, self.healthz.encode())
            + bytes_field(3, self.key_id.encode())
        )

    def encrypt(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        self._count("Encrypt")
        plaintext = _fields(request).get(1, b"")
        nonce = os.urandom(12)
        ciphertext = nonce + self._kek(self.key_id).encrypt(nonce, plaintext, None)
        return bytes_field(1, ciphertext) + bytes_field(2, self.key_id.encode())

    def decrypt(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        self._count("Decrypt")
        fields = _fields(request)
        ciphertext, key_id = fields.get(1, b""), fields.get(3, b"").decode()
        try:
            plaintext = self._kek(key_id).decrypt(ciphertext[:12], ciphertext[12:], None)
        except Exception:  # noqa: BLE001 - answered as a plugin would
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "cannot decrypt")
        return bytes_field(1, plaintext)

    def start(self) -> KMSPlugin:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handlers = {
            name: grpc.unary_unary_rpc_method_handler(method)
            for name, method in (
                ("Status", self.status),
                ("Encrypt", self.encrypt),
                ("Decrypt", self.decrypt),
            )
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        server.add_insecure_port(f"unix:{self.socket_path}")
        server.start()
        self._server = server
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(None)
            self._server = None

    def __enter__(self) -> KMSPlugin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
