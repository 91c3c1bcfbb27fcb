"""Authentication flags (k8s.io/kubernetes/pkg/kubeapiserver/options/authentication.go, the subset this
server implements: anonymous requests, static token file, client certificates, service account tokens)."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kube_apiserver import logs
from kube_apiserver.apimachinery.field import aggregate_message
from kube_apiserver.apimachinery.goduration import format_duration
from kube_apiserver.apimachinery.gostrconv import quote as go_quote
from kube_apiserver.cli import values
from kube_apiserver.cli.flagset import Flag, FlagSet
from kube_apiserver.cli.gofile import read_error
from kube_apiserver.lazyimport import lazy_import
from kube_apiserver.server import certs
from kube_apiserver.serviceaccount import keys
from kube_apiserver.serviceaccount.claims import WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
from kube_apiserver.serviceaccount.issuer import TokenConfig
from kube_apiserver.serviceaccount.jwt import TokenGenerator

if TYPE_CHECKING:
    from kube_apiserver.authentication import oidc
else:
    oidc = lazy_import("kube_apiserver.authentication.oidc")  # its authenticator and CEL: only with a JWT one

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"  # our choice: kube-apiserver has none
MAX_EXPIRATION_BOUNDS = (3600.0, float(1 << 32))


@dataclass
class ServiceAccountAuthenticationOptions:
    """ServiceAccountAuthenticationOptions. With no key given, a signing key is generated under the data
    dir (<data-dir>/pki/sa.key) and verifies too; a signing key alone verifies the tokens it signs."""

    issuers: list[str] = field(default_factory=lambda: [DEFAULT_ISSUER])
    key_files: list[str] = field(default_factory=list)
    signing_key_file: str = ""
    max_expiration: float = 0.0
    extend_expiration: bool = True
    api_audiences: list[str] = field(default_factory=list)

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_array_var(self, "issuers", "service-account-issuer", _ISSUER_HELP)
        fs.string_array_var(self, "key_files", "service-account-key-file", _KEY_FILE_HELP)
        fs.string_var(self, "signing_key_file", "service-account-signing-key-file", _SIGNING_KEY_HELP)
        fs.duration_var(self, "max_expiration", "service-account-max-token-expiration", _MAX_EXPIRATION_HELP)
        fs.bool_var(self, "extend_expiration", "service-account-extend-token-expiration", _EXTEND_HELP)
        fs.string_slice_var(self, "api_audiences", "api-audiences", _API_AUDIENCES_HELP)

    def complete(self, data_dir: str) -> None:
        if not self.signing_key_file and not self.key_files:
            self.signing_key_file = keys.ensure_signing_key(os.path.join(data_dir, "pki"))
        if self.signing_key_file and not self.key_files:
            self.key_files = [self.signing_key_file]
        if not self.api_audiences and self.issuers:
            self.api_audiences = [self.issuers[0]]

    def validate(self) -> list[str]:
        errors = _issuer_errors(self.issuers)
        if self.max_expiration and not MAX_EXPIRATION_BOUNDS[0] <= self.max_expiration <= MAX_EXPIRATION_BOUNDS[1]:
            errors.append("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds")
        for path in self.key_files:
            try:
                keys.load_public_keys(path)
            except (OSError, ValueError) as err:
                errors.append(f"failed to parse service-account-key-file {go_quote(path)}: {err}")
        if self.signing_key_file:
            try:
                keys.load_private_key(self.signing_key_file)
            except (OSError, ValueError) as err:
                errors.append(f"failed to parse service-account-issuer-key-file: {err}")
        return errors

    def token_config(self) -> TokenConfig:
        """The issuer's configuration, keys loaded (validate() has passed)."""
        public_keys = [key for path in self.key_files for key in keys.load_public_keys(path)]
        generator = None
        if self.signing_key_file and self.issuers:
            generator = TokenGenerator(self.issuers[0], keys.load_private_key(self.signing_key_file))
        if self.extend_expiration and 0 < self.max_expiration < WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS:
            logs.warning("service-account-extend-token-expiration is true, in order to correctly trigger safe "
                         "transition logic, service-account-max-token-expiration must be set longer than %d "
                         "seconds (currently %s)", WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
                         format_duration(self.max_expiration))
        return TokenConfig(list(self.issuers), list(self.api_audiences), public_keys, generator,
                           int(self.max_expiration), self.extend_expiration)


