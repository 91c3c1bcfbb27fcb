"""Auditing (k8s.io/apiserver pkg/audit and plugin/pkg/audit/log): the audit.k8s.io/v1 Policy that decides
how much of a request is recorded, the per-request Event, and the log backend that writes the events.

Nothing here runs unless --audit-policy-file and --audit-log-path are both given (as upstream)."""

from __future__ import annotations

GROUP_VERSION = "audit.k8s.io/v1"

# Levels, least to most detail; a level is "at least" another when its index is not lower.
LEVEL_NONE = "None"
LEVEL_METADATA = "Metadata"
LEVEL_REQUEST = "Request"
LEVEL_REQUEST_RESPONSE = "RequestResponse"
LEVELS = (LEVEL_NONE, LEVEL_METADATA, LEVEL_REQUEST, LEVEL_REQUEST_RESPONSE)

STAGE_REQUEST_RECEIVED = "RequestReceived"
STAGE_RESPONSE_STARTED = "ResponseStarted"
STAGE_RESPONSE_COMPLETE = "ResponseComplete"
STAGE_PANIC = "Panic"
STAGES = (STAGE_REQUEST_RECEIVED, STAGE_RESPONSE_STARTED, STAGE_RESPONSE_COMPLETE, STAGE_PANIC)

# The request header a caller may set its own audit ID with; the response always carries it back.
HEADER_AUDIT_ID = "audit-id"


def level_at_least(level: str, other: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(other)
