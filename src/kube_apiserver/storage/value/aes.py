"""AES-GCM and AES-CBC value transformers, byte for byte as kube-apiserver's (storage/value/encrypt/aes):

- aesgcm: a random 12-byte nonce, then the GCM ciphertext and its 16-byte tag, sealed with the etcd key as
  authenticated data.
- aescbc: a random 16-byte IV, then the CBC ciphertext of the value padded as PKCS#7 (a whole block when
  the value fills its last one); no authenticated data.

The provider's prefix (`k8s:enc:aesgcm:v1:<key name>:`) is put in front by the prefix transformers."""

from __future__ import annotations

import os
from collections.abc import Callable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .transformer import KeyContext, TransformError

GCM_NONCE_SIZE = 12
BLOCK_SIZE = 16
SHORT_DATA = "the stored data was shorter than the required size"

RandomBytes = Callable[[int], bytes]


class GCMTransformer:
    def __init__(self, key: bytes, random: RandomBytes = os.urandom):
        self._aead = AESGCM(key)
        self._random = random  # tests give a fixed nonce

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        if len(data) < GCM_NONCE_SIZE:
            raise TransformError(SHORT_DATA)
        try:
            plain = self._aead.decrypt(
                data[:GCM_NONCE_SIZE], data[GCM_NONCE_SIZE:], context.authenticated_data
            )
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None
        return plain, False

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        nonce = self._random(GCM_NONCE_SIZE)
        return nonce + self._aead.encrypt(nonce, data, context.authenticated_data)


class CBCTransformer:
    def __init__(self, key: bytes, random: RandomBytes = os.urandom):
        self._algorithm = algorithms.AES(key)
        self._random = random

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        if len(data) < BLOCK_SIZE:
            raise TransformError(SHORT_DATA)
        iv, body = data[:BLOCK_SIZE], data[BLOCK_SIZE:]
        if len(body) % BLOCK_SIZE:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(iv)).decryptor()
        plain = decryptor.update(body) + decryptor.finalize()
        padding = plain[-1] if plain else 0
        if padding == 0 or padding > len(plain):
            raise TransformError("invalid PKCS7 data (empty or not padded)")
        if plain[-padding:] != bytes([padding]) * padding:
            raise TransformError("invalid padding on input")
        return plain[:-padding], False

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        padding = BLOCK_SIZE - len(data) % BLOCK_SIZE
        iv = self._random(BLOCK_SIZE)
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(data + bytes([padding]) * padding) + encryptor.finalize()
