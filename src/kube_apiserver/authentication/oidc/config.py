"""AuthenticationConfiguration (apiserver.config.k8s.io/v1, --authentication-config): its types, loading
(YAML or JSON, strict as kube-apiserver's decoder) and validation with kube-apiserver's messages
(k8s.io/apiserver/pkg/apis/apiserver/validation). The expressions are compiled while validating: a
validated configuration carries its programs."""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ... import cel
from ...apimachinery import configdoc
from ...apimachinery import field as fld
from ...apimachinery.validation import is_domain_prefixed_path

VERSIONS = ("v1", "v1beta1", "v1alpha1")
KIND = "AuthenticationConfiguration"
MAX_JWT_AUTHENTICATORS = 64
MATCH_ANY = "MatchAny"
CLAIMS_VARIABLES = ("claims",)
USER_VARIABLES = ("user",)
EMAIL_VERIFIED_MESSAGE = (
    "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression"
    " or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression")


class ConfigError(ValueError):
    pass


@dataclass
class Issuer:
    url: str = ""
    discovery_url: str = ""
    certificate_authority: str = ""
    audiences: list[str] = field(default_factory=list)
    audience_match_policy: str = ""


@dataclass
class PrefixedClaimOrExpression:
    claim: str = ""
    prefix: str | None = None
    expression: str = ""
    program: cel.Program | None = None


@dataclass
class ClaimOrExpression:
    claim: str = ""
    expression: str = ""
    program: cel.Program | None = None


@dataclass
class ExtraMapping:
    key: str = ""
    value_expression: str = ""
    program: cel.Program | None = None


@dataclass
class ClaimMappings:
    username: PrefixedClaimOrExpression = field(default_factory=PrefixedClaimOrExpression)
    groups: PrefixedClaimOrExpression = field(default_factory=PrefixedClaimOrExpression)
    uid: ClaimOrExpression = field(default_factory=ClaimOrExpression)
    extra: list[ExtraMapping] = field(default_factory=list)


@dataclass
class ValidationRule:
    """A claimValidationRule (claim/requiredValue or expression/message) or a userValidationRule."""

    claim: str = ""
    required_value: str = ""
    expression: str = ""
    message: str = ""
    program: cel.Program | None = None


@dataclass
class JWTAuthenticator:
    issuer: Issuer = field(default_factory=Issuer)
    claim_validation_rules: list[ValidationRule] = field(default_factory=list)
    claim_mappings: ClaimMappings = field(default_factory=ClaimMappings)
    user_validation_rules: list[ValidationRule] = field(default_factory=list)


@dataclass
class Anonymous:
    enabled: bool = False
    paths: list[str] = field(default_factory=list)


@dataclass
class AuthenticationConfiguration:
    jwt: list[JWTAuthenticator] = field(default_factory=list)
    anonymous: Anonymous | None = None


# --- loading ---------------------------------------------------------------------------------------

