"""pytest plugin: real kube-apiservers (kube_apiserver.testing.APIServer) as fixtures. Installing the package
registers it (the `pytest11` entry point "kube_apiserver"; `-p no:kube_apiserver` turns it off). It starts
nothing until a test asks for one of its fixtures.

Fixtures, each a started `APIServer` (`.url`, `.kubeconfig`, `.token`, `.ca_file`, `.request(...)`,
`.kubernetes_client()`) on an ephemeral port with its own temporary data dir, in this process unless the
mode says "subprocess":

- `kube_apiserver`: a fresh server for this test alone, stopped after it: nothing another test did is
  seen. The `kube_apiserver` marks on the test, its class and its module configure it.
- `kube_apiserver_module`: one server shared by the tests of a module; the module's marks
  (`pytestmark = pytest.mark.kube_apiserver(...)`) configure it.
- `kube_apiserver_session`: one server shared by every test of the session, configured by the
  command-line and ini options only. Under pytest-xdist each worker is its own process and session, so each
  worker gets its own servers: parallel tests never share one unless they run in the same worker.
- `kube_apiserver_seeds`: what the session's servers start from (kept by the session): a template, a
  server bootstrapped once per distinct command line and copied into each server's data dir, so the
  fixtures' servers start as a restart does (~0.2 s instead of ~1 s).

The options configure every server the plugin starts; a command-line option replaces the ini value:

    command line                                     ini ([pytest] section)
    --kube-apiserver-crds PATH (repeatable)          kube_apiserver_crds = PATH ...
    --kube-apiserver-admission-plugins A,B           kube_apiserver_admission_plugins = A,B
    --kube-apiserver-disable-admission-plugins A,B   kube_apiserver_disable_admission_plugins = A,B
    --kube-apiserver-authorization-mode RBAC         kube_apiserver_authorization_mode = RBAC
    --kube-apiserver-controllers A,B                 kube_apiserver_controllers = A,B
    --kube-apiserver-arg=--FLAG=VALUE (repeatable)   kube_apiserver_args = --FLAG=VALUE ...
    --kube-apiserver-mode subprocess                 kube_apiserver_mode = subprocess

CRD paths are relative to the current directory on the command line, to the ini file's directory in it.
`--kube-apiserver-controllers=` (empty) runs no controller; an empty ini value leaves the default.

The mark adds to them for the servers it configures; all its arguments are optional:

    @pytest.mark.kube_apiserver(
        crds="crds",                        # a directory or file, or a list; relative to the test file
        admission_plugins=["AlwaysPullImages"],   # --enable-admission-plugins
        disable_admission_plugins=["ServiceAccount"],  # --disable-admission-plugins
        authorization_mode="RBAC",          # --authorization-mode (a string or a list)
        controllers=["garbagecollector"],   # --controllers; [] runs none
        args=["--service-cluster-ip-range=10.96.0.0/12"],  # any other kube-apiserver flags
        mode="thread",                      # or "subprocess"
        deterministic=True,                 # --deterministic (an int: also --deterministic-seed)
    )

Marks closer to the test win for the single-valued settings; `crds` and `args` accumulate (options, module,
class, then test). CRDs: every CustomResourceDefinition in the YAML/JSON files of each directory is applied
and the fixture returns once each is Established and listed by discovery (kube_apiserver.testing.crds).
Controllers: by default the server runs every embedded controller, as a cluster would; name fewer for a
quieter, faster server.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported when a fixture starts a server: pytest starts as fast with the plugin as without
    from .server import PKI, APIServer, Template

MARK = "kube_apiserver"
MODES = ("thread", "subprocess")
MARK_HELP = (
    "kube_apiserver(crds=PATH|[PATH...], admission_plugins=[...], disable_admission_plugins=[...], "
    "authorization_mode=MODE|[...], "
    "controllers=[...], args=[...], mode='thread'|'subprocess', deterministic=True|SEED): configures the kube_apiserver "
    "(and, on a module, kube_apiserver_module) fixture's server"
)


@dataclass(frozen=True)
class ServerSettings:
    """What a fixture's server is started with; None: the server's own default."""

    args: tuple[str, ...] = ()
    crds: tuple[str, ...] = ()
    admission_plugins: tuple[str, ...] | None = None
    disable_admission_plugins: tuple[str, ...] | None = None
    authorization_mode: tuple[str, ...] | None = None
    controllers: tuple[str, ...] | None = None
    mode: str = "thread"
    deterministic: int | None = None  # --deterministic with this --deterministic-seed

    def command_args(self) -> list[str]:
        flags = list(self.args)
        if self.deterministic is not None:
            flags += ["--deterministic", f"--deterministic-seed={self.deterministic}"]
        if self.admission_plugins is not None:
            flags.append("--enable-admission-plugins=" + ",".join(self.admission_plugins))
        if self.disable_admission_plugins is not None:
            flags.append("--disable-admission-plugins=" + ",".join(self.disable_admission_plugins))
        if self.authorization_mode is not None:
            flags.append("--authorization-mode=" + ",".join(self.authorization_mode))
        if self.controllers is not None:
            flags.append("--controllers=" + ",".join(self.controllers))
        return flags

    def with_mark(self, mark: pytest.Mark, base_dir: Path) -> ServerSettings:
        if mark.args:
            raise pytest.UsageError(f"@pytest.mark.{MARK} takes keyword arguments only, not {mark.args!r}")
        unknown = set(mark.kwargs) - set(MARK_ARGUMENTS)
        if unknown:
            raise pytest.UsageError(
                f"@pytest.mark.{MARK}: unknown argument(s) {sorted(unknown)}; known: {sorted(MARK_ARGUMENTS)}"
            )
        kwargs = mark.kwargs
        changes: dict[str, Any] = {}
        if "crds" in kwargs:
            changes["crds"] = self.crds + tuple(str(base_dir / path) for path in _strings(kwargs["crds"]))
        if "args" in kwargs:
            changes["args"] = self.args + _strings(kwargs["args"])
        for name in LIST_SETTINGS:
            if name in kwargs:
                changes[name] = None if kwargs[name] is None else _strings(kwargs[name])
        if "mode" in kwargs:
            changes["mode"] = _mode(kwargs["mode"])
        if "deterministic" in kwargs:
            changes["deterministic"] = _seed(kwargs["deterministic"])
        return replace(self, **changes)


LIST_SETTINGS = ("admission_plugins", "disable_admission_plugins", "authorization_mode", "controllers")
MARK_ARGUMENTS = ("crds", "args", *LIST_SETTINGS, "mode", "deterministic")


def _strings(value: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """A single value or a list of them; a string stays one value (never its characters)."""
    if isinstance(value, str | os.PathLike):
        return (os.fspath(value),)
    return tuple(os.fspath(item) for item in value)


def _seed(value: bool | int | None) -> int | None:
    """deterministic=True: --deterministic with seed 0; an int: that seed; False or None: off."""
    if value is None or value is False:
        return None
    return 0 if value is True else int(value)


def _comma_list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _mode(value: str) -> str:
    if value not in MODES:
        raise pytest.UsageError(f"kube-apiserver mode must be one of {MODES}, not {value!r}")
    return value


# ---- options ----


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kube-apiserver", "kube-apiserver test servers (kube_apiserver.testing)")
    group.addoption(
        "--kube-apiserver-crds",
        action="append",
        default=[],
        metavar="PATH",
        help="apply the CustomResourceDefinitions of this directory or file to every server (repeatable)",
    )
    group.addoption(
        "--kube-apiserver-admission-plugins",
        metavar="LIST",
        help="comma-separated admission plugins to enable on every server (--enable-admission-plugins)",
    )
    group.addoption(
        "--kube-apiserver-disable-admission-plugins",
        metavar="LIST",
        help="comma-separated default admission plugins to disable on every server (--disable-admission-plugins)",
    )
    group.addoption(
        "--kube-apiserver-authorization-mode",
        metavar="LIST",
        help="the servers' --authorization-mode (e.g. RBAC or Node,RBAC)",
    )
    group.addoption(
        "--kube-apiserver-controllers",
        metavar="LIST",
        help="comma-separated embedded controllers the servers run (default: all; '' for none)",
    )
    group.addoption(
        "--kube-apiserver-arg",
        action="append",
        default=[],
        metavar="FLAG",
        help="a kube-apiserver flag for every server, e.g. --kube-apiserver-arg=--v=2 (repeatable)",
    )
    group.addoption(
        "--kube-apiserver-mode",
        choices=MODES,
        help="run the servers in this process (thread, the default) or as subprocesses",
    )
    parser.addini(
        "kube_apiserver_crds", "CRD directories or files for every server", type="paths", default=[]
    )
    parser.addini("kube_apiserver_admission_plugins", "comma-separated admission plugins to enable")
    parser.addini("kube_apiserver_disable_admission_plugins", "comma-separated admission plugins to disable")
    parser.addini("kube_apiserver_authorization_mode", "the servers' --authorization-mode")
    parser.addini("kube_apiserver_controllers", "comma-separated embedded controllers (empty: all)")
    parser.addini("kube_apiserver_args", "kube-apiserver flags for every server", type="args", default=[])
    parser.addini("kube_apiserver_mode", "thread (the default) or subprocess")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARK_HELP)


def settings_from_options(config: pytest.Config) -> ServerSettings:
    """The command line's settings, each falling back to the ini file's."""
    invoked_in = config.invocation_params.dir
    crds = [str(invoked_in / path) for path in config.getoption("kube_apiserver_crds")]
    ini_crds = [str(path) for path in config.getini("kube_apiserver_crds")]
    args = list(config.getini("kube_apiserver_args")) + list(config.getoption("kube_apiserver_arg"))
    mode = config.getoption("kube_apiserver_mode") or config.getini("kube_apiserver_mode") or "thread"
    return ServerSettings(
        args=tuple(args),
        crds=tuple(crds or ini_crds),
        **{name: _list_setting(config, name) for name in LIST_SETTINGS},
        mode=_mode(mode),
    )


def _list_setting(config: pytest.Config, name: str) -> tuple[str, ...] | None:
    """The option's comma list ('' is an empty list), else the ini's (empty: unset), else None."""
    given = config.getoption(f"kube_apiserver_{name}")
    if given is not None:
        return _comma_list(given)
    ini = config.getini(f"kube_apiserver_{name}")
    return _comma_list(ini) if ini else None


def settings_for(node: pytest.Item | pytest.Collector, config: pytest.Config) -> ServerSettings:
    """The options, then the node's marks from the farthest (module) to the closest (the test itself)."""
    settings = settings_from_options(config)
    base_dir = Path(node.path).parent
    for mark in reversed(list(node.iter_markers(MARK))):
        settings = settings.with_mark(mark, base_dir)
    return settings


