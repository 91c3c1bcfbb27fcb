"""Content negotiation: which representation the client asked for in Accept (k8s negotiation package)."""

from __future__ import annotations

from dataclasses import dataclass

from ..apimachinery import errors, serializer

JSON, YAML = serializer.JSON, serializer.YAML
ACCEPTED = [JSON, YAML, serializer.PROTOBUF]


@dataclass(frozen=True, slots=True)
class MediaType:
    """One acceptable representation: the encoding, and a conversion (Table, PartialObjectMetadata...)."""

    media: str  # application/json or application/yaml
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


def _media(base: str) -> str | None:
    if base in (JSON, "application/*", "*/*", "application/json-seq"):
        return JSON
    if base in (YAML, "application/x-yaml", "text/yaml"):
        return YAML
    return None


def negotiate(accept: str, allowed_conversions: frozenset[tuple[str, str, str]] = frozenset()) -> MediaType:
    """The first acceptable clause, by q then order; conversions are (as, g, v) triples the endpoint serves.

    Raises 406 NotAcceptable when nothing offered is acceptable."""
    if not accept:
        return DEFAULT
    clauses = [_parse_clause(c) for c in accept.split(",") if c.strip()]
    clauses.sort(key=lambda c: -c[2])
    for base, params, q in clauses:
        if q <= 0:
            continue
        media = _media(base)
        if media is None:
            continue
        convert = params.get("as", "")
        if convert:
            key = (convert, params.get("g", ""), params.get("v", ""))
            if key not in allowed_conversions:
                continue
            return MediaType(media, convert, key[1], key[2])
        return MediaType(media)
    raise errors.not_acceptable(ACCEPTED)


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
    return serializer.encode_json(obj, media.pretty)
