"""--encryption-provider-config: EncryptionConfiguration v1 loading, validation and resource matching, with
kube-apiserver's error texts (k8s.io/apiserver encryptionconfig and its validation)."""

from __future__ import annotations

import base64
import json

import pytest

from kube_apiserver.storage.value import config as ec
from kube_apiserver.storage.value.transformer import IDENTITY, KeyContext

KEY = base64.b64encode(bytes(32)).decode()
OTHER = base64.b64encode(b"o" * 16).decode()


def write(tmp_path, body, name="config.yaml"):
    path = tmp_path / name
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    return str(path)


def config(*rules):
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": list(rules),
    }


def rule(resources, *providers):
    return {"resources": resources, "providers": list(providers)}


def aescbc(name="key1", secret=KEY):
    return {"aescbc": {"keys": [{"name": name, "secret": secret}]}}


def load_error(tmp_path, body) -> str:
    with pytest.raises(ec.EncryptionConfigError) as info:
        ec.load(write(tmp_path, body))
    return str(info.value)


def test_yaml_and_json_load(tmp_path):
    yaml_text = f"""
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, "*.apps"]
    providers:
      - aesgcm:
          keys: [{{name: k, secret: {KEY}}}]
      - identity: {{}}
"""
    loaded = ec.load(write(tmp_path, yaml_text))
    assert set(loaded.transformers) == {("", "secrets"), ("apps", "*")}
    assert loaded.content_hash.startswith("sha256:")
    assert ec.load(write(tmp_path, config(rule(["secrets"], aescbc())), "c.json")).transformers


def test_wildcards_match_as_upstream(tmp_path):
    loaded = ec.load(
        write(
            tmp_path,
            config(rule(["secrets"], aescbc()), rule(["*.apps"], aescbc("a")), rule(["*.*"], aescbc("all"))),
        )
    )
    secrets, apps, everything = (loaded.transformers[k] for k in (("", "secrets"), ("apps", "*"), ("*", "*")))
    assert loaded.for_resource("", "secrets") is secrets
    assert loaded.for_resource("apps", "deployments") is apps
    assert loaded.for_resource("", "configmaps") is everything
    assert loaded.for_resource("example.com", "widgets") is everything
    assert (
        ec.load(write(tmp_path, config(rule(["secrets"], aescbc())))).for_resource("", "configmaps")
        is IDENTITY
    )
    core = ec.load(write(tmp_path, config(rule(["*."], aescbc()))))
    assert core.for_resource("", "configmaps") is core.transformers[("", "*")]
    assert core.for_resource("apps", "deployments") is IDENTITY


def test_written_prefixes(tmp_path):
    context = KeyContext(b"/registry/secrets/ns/a")
    for provider, prefix in (
        (aescbc("k1"), b"k8s:enc:aescbc:v1:k1:"),
        ({"aesgcm": {"keys": [{"name": "k2", "secret": OTHER}]}}, b"k8s:enc:aesgcm:v1:k2:"),
        ({"secretbox": {"keys": [{"name": "k3", "secret": KEY}]}}, b"k8s:enc:secretbox:v1:k3:"),
    ):
        loaded = ec.load(write(tmp_path, config(rule(["secrets"], provider))))
        transformer = loaded.for_resource("", "secrets")
        stored = transformer.transform_to_storage(b"{}", context)
        assert stored.startswith(prefix)
        assert transformer.transform_from_storage(stored, context) == (b"{}", False)


