"""The value transformers of encryption at rest: each provider's round trip, and values encrypted with a known
key and IV/nonce equal to what kube-apiserver writes, computed here from the algorithms' definitions (AES
block by block for CBC and GCM, Salsa20 and Poly1305 for secretbox) rather than by the code under test."""

from __future__ import annotations

import struct

import pytest
from cryptography.hazmat.primitives import poly1305
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from kube_apiserver.storage.value.aes import CBCTransformer, GCMTransformer
from kube_apiserver.storage.value.metrics import TransformationMetrics
from kube_apiserver.storage.value.secretbox import SecretboxTransformer
from kube_apiserver.storage.value.transformer import (
    IDENTITY,
    KeyContext,
    PrefixTransformer,
    PrefixTransformers,
    TransformError,
)

KEY32 = bytes(range(32))
KEY16 = bytes(range(100, 116))
CONTEXT = KeyContext(b"/registry/secrets/default/s1", "secrets")
PLAIN = b'{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s1"},"data":{"k":"dg=="}}'


def fixed(value: bytes):
    return lambda n: value[:n]


# ---- the algorithms, from their definitions ----


def aes_block(key: bytes, block: bytes) -> bytes:
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()  # one block: the AES permutation itself
    return enc.update(block) + enc.finalize()


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=False))


def cbc_reference(key: bytes, iv: bytes, plain: bytes) -> bytes:
    pad = 16 - len(plain) % 16
    data, prev, out = plain + bytes([pad]) * pad, iv, b""
    for i in range(0, len(data), 16):
        prev = aes_block(key, xor(data[i : i + 16], prev))
        out += prev
    return out


def gf_mult(x: int, y: int) -> int:
    """Multiplication in GF(2^128) as GCM defines it (NIST SP 800-38D, algorithm 1)."""
    r, z, v = 0xE1 << 120, 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ r if v & 1 else v >> 1
    return z


def ghash(h: int, data: bytes) -> int:
    y = 0
    for i in range(0, len(data), 16):
        y = gf_mult(y ^ int.from_bytes(data[i : i + 16].ljust(16, b"\0"), "big"), h)
    return y


