"""Auditing flags (k8s.io/apiserver/pkg/server/options/audit.go): the policy file and the log backend.

Served: --audit-policy-file, --audit-log-path ('-' is stdout), --audit-log-format, --audit-log-maxage,
--audit-log-maxbackup, --audit-log-maxsize, --audit-log-compress (rotation as lumberjack does it),
--audit-log-mode (batch writes queued events once the event loop is free, see audit/log.py),
--audit-log-batch-buffer-size, --audit-log-batch-max-size and --audit-log-version. Not served: the webhook
backend, truncation and batch throttling flags.

Auditing happens only with both a policy file and a log path, as upstream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kube_apiserver.apimachinery.gostrconv import quote as go_quote
from kube_apiserver.cli.flagset import FlagSet

PLUGIN = "log"
GROUP_VERSION = "audit.k8s.io/v1"
FORMATS = ("legacy", "json")
MODES = ("batch", "blocking", "blocking-strict")


@dataclass
class AuditOptions:
    policy_file: str = ""
    log_path: str = ""
    log_max_age: int = 366
    log_max_backups: int = 100
    log_max_size: int = 100
    log_format: str = "json"
    log_compress: bool = False
    log_version: str = GROUP_VERSION
    log_mode: str = "blocking"
    log_batch_buffer_size: int = 10000
    log_batch_max_size: int = 1

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_var(self, "policy_file", "audit-policy-file",
                      "Path to the file that defines the audit policy configuration.")
        fs.string_var(self, "log_path", "audit-log-path",
                      "If set, all requests coming to the apiserver will be logged to this file.  '-' means "
                      "standard out.")
        fs.int_var(self, "log_max_age", "audit-log-maxage",
                   "The maximum number of days to retain old audit log files based on the timestamp encoded in "
                   "their filename. Setting a value of 0 means old audit log files are not removed based on age.")
        fs.int_var(self, "log_max_backups", "audit-log-maxbackup",
                   "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's "
                   "no restriction on the number of files.")
        fs.int_var(self, "log_max_size", "audit-log-maxsize",
                   "The maximum size in megabytes of the audit log file before it gets rotated. Setting to 0 "
                   "disables rotation (not recommended).")
        fs.string_var(self, "log_format", "audit-log-format",
                      'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" '
                      "indicates structured json format. Known formats are " + ",".join(FORMATS) + ".")
        fs.string_var(self, "log_version", "audit-log-version",
                      "API group and version used for serializing audit events written to log.")
        fs.bool_var(self, "log_compress", "audit-log-compress",
                    "If set, the rotated log files will be compressed using gzip.")
        fs.string_var(self, "log_mode", f"audit-{PLUGIN}-mode",
                      "Strategy for sending audit events. Blocking indicates sending events should block server "
                      "responses. Batch causes the backend to buffer and write events asynchronously. Known "
                      "modes are " + ",".join(MODES) + ".")
        fs.int_var(self, "log_batch_buffer_size", f"audit-{PLUGIN}-batch-buffer-size",
                   "The size of the buffer to store events before batching and writing. Only used in batch mode.")
        fs.int_var(self, "log_batch_max_size", f"audit-{PLUGIN}-batch-max-size",
                   "The maximum size of a batch. Only used in batch mode.")

    def validate(self) -> list[str]:
        """AuditLogOptions.Validate: checked only when the log backend is on."""
        if not self.log_path:
            return []
        errs = []
        if self.log_mode not in MODES:
            errs.append(f"invalid audit {PLUGIN} mode {self.log_mode}, allowed modes are "
                        f"{go_quote(','.join(MODES))}")
        elif self.log_mode == "batch":
            if self.log_batch_buffer_size <= 0:
                errs.append(f"invalid audit batch {PLUGIN} buffer size {self.log_batch_buffer_size}, must be a "
                            "positive number")
            if self.log_batch_max_size <= 0:
                errs.append(f"invalid audit batch {PLUGIN} max batch size {self.log_batch_max_size}, must be a "
                            "positive number")
        if self.log_version != GROUP_VERSION:
            errs.append(f'invalid group version, allowed versions are ["{GROUP_VERSION}"]')
        if self.log_format not in FORMATS:
            errs.append(f"invalid audit log format {self.log_format}, allowed formats are "
                        f"{go_quote(','.join(FORMATS))}")
        for flag, value in (("maxage", self.log_max_age), ("maxbackup", self.log_max_backups),
                            ("maxsize", self.log_max_size)):
            if value < 0:
                errs.append(f"--audit-log-{flag} {value} can't be a negative number")
        return errs

    def apply_to(self, config: Any) -> None:
        """ApplyTo: the policy (loading errors stop the server) and, given a log path too, the backend."""
        if not self.policy_file:
            return
        from kube_apiserver.audit.log import new_log_backend
        from kube_apiserver.audit.policy import PolicyError, load_policy_file

        try:
            config.audit_policy = load_policy_file(self.policy_file)
        except PolicyError as err:
            raise ValueError(f"loading audit policy file: {err}") from None
        if self.log_path:
            config.audit_backend = new_log_backend(
                self.log_path, self.log_format, self.log_mode, self.log_max_size, self.log_max_backups,
                self.log_max_age, self.log_compress, self.log_batch_buffer_size, self.log_batch_max_size)
            config.destroy_functions.append(config.audit_backend.shutdown)  # queued events written, file closed