# ---- fixtures ----


class ServerSeeds:
    """What the session's servers start from: a template per distinct command line (a server bootstrapped
    once, with no controllers, then copied into each server's data dir: it starts as a restart, several
    times faster than a first start), or, on an external store (etcd) where a copy means nothing, one PKI."""

    EXTERNAL_STORAGE_FLAGS = ("--storage-backend", "--etcd-servers")
    # Flags that change nothing a bootstrap stores (the bootstrap policy is written whatever the authorization
    # mode; controllers and admission act on later writes): one template serves every choice of them.
    TEMPLATE_NEUTRAL_FLAGS = (
        "--controllers",
        "--enable-admission-plugins",
        "--disable-admission-plugins",
        "--authorization-mode",
    )

    def __init__(self, directory: Path):
        self.directory = directory
        self._templates: dict[tuple[str, ...], Template] = {}
        self._pki: PKI | None = None

    def server(self, settings: ServerSettings) -> APIServer:
        from .server import PKI, APIServer

        args = settings.command_args()
        if any(arg.startswith(self.EXTERNAL_STORAGE_FLAGS) for arg in args):
            if self._pki is None:
                self._pki = PKI.create(str(self.directory / "pki"))
            return APIServer(args=args, mode=settings.mode, pki=self._pki)  # type: ignore[arg-type]
        return APIServer(args=args, mode=settings.mode, template=self._template(args))  # type: ignore[arg-type]

    def _template(self, args: list[str]) -> Template:
        from .server import Template

        key = tuple(arg for arg in args if not arg.startswith(self.TEMPLATE_NEUTRAL_FLAGS))
        if key not in self._templates:
            directory = self.directory / f"template-{len(self._templates)}"
            self._templates[key] = Template.create([*key, "--controllers="], directory=str(directory))
        return self._templates[key]


