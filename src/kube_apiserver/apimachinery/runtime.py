"""Logging a failure that is handled and tried again (k8s.io/apimachinery/pkg/util/runtime.HandleError)."""

from __future__ import annotations

import logging
import sys


def log_failure(logger: logging.Logger, message: str, *args: object) -> None:
    """Logs the exception being handled, after `message % args`: a ConnectionError (the store out of reach: its
    storage process gone, no etcd member answering) is a fact of operation, one line with its text; anything
    else is a bug, logged with its traceback. The line names the caller's file, as klog's does."""
    err = sys.exc_info()[1]
    if isinstance(err, ConnectionError):
        logger.error(f"{message}: %s", *args, err, stacklevel=2)
    else:
        logger.exception(message, *args, stacklevel=2)