def load_file(path: str) -> AuthenticationConfiguration:
    """The file's configuration; raises ConfigError worded as kube-apiserver's start failure."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        return load(data)
    except (OSError, ConfigError) as err:
        text = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        if isinstance(err, OSError):
            text = f"open {path}: {text.lower()}"
        raise ConfigError(f'failed to load authentication configuration from file "{path}": {text}') from None


def load(data: bytes) -> AuthenticationConfiguration:
    try:
        raw = configdoc.decode(data, KIND, VERSIONS)
    except configdoc.ConfigDocumentError as err:
        raise ConfigError(str(err)) from None
    reader = _Reader()
    config = reader.configuration(raw)
    if reader.unknown:
        raise ConfigError("strict decoding error: " + ", ".join(f'unknown field "{name}"' for name in reader.unknown))
    return config


class _Reader:
    """Reads the decoded document into the types, noting unknown fields as the strict decoder does."""

    def __init__(self) -> None:
        self.unknown: list[str] = []

    def _fields(self, raw: Any, path: str, known: tuple[str, ...]) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise ConfigError(f"json: cannot unmarshal {type(raw).__name__} into Go struct field {path or KIND}")
        self.unknown += [f"{path}.{k}" if path else str(k) for k in raw if k not in known]
        return raw

    def configuration(self, raw: dict[str, Any]) -> AuthenticationConfiguration:
        raw = self._fields(raw, "", ("apiVersion", "kind", "jwt", "anonymous"))
        jwt = [self.jwt(item, f"jwt[{i}]") for i, item in enumerate(_list(raw.get("jwt"), "jwt"))]
        anonymous = None
        if raw.get("anonymous") is not None:
            a = self._fields(raw["anonymous"], "anonymous", ("enabled", "conditions"))
            paths = [str(self._fields(c, f"anonymous.conditions[{i}]", ("path",)).get("path") or "")
                     for i, c in enumerate(_list(a.get("conditions"), "anonymous.conditions"))]
            anonymous = Anonymous(bool(a.get("enabled")), paths)
        return AuthenticationConfiguration(jwt, anonymous)

    def jwt(self, raw: Any, path: str) -> JWTAuthenticator:
        raw = self._fields(raw, path, ("issuer", "claimValidationRules", "claimMappings", "userValidationRules"))
        i = self._fields(raw.get("issuer"), f"{path}.issuer",
                         ("url", "discoveryURL", "certificateAuthority", "audiences", "audienceMatchPolicy",
                          "egressSelectorType"))
        issuer = Issuer(_str(i.get("url")), _str(i.get("discoveryURL")), _str(i.get("certificateAuthority")),
                        [_str(a) for a in _list(i.get("audiences"), "audiences")], _str(i.get("audienceMatchPolicy")))
        rules = [self.rule(r, f"{path}.claimValidationRules[{n}]", ("claim", "requiredValue", "expression", "message"))
                 for n, r in enumerate(_list(raw.get("claimValidationRules"), "claimValidationRules"))]
        user_rules = [self.rule(r, f"{path}.userValidationRules[{n}]", ("expression", "message"))
                      for n, r in enumerate(_list(raw.get("userValidationRules"), "userValidationRules"))]
        return JWTAuthenticator(issuer, rules, self.mappings(raw.get("claimMappings"), f"{path}.claimMappings"),
                                user_rules)

    def rule(self, raw: Any, path: str, known: tuple[str, ...]) -> ValidationRule:
        r = self._fields(raw, path, known)
        return ValidationRule(_str(r.get("claim")), _str(r.get("requiredValue")), _str(r.get("expression")),
                              _str(r.get("message")))

    def mappings(self, raw: Any, path: str) -> ClaimMappings:
        m = self._fields(raw, path, ("username", "groups", "uid", "extra"))
        uid = self._fields(m.get("uid"), f"{path}.uid", ("claim", "expression"))
        extra = [self._fields(e, f"{path}.extra[{n}]", ("key", "valueExpression"))
                 for n, e in enumerate(_list(m.get("extra"), "extra"))]
        return ClaimMappings(self.prefixed(m.get("username"), f"{path}.username"),
                             self.prefixed(m.get("groups"), f"{path}.groups"),
                             ClaimOrExpression(_str(uid.get("claim")), _str(uid.get("expression"))),
                             [ExtraMapping(_str(e.get("key")), _str(e.get("valueExpression"))) for e in extra])

    def prefixed(self, raw: Any, path: str) -> PrefixedClaimOrExpression:
        p = self._fields(raw, path, ("claim", "prefix", "expression"))
        prefix = None if p.get("prefix") is None else _str(p.get("prefix"))
        return PrefixedClaimOrExpression(_str(p.get("claim")), prefix, _str(p.get("expression")))


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"json: cannot unmarshal {type(value).__name__} into Go struct field {name} of type []")
    return value


def _str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | dict | list):
        raise ConfigError(f"json: cannot unmarshal {type(value).__name__} into Go value of type string")
    return str(value)


# --- validation ------------------------------------------------------------------------------------

def validate(config: AuthenticationConfiguration, disallowed_issuers: list[str]) -> list[fld.FieldError]:
    """ValidateAuthenticationConfiguration; compiles the expressions into the configuration."""
    root = fld.Path("jwt")
    if len(config.jwt) > MAX_JWT_AUTHENTICATORS:
        return [fld.too_many(root, len(config.jwt), MAX_JWT_AUTHENTICATORS)]
    errors: list[fld.FieldError] = []
    seen_issuers: set[str] = set()
    seen_discovery: set[str] = set()
    for i, authenticator in enumerate(config.jwt):
        path = root.index(i)
        errors += validate_jwt_authenticator(authenticator, path, disallowed_issuers)
        url, discovery = authenticator.issuer.url, authenticator.issuer.discovery_url
        if url in seen_issuers:
            errors.append(fld.duplicate(path.child("issuer", "url"), url))
        seen_issuers.add(url)
        if discovery:
            if discovery in seen_discovery:
                errors.append(fld.duplicate(path.child("issuer", "discoveryURL"), discovery))
            seen_discovery.add(discovery)
    anonymous = config.anonymous
    if anonymous is not None and not anonymous.enabled and anonymous.paths:
        conditions = [{"Path": p} for p in anonymous.paths]
        errors.append(fld.invalid(fld.Path("anonymous", "conditions"), conditions,
                                  "enabled should be set to true when conditions are defined"))
    return errors


def validate_jwt_authenticator(authenticator: JWTAuthenticator, path: fld.Path | None,
                               disallowed_issuers: list[str]) -> list[fld.FieldError]:
    state = _EmailUse()
    errors = _issuer_errors(authenticator.issuer, fld.child_of(path, "issuer"), disallowed_issuers)
    errors += _claim_rule_errors(authenticator.claim_validation_rules, fld.child_of(path, "claimValidationRules"),
                                 state)
    errors += _mapping_errors(authenticator.claim_mappings, fld.child_of(path, "claimMappings"), state)
    errors += _user_rule_errors(authenticator.user_validation_rules, fld.child_of(path, "userValidationRules"))
    return errors


def _issuer_errors(issuer: Issuer, path: fld.Path, disallowed: list[str]) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    if not issuer.url:
        errors.append(fld.required(path.child("url"), ""))
    else:
        errors += _url_errors(issuer.url, path.child("url"), disallowed)
    if issuer.discovery_url:
        if issuer.url and issuer.url.rstrip("/") == issuer.discovery_url.rstrip("/"):
            errors.append(fld.invalid(path.child("discoveryURL"), issuer.discovery_url,
                                      "discoveryURL must be different from URL"))
        errors += _url_errors(issuer.discovery_url, path.child("discoveryURL"), [])
    errors += _audience_errors(issuer, path.child("audiences"), path.child("audienceMatchPolicy"))
    if issuer.certificate_authority:
        try:
            ssl.create_default_context(cadata=issuer.certificate_authority)
        except (ssl.SSLError, ValueError):
            errors.append(fld.invalid(path.child("certificateAuthority"), "<omitted>",
                                      "data does not contain any valid RSA or ECDSA certificates"))
    return errors


def _url_errors(url: str, path: fld.Path, disallowed: list[str]) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    if url in disallowed:
        errors.append(fld.invalid(path, url, "URL must not overlap with disallowed issuers: "
                                             f"[{' '.join(sorted(set(disallowed)))}]"))
    try:
        parts = urlsplit(url)
    except ValueError as err:
        return [*errors, fld.invalid(path, url, f'parse "{url}": {err}')]
    if parts.scheme != "https":
        errors.append(fld.invalid(path, url, "URL scheme must be https"))
    if "@" in parts.netloc:
        errors.append(fld.invalid(path, url, "URL must not contain a username or password"))
    if parts.query:
        errors.append(fld.invalid(path, url, "URL must not contain a query"))
    if parts.fragment:
        errors.append(fld.invalid(path, url, "URL must not contain a fragment"))
    return errors


def _audience_errors(issuer: Issuer, path: fld.Path, policy_path: fld.Path) -> list[fld.FieldError]:
    if not issuer.audiences:
        return [fld.required(path, f"at least one {path} is required")]
    errors: list[fld.FieldError] = []
    seen: set[str] = set()
    for i, audience in enumerate(issuer.audiences):
        if not audience:
            errors.append(fld.required(path.index(i), ""))
        if audience in seen:
            errors.append(fld.duplicate(path.index(i), audience))
        seen.add(audience)
    policy = issuer.audience_match_policy
    if len(issuer.audiences) > 1 and policy != MATCH_ANY:
        errors.append(fld.invalid(policy_path, policy, "audienceMatchPolicy must be MatchAny for multiple audiences"))
    if len(issuer.audiences) == 1 and policy and policy != MATCH_ANY:
        errors.append(fld.invalid(policy_path, policy,
                                  "audienceMatchPolicy must be empty or MatchAny for single audience"))
    return errors


@dataclass
class _EmailUse:
    email: bool = False
    email_verified: bool = False


_EMAIL = re.compile(r"\bclaims\s*(?:\.\s*\??\s*email\b|\[\s*\??\s*['\"]email['\"]\s*\])")
_EMAIL_VERIFIED = re.compile(r"\bclaims\s*(?:\.\s*\??\s*email_verified\b|\[\s*\??\s*['\"]email_verified['\"]\s*\])")


def _compile(expression: str, variables: tuple[str, ...], path: fld.Path,
             errors: list[fld.FieldError]) -> cel.Program | None:
    try:
        return cel.compile(expression, variables)
    except cel.CompileError as err:
        errors.append(fld.invalid(path, expression, str(err)))
        return None


def _claim_rule_errors(rules: list[ValidationRule], path: fld.Path, state: _EmailUse) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    claims: set[str] = set()
    expressions: set[str] = set()
    for i, rule in enumerate(rules):
        at = path.index(i)
        if rule.claim and rule.expression:
            errors.append(fld.invalid(at, rule.claim, "claim and expression can't both be set"))
        elif not rule.claim and not rule.expression:
            errors.append(fld.required(at, "claim or expression is required"))
        elif rule.claim:
            if rule.message:
                errors.append(fld.invalid(at.child("message"), rule.message, "may not be specified when claim is set"))
            if rule.claim in claims:
                errors.append(fld.duplicate(at.child("claim"), rule.claim))
            claims.add(rule.claim)
        else:
            if rule.required_value:
                errors.append(fld.invalid(at.child("requiredValue"), rule.required_value,
                                          "may not be specified when expression is set"))
            if rule.expression in expressions:
                errors.append(fld.duplicate(at.child("expression"), rule.expression))
                continue
            expressions.add(rule.expression)
            rule.program = _compile(rule.expression, CLAIMS_VARIABLES, at.child("expression"), errors)
            state.email_verified |= bool(rule.program and _EMAIL_VERIFIED.search(rule.expression))
    return errors


def _prefixed_errors(mapping: PrefixedClaimOrExpression, path: fld.Path, required: bool) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    if mapping.expression and mapping.claim:
        errors.append(fld.invalid(path, "", "claim and expression can't both be set"))
    elif not mapping.expression and not mapping.claim and required:
        errors.append(fld.required(path, "claim or expression is required"))
    elif mapping.expression:
        if mapping.prefix is not None:
            errors.append(fld.invalid(path.child("prefix"), mapping.prefix, "may not be specified when expression is set"))
        mapping.program = _compile(mapping.expression, CLAIMS_VARIABLES, path.child("expression"), errors)
    elif mapping.claim and mapping.prefix is None:
        errors.append(fld.required(path.child("prefix"), "prefix is required when claim is set. It can be set to an "
                                                         "empty string to disable prefixing"))
    return errors


def _mapping_errors(m: ClaimMappings, path: fld.Path, state: _EmailUse) -> list[fld.FieldError]:
    errors = _prefixed_errors(m.username, path.child("username"), True)
    if m.username.program is not None:
        state.email |= bool(_EMAIL.search(m.username.expression))
        state.email_verified |= bool(_EMAIL_VERIFIED.search(m.username.expression))
    errors += _prefixed_errors(m.groups, path.child("groups"), False)
    if m.uid.claim and m.uid.expression:
        errors.append(fld.invalid(path.child("uid"), "", "claim and expression can't both be set"))
    elif m.uid.expression:
        m.uid.program = _compile(m.uid.expression, CLAIMS_VARIABLES, path.child("uid", "expression"), errors)
    keys: set[str] = set()
    for i, mapping in enumerate(m.extra):
        at = path.child("extra").index(i)
        errors += is_domain_prefixed_path(at.child("key"), mapping.key)
        if mapping.key != mapping.key.lower():
            errors.append(fld.invalid(at.child("key"), mapping.key, "must be lowercase"))
        if _kubernetes_domain(mapping.key):
            errors.append(fld.invalid(at.child("key"), mapping.key,
                                      "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"))
        if mapping.key in keys:
            errors.append(fld.duplicate(at.child("key"), mapping.key))
            continue
        keys.add(mapping.key)
        if not mapping.value_expression:
            errors.append(fld.required(at.child("valueExpression"), ""))
            continue
        mapping.program = _compile(mapping.value_expression, CLAIMS_VARIABLES, at.child("valueExpression"), errors)
        state.email_verified |= bool(mapping.program and _EMAIL_VERIFIED.search(mapping.value_expression))
    if state.email and not state.email_verified:
        errors.append(fld.invalid(path.child("username", "expression"), m.username.expression, EMAIL_VERIFIED_MESSAGE))
    return errors


def _kubernetes_domain(key: str) -> bool:
    domain, sep, _ = key.partition("/")
    if not sep:
        return False
    return domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io", ".k8s.io"))


def _user_rule_errors(rules: list[ValidationRule], path: fld.Path) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        at = path.index(i)
        if not rule.expression:
            errors.append(fld.required(at.child("expression"), ""))
            continue
        if rule.expression in seen:
            errors.append(fld.duplicate(at.child("expression"), rule.expression))
            continue
        seen.add(rule.expression)
        rule.program = _compile(rule.expression, USER_VARIABLES, at.child("expression"), errors)
    return errors