def _issuer_errors(issuers: list[str]) -> list[str]:
    errors: list[str] = []
    if not issuers:
        errors.append("service-account-issuer is a required flag")
    seen: set[str] = set()
    for issuer in issuers:
        if not issuer:
            errors.append("service-account-issuer should not be an empty string")
        elif issuer in seen:
            errors.append(f"service-account-issuer {go_quote(issuer)} is already specified")
        seen.add(issuer)
    return errors


@dataclass
class RequestHeaderAuthenticationOptions:
    """--requestheader-*: kube-apiserver sets no header names by default (kubeadm passes X-Remote-User,
    X-Remote-Group and X-Remote-Extra-)."""

    client_ca_file: str = ""
    allowed_names: list[str] = field(default_factory=list)
    username_headers: list[str] = field(default_factory=list)
    uid_headers: list[str] = field(default_factory=list)
    group_headers: list[str] = field(default_factory=list)
    extra_headers_prefix: list[str] = field(default_factory=list)

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_slice_var(self, "username_headers", "requestheader-username-headers",
                            "List of request headers to inspect for usernames. X-Remote-User is common.")
        fs.string_slice_var(self, "uid_headers", "requestheader-uid-headers",
                            "List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the "
                            "RemoteRequestHeaderUID feature to be enabled.")
        fs.string_slice_var(self, "group_headers", "requestheader-group-headers",
                            "List of request headers to inspect for groups. X-Remote-Group is suggested.")
        fs.string_slice_var(self, "extra_headers_prefix", "requestheader-extra-headers-prefix",
                            "List of request header prefixes to inspect. X-Remote-Extra- is suggested.")
        fs.string_var(self, "client_ca_file", "requestheader-client-ca-file",
                      "Root certificate bundle to use to verify client certificates on incoming requests before "
                      "trusting usernames in headers specified by --requestheader-username-headers. WARNING: "
                      "generally do not depend on authorization being already done for incoming requests.")
        fs.string_slice_var(self, "allowed_names", "requestheader-allowed-names",
                            "List of client certificate common names to allow to provide usernames in headers "
                            "specified by --requestheader-username-headers. If empty, any client certificate "
                            "validated by the authorities in --requestheader-client-ca-file is allowed.")

    def validate(self) -> list[str]:
        errors = [error for flag, values in (("requestheader-username-headers", self.username_headers),
                                             ("requestheader-uid-headers", self.uid_headers),
                                             ("requestheader-group-headers", self.group_headers),
                                             ("requestheader-extra-headers-prefix", self.extra_headers_prefix),
                                             ("requestheader-allowed-names", self.allowed_names))
                  if (error := _whitespace_only(flag, values))]
        if self.client_ca_file:
            error = certs.ca_bundle_error(self.client_ca_file)
            if error:
                errors.append(f"unable to load request-header-client-ca-file: {error}")
        return errors


def _whitespace_only(flag: str, values: list[str]) -> str:
    """checkForWhiteSpaceOnly."""
    if any(not value.strip() for value in values):
        return f"empty value in {go_quote(flag)}"
    return ""


