"""Panic recovery: any unexpected exception becomes a 500 InternalError Status, never a traceback."""

from __future__ import annotations

import logging

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response
from ...storage.kv import StorageUnavailableError

log = logging.getLogger("kube_apiserver.server")


def with_panic_recovery(handler: Handler) -> Handler:
    async def recovering(req: Request) -> Response:
        try:
            return await handler(req)
        except errors.StatusError as err:
            return write_status_error(req, err)
        except StorageUnavailableError as err:
            # ErrorToAPIStatus of an error that is not a Status: a 500 with its text, and one line in the log
            log.error("apiserver received an error that is not an metav1.Status: %s", err)
            return write_status_error(req, errors.StatusError(500, "", str(err)))
        except Exception as err:
            log.exception("apiserver panic'd on %s %s", req.method, req.path)
            return write_status_error(req, errors.internal_error(err))
    return recovering
