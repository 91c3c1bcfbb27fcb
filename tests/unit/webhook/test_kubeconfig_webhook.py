"""A webhook's kubeconfig file: the current context's cluster and user, files relative to the kubeconfig."""

from __future__ import annotations

import base64
import ssl

import pytest
import yaml

from kube_apiserver.testing.certs import CertificateAuthority
from kube_apiserver.webhook.generic import ConfigError, load_kubeconfig


def _write(path, config) -> str:
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_the_current_context_with_files_relative_to_the_kubeconfig(tmp_path):
    ca = CertificateAuthority.generate("webhook-ca")
    cert, key = ca.issue("apiserver", client=True)
    (tmp_path / "ca.crt").write_bytes(ca.cert_pem)
    (tmp_path / "token").write_text("secret\n")
    config = {"current-context": "b",
              "clusters": [{"name": "a", "cluster": {"server": "https://a.example"}},
                           {"name": "b", "cluster": {"server": "https://b.example/review/",
                                                     "certificate-authority": "ca.crt"}}],
              "users": [{"name": "u", "user": {"tokenFile": "token",
                                               "client-certificate-data": base64.b64encode(cert).decode(),
                                               "client-key-data": base64.b64encode(key).decode()}}],
              "contexts": [{"name": "a", "context": {"cluster": "a", "user": "u"}},
                           {"name": "b", "context": {"cluster": "b", "user": "u"}}]}
    target = load_kubeconfig(_write(tmp_path / "kubeconfig", config))
    assert target.server == "https://b.example/review" and target.token == "secret"
    assert target.context.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in target.context.get_ca_certs()] == [((("commonName", "webhook-ca"),),)]


@pytest.mark.parametrize(("config", "message"), [
    ({"clusters": [{"name": "a", "cluster": {}}]}, "no server found for cluster"),
    ({"clusters": [{"name": "a", "cluster": {"server": "https://x", "certificate-authority": "missing.crt"}}]},
     "No such file"),
    ("just text", "not a kubeconfig"),
])
def test_what_is_wrong_is_said(tmp_path, config, message):
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(_write(tmp_path / "kubeconfig", config))