@dataclass
class BuiltInAuthenticationOptions:
    anonymous: bool = True
    client_ca_file: str = ""
    token_auth_file: str = ""
    anonymous_public_paths_only: bool = False
    service_accounts: ServiceAccountAuthenticationOptions = field(default_factory=ServiceAccountAuthenticationOptions)
    request_header: RequestHeaderAuthenticationOptions = field(default_factory=RequestHeaderAuthenticationOptions)
    enable_bootstrap_token_auth: bool = False
    # --authentication-token-webhook-*: TokenReviews of the tokens no local authenticator knows.
    token_webhook_config_file: str = ""
    token_webhook_version: str = "v1beta1"
    token_webhook_cache_ttl: float = 120.0
    # Who the aggregator is when it proxies to an aggregated server (kube-apiserver's --proxy-client-*).
    proxy_client_cert_file: str = ""
    proxy_client_key_file: str = ""
    oidc: OIDCAuthenticationOptions = field(default_factory=lambda: OIDCAuthenticationOptions())

    def add_flags(self, fs: FlagSet) -> None:
        fs.bool_var(self, "anonymous", "anonymous-auth", _ANONYMOUS_HELP)
        fs.string_var(self, "client_ca_file", "client-ca-file", _CLIENT_CA_HELP)
        fs.string_var(
            self,
            "token_auth_file",
            "token-auth-file",
            "If set, the file that will be used to secure the secure port of the API server via token "
            "authentication.",
        )
        self.service_accounts.add_flags(fs)
        self.request_header.add_flags(fs)
        fs.bool_var(self, "enable_bootstrap_token_auth", "enable-bootstrap-token-auth",
                    "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace "
                    "to be used for TLS bootstrapping authentication.")
        fs.string_var(self, "token_webhook_config_file", "authentication-token-webhook-config-file",
                      "File with webhook configuration for token authentication in kubeconfig format. The API server "
                      "will query the remote service to determine authentication for bearer tokens.")
        fs.string_var(self, "token_webhook_version", "authentication-token-webhook-version",
                      "The API version of the authentication.k8s.io TokenReview to send to and expect from the "
                      "webhook.")
        fs.duration_var(self, "token_webhook_cache_ttl", "authentication-token-webhook-cache-ttl",
                        "The duration to cache responses from the webhook token authenticator.")
        fs.string_var(self, "proxy_client_cert_file", "proxy-client-cert-file", _PROXY_CLIENT_CERT_HELP)
        fs.string_var(self, "proxy_client_key_file", "proxy-client-key-file", _PROXY_CLIENT_KEY_HELP)
        self.oidc.add_flags(fs)

    def complete(self, data_dir: str) -> None:
        """Generates (or reuses) the service account signing key when none is given; raises OSError."""
        self.service_accounts.complete(data_dir)

    def apply_authorization(self, authorization_modes: list[str]) -> None:
        """kube-apiserver turns anonymous auth off when the AlwaysAllow authorizer is in use, since it would
        grant everything to everyone. We keep it on only for the paths Kubernetes leaves open (health and
        version, as AuthenticationConfiguration's anonymous conditions do), so probes still work."""
        self.anonymous_public_paths_only = "AlwaysAllow" in authorization_modes
        if self.anonymous and self.anonymous_public_paths_only:
            logs.info_v(1, "AlwaysAllow authorizer: anonymous requests are limited to /healthz, /livez, "
                           "/readyz and /version")

    def validate(self) -> list[str]:
        errors: list[str] = []
        if self.token_auth_file:
            error = read_error(self.token_auth_file)
            if error:
                errors.append(f"unable to load --token-auth-file: {error}")
        if self.client_ca_file:
            error = certs.ca_bundle_error(self.client_ca_file)
            if error:
                errors.append(f"unable to load client CA file: {error}")
        errors += self._proxy_client_errors()
        if self.token_webhook_version not in ("v1", "v1beta1"):
            errors.append(f'unsupported authentication-token-webhook-version "{self.token_webhook_version}"')
        errors += self.oidc.validate(self.service_accounts.issuers)
        return errors + self.service_accounts.validate() + self.request_header.validate()

    def proxy_client(self) -> tuple[str, str] | None:
        if self.proxy_client_cert_file and self.proxy_client_key_file:
            return self.proxy_client_cert_file, self.proxy_client_key_file
        return None

    def _proxy_client_errors(self) -> list[str]:
        pair = self.proxy_client()
        if pair is None:
            return []
        try:
            ssl.create_default_context().load_cert_chain(*pair)
        except (OSError, ssl.SSLError) as err:
            return [f"failed to load proxy client certificate and key: {err}"]
        return []


