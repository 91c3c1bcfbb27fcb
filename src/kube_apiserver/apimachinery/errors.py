"""Status errors, shaped exactly as k8s.io/apimachinery/pkg/api/errors builds them."""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """An error that is answered to the client as a metav1.Status."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # metav1.Status omits an empty (Unknown) reason
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def qualified(resource: str, group: str) -> str:
    """schema.GroupResource.String(): `configmaps` or `deployments.apps`."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(extra)
    return details


def not_found(resource: str, group: str, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found',
                       _details(name, group, resource))


def already_exists(resource: str, group: str, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{qualified(resource, group)} "{name}" already exists',
                       _details(name, group, resource))


def conflict(resource: str, group: str, name: str, why: str) -> StatusError:
    return StatusError(409, "Conflict",
                       f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
                       _details(name, group, resource))


OPTIMISTIC_LOCK_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(kind: str, group: str, name: str, errs: list[Any]) -> StatusError:
    """errs: field.FieldError values (reason, field, error_body(), str())."""
    from .field import aggregate_message
    causes = [{"reason": e.reason, "message": e.error_body(), "field": e.field} for e in errs]
    message = f'{qualified(kind, group)} "{name}" is invalid: {aggregate_message(errs)}'
    return StatusError(422, "Invalid", message, _details(name, group, kind, causes=causes))


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(401, "Unauthorized", message)


def forbidden(resource: str, group: str, name: str, why: str, causes: list[dict[str, Any]] | None = None,
              ) -> StatusError:
    subject = f'{qualified(resource, group)} "{name}"' if name else qualified(resource, group)
    extra = {"causes": causes} if causes else {}
    return StatusError(403, "Forbidden", f"{subject} is forbidden: {why}", _details(name, group, resource, **extra))


def method_not_supported(resource: str, group: str, action: str) -> StatusError:
    return StatusError(405, "MethodNotAllowed",
                       f'{action} is not supported on resources of kind "{qualified(resource, group)}"',
                       _details("", group, resource))


def method_not_allowed() -> StatusError:
    return StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                       {})


def route_not_found() -> StatusError:
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def unsupported_media_type(content_type: str, accepted: list[str]) -> StatusError:
    return StatusError(415, "UnsupportedMediaType",
                       f"the body of the request was in an unknown format - accepted media types include: "
                       f"{', '.join(accepted)}", None)


def not_acceptable(accepted: list[str]) -> StatusError:
    return StatusError(406, "NotAcceptable",
                       f"only the following media types are accepted: {', '.join(accepted)}", None)


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def resource_expired(message: str) -> StatusError:
    return expired(message)


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def too_many_requests(message: str = "too many requests, please try again later") -> StatusError:
    return StatusError(429, "TooManyRequests", message, {"retryAfterSeconds": 1})


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message, {})


def service_unavailable(message: str) -> StatusError:
    return StatusError(503, "ServiceUnavailable", message)


def internal_error(err: Any) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {err}", {"causes": [{"message": str(err)}]})


def success_status(details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details is not None:
        body["details"] = details
    return body
