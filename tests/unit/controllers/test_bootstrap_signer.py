"""The bootstrap signer's detached JWS, byte for byte as k8s.io/cluster-bootstrap's jws package computes it
(its test vectors), and which signatures a cluster-info ConfigMap ends up with."""

from __future__ import annotations

import base64

from kube_apiserver.controllers.bootstrap import detached_signature, signed_data, signing_tokens

CONTENT = "Hello from the other side. I must have called a thousand times."


def test_upstream_vectors():
    assert detached_signature(CONTENT, "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8")
    assert detached_signature("", "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk")


def _secret(token_id: str, **data: str) -> dict:
    values = {"token-id": token_id, "token-secret": "0123456789abcdef", "usage-bootstrap-signing": "true", **data}
    return {"type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}}


def test_only_live_signing_tokens_sign():
    secrets = [_secret("abcdef"), _secret("nosign", **{"usage-bootstrap-signing": "false"}),
               _secret("expird", expiration="2000-01-01T00:00:00Z"), _secret("BADID1")]
    assert signing_tokens(secrets) == {"abcdef": "0123456789abcdef"}


def test_signatures_follow_the_tokens():
    tokens = {"abcdef": "0123456789abcdef"}
    data = signed_data({"kubeconfig": CONTENT, "jws-kubeconfig-gone00": "stale"}, tokens)
    assert data == {"kubeconfig": CONTENT,
                    "jws-kubeconfig-abcdef": detached_signature(CONTENT, "abcdef", "0123456789abcdef")}
    assert signed_data(data, tokens) is None  # already signed: no update
    assert signed_data({"other": "x"}, tokens) is None  # nothing to sign