_PROXY_CLIENT_CERT_HELP = (
    "Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out "
    "during a request. This includes proxying requests to a user api-server and calling out to webhook admission "
    "plugins. It is expected that this cert includes a signature from the CA in the --requestheader-client-ca-file "
    "flag. That CA is published in the 'extension-apiserver-authentication' configmap in the kube-system "
    "namespace. Components receiving calls from kube-aggregator should use that CA to perform their half of the "
    "mutual TLS verification."
)
_PROXY_CLIENT_KEY_HELP = (
    "Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when "
    "it must call out during a request. This includes proxying requests to a user api-server and calling out to "
    "webhook admission plugins."
)
_ANONYMOUS_HELP = (
    "Enables anonymous requests to the secure port of the API server. Requests that are not rejected by "
    "another authentication method are treated as anonymous requests. Anonymous requests have a username "
    "of system:anonymous, and a group name of system:unauthenticated."
)
_CLIENT_CA_HELP = (
    "If set, any request presenting a client certificate signed by one of the authorities in the "
    "client-ca-file is authenticated with an identity corresponding to the CommonName of the client "
    "certificate."
)
_ISSUER_HELP = (
    'Identifier of the service account token issuer. The issuer will assert this identifier in "iss" claim of '
    "issued tokens. This value is a string or URI. If this option is not a valid URI per the OpenID Discovery "
    "1.0 spec, the ServiceAccountIssuerDiscovery feature will remain disabled, even if the feature gate is set "
    "to true. It is highly recommended that this value comply with the OpenID spec: "
    "https://openid.net/specs/openid-connect-discovery-1_0.html. In practice, this means that "
    "service-account-issuer must be an https URL. It is also highly recommended that this URL be capable of "
    "serving OpenID discovery documents at {service-account-issuer}/.well-known/openid-configuration. When this "
    "flag is specified multiple times, the first is used to generate tokens and all are used to determine which "
    "issuers are accepted."
)
_KEY_FILE_HELP = (
    "File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount "
    "tokens. The specified file can contain multiple keys, and the flag can be specified multiple times with "
    "different files. If unspecified, --tls-private-key-file is used. Must be specified when "
    "--service-account-signing-key-file is provided"
)
_SIGNING_KEY_HELP = (
    "Path to the file that contains the current private key of the service account token issuer. The issuer "
    "will sign issued ID tokens with this private key."
)
_MAX_EXPIRATION_HELP = (
    "The maximum validity duration of a token created by the service account token issuer. If an otherwise "
    "valid TokenRequest with a validity duration larger than this value is requested, a token will be issued "
    "with a validity duration of this value."
)
_EXTEND_HELP = (
    "Turns on projected service account expiration extension during token generation, which helps safe "
    "transition from legacy token to bound service account token feature. If this flag is enabled, admission "
    "injected tokens would be extended up to 1 year to prevent unexpected failure during transition, ignoring "
    "value of service-account-max-token-expiration."
)
_API_AUDIENCES_HELP = (
    "Identifiers of the API. The service account token authenticator will validate that tokens used against "
    "the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured "
    "and this flag is not, this field defaults to a single element list containing the issuer URL."
)


class _RequiredClaimValue(values.Value):
    """component-base MapStringStringNoSplit: one key=value per flag (the value may hold commas)."""

    type_name = "mapStringString"

    def convert(self, raw: str) -> dict[str, str]:
        key, sep, value = raw.partition("=")
        if not sep:
            raise ValueError(f"malformed pair, expect string=string: {raw}")
        return {**(self.get() if self.set_once else {}), key.strip(): value.strip()}

    def render(self, value: Any) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))


