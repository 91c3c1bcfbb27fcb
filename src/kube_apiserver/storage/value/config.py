"""--encryption-provider-config: EncryptionConfiguration (apiserver.config.k8s.io/v1) read from a YAML or JSON
file, validated, and turned into one prefix transformer per resource
(k8s.io/apiserver/pkg/server/options/encryptionconfig and pkg/apis/apiserver/validation).

Errors read as kube-apiserver's: `error while parsing file: <field errors>` for a file that does not load or
validate, `error while building transformers: ...` for one that validates but cannot be used."""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

from ...apimachinery import field as fld
from ...apimachinery.configdoc import one_line
from ...apimachinery.goduration import parse_duration
from ...apimachinery.goos import os_error_text
from .aes import CBCTransformer, GCMTransformer
from .metrics import TransformationMetrics
from .secretbox import SecretboxTransformer
from .transformer import IDENTITY, NO_MATCHING_PREFIX, PrefixTransformer, PrefixTransformers, Transformer

log = logging.getLogger("kube_apiserver")

API_VERSION = "apiserver.config.k8s.io/v1"
KIND = "EncryptionConfiguration"
AESCBC_PREFIX = "k8s:enc:aescbc:v1:"
AESGCM_PREFIX = "k8s:enc:aesgcm:v1:"
SECRETBOX_PREFIX = "k8s:enc:secretbox:v1:"
KMS_V1_PREFIX = "k8s:enc:kms:v1:"
KMS_V2_PREFIX = "k8s:enc:kms:v2:"
AES_KEY_SIZES = (16, 24, 32)
SECRETBOX_KEY_SIZES = (32,)
NO_PROVIDER = (
    "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
)
ANY_GROUP_ANY_RESOURCE = ("*", "*")
KMS_V1_DEPRECATED = (
    "KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set "
    "--feature-gates=KMSv1=true to use the deprecated KMSv1 feature."
)

GroupResource = tuple[str, str]  # (group, resource)

# The fields v1 knows, for strict decoding (an unknown one is an error, as kube-apiserver's strict decoder says).
_KEY = {"name": None, "secret": None}
_KEYS = {"keys": [_KEY]}
_PROVIDER = {
    "aesgcm": _KEYS,
    "aescbc": _KEYS,
    "secretbox": _KEYS,
    "identity": {},
    "kms": {"apiVersion": None, "name": None, "cachesize": None, "endpoint": None, "timeout": None},
}
_SCHEMA = {"kind": None, "apiVersion": None, "resources": [{"resources": [None], "providers": [_PROVIDER]}]}


class EncryptionConfigError(Exception):
    """A configuration that cannot be loaded; its message is kube-apiserver's."""


@dataclass
class EncryptionConfiguration:
    transformers: dict[GroupResource, Transformer] = field(default_factory=dict)
    content_hash: str = ""
    kms: list[Any] = field(default_factory=list)  # its KMS v2 providers (kmsv2.KMSv2Provider), probed

    def for_resource(self, group: str, resource: str) -> Transformer:
        """The resource's own rule, else its group's `*.<group>`, else `*.*`, else identity
        (transformerFromOverrides)."""
        transformers = self.transformers
        found = (
            transformers.get((group, resource))
            or transformers.get((group, "*"))
            or transformers.get(ANY_GROUP_ANY_RESOURCE)
        )
        return found if found is not None else IDENTITY


# ---- loading ----


def load(
    path: str,
    reload: bool = False,
    metrics: TransformationMetrics | None = None,
    require_healthy: bool = False,
) -> EncryptionConfiguration:
    """LoadEncryptionConfig. Its KMS providers are probed once: a failure is logged and probed again later,
    or with `require_healthy` (a reload) refuses the configuration, as the reload controller's health check."""
    data, content_hash = read_with_hash(path)
    try:
        config = _decode(data, path)
        errors = validate(config, reload)
    except EncryptionConfigError as err:
        raise EncryptionConfigError(f"error while parsing file: {err}") from None
    if errors:
        raise EncryptionConfigError(
            f"error while parsing file: {fld.aggregate_message(fld.to_aggregate(errors))}"
        )
    kms: list[Any] = []
    try:
        transformers = build_transformers(config, metrics, kms=kms)
    except EncryptionConfigError as err:
        _close(kms)
        raise EncryptionConfigError(f"error while building transformers: {err}") from None
    _prime(kms, require_healthy)
    return EncryptionConfiguration(transformers, content_hash, kms)


def _prime(kms: list[Any], require_healthy: bool) -> None:
    from .transformer import TransformError

    for provider in kms:
        try:
            provider.check()
        except TransformError as err:
            if require_healthy:
                _close(kms)
                raise EncryptionConfigError(f"health check for new transformers failed: {err}") from None
            log.error("kms plugin failed health check probe name=%s: %s", provider.name, err)