def _serve(settings: ServerSettings, seeds: ServerSeeds) -> Iterator[APIServer]:
    from .crds import apply_crds, read_crds

    crds = read_crds(*settings.crds)  # a missing or malformed file fails the test before a server starts
    with seeds.server(settings) as server:
        if crds:
            apply_crds(server, crds)
        yield server


@pytest.fixture(scope="session")
def kube_apiserver_seeds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerSeeds]:
    """The templates (or PKI) the session's servers start from, made when a server first needs one."""
    directory = tmp_path_factory.mktemp("kube-apiserver-seeds")
    yield ServerSeeds(directory)
    # each template is a whole store: pytest keeps its last runs' temporary directories, not these
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def kube_apiserver_session(
    request: pytest.FixtureRequest, kube_apiserver_seeds: ServerSeeds
) -> Iterator[APIServer]:
    """A server shared by every test of the session (of the xdist worker), configured by the options."""
    yield from _serve(settings_from_options(request.config), kube_apiserver_seeds)


@pytest.fixture(scope="module")
def kube_apiserver_module(
    request: pytest.FixtureRequest, kube_apiserver_seeds: ServerSeeds
) -> Iterator[APIServer]:
    """A server shared by the tests of a module, configured by the options and the module's marks."""
    yield from _serve(settings_for(request.node, request.config), kube_apiserver_seeds)


@pytest.fixture
def kube_apiserver(request: pytest.FixtureRequest, kube_apiserver_seeds: ServerSeeds) -> Iterator[APIServer]:
    """A fresh server for this test alone, configured by the options and the test's marks."""
    yield from _serve(settings_for(request.node, request.config), kube_apiserver_seeds)