@dataclass
class OIDCAuthenticationOptions:
    """--oidc-* and --authentication-config (kube-apiserver's OIDCAuthenticationOptions and
    AuthenticationConfigFile): JWT issuers, and the anonymous authenticator's conditions."""

    issuer_url: str = ""
    client_id: str = ""
    ca_file: str = ""
    username_claim: str = "sub"
    username_prefix: str = ""
    groups_claim: str = ""
    groups_prefix: str = ""
    signing_algs: list[str] = field(default_factory=lambda: ["RS256"])
    required_claims: dict[str, str] = field(default_factory=dict)
    config_file: str = ""
    _flags: list[Flag] = field(default_factory=list, repr=False, compare=False)
    _anonymous_flag: Flag | None = field(default=None, repr=False, compare=False)

    def add_flags(self, fs: FlagSet) -> None:
        self._anonymous_flag = fs.flags.get("anonymous-auth")
        fs.string_var(self, "config_file", "authentication-config", _AUTHENTICATION_CONFIG_HELP)
        self._flags = [
            fs.string_var(self, "issuer_url", "oidc-issuer-url", _OIDC_ISSUER_HELP),
            fs.string_var(self, "client_id", "oidc-client-id", "The client ID for the OpenID Connect client, must "
                                                                 "be set if oidc-issuer-url is set."),
            fs.string_var(self, "ca_file", "oidc-ca-file", _OIDC_CA_HELP),
            fs.string_var(self, "username_claim", "oidc-username-claim", _OIDC_USERNAME_CLAIM_HELP),
            fs.string_var(self, "username_prefix", "oidc-username-prefix", _OIDC_USERNAME_PREFIX_HELP),
            fs.string_var(self, "groups_claim", "oidc-groups-claim", _OIDC_GROUPS_CLAIM_HELP),
            fs.string_var(self, "groups_prefix", "oidc-groups-prefix", "If provided, all groups will be prefixed "
                          "with this value to prevent conflicts with other authentication strategies."),
            fs.string_slice_var(self, "signing_algs", "oidc-signing-algs", _OIDC_SIGNING_ALGS_HELP),
            fs.var(_RequiredClaimValue(self, "required_claims"), "oidc-required-claim", _OIDC_REQUIRED_CLAIM_HELP),
        ]

    @property
    def flags_set(self) -> bool:
        return any(flag.changed or flag.value.set_once for flag in self._flags)

    def _anonymous_flag_set(self) -> bool:
        flag = self._anonymous_flag
        return flag is not None and (flag.changed or flag.value.set_once)

    def validate(self, service_account_issuers: list[str]) -> list[str]:
        if not self.config_file and not self.flags_set:
            return []  # no JWT authenticator to check (nor the OIDC machinery to import for it)
        if self.config_file:
            if self.flags_set:
                return ["authentication-config file and oidc-* flags are mutually exclusive"]
        elif self.flags_set and (not self.issuer_url or not self.client_id):
            return ["oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"]
        try:
            config = self.configuration()
        except (oidc.ConfigError, OSError) as err:
            return [str(err)]
        if config.anonymous is not None and self._anonymous_flag_set():
            return ["anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in "
                    "authentication configuration file"]
        errors = [str(err) for err in oidc.validate(config, service_account_issuers)]
        if errors:
            return [f"invalid authentication configuration: {aggregate_message(errors)}"]
        return [f"oidc: unsupported signing alg: {go_quote(alg)}" for alg in self.signing_algs
                if alg not in oidc.ALL_SIGNING_ALGS]

    def configuration(self) -> oidc.AuthenticationConfiguration:
        """The file's configuration, or the one the --oidc-* flags describe (not validated yet)."""
        if self.config_file:
            return oidc.load_file(self.config_file)
        config = oidc.AuthenticationConfiguration()
        if self.issuer_url and self.client_id:
            config.jwt.append(self._flags_authenticator())
        return config

    def _flags_authenticator(self) -> oidc.JWTAuthenticator:
        prefix = self.username_prefix
        if not prefix and self.username_claim != "email":
            prefix = self.issuer_url + "#"  # kubernetes#31380: claims other than email are prefixed by the issuer
        if prefix == "-":
            prefix = ""
        jwt = oidc.JWTAuthenticator()
        jwt.issuer.url, jwt.issuer.audiences = self.issuer_url, [self.client_id]
        jwt.claim_mappings.username.claim, jwt.claim_mappings.username.prefix = self.username_claim, prefix
        if self.groups_claim:
            jwt.claim_mappings.groups.claim, jwt.claim_mappings.groups.prefix = self.groups_claim, self.groups_prefix
        if self.ca_file:
            with open(self.ca_file) as f:
                jwt.issuer.certificate_authority = f.read()
        jwt.claim_validation_rules = [oidc.config.ValidationRule(claim=k, required_value=v)
                                      for k, v in self.required_claims.items()]
        return jwt

    def signing_algorithms(self) -> tuple[str, ...]:
        """All known algorithms with a configuration file (upstream: any that matches a key), else the flag's."""
        return oidc.ALL_SIGNING_ALGS if self.config_file else tuple(self.signing_algs)

    def authenticators(self, service_account_issuers: list[str],
                       api_audiences: tuple[str, ...]) -> list[Any]:
        """The JWT authenticators (validate() has passed: validating again compiles the expressions); those
        of a configuration file follow its changes."""
        algs = self.signing_algorithms()
        if self.config_file:
            def build(config: oidc.AuthenticationConfiguration) -> list[oidc.OIDCAuthenticator]:
                return oidc.new_authenticators(config, algs, api_audiences)

            return [oidc.ReloadingJWTAuthenticators(self.config_file, build, list(service_account_issuers))]
        config = self.configuration()
        oidc.validate(config, service_account_issuers)
        return oidc.new_authenticators(config, algs, api_audiences)

    def anonymous_paths(self) -> tuple[bool, list[str] | None] | None:
        """The configuration file's anonymous authenticator (enabled, its paths or None for all), if it has one."""
        if not self.config_file:
            return None
        anonymous = oidc.load_file(self.config_file).anonymous
        if anonymous is None:
            return None
        return anonymous.enabled, (list(anonymous.paths) or None)