@pytest.mark.parametrize(
    "body, message",
    [
        (config(), "error while parsing file: resources: Required value: at least one resources is required"),
        (
            config(
                rule(
                    ["secrets"],
                    {"aescbc": {"keys": [{"name": "k", "secret": base64.b64encode(b"short").decode()}]}},
                )
            ),
            'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret '
            "is not of the expected length, got 5, expected one of [16 24 32]",
        ),
        (
            config(rule(["secrets"], {"secretbox": {"keys": [{"name": "k", "secret": OTHER}]}})),
            'error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": '
            "secret is not of the expected length, got 16, expected one of [32]",
        ),
        (
            config(rule(["secrets"], aescbc(secret="not base64!"))),
            'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secrets '
            "must be base64 encoded",
        ),
        (
            config(rule(["secrets"], aescbc(name=""))),
            "error while parsing file: resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory "
            "field for a key",
        ),
        (
            config(rule(["secrets"], {"aescbc": {"keys": []}})),
            "error while parsing file: resources[0].providers[0].aescbc.keys: Required value: at least one keys is required",
        ),
        (
            config(
                rule(["secrets"]),
            ),
            "error while parsing file: resources[0].providers: Required value: at least one resources[0].providers is "
            "required",
        ),
        (
            config(rule(["*"], aescbc())),
            "error while parsing file: resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the "
            "resources from core API group or *.* to encrypt all resources",
        ),
        (
            config(rule(["Secrets"], aescbc())),
            'error while parsing file: resources[0].resources[0]: Invalid value: "Secrets": resource name should not '
            "contain capital letters",
        ),
        (
            config(rule(["secrets.*"], aescbc())),
            'error while parsing file: resources[0].resources[0]: Invalid value: "secrets.*": encrypting the same resource '
            "across groups is not supported",
        ),
        (
            config(rule(["*.events.k8s.io"], aescbc())),
            "error while parsing file: resources[0].resources[0]: Invalid value: \"*.events.k8s.io\": '*.events.k8s.io' "
            "objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file",
        ),
        (
            config(rule(["serviceipallocations"], aescbc())),
            'error while parsing file: resources[0].resources[0]: Invalid value: "serviceipallocations": resources which do '
            "not have REST API/s cannot be encrypted",
        ),
        (
            config(rule(["secrets", "*."], aescbc())),
            'error while parsing file: resources[0].resources: Invalid value: ["secrets","*."]: using overlapping resources '
            "such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
        ),
        (
            config(rule(["secrets", "secrets"], aescbc())),
            'error while parsing file: resources[0].resources: Invalid value: ["secrets","secrets"]: the same resource '
            "cannot be specified multiple times",
        ),
        (
            config(rule(["secrets"], {**aescbc(), "identity": {}})),
            "more than one provider specified in a single element, should split into different list elements",
        ),
        (
            config(rule(["secrets"], {})),
            "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity",
        ),
        (
            config(rule(["*."], aescbc()), rule(["secrets"], aescbc())),
            'error while building transformers: resource "secrets" is masked by earlier rule "*."',
        ),
        (
            config(rule(["*.*"], aescbc()), rule(["*.apps"], aescbc())),
            'error while building transformers: resource "*.apps" is masked by earlier rule "*.*"',
        ),
        (
            config(rule(["secrets"], {"kms": {"name": "v1kms", "endpoint": "unix:///tmp/kms.sock"}})),
            "error while building transformers: KMSv1 is deprecated and will only receive security updates going forward. "
            "Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.",
        ),
        (
            config(
                rule(
                    ["secrets"],
                    {"kms": {"apiVersion": "v3", "name": "foo", "endpoint": "unix:///tmp/k.sock"}},
                )
            ),
            'resources[0].providers[0].kms.apiVersion: Invalid value: "v3": unsupported apiVersion apiVersion for KMS '
            "provider, only v1 and v2 are supported",
        ),
        (
            config(rule(["secrets"], {"kms": {"apiVersion": "v2", "name": "a:b", "endpoint": "tcp://x"}})),
            'resources[0].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain',
        ),
    ],
)
def test_invalid_configs_as_upstream(tmp_path, body, message):
    assert message in load_error(tmp_path, body)


def test_several_errors_in_one_line(tmp_path):
    text = load_error(tmp_path, config(rule(["Secrets"], aescbc(secret="x"))))
    assert text.startswith("error while parsing file: [resources[0].resources[0]: ")
    assert "\n" not in text


def test_file_errors_as_upstream(tmp_path):
    missing = str(tmp_path / "missing.yaml")
    with pytest.raises(
        ec.EncryptionConfigError,
        match=f'error reading encryption provider configuration file "{missing}"'
        f": open {missing}: no such file or directory",
    ):
        ec.load(missing)
    assert load_error(tmp_path, "").endswith("is empty")
    assert (
        'no kind "EncryptionConfigurations" is registered for version "apiserver.config.k8s.io/v1"'
        in load_error(tmp_path, {**config(rule(["secrets"], aescbc())), "kind": "EncryptionConfigurations"})
    )
    typo = config(rule(["secrets"], {"aescbc": {"keys": [{"name": "k", "secret": KEY}], "pandas": 1}}))
    assert 'strict decoding error: unknown field "resources[0].providers[0].aescbc.pandas"' in load_error(
        tmp_path, typo
    )
    assert load_error(tmp_path, "kind: [").startswith(
        "error while parsing file: error decoding encryption provider"
    )


def test_reload_keeps_the_old_configuration_on_a_bad_file(tmp_path, caplog):
    from kube_apiserver.storage.value.keys import KeyTransformers
    from kube_apiserver.storage.value.metrics import ConfigMetrics
    from kube_apiserver.storage.value.reload import ConfigReloader

    path = write(tmp_path, config(rule(["secrets"], aescbc("key1"))))
    first = ec.load(path, reload=True)
    target = KeyTransformers(first, {})
    metrics = ConfigMetrics("apiserver-x")
    reloader = ConfigReloader(path, [target], first.content_hash, None, metrics)
    assert not reloader.check()  # unchanged
    write(tmp_path, config(rule(["secrets"], aescbc("key1", secret="bad"))))
    with caplog.at_level("ERROR", logger="kube_apiserver"):
        assert not reloader.check()
        assert not reloader.check()  # the same bad content: said once
    assert target.config is first
    errors = [
        r.getMessage() for r in caplog.records if "previous configuration stays in force" in r.getMessage()
    ]
    assert len(errors) == 1 and "secrets must be base64 encoded" in errors[0]
    write(tmp_path, config(rule(["secrets"], aescbc("key2"))))
    assert reloader.check()
    assert target.config is not first and ("", "secrets") in target.config.transformers
    assert metrics.reloads == {"failure": 1, "success": 1}