def gcm_reference(key: bytes, nonce: bytes, plain: bytes, aad: bytes) -> bytes:
    h = int.from_bytes(aes_block(key, bytes(16)), "big")
    j0 = nonce + b"\0\0\0\1"
    ct = b""
    for i in range(0, len(plain), 16):
        counter = nonce + struct.pack(">I", 2 + i // 16)
        ct += xor(plain[i : i + 16], aes_block(key, counter))
    pad = lambda b: b + bytes(-len(b) % 16)  # noqa: E731
    s = ghash(h, pad(aad) + pad(ct) + struct.pack(">QQ", len(aad) * 8, len(ct) * 8))
    tag = xor(aes_block(key, j0), s.to_bytes(16, "big"))
    return ct + tag


def _rotl(v: int, c: int) -> int:
    return ((v << c) | (v >> (32 - c))) & 0xFFFFFFFF


def _salsa_rounds(x: list[int]) -> list[int]:
    x = list(x)
    for _ in range(10):
        for a, b, c, d in (
            (0, 4, 8, 12),
            (5, 9, 13, 1),
            (10, 14, 2, 6),
            (15, 3, 7, 11),
            (0, 1, 2, 3),
            (5, 6, 7, 4),
            (10, 11, 8, 9),
            (15, 12, 13, 14),
        ):
            x[b] ^= _rotl((x[a] + x[d]) & 0xFFFFFFFF, 7)
            x[c] ^= _rotl((x[b] + x[a]) & 0xFFFFFFFF, 9)
            x[d] ^= _rotl((x[c] + x[b]) & 0xFFFFFFFF, 13)
            x[a] ^= _rotl((x[d] + x[c]) & 0xFFFFFFFF, 18)
    return x


SIGMA = struct.unpack("<4I", b"expand 32-byte k")


def _state(key: bytes, sixteen: bytes) -> list[int]:
    k, n = struct.unpack("<8I", key), struct.unpack("<4I", sixteen)
    return [SIGMA[0], *k[:4], SIGMA[1], *n, SIGMA[2], *k[4:], SIGMA[3]]


def hsalsa20(key: bytes, nonce16: bytes) -> bytes:
    x = _salsa_rounds(_state(key, nonce16))
    return struct.pack("<8I", *(x[i] for i in (0, 5, 10, 15, 6, 7, 8, 9)))


def salsa20_stream(key: bytes, nonce8: bytes, length: int) -> bytes:
    out = b""
    for block in range((length + 63) // 64):
        start = _state(key, nonce8 + struct.pack("<Q", block))
        x = _salsa_rounds(start)
        out += struct.pack("<16I", *((a + b) & 0xFFFFFFFF for a, b in zip(x, start, strict=True)))
    return out[:length]


def secretbox_reference(key: bytes, nonce: bytes, plain: bytes) -> bytes:
    """XSalsa20-Poly1305 (NaCl crypto_secretbox): the first 32 bytes of keystream key Poly1305, the rest
    encrypts; the box is the tag, then the ciphertext."""
    stream = salsa20_stream(hsalsa20(key, nonce[:16]), nonce[16:], 32 + len(plain))
    ct = xor(plain, stream[32:])
    return poly1305.Poly1305.generate_tag(stream[:32], ct) + ct


# ---- the transformers ----


@pytest.mark.parametrize(
    "transformer",
    [
        GCMTransformer(KEY32),
        GCMTransformer(KEY16),
        CBCTransformer(KEY32),
        CBCTransformer(KEY16),
        SecretboxTransformer(KEY32),
        IDENTITY,
    ],
    ids=["aesgcm-32", "aesgcm-16", "aescbc-32", "aescbc-16", "secretbox", "identity"],
)
def test_round_trip(transformer):
    for plain in (PLAIN, b"", b"x" * 16, b"y" * 1000):
        stored = transformer.transform_to_storage(plain, CONTEXT)
        assert transformer.transform_from_storage(stored, CONTEXT) == (plain, False)
        if transformer is not IDENTITY:
            assert plain not in stored or not plain


def test_random_iv_each_write():
    transformer = CBCTransformer(KEY32)
    assert transformer.transform_to_storage(PLAIN, CONTEXT) != transformer.transform_to_storage(
        PLAIN, CONTEXT
    )


def test_aescbc_bytes_as_upstream():
    iv = bytes(range(16, 32))
    stored = CBCTransformer(KEY32, fixed(iv)).transform_to_storage(PLAIN, CONTEXT)
    assert stored == iv + cbc_reference(KEY32, iv, PLAIN)
    aligned = b"z" * 32  # a value filling its last block gets a whole block of padding
    stored = CBCTransformer(KEY16, fixed(iv)).transform_to_storage(aligned, CONTEXT)
    assert len(stored) == 16 + 48 and stored == iv + cbc_reference(KEY16, iv, aligned)


def test_aesgcm_bytes_as_upstream():
    nonce = bytes(range(40, 52))
    stored = GCMTransformer(KEY32, fixed(nonce)).transform_to_storage(PLAIN, CONTEXT)
    assert stored == nonce + gcm_reference(KEY32, nonce, PLAIN, CONTEXT.authenticated_data)


def test_aesgcm_binds_the_key():
    transformer = GCMTransformer(KEY32)
    stored = transformer.transform_to_storage(PLAIN, CONTEXT)
    with pytest.raises(TransformError, match="cipher: message authentication failed"):
        transformer.transform_from_storage(stored, KeyContext(b"/registry/secrets/default/other"))


def test_secretbox_bytes_as_upstream():
    nonce = bytes(range(60, 84))
    stored = SecretboxTransformer(KEY32, fixed(nonce)).transform_to_storage(PLAIN, CONTEXT)
    assert stored == nonce + secretbox_reference(KEY32, nonce, PLAIN)


def test_reference_secretbox_matches_nacl_vector():
    """The reference itself against the vector of "Cryptography in NaCl" (Bernstein), section 10: its tag
    and first ciphertext bytes (the message's 32 zero bytes of padding left out)."""
    firstkey = bytes.fromhex("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
    nonce = bytes.fromhex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
    m = bytes.fromhex(
        "be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc"
        "3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb"
        "48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705"
    )
    box = secretbox_reference(firstkey, nonce, m)
    assert box[:16].hex() == "f3ffc7703f9400e52a7dfb4b3d3305d9"
    assert box[16:24].hex() == "8e993b9f48681273"


def test_cbc_and_secretbox_errors_as_upstream():
    cbc = CBCTransformer(KEY32)
    with pytest.raises(TransformError, match="^the stored data was shorter than the required size$"):
        cbc.transform_from_storage(b"short", CONTEXT)
    with pytest.raises(TransformError, match="^the stored data is not a multiple of the block size$"):
        cbc.transform_from_storage(bytes(16 + 5), CONTEXT)
    box = SecretboxTransformer(KEY32)
    stored = bytearray(box.transform_to_storage(PLAIN, CONTEXT))
    stored[-1] ^= 1
    with pytest.raises(TransformError, match="^output array was not large enough for encryption$"):
        box.transform_from_storage(bytes(stored), CONTEXT)


def test_identity_refuses_encrypted_data():
    with pytest.raises(TransformError, match="identity transformer tried to read encrypted data"):
        IDENTITY.transform_from_storage(b"k8s:enc:aescbc:v1:key1:xxxx", CONTEXT)


def _chain(metrics=None):
    key1 = PrefixTransformers([PrefixTransformer(b"key1:", CBCTransformer(KEY32))], "no key", metrics)
    key2 = PrefixTransformers([PrefixTransformer(b"key2:", GCMTransformer(KEY16))], "no key", metrics)
    return key1, key2


def test_prefix_transformers_first_writes_any_reads_and_stale():
    key1, key2 = _chain()
    new_first = PrefixTransformers(
        [
            PrefixTransformer(b"k8s:enc:aesgcm:v1:", key2),
            PrefixTransformer(b"k8s:enc:aescbc:v1:", key1),
            PrefixTransformer(b"", IDENTITY),
        ],
        "no matching prefix found",
    )
    old = PrefixTransformers([PrefixTransformer(b"k8s:enc:aescbc:v1:", key1)], "no matching prefix found")
    written_old = old.transform_to_storage(PLAIN, CONTEXT)
    assert written_old.startswith(b"k8s:enc:aescbc:v1:key1:")
    assert new_first.transform_from_storage(written_old, CONTEXT) == (PLAIN, True)  # not the first: stale
    written_new = new_first.transform_to_storage(PLAIN, CONTEXT)
    assert written_new.startswith(b"k8s:enc:aesgcm:v1:key2:")
    assert new_first.transform_from_storage(written_new, CONTEXT) == (PLAIN, False)
    assert new_first.transform_from_storage(PLAIN, CONTEXT) == (PLAIN, True)  # plain: read by identity, stale
    with pytest.raises(TransformError, match="^no matching prefix found$"):
        old.transform_from_storage(PLAIN, CONTEXT)


def test_identity_first_still_reads_encrypted():
    key1, _ = _chain()
    identity_first = PrefixTransformers(
        [PrefixTransformer(b"", IDENTITY), PrefixTransformer(b"k8s:enc:aescbc:v1:", key1)],
        "no matching prefix found",
    )
    written = PrefixTransformers([PrefixTransformer(b"k8s:enc:aescbc:v1:", key1)]).transform_to_storage(
        PLAIN, CONTEXT
    )
    assert identity_first.transform_from_storage(written, CONTEXT) == (PLAIN, True)
    assert identity_first.transform_to_storage(PLAIN, CONTEXT) == PLAIN


def test_wrong_key_name_is_the_providers_error():
    key1, _ = _chain()
    chain = PrefixTransformers([PrefixTransformer(b"k8s:enc:aescbc:v1:", key1)], "no matching prefix found")
    with pytest.raises(TransformError, match="^no key$"):
        chain.transform_from_storage(b"k8s:enc:aescbc:v1:other:" + bytes(32), CONTEXT)


def test_metrics_labels_as_upstream():
    metrics = TransformationMetrics()
    key1, _ = _chain(metrics)
    chain = PrefixTransformers(
        [PrefixTransformer(b"k8s:enc:aescbc:v1:", key1), PrefixTransformer(b"", IDENTITY)],
        "no matching prefix found",
        metrics,
    )
    chain.transform_from_storage(chain.transform_to_storage(PLAIN, CONTEXT), CONTEXT)
    chain.transform_from_storage(PLAIN, CONTEXT)
    text = "\n".join(metrics.exposition())
    for line in (
        'apiserver_storage_transformation_operations_total{resource="secrets",status="OK",'
        'transformation_type="to_storage",transformer_prefix="k8s:enc:aescbc:v1:"} 1',
        'apiserver_storage_transformation_operations_total{resource="secrets",status="OK",'
        'transformation_type="from_storage",transformer_prefix="k8s:enc:aescbc:v1:"} 1',
        'apiserver_storage_transformation_operations_total{resource="secrets",status="OK",'
        'transformation_type="from_storage",transformer_prefix="identity"} 1',
        'apiserver_storage_transformation_duration_seconds_bucket{transformation_type="to_storage",'
        'transformer_prefix="k8s:enc:aescbc:v1:",le="5e-06"}',
        "# TYPE apiserver_storage_transformation_duration_seconds histogram",
    ):
        assert line in text
    with pytest.raises(TransformError):
        PrefixTransformers(
            [PrefixTransformer(b"k8s:enc:aescbc:v1:", key1)], "no matching prefix found", metrics
        ).transform_from_storage(b"garbage", CONTEXT)
    assert (
        'apiserver_storage_transformation_operations_total{resource="secrets",status="unknown-non-grpc",'
        'transformation_type="from_storage",transformer_prefix="unknown"} 1'
    ) in metrics.exposition()
