"""The tag of an image reference, as pkg/util/parsers.ParseImageName finds it (docker's reference
grammar): what SetDefaults_Container picks the imagePullPolicy by."""

from __future__ import annotations

import re

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_LABEL}(?:\.{_DOMAIN_LABEL})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?")
DEFAULT_TAG = "latest"


def image_tag(image: str) -> str:
    """The reference's tag: `latest` when it names neither a tag nor a digest, "" when it does not
    parse (the pull policy then defaults as for a pinned image)."""
    match = _REFERENCE.fullmatch(image or "")
    if match is None:
        return ""
    if match.group("tag"):
        return match.group("tag")
    return "" if match.group("digest") else DEFAULT_TAG


def pull_policy_for(image: str) -> str:
    return "Always" if image_tag(image) == DEFAULT_TAG else "IfNotPresent"
