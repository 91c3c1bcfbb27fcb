"""The KMS v2 provider against a plugin served by the test over a unix socket: the stored EncryptedObject as
kube-apiserver lays it out, the extended-nonce AES-GCM of a seed computed here from HKDF's and GCM's
definitions, the DEK cache (one Decrypt per DEK), the key-ID status check (a new key ID brings a new DEK and
makes older values stale), and the plugin's errors."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from test_encryption_providers import gcm_reference

from kms_plugin import KMSPlugin
from kube_apiserver.apimachinery.protowire import bytes_field, varint_field
from kube_apiserver.storage.value import kmsv2
from kube_apiserver.storage.value.transformer import KeyContext, TransformError

CONTEXT = KeyContext(b"/registry/secrets/ns/a", "secrets")
PLAIN = b'{"kind":"Secret","data":{"k":"dg=="}}'


@pytest.fixture
def plugin(tmp_path):
    with KMSPlugin(str(tmp_path / "kms.sock")) as plugin:
        yield plugin


def new_provider(plugin: KMSPlugin, random=None) -> kmsv2.KMSv2Provider:
    service = kmsv2.KMSService(plugin.endpoint, 5.0)
    return (
        kmsv2.KMSv2Provider("testkms", service, random) if random else kmsv2.KMSv2Provider("testkms", service)
    )


def test_encrypted_object_wire_format():
    obj = kmsv2.EncryptedObject(
        b"data", "key-1", b"dek", {"a.example.com": b"v"}, kmsv2.HKDF_SHA256_XNONCE_AES_GCM_SEED
    )
    expected = (
        bytes_field(1, b"data")
        + bytes_field(2, b"key-1")
        + bytes_field(3, b"dek")
        + bytes_field(4, bytes_field(1, b"a.example.com") + bytes_field(2, b"v"))
        + varint_field(5, 1)
    )
    assert obj.encode() == expected
    assert kmsv2.EncryptedObject.decode(expected) == obj


def test_extended_nonce_gcm_bytes_as_upstream():
    seed, info, nonce = bytes(range(32)), bytes(range(100, 132)), bytes(range(200, 212))
    randoms = iter([info, nonce])
    stored = kmsv2.ExtendedNonceGCM(seed, lambda n: next(randoms)[:n]).transform_to_storage(PLAIN, CONTEXT)
    key = hmac.new(seed, info + b"\x01", hashlib.sha256).digest()  # HKDF-Expand, one block of 32 bytes
    assert stored == info + nonce + gcm_reference(key, nonce, PLAIN, CONTEXT.authenticated_data)
    assert kmsv2.ExtendedNonceGCM(seed).transform_from_storage(stored, CONTEXT) == (PLAIN, False)


def test_round_trip_and_dek_cache(plugin):
    provider = new_provider(plugin)
    provider.check()
    assert plugin.calls["Encrypt"] == 1  # the DEK seed, wrapped by the plugin
    stored = [provider.transform_to_storage(PLAIN, CONTEXT) for _ in range(3)]
    obj = kmsv2.EncryptedObject.decode(stored[0])
    assert (obj.key_id, obj.source_type) == ("key-1", kmsv2.HKDF_SHA256_XNONCE_AES_GCM_SEED)
    assert PLAIN not in stored[0]
    for value in stored:
        assert provider.transform_from_storage(value, CONTEXT) == (PLAIN, False)
    assert plugin.calls["Decrypt"] == 0  # the write DEK is cached
    other = new_provider(plugin)  # another server: its own DEK, asks the plugin once for this one
    other.check()
    for value in stored:
        assert other.transform_from_storage(value, CONTEXT) == (PLAIN, False)
    assert plugin.calls["Decrypt"] == 1


def test_key_id_change_rotates_the_dek_and_makes_old_values_stale(plugin):
    provider = new_provider(plugin)
    provider.check()
    old = provider.transform_to_storage(PLAIN, CONTEXT)
    provider.check()
    assert plugin.calls["Encrypt"] == 1  # the same key ID: the same DEK
    plugin.key_id = "key-2"
    provider.check()
    assert plugin.calls["Encrypt"] == 2
    new = provider.transform_to_storage(PLAIN, CONTEXT)
    assert kmsv2.EncryptedObject.decode(new).key_id == "key-2"
    assert provider.transform_from_storage(old, CONTEXT) == (PLAIN, True)
    assert provider.transform_from_storage(new, CONTEXT) == (PLAIN, False)


def test_unhealthy_plugin_and_no_dek_yet(plugin):
    provider = new_provider(plugin)
    with pytest.raises(TransformError, match="^got unexpected nil transformer$"):
        provider.transform_to_storage(PLAIN, CONTEXT)
    plugin.healthz = "sick"
    with pytest.raises(
        TransformError, match="^kmsv2 Provider testkms is not healthy, error: got unexpected healthz"
    ):
        provider.check()
    plugin.healthz, plugin.key_id = "ok", ""
    with pytest.raises(TransformError, match='got invalid KMSv2 KeyID hash "": keyID is empty'):
        provider.check()


def test_plugin_down_is_a_grpc_error(tmp_path):
    service = kmsv2.KMSService(f"unix://{tmp_path}/nothing.sock", 0.2)
    provider = kmsv2.KMSv2Provider("gone", service)
    with pytest.raises(TransformError) as caught:
        provider.check()
    assert str(caught.value).startswith(
        "failed to perform status section of the healthz check for KMS Provider gone"
    )
    assert caught.value.code == "DeadlineExceeded"
    service.close()


def test_invalid_stored_objects():
    provider = kmsv2.KMSv2Provider("x", None)  # type: ignore[arg-type]
    with pytest.raises(TransformError, match="^encrypted data is empty$"):
        provider.transform_from_storage(kmsv2.EncryptedObject(b"", "k", b"d").encode(), CONTEXT)
    with pytest.raises(TransformError, match="^failed to validate key id: keyID is empty$"):
        provider.transform_from_storage(kmsv2.EncryptedObject(b"x", "", b"d").encode(), CONTEXT)
    with pytest.raises(TransformError, match="^unknown encryptedDEKSourceType: 7$"):
        provider.transform_from_storage(kmsv2.EncryptedObject(b"x", "k", b"d", {}, 7).encode(), CONTEXT)
