"""The two ways a webhook call ends badly (k8s.io/apiserver/pkg/util/webhook/error.go) and the
statuses they become (pkg/admission/plugin/webhook/errors)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors
from ...apimachinery.field import go_quote


class CallingError(Exception):
    """ErrCallingWebhook: the webhook could not be asked or answered nonsense; the failure policy
    decides whether the request goes on."""

    def __init__(self, webhook: str, reason: str, status: errors.StatusError):
        self.webhook, self.reason, self.status = webhook, reason, status
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.reason:
            return f"failed calling webhook {go_quote(self.webhook)}: {self.reason}"
        return f"failed calling webhook {go_quote(self.webhook)}; no further details available"


class RejectionError(Exception):
    """ErrWebhookRejection: the webhook said no."""

    def __init__(self, status: errors.StatusError):
        super().__init__(status.message)
        self.status = status


def to_status_error(webhook: str, result: Any) -> errors.StatusError:
    """ToStatusErr: the webhook's Status, at least a 400 failure, its message prefixed."""
    result = result if isinstance(result, dict) else {}
    denied = f"admission webhook {go_quote(webhook)} denied the request"
    code = result.get("code") if isinstance(result.get("code"), int) else 0
    message, reason = result.get("message") or "", result.get("reason") or ""
    if message:
        message = f"{denied}: {message}"
    elif reason:
        message = f"{denied}: {reason}"
    else:
        message = f"{denied} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    return errors.StatusError(max(code, 400), reason, message, details)


def dry_run_unsupported(webhook: str) -> errors.StatusError:
    return errors.bad_request(f"admission webhook {go_quote(webhook)} does not support dry run")


def fail_closed(err: CallingError) -> errors.StatusError:
    """A call failure under failurePolicy Fail: apierrors.NewInternalError(err)."""
    return errors.internal_error(str(err))
