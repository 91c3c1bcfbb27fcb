"""What keeps a start fast (bench/startup.py measures it): what the command leaves unimported, the
signing key parsed once, schema types resolved once, and the garbage collector paused only while starting."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery.managedfields.schematype import resolve
from kube_apiserver.apimachinery.openapischema import SchemaSource
from kube_apiserver.cmd import app
from kube_apiserver.serviceaccount import keys

# Imported only when a webhook, proxy or aggregated API is called, or a CRD is written or served.
NOT_IMPORTED = ["aiohttp", "yarl", "kubernetes_validate", "jsonschema",
                "kube_apiserver.apiextensions.validation.crd", "kube_apiserver.apiextensions.schema.structural"]


def test_the_command_imports_nothing_a_start_does_not_call():
    code = ("import json, sys, types\n"
            "import kube_apiserver.cmd.app, kube_apiserver.cmd.server\n"
            "print(json.dumps([n for n, m in sys.modules.items() if type(m) is types.ModuleType]))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                           text=True).stdout))
    assert not loaded & set(NOT_IMPORTED)


# What --workers' storage process must not wait for before it starts the workers: checking the flags.
NOT_IMPORTED_BY_FLAGS = ["kube_apiserver.controllers.manager", "kube_apiserver.controllers.certificates.signer",
                         "kube_apiserver.controllers.podautoscaler.horizontal", "kube_apiserver.api.core",
                         "kube_apiserver.authentication.oidc.authenticator"]


def test_checking_the_flags_imports_no_controller_nor_the_apis(tmp_path):
    code = ("import json, sys, types\n"
            "from kube_apiserver.cmd.options import ServerRunOptions\n"
            f"opts = ServerRunOptions.parse(['--data-dir', {str(tmp_path)!r}, '--secure-port=0', '--workers=2'])\n"
            "assert not opts.complete().validate()\n"
            "print(json.dumps([n for n, m in sys.modules.items() if type(m) is types.ModuleType]))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                           text=True).stdout))
    assert not loaded & set(NOT_IMPORTED_BY_FLAGS)


def test_schema_definitions_do_not_import_their_package():
    code = "import sys; from kube_apiserver.api import schemas; schemas.definitions(); print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "'kubernetes_validate'" not in out and "'jsonschema'" not in out


def _pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def test_the_generated_signing_key_is_never_parsed_again(tmp_path, monkeypatch):
    # A start reads the key file four times; OpenSSL's RSA check costs ~40 ms each time.
    path = keys.ensure_signing_key(str(tmp_path))
    parses = []
    real = serialization.load_pem_private_key
    monkeypatch.setattr(serialization, "load_pem_private_key", lambda *a, **k: parses.append(1) or real(*a, **k))
    assert isinstance(keys.load_private_key(path), rsa.RSAPrivateKey)
    assert len(keys.load_public_keys(path)) == 1
    assert keys.load_private_key(path) is keys.load_private_key(path)
    assert parses == []


@pytest.mark.parametrize("field", ["dmp1", "dmq1", "iqmp", "d"])
def test_an_inconsistent_rsa_key_is_still_rejected(tmp_path, field):
    numbers = rsa.generate_private_key(public_exponent=65537, key_size=1024).private_numbers()
    values = {name: getattr(numbers, name) for name in ("p", "q", "d", "dmp1", "dmq1", "iqmp")}
    values[field] += 2
    bad = rsa.RSAPrivateNumbers(**values, public_numbers=numbers.public_numbers)
    path = tmp_path / "sa.key"
    path.write_bytes(_pem(bad.private_key(unsafe_skip_rsa_key_validation=True)))
    with pytest.raises(ValueError, match=keys.NO_PRIVATE_KEY):
        keys.load_private_key(str(path))


def test_schema_types_are_resolved_once_per_node():
    node = SchemaSource(schemas.definitions, schemas.schema_name).for_kind("apps", "v1", "Deployment")
    atom = resolve(node)
    assert resolve(node) is atom
    spec = atom.map.field_type("spec")
    assert atom.map.field_type("spec") is spec
    assert resolve(spec).map.field_type("template") is resolve(spec).map.field_type("template")


def test_the_collector_runs_again_once_listening():
    async def serving(started: asyncio.Event) -> None:
        started.set()
        await asyncio.sleep(0)

    thresholds = gc.get_threshold()
    gc.disable()
    try:
        started = asyncio.Event()
        asyncio.run(app._collect_once_listening(serving(started), started))
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == app.GC_THRESHOLDS  # a serving process's, not CPython's defaults
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        gc.enable()


def test_the_collector_is_on_when_the_command_exits_early(capsys):
    with pytest.raises(SystemExit):
        app.main(["--version"])
    assert gc.isenabled()