_AUTHENTICATION_CONFIG_HELP = (
    "File with Authentication Configuration to configure the JWT Token authenticator or the anonymous "
    "authenticator. Requires the StructuredAuthenticationConfiguration feature gate. This flag is mutually "
    "exclusive with the --oidc-* flags if the file configures the JWT Token authenticator. This flag is mutually "
    "exclusive with --anonymous-auth if the file configures the Anonymous authenticator."
)
_OIDC_ISSUER_HELP = (
    "The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC "
    "JSON Web Token (JWT)."
)
_OIDC_CA_HELP = (
    "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, "
    "otherwise the host's root CA set will be used."
)
_OIDC_USERNAME_CLAIM_HELP = (
    "The OpenID claim to use as the user name. Note that claims other than the default ('sub') is not guaranteed "
    "to be unique and immutable. This flag is experimental, please see the authentication documentation for "
    "further details."
)
_OIDC_USERNAME_PREFIX_HELP = (
    "If provided, all usernames will be prefixed with this value. If not provided, username claims other than "
    "'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'."
)
_OIDC_GROUPS_CLAIM_HELP = (
    "If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is "
    "expected to be a string or array of strings. This flag is experimental, please see the authentication "
    "documentation for further details."
)
_OIDC_SIGNING_ALGS_HELP = (
    "Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a supported 'alg' header values "
    "are: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512. Values are defined by RFC 7518 "
    "https://tools.ietf.org/html/rfc7518#section-3.1."
)
_OIDC_REQUIRED_CLAIM_HELP = (
    "A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present "
    "in the ID Token with a matching value. Repeat this flag to specify multiple claims."
)
