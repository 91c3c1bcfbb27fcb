"""The secretbox value transformer (storage/value/encrypt/secretbox): NaCl's XSalsa20-Poly1305 with a
32-byte key; a stored value is the random 24-byte nonce, then the 16-byte Poly1305 tag, then the ciphertext
(Go's secretbox.Seal and libsodium's crypto_secretbox_easy lay it out alike). `cryptography` has no XSalsa20:
PyNaCl (libsodium) does it."""

from __future__ import annotations

import os

import nacl.exceptions
import nacl.secret

from .aes import RandomBytes
from .transformer import KeyContext, TransformError

NONCE_SIZE = 24
OVERHEAD = 16  # the Poly1305 tag


class SecretboxTransformer:
    def __init__(self, key: bytes, random: RandomBytes = os.urandom):
        self._box = nacl.secret.SecretBox(key)
        self._random = random

    def transform_from_storage(self, data: bytes, context: KeyContext) -> tuple[bytes, bool]:
        if len(data) < OVERHEAD + NONCE_SIZE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._box.decrypt(data[NONCE_SIZE:], data[:NONCE_SIZE]), False
        except nacl.exceptions.CryptoError:
            # kube-apiserver's own words for a value that does not open (its message says otherwise)
            raise TransformError("output array was not large enough for encryption") from None

    def transform_to_storage(self, data: bytes, context: KeyContext) -> bytes:
        nonce = self._random(NONCE_SIZE)
        return bytes(self._box.encrypt(data, nonce))
