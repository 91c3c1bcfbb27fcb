"""Content negotiation: which representation the client asked for in Accept (k8s negotiation package)."""

from __future__ import annotations

from dataclasses import dataclass

from ..apimachinery import errors, gostrconv, serializer
from .http import Request

JSON, YAML, PROTOBUF = serializer.JSON, serializer.YAML, serializer.PROTOBUF
ACCEPTED = [JSON, YAML, PROTOBUF]
# Conversions a protobuf response may carry: Table has no protobuf form (kube-apiserver skips the clause).
PROTOBUF_CONVERSIONS = frozenset({"", "PartialObjectMetadata", "PartialObjectMetadataList", "APIGroupDiscoveryList"})
# User agents of people (browsers, curl, wget) get indented JSON (negotiation.isPrettyPrint).
PRETTY_USER_AGENT_PREFIXES = ("curl", "Wget", "Mozilla/5.0")


@dataclass(frozen=True, slots=True)
class MediaType:
    """One acceptable representation: the encoding, and a conversion (Table, PartialObjectMetadata...)."""

    media: str  # application/json, application/yaml or application/vnd.kubernetes.protobuf
    convert: str = ""  # "", "Table", "PartialObjectMetadata", "PartialObjectMetadataList", "APIGroupDiscoveryList"
    group: str = ""
    version: str = ""
    pretty: bool = False

    @property
    def content_type(self) -> str:
        if self.convert:
            return f"{self.media};as={self.convert};g={self.group};v={self.version}"
        return self.media


DEFAULT = MediaType(JSON)


def _parse_clause(clause: str) -> tuple[str, dict[str, str], float]:
    pieces = [p.strip() for p in clause.split(";")]
    params: dict[str, str] = {}
    for piece in pieces[1:]:
        key, _, value = piece.partition("=")
        params[key.strip().lower()] = value.strip()
    try:
        q = float(params.pop("q", "1"))
    except ValueError:
        q = 0.0
    return pieces[0].lower(), params, q


def _media(base: str, protobuf: bool) -> str | None:
    if base in (JSON, "application/*", "*/*", "application/json-seq"):
        return JSON
    if base in (YAML, "application/x-yaml", "text/yaml"):
        return YAML
    if base == PROTOBUF and protobuf:
        return PROTOBUF
    return None


def negotiate(accept: str, allowed_conversions: frozenset[tuple[str, str, str]] = frozenset(),
              protobuf: bool = False) -> MediaType:
    """The first acceptable clause, by q then order; conversions are (as, g, v) triples the endpoint serves.
    `protobuf`: the endpoint's kind has a protobuf form (built-in kinds; custom resources have none, so a
    protobuf clause is skipped for them, as their negotiated serializer does not list it).

    Raises 406 NotAcceptable when nothing offered is acceptable."""
    if not accept:
        return DEFAULT
    clauses = [_parse_clause(c) for c in accept.split(",") if c.strip()]
    clauses.sort(key=lambda c: -c[2])
    for base, params, q in clauses:
        if q <= 0:
            continue
        media = _media(base, protobuf)
        if media is None:
            continue
        convert = params.get("as", "")
        pretty = params.get("pretty") == "1"
        if media == PROTOBUF and convert not in PROTOBUF_CONVERSIONS:
            continue
        if convert:
            key = (convert, params.get("g", ""), params.get("v", ""))
            if key not in allowed_conversions:
                continue
            return MediaType(media, convert, key[1], key[2], pretty)
        return MediaType(media, pretty=pretty)
    raise errors.not_acceptable(ACCEPTED)


def pretty_requested(req: Request) -> bool:
    """negotiation.isPrettyPrint: `pretty` in the query decides when given (Go's ParseBool, an invalid value
    being false); otherwise people's user agents get indented JSON."""
    value = req.param("pretty")
    if value:
        try:
            return gostrconv.parse_bool(value)
        except ValueError:
            return False
    return req.headers.get("user-agent", "").startswith(PRETTY_USER_AGENT_PREFIXES)


RESOURCE_CONVERSIONS = frozenset({
    ("Table", "meta.k8s.io", "v1"),
    ("PartialObjectMetadata", "meta.k8s.io", "v1"),
    ("PartialObjectMetadataList", "meta.k8s.io", "v1"),
})
DISCOVERY_CONVERSIONS = frozenset({
    ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2"),
})


def encode(obj: object, media: MediaType) -> bytes:
    if media.media == YAML:
        return serializer.encode_yaml(obj)
    if media.media == PROTOBUF:
        from ..apimachinery import protobuf  # loaded by the first protobuf client

        return protobuf.encode(obj)  # type: ignore[arg-type]
    return serializer.encode_json(obj, media.pretty)
