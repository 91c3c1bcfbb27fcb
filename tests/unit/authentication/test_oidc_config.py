"""AuthenticationConfiguration loading and validation, and the --oidc-* / --authentication-config flags."""

from __future__ import annotations

import pytest
from oidc_helpers import load_config

from kube_apiserver.authentication.oidc import ConfigError, load
from kube_apiserver.cmd.options import ServerRunOptions

HEAD = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"


def errors_of(body: str, disallowed: list[str] | None = None) -> list[str]:
    return load_config(HEAD + body, disallowed)[1]


def test_issuer_and_audience_rules():
    assert errors_of("jwt:\n- issuer: {url: 'http://x.example.com?a=b', audiences: []}\n"
                     "  claimMappings: {username: {claim: sub, prefix: ''}}\n") == [
        'jwt[0].issuer.url: Invalid value: "http://x.example.com?a=b": URL scheme must be https',
        'jwt[0].issuer.url: Invalid value: "http://x.example.com?a=b": URL must not contain a query',
        "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
    ]
    assert errors_of("jwt:\n- issuer: {url: 'https://sa.example.com', audiences: [a, a], "
                     "discoveryURL: 'https://sa.example.com/'}\n  claimMappings: {username: {claim: sub}}\n",
                     ["https://sa.example.com"]) == [
        'jwt[0].issuer.url: Invalid value: "https://sa.example.com": URL must not overlap with disallowed '
        "issuers: [https://sa.example.com]",
        'jwt[0].issuer.discoveryURL: Invalid value: "https://sa.example.com/": discoveryURL must be different '
        "from URL",
        'jwt[0].issuer.audiences[1]: Duplicate value: "a"',
        'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple '
        "audiences",
        "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set "
        "to an empty string to disable prefixing",
    ]


def test_mapping_and_rule_rules():
    errors = errors_of("""jwt:
- issuer: {url: 'https://a.example.com', audiences: [a]}
  claimValidationRules: [{claim: x, expression: 'true'}, {expression: 'claims.x ==', message: m}]
  claimMappings:
    username: {expression: 'claims.email', prefix: 'p:'}
    extra: [{key: Example.com/Key, valueExpression: 'x'}, {key: kubernetes.io/x, valueExpression: "'a'"}]
  userValidationRules: [{expression: ''}]
- issuer: {url: 'https://a.example.com', audiences: [a]}
  claimMappings: {username: {claim: sub, prefix: ''}}
anonymous: {enabled: false, conditions: [{path: /livez}]}
""")
    assert errors[0] == 'jwt[0].claimValidationRules[0]: Invalid value: "x": claim and expression can\'t both be set'
    assert errors[1].startswith('jwt[0].claimValidationRules[1].expression: Invalid value: "claims.x ==": '
                                "compilation failed: ERROR: <input>:1:")
    assert errors[3].startswith('jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com": a lowercase RFC 1123')
    assert errors[2:3] + errors[4:] == [
        'jwt[0].claimMappings.username.prefix: Invalid value: "p:": may not be specified when expression is set',
        'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com/Key": must be lowercase',
        "jwt[0].claimMappings.extra[0].valueExpression: Invalid value: \"x\": compilation failed: ERROR: <input>:1:1: "
        "undeclared reference to 'x' (in container '')\n | x\n | ^",
        'jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their '
        "subdomains are reserved for Kubernetes use",
        'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used '
        "in claimMappings.username.expression or claimMappings.extra[*].valueExpression or "
        "claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
        "jwt[0].userValidationRules[0].expression: Required value",
        'jwt[1].issuer.url: Duplicate value: "https://a.example.com"',
        'anonymous.conditions: Invalid value: [{"Path":"/livez"}]: enabled should be set to true when conditions '
        "are defined",
    ]
    verified = ("jwt:\n- issuer: {url: 'https://a.example.com', audiences: [a]}\n  claimMappings:\n"
                "    username: {expression: \"claims.email_verified ? claims.email : ''\"}\n")
    assert errors_of(verified) == []


def test_loading_is_strict():
    with pytest.raises(ConfigError, match="empty config data"):
        load(b"")
    with pytest.raises(ConfigError, match='no kind "AuthenticationConfiguration" is registered for version "v2"'):
        load(b"apiVersion: v2\nkind: AuthenticationConfiguration\n")
    with pytest.raises(ConfigError, match='strict decoding error: unknown field "jwt\\[0\\].issuer.urll"'):
        load((HEAD + "jwt: [{issuer: {urll: x}}]\n").encode())
    assert load(b'{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration"}').jwt == []


def validate(args: list[str], tmp_path) -> list[str]:
    opts = ServerRunOptions.parse(["--data-dir", str(tmp_path), *args])
    return [e for e in opts.complete().validate() if "oidc" in e or "authentication" in e or "anonymous" in e]


def test_flags(tmp_path):
    config = tmp_path / "authn.yaml"
    config.write_text(HEAD + "anonymous: {enabled: true, conditions: [{path: /livez}]}\n")
    assert validate(["--oidc-issuer-url", "https://a.example.com"], tmp_path) == [
        "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"]
    assert validate(["--oidc-issuer-url", "http://a.example.com", "--oidc-client-id", "c"], tmp_path) == [
        'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://a.example.com": URL '
        "scheme must be https"]
    assert validate(["--oidc-issuer-url", "https://a.example.com", "--oidc-client-id", "c",
                     "--oidc-signing-algs", "RS256,HS256"], tmp_path) == ['oidc: unsupported signing alg: "HS256"']
    assert validate(["--authentication-config", str(config), "--oidc-client-id", "c"], tmp_path) == [
        "authentication-config file and oidc-* flags are mutually exclusive"]
    assert validate(["--authentication-config", str(config), "--anonymous-auth=false"], tmp_path) == [
        "anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in "
        "authentication configuration file"]
    assert validate(["--authentication-config", str(tmp_path / "missing.yaml")], tmp_path) == [
        f'failed to load authentication configuration from file "{tmp_path}/missing.yaml": open '
        f"{tmp_path}/missing.yaml: no such file or directory"]
    assert validate(["--authentication-config", str(config)], tmp_path) == []


def test_flag_username_prefix_defaults(tmp_path):
    def username_prefix(*args: str) -> str | None:
        opts = ServerRunOptions.parse(["--data-dir", str(tmp_path), "--oidc-issuer-url", "https://a.example.com",
                                       "--oidc-client-id", "c", *args])
        return opts.authentication.oidc.configuration().jwt[0].claim_mappings.username.prefix

    assert username_prefix() == "https://a.example.com#"  # not email: the issuer URL
    assert username_prefix("--oidc-username-claim", "email") == ""
    assert username_prefix("--oidc-username-prefix", "-") == ""
    assert username_prefix("--oidc-username-prefix", "corp:") == "corp:"
    opts = ServerRunOptions.parse(["--oidc-required-claim", "hd=example.com,x", "--oidc-required-claim", "a=b"])
    assert opts.authentication.oidc.required_claims == {"hd": "example.com,x", "a": "b"}
