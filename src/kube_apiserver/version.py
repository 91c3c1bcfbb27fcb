"""The version this server reports: `kube-apiserver --version` and the body of GET /version."""

from __future__ import annotations

import platform
import sys

MAJOR = "1"
MINOR = "34"
GIT_VERSION = "v1.34.0"

_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386"}


def _platform() -> str:
    machine = platform.machine().lower()
    return f"{sys.platform}/{_GOARCH.get(machine, machine)}"


# Keys and order of k8s.io/apimachinery/pkg/version.Info as served on /version (v1.34 fills the
# emulation/min-compatibility fields). goVersion/compiler describe the Python runtime instead of Go.
VERSION: dict[str, str] = {
    "major": MAJOR,
    "minor": MINOR,
    "emulationMajor": MAJOR,
    "emulationMinor": MINOR,
    "minCompatibilityMajor": MAJOR,
    "minCompatibilityMinor": str(int(MINOR) - 1),
    "gitVersion": GIT_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "1970-01-01T00:00:00Z",
    "goVersion": f"python{platform.python_version()}",
    "compiler": platform.python_implementation().lower(),
    "platform": _platform(),
}


def version_string() -> str:
    """What `kube-apiserver --version` prints."""
    return f"Kubernetes {GIT_VERSION}"


def raw_version_string() -> str:
    """What `kube-apiserver --version=raw` prints: Go's %#v of version.Info."""
    fields = ", ".join(f'{key[:1].upper()}{key[1:]}:"{value}"' for key, value in VERSION.items())
    return f"version.Info{{{fields}}}"