def _close(kms: list[Any]) -> None:
    for provider in kms:
        provider.service.close()


def read_with_hash(path: str) -> tuple[bytes, str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        text = os_error_text("open", path, err)
        raise EncryptionConfigError(
            f"error while parsing file: error while loading file: error reading encryption provider "
            f'configuration file "{path}": {text}'
        ) from None
    if not data:
        raise EncryptionConfigError(
            f'error while parsing file: error while loading file: encryption provider configuration file "{path}" '
            "is empty"
        )
    return data, "sha256:" + hashlib.sha256(data).hexdigest()


def _decode(data: bytes, path: str) -> dict[str, Any]:
    prefix = f'error decoding encryption provider configuration file "{path}"'
    try:
        config = yaml.safe_load(data)
    except yaml.YAMLError as err:
        raise EncryptionConfigError(f"{prefix}: {one_line(err)}") from None
    if not isinstance(config, dict):
        raise EncryptionConfigError(f"{prefix}: couldn't get version/kind; json parse error: not an object")
    api_version, kind = config.get("apiVersion"), config.get("kind")
    if not kind:
        raise EncryptionConfigError(
            f"{prefix}: Object 'Kind' is missing in '{one_line(data.decode(errors='replace'))}'"
        )
    if api_version != API_VERSION or kind != KIND:
        raise EncryptionConfigError(f'{prefix}: no kind "{kind}" is registered for version "{api_version}"')
    unknown = _unknown_fields(config, _SCHEMA, "")
    if unknown:
        listed = ", ".join(f'unknown field "{name}"' for name in unknown)
        raise EncryptionConfigError(f"{prefix}: strict decoding error: {listed}")
    return config


def _unknown_fields(value: Any, schema: Any, path: str) -> list[str]:
    if isinstance(schema, list) and isinstance(value, list):
        out: list[str] = []
        for i, item in enumerate(value):
            out += _unknown_fields(item, schema[0], f"{path}[{i}]")
        return out
    if isinstance(schema, dict) and isinstance(value, dict):
        out = []
        for name, item in value.items():
            child = f"{path}.{name}" if path else str(name)
            if name not in schema:
                out.append(child)
            else:
                out += _unknown_fields(item, schema[name], child)
        return out
    return []


# ---- validation (ValidateEncryptionConfiguration) ----


def parse_group_resource(text: str) -> GroupResource:
    """schema.ParseGroupResource: `deployments.apps` -> (apps, deployments), `*.` -> ("", "*")."""
    resource, dot, group = text.partition(".")
    return (group, resource) if dot else ("", text)


def group_resource_text(gr: GroupResource) -> str:
    """grYAMLString: how a rule is named in an error."""
    group, resource = gr
    if group == "" and resource == "*":
        return "*."
    return f"{resource}.{group}" if group else resource


def validate(config: dict[str, Any], reload: bool = False) -> list[fld.FieldError]:
    root = fld.Path("resources")
    resources = config.get("resources")
    if not resources:
        return [fld.required(root, "at least one resources is required")]
    if not isinstance(resources, list):
        return [fld.invalid(root, resources, "must be a list")]
    errors: list[fld.FieldError] = []
    kms_names: set[str] = set()
    for i, rule in enumerate(resources):
        rule = rule if isinstance(rule, dict) else {}
        names, providers = rule.get("resources") or [], rule.get("providers") or []
        r, p = root.index(i).child("resources"), root.index(i).child("providers")
        if not names:
            errors.append(fld.required(r, f"at least one {r} is required"))
        names = [str(n) for n in names] if isinstance(names, list) else []
        errors += _validate_overlap(names, r)
        errors += _validate_names(names, r)
        if not providers:
            errors.append(fld.required(p, f"at least one {p} is required"))
        for j, provider in enumerate(providers if isinstance(providers, list) else []):
            errors += _validate_provider(
                provider if isinstance(provider, dict) else {}, p.index(j), kms_names, reload
            )
    return errors


def _validate_overlap(names: list[str], path: fld.Path) -> list[fld.FieldError]:
    if len(names) < 2:
        return []
    parsed = [parse_group_resource(n) for n in names]
    duplicate = overlap = False
    for i, a in enumerate(parsed):
        for j, b in enumerate(parsed):
            if i == j:
                continue
            if a == b and not duplicate:
                duplicate = True
                continue
            if overlap:
                continue
            if a == ANY_GROUP_ANY_RESOURCE or (a[0] == b[0] and "*" in (a[1], b[1])):
                overlap = True
    errors = []
    if duplicate:
        errors.append(fld.invalid(path, names, "the same resource cannot be specified multiple times"))
    if overlap:
        errors.append(
            fld.invalid(
                path,
                names,
                "using overlapping resources such as 'secrets' and '*.' in the "
                "same resource list is not allowed as they will be masked",
            )
        )
    return errors


_NAME_RULES: tuple[tuple[Callable[[str, GroupResource], bool], str], ...] = (
    (lambda n, gr: n.lower() != n, "resource name should not contain capital letters"),
    (
        lambda n, gr: n == "*",
        "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources",
    ),
    (
        lambda n, gr: n in ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations"),
        "resources which do not have REST API/s cannot be encrypted",
    ),
    (
        lambda n, gr: gr[0] == "events.k8s.io",
        "'*.events.k8s.io' objects are stored using the 'events' API group "
        "in etcd. Use 'events' instead in the config file",
    ),
    (
        lambda n, gr: gr[0] == "extensions",
        "'extensions' group has been removed and cannot be used for encryption",
    ),
    (
        lambda n, gr: gr[0] == "*" and gr[1] != "*",
        "encrypting the same resource across groups is not supported",
    ),
)


def _validate_names(names: list[str], path: fld.Path) -> list[fld.FieldError]:
    errors = []
    for j, name in enumerate(names):
        gr = parse_group_resource(name)
        for broken, message in _NAME_RULES:
            if broken(name, gr):
                errors.append(fld.invalid(path.index(j), name, message))
                break
    return errors


def _validate_provider(
    provider: dict[str, Any], path: fld.Path, kms_names: set[str], reload: bool
) -> list[fld.FieldError]:
    kinds = [k for k in ("kms", "aesgcm", "aescbc", "secretbox", "identity") if provider.get(k) is not None]
    if not kinds:
        return [fld.invalid(path, provider, NO_PROVIDER)]
    if len(kinds) > 1:
        return [
            fld.invalid(
                path,
                provider,
                "more than one provider specified in a single element, should split "
                "into different list elements",
            )
        ]
    kind = kinds[0]
    body = provider[kind] if isinstance(provider[kind], dict) else {}
    if kind == "kms":
        errors = _validate_kms(body, path.child("kms"), kms_names, reload)
        kms_names.add(str(body.get("name") or ""))
        return errors
    if kind == "identity":
        return []
    sizes = SECRETBOX_KEY_SIZES if kind == "secretbox" else AES_KEY_SIZES
    return _validate_keys(body.get("keys") or [], path.child(kind).child("keys"), sizes)


def _validate_keys(keys: list[Any], path: fld.Path, sizes: tuple[int, ...]) -> list[fld.FieldError]:
    if not keys:
        return [fld.required(path, "at least one keys is required")]
    errors = []
    for i, key in enumerate(keys):
        key = key if isinstance(key, dict) else {}
        at = path.index(i)
        if not key.get("name"):
            errors.append(fld.required(at.child("name"), "name is a mandatory field for a key"))
        secret = key.get("secret")
        if not secret:
            errors.append(fld.required(at.child("secret"), "secret is a mandatory field for a key"))
            continue
        decoded = decode_secret(str(secret))
        if decoded is None:
            errors.append(fld.invalid(at.child("secret"), "REDACTED", "secrets must be base64 encoded"))
        elif len(decoded) not in sizes:
            expected = "[" + " ".join(str(s) for s in sizes) + "]"
            errors.append(
                fld.invalid(
                    at.child("secret"),
                    "REDACTED",
                    f"secret is not of the expected length, got {len(decoded)}, expected one of {expected}",
                )
            )
    return errors


def decode_secret(secret: str) -> bytes | None:
    """base64.StdEncoding (padded, no whitespace or other characters)."""
    try:
        return base64.b64decode(secret, validate=True)
    except (binascii.Error, ValueError):
        return None


def _validate_kms(kms: dict[str, Any], path: fld.Path, names: set[str], reload: bool) -> list[fld.FieldError]:
    errors = []
    version = kms.get("apiVersion") or "v1"  # v1 defaults an empty apiVersion to v1
    name = str(kms.get("name") or "")
    if not name:
        errors.append(fld.required(path.child("name"), "name is a mandatory field for a provider"))
    if version != "v1" and ":" in name:
        errors.append(
            fld.invalid(path.child("name"), name, f"invalid KMS provider name {name}, must not contain ':'")
        )
    if (reload or version != "v1") and name in names:
        errors.append(
            fld.invalid(path.child("name"), name, f"duplicate KMS provider name {name}, names must be unique")
        )
    timeout = kms_timeout(kms)
    if timeout is None or timeout <= 0:
        errors.append(
            fld.invalid(path.child("timeout"), str(kms.get("timeout")), "timeout should be a positive value")
        )
    endpoint = str(kms.get("endpoint") or "")
    if not endpoint:
        errors.append(fld.invalid(path.child("endpoint"), "", "endpoint is a mandatory field for a kms"))
    elif urlsplit(endpoint).scheme != "unix":
        errors.append(
            fld.invalid(
                path.child("endpoint"),
                endpoint,
                f'unsupported scheme "{urlsplit(endpoint).scheme}" for KMS provider, only unix is supported',
            )
        )
    if version != "v1" and kms.get("cachesize") is not None:
        errors.append(
            fld.invalid(path.child("cachesize"), kms.get("cachesize"), "cachesize is not supported in v2")
        )
    if version not in ("v1", "v2"):
        errors.append(
            fld.invalid(
                path.child("apiVersion"),
                version,
                "unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported",
            )
        )
    return errors


def kms_timeout(kms: dict[str, Any]) -> float | None:
    """The provider's timeout in seconds (default 3s), None when it is not a duration."""
    raw = kms.get("timeout")
    if raw is None or raw == "":
        return 3.0
    try:
        return parse_duration(str(raw))
    except ValueError:
        return None


# ---- building (getTransformerOverridesAndKMSPluginProbes) ----


def build_transformers(
    config: dict[str, Any],
    metrics: TransformationMetrics | None = None,
    random: Callable[[int], bytes] = os.urandom,
    kms: list[Any] | None = None,
) -> dict[GroupResource, Transformer]:
    """`kms` receives the KMS providers built (to probe, and to close when they are replaced)."""
    chains: dict[GroupResource, list[PrefixTransformer]] = {}
    kms = kms if kms is not None else []
    for rule in config["resources"]:
        providers = [_provider(p, metrics, random, kms) for p in rule["providers"]]
        for name in rule["resources"]:
            gr = parse_group_resource(str(name))
            for masking in ((gr[0], "*"), ANY_GROUP_ANY_RESOURCE):
                if masking in chains:
                    raise EncryptionConfigError(
                        f'resource "{group_resource_text(gr)}" is masked by earlier rule "{group_resource_text(masking)}"'
                    )
            chains.setdefault(gr, []).extend(providers)
    return {gr: PrefixTransformers(chain, NO_MATCHING_PREFIX, metrics) for gr, chain in chains.items()}


def _provider(
    provider: dict[str, Any],
    metrics: TransformationMetrics | None,
    random: Callable[[int], bytes],
    kms: list[Any],
) -> PrefixTransformer:
    if provider.get("aesgcm") is not None:
        return _keyed(provider["aesgcm"], AESGCM_PREFIX, "AES", lambda k: GCMTransformer(k, random), metrics)
    if provider.get("aescbc") is not None:
        return _keyed(provider["aescbc"], AESCBC_PREFIX, "AES", lambda k: CBCTransformer(k, random), metrics)
    if provider.get("secretbox") is not None:
        return _keyed(
            provider["secretbox"],
            SECRETBOX_PREFIX,
            "Secretbox",
            lambda k: SecretboxTransformer(k, random),
            metrics,
        )
    if provider.get("kms") is not None:
        return _kms(provider["kms"], kms)
    if provider.get("identity") is not None:
        return PrefixTransformer(b"", IDENTITY)
    raise EncryptionConfigError(NO_PROVIDER)


def _kms(config: dict[str, Any], kms: list[Any]) -> PrefixTransformer:
    from . import kmsv2  # gRPC is loaded only by a configuration that has a KMS provider

    name = str(config.get("name"))
    if (config.get("apiVersion") or "v1") == "v1":
        raise EncryptionConfigError(KMS_V1_DEPRECATED)
    try:
        service = kmsv2.KMSService(str(config["endpoint"]), kms_timeout(config) or 3.0)
    except (kmsv2.TransformError, ValueError) as err:
        raise EncryptionConfigError(
            f'could not configure KMSv2-Plugin\'s probe "{name}", error: {err}'
        ) from None
    provider = kmsv2.KMSv2Provider(name, service)
    kms.append(provider)
    return PrefixTransformer(f"{KMS_V2_PREFIX}{name}:".encode(), provider)


def _keyed(
    body: dict[str, Any],
    prefix: str,
    kind: str,
    new: Callable[[bytes], Transformer],
    metrics: TransformationMetrics | None,
) -> PrefixTransformer:
    """A provider with named keys: `<prefix><key name>:<ciphertext>`, read with whichever key is named."""
    keys = []
    for key in body["keys"]:
        secret = decode_secret(str(key["secret"])) or b""
        keys.append(PrefixTransformer(f"{key['name']}:".encode(), new(secret)))
    no_match = f"no matching key was found for the provided {kind} transformer"
    return PrefixTransformer(prefix.encode(), PrefixTransformers(keys, no_match, metrics))
