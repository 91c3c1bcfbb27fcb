"""Logging flags (k8s.io/component-base/logs/api: the "Logs" section). Only -v is implemented."""

from __future__ import annotations

from dataclasses import dataclass

from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.cli.values import LevelValue


@dataclass
class LogsOptions:
    verbosity: int = 0

    def add_flags(self, fs: FlagSet) -> None:
        fs.var(LevelValue(self, "verbosity"), "v", "number for the log level verbosity", shorthand="v")
