"""kube-apiserver command line: parsing, --help/--version, Complete() defaults and Validate() errors."""

from __future__ import annotations

import ipaddress
import os
import re

import pytest
from cryptography import x509

from kube_apiserver.cli.aggregate import aggregate_message
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.cmd.options import DESCRIPTION, ServerRunOptions
from kube_apiserver.server import certs
from kube_apiserver.server.options import authorization


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Never touch ~/.local/share: the default data dir comes from the environment."""
    path = tmp_path / "data"
    monkeypatch.setenv("KUBE_APISERVER_DATA_DIR", str(path))
    return path


def parse(*argv: str) -> ServerRunOptions:
    return ServerRunOptions.parse(list(argv))


def errors_for(*argv: str) -> list[str]:
    return parse(*argv).complete().validate()


def parse_failure(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        parse(*argv)
    assert exc.value.code == 1
    return capsys.readouterr().err


# --- parsing -------------------------------------------------------------------------------------


def test_defaults():
    opts = parse()
    assert opts.secure_serving.bind_address == "127.0.0.1"
    assert opts.secure_serving.bind_port == 6443
    assert opts.etcd.storage_backend == "sqlite"
    assert opts.etcd.etcd_prefix == "/registry"
    assert opts.etcd.compaction_interval == 300.0
    assert opts.etcd.enable_watch_cache is True
    assert opts.generic.request_timeout == 60.0
    assert opts.generic.min_request_timeout == 1800
    assert (opts.generic.max_requests_inflight, opts.generic.max_mutating_requests_inflight) == (400, 200)
    assert opts.generic.shutdown_delay_duration == 0.0
    assert opts.event_ttl == 3600.0
    assert opts.service_node_port_range == PortRange(30000, 2768)
    assert opts.authentication.anonymous is True
    assert opts.logs.verbosity == 0


def test_flag_value_syntaxes():
    opts = parse(
        "--secure-port=7443", "--etcd-prefix", "/other", "--bind-address", "0.0.0.0", "--secure_port", "8443"
    )
    assert opts.secure_serving.bind_port == 8443  # last one wins; `_` is normalized to `-`
    assert opts.etcd.etcd_prefix == "/other"
    assert opts.secure_serving.bind_address == "0.0.0.0"


@pytest.mark.parametrize(
    ("argv", "seconds"),
    [
        (["--request-timeout=30s"], 30.0),
        (["--request-timeout", "5m"], 300.0),
        (["--request-timeout=1h30m"], 5400.0),
        (["--request-timeout=1.5s"], 1.5),
        (["--request-timeout=250ms"], 0.25),
        (["--request-timeout=0"], 0.0),
    ],
)
def test_durations(argv, seconds):
    assert parse(*argv).generic.request_timeout == seconds


def test_bad_duration(capsys):
    err = parse_failure(capsys, "--request-timeout=5x")
    assert err.endswith(
        'Error: invalid argument "5x" for "--request-timeout" flag: time: unknown unit "x" in duration "5x"\n'
    )
    err = parse_failure(capsys, "--event-ttl=5")
    assert err.endswith(
        'Error: invalid argument "5" for "--event-ttl" flag: time: missing unit in duration "5"\n'
    )


def test_bool_flags():
    opts = parse("--anonymous-auth=false", "--allow-privileged", "--watch-cache=0", "--profiling=False")
    assert opts.authentication.anonymous is False
    assert opts.allow_privileged is True
    assert opts.etcd.enable_watch_cache is False
    assert opts.features.enable_profiling is False


def test_bool_flag_does_not_consume_next_argument(capsys):
    err = parse_failure(capsys, "--anonymous-auth", "false")
    assert err == 'Error: "kube-apiserver" does not take any arguments, got ["false"]\n'


def test_bad_bool(capsys):
    err = parse_failure(capsys, "--watch-cache=maybe")
    assert err.endswith(
        'Error: invalid argument "maybe" for "--watch-cache" flag: strconv.ParseBool: parsing "maybe": invalid syntax\n'
    )


def test_unknown_flag_prints_usage_then_error(capsys):
    err = parse_failure(capsys, "--foo=bar")
    assert err.startswith("Usage:\n  kube-apiserver [flags]\n")
    assert err.endswith("\nError: unknown flag: --foo\n")


def test_unknown_shorthand(capsys):
    assert parse_failure(capsys, "-x").endswith("Error: unknown shorthand flag: 'x' in -x\n")


def test_missing_argument(capsys):
    assert parse_failure(capsys, "--etcd-prefix").endswith("Error: flag needs an argument: --etcd-prefix\n")


def test_bad_int(capsys):
    err = parse_failure(capsys, "--secure-port=abc")
    assert err.endswith(
        'Error: invalid argument "abc" for "--secure-port" flag: strconv.ParseInt: parsing "abc": invalid syntax\n'
    )


def test_bad_ip(capsys):
    err = parse_failure(capsys, "--bind-address=localhost")
    assert err.endswith(
        'Error: invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"\n'
    )


@pytest.mark.parametrize("argv", [["-v", "3"], ["-v=3"], ["-v3"], ["--v=3"], ["--v", "3"]])
def test_verbosity(argv):
    assert parse(*argv).logs.verbosity == 3


def test_string_slices_split_and_append():
    opts = parse("--etcd-servers=http://a:2379,http://b:2379", "--etcd-servers", "http://c:2379")
    assert opts.etcd.etcd_servers == ["http://a:2379", "http://b:2379", "http://c:2379"]


def test_feature_gates_map():
    opts = parse("--feature-gates=WatchList=false,APIServerIdentity=true", "--feature-gates", "AllAlpha=true")
    assert opts.features.feature_gates == {"WatchList": False, "APIServerIdentity": True, "AllAlpha": True}
    assert opts.features.enabled("WatchList") is False
    assert opts.features.enabled("StorageVersionAPI") is True  # alpha, switched on by AllAlpha


def test_bad_feature_gate_value(capsys):
    err = parse_failure(capsys, "--feature-gates=WatchList=nope")
    assert 'for "--feature-gates" flag: invalid value of WatchList: nope, err: strconv.ParseBool' in err


def test_node_port_range():
    assert parse("--service-node-port-range=20000-20100").service_node_port_range == PortRange(20000, 101)
    assert parse("--service-node-port-range=30000+99").service_node_port_range == PortRange(30000, 100)


def test_node_port_range_invalid(capsys):
    err = parse_failure(capsys, "--service-node-port-range=32767-30000")
    assert err.endswith(
        'Error: invalid argument "32767-30000" for "--service-node-port-range" flag: '
        "end port cannot be less than start port: 32767-30000\n"
    )
    err = parse_failure(capsys, "--service-node-port-range=1-70000")
    assert "the port range cannot be greater than 65535: 1-70000" in err


# --- --help and --version ------------------------------------------------------------------------


def help_output(capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        parse("--help")
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_help_layout(capsys):
    out = help_output(capsys)
    assert out.startswith(DESCRIPTION + "\n\nUsage:\n  kube-apiserver [flags]\n\nGeneric flags:\n\n")
    headers = [line for line in out.splitlines() if line.endswith(" flags:")]
    assert headers == [
        "Generic flags:",
        "Etcd flags:",
        "Secure serving flags:",
        "Auditing flags:",
        "Features flags:",
        "Authentication flags:",
        "Authorization flags:",
        "API enablement flags:",
        "Admission flags:",
        "Logs flags:",
        "Misc flags:",
        "Global flags:",
    ]


def test_help_flag_lines(capsys):
    lines = help_output(capsys).splitlines()
    port = next(line for line in lines if line.startswith("      --secure-port "))
    assert re.match(r"^      --secure-port int {3,}The port on which to serve HTTPS", port)
    assert port.endswith("It cannot be switched off with 0. (default 6443)")
    # pflag aligns the help text of a section on its longest flag, plus three spaces.
    assert next(line for line in lines if line.startswith("      --tls-sni-cert-key namedCertKey   A pair"))
    assert next(line for line in lines if line.startswith("      --tls-private-key-file string     File"))
    assert any(line.startswith("  -v, --v Level   number for the log level verbosity") for line in lines)
    assert any(line.startswith("  -h, --help   ") for line in lines)
    prefix = next(line for line in lines if line.startswith("      --etcd-prefix "))
    assert prefix.endswith('(default "/registry")')
    assert any("--request-timeout duration" in line and line.endswith("(default 1m0s)") for line in lines)


def test_short_help(capsys):
    with pytest.raises(SystemExit) as exc:
        parse("-h")
    assert exc.value.code == 0
    assert "Usage:\n  kube-apiserver [flags]" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        parse("--version")
    assert exc.value.code == 0
    assert capsys.readouterr().out == "Kubernetes v1.34.0\n"


def test_version_false_does_not_exit():
    assert parse("--version=false").version == "false"


# --- Complete() ----------------------------------------------------------------------------------


def test_complete_defaults(data_dir):
    completed = parse().complete()
    assert completed.validate() == []
    assert completed.data_dir == str(data_dir)
    assert completed.secure_serving.cert_dir == os.path.join(data_dir, "pki")
    assert completed.api_server_service_ip == "10.0.0.1"
    assert completed.service_cluster_ip_ranges == [ipaddress.ip_network("10.0.0.0/24")]
    assert completed.advertise_address == "127.0.0.1"
    assert completed.authorization.modes == ["AlwaysAllow"]
    assert completed.cert_file == os.path.join(data_dir, "pki", "apiserver.crt")
    assert completed.key_file == os.path.join(data_dir, "pki", "apiserver.key")
    assert completed.ca_file == os.path.join(data_dir, "pki", "ca.crt")
    assert os.path.isfile(completed.cert_file) and os.path.isfile(completed.key_file)


def test_data_dir_flag_overrides_environment(tmp_path):
    completed = parse(f"--data-dir={tmp_path / 'elsewhere'}").complete()
    assert completed.data_dir == str(tmp_path / "elsewhere")
    assert completed.ca_file.startswith(str(tmp_path / "elsewhere"))


def test_anonymous_auth_is_limited_to_public_paths_with_always_allow():
    authn = parse().complete().authentication
    assert authn.anonymous is True and authn.anonymous_public_paths_only is True
    deny = parse("--authorization-mode=AlwaysDeny").complete().authentication
    assert deny.anonymous is True and deny.anonymous_public_paths_only is False
    assert parse("--anonymous-auth=false").complete().authentication.anonymous is False


@pytest.mark.parametrize(
    ("argv", "advertise"),
    [
        ([], "127.0.0.1"),
        (["--bind-address=0.0.0.0"], "127.0.0.1"),
        (["--bind-address=127.0.0.2"], "127.0.0.2"),
        (["--bind-address=0.0.0.0", "--advertise-address=10.1.2.3"], "10.1.2.3"),
    ],
)
def test_advertise_address_default(argv, advertise):
    assert parse(*argv).complete().advertise_address == advertise


def test_self_signed_cert_covers_service_ip_and_advertise_address():
    completed = parse("--service-cluster-ip-range=10.96.0.0/16", "--advertise-address=192.0.2.10").complete()
    cert = x509.load_pem_x509_certificates(open(completed.cert_file, "rb").read())[0]
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    assert {"10.96.0.1", "192.0.2.10", "127.0.0.1"} <= ips
    assert "kubernetes.default.svc" in san.get_values_for_type(x509.DNSName)


def test_dual_stack_service_ranges():
    completed = parse("--service-cluster-ip-range=10.0.0.0/24,fd00::/108").complete()
    assert completed.validate() == []
    assert completed.secondary_service_cluster_ip_range == ipaddress.ip_network("fd00::/108")
    assert completed.api_server_service_ip == "10.0.0.1"


# --- Validate() ----------------------------------------------------------------------------------


def test_secure_port_out_of_range():
    assert errors_for("--secure-port=70000") == [
        "--secure-port 70000 must be between 1 and 65535, inclusive. It cannot be turned off with 0"
    ]


def test_secure_port_zero_is_an_ephemeral_port():
    """A deviation from kube-apiserver (which refuses 0): the kernel picks a free port, for test harnesses."""
    assert errors_for("--secure-port=0") == []


def test_all_errors_are_aggregated():
    errors = errors_for("--secure-port=-1", "--storage-backend=foo", "--authorization-mode=Foo")
    assert errors == [
        "--storage-backend invalid, allowed values: etcd3, sqlite, memory. If not specified, it will default to 'sqlite'",
        "--secure-port -1 must be between 1 and 65535, inclusive. It cannot be turned off with 0",
        'authorization-mode "Foo" is not a valid mode',
    ]
    assert aggregate_message(errors) == "[" + ", ".join(errors) + "]"
    assert aggregate_message(errors[:1]) == errors[0]


def test_bad_cidr():
    assert errors_for("--service-cluster-ip-range=10.0.0.0/33") == [
        "service-cluster-ip-range[0] is not a valid cidr"
    ]
    assert errors_for("--service-cluster-ip-range=10.0.0.0/24,nope") == [
        "service-cluster-ip-range[1] is not a valid cidr"
    ]


def test_bad_cidr_generates_no_certificate(data_dir):
    parse("--service-cluster-ip-range=bogus").complete()
    assert not os.path.exists(os.path.join(data_dir, "pki", "apiserver.crt"))


def test_too_many_cidrs():
    errors = errors_for("--service-cluster-ip-range=10.0.0.0/24,fd00::/108,10.1.0.0/24")
    assert errors == ["--service-cluster-ip-range must not contain more than two entries"]


def test_same_family_twice():
    errors = errors_for("--service-cluster-ip-range=10.0.0.0/24,10.1.0.0/24")
    assert errors == [
        "--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family"
    ]


def test_cidr_too_large_or_too_small():
    assert errors_for("--service-cluster-ip-range=10.0.0.0/8") == [
        "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"
    ]
    assert errors_for("--service-cluster-ip-range=10.0.0.0/30") == [
        "the service cluster IP range must be at least 8 IP addresses"
    ]


def test_service_and_advertise_families_must_match():
    assert errors_for("--service-cluster-ip-range=fd00::/108", "--bind-address=127.0.0.1") == [
        'service IP family "fd00::/108" must match public address family "127.0.0.1"'
    ]
    assert errors_for("--service-cluster-ip-range=fd00::/108", "--bind-address=::") == []


def test_etcd3_requires_servers():
    assert errors_for("--storage-backend=etcd3") == ["--etcd-servers must be specified"]
    assert errors_for("--storage-backend=etcd3", "--etcd-servers=http://127.0.0.1:2379") == []


def test_etcd_flags_are_refused_with_sqlite():
    """With the SQLite backend the etcd connection flags would do nothing."""
    etcd = ("--etcd-servers=http://127.0.0.1:2379", "--etcd-prefix=/other", "--etcd-cafile=ca.crt")
    assert errors_for(*etcd) == [
        "--etcd-servers is only used with --storage-backend=etcd3",
        "--etcd-prefix is only used with --storage-backend=etcd3",
        "--etcd-cafile is only used with --storage-backend=etcd3",
    ]
    assert errors_for("--etcd-prefix=/registry") == []


def test_token_auth_file(tmp_path):
    missing = tmp_path / "missing.csv"
    assert errors_for(f"--token-auth-file={missing}") == [
        f"unable to load --token-auth-file: open {missing}: no such file or directory"
    ]
    present = tmp_path / "tokens.csv"
    present.write_text("token,user,uid\n")
    assert errors_for(f"--token-auth-file={present}") == []


def test_client_ca_file(tmp_path):
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate")
    assert errors_for(f"--client-ca-file={bogus}") == [
        "unable to load client CA file: data does not contain any valid RSA or ECDSA certificates"
    ]


def user_pair(tmp_path) -> certs.ServingCerts:
    return certs.ensure_self_signed_serving_certs(str(tmp_path / "user-pki"), [], [])


def test_tls_cert_file_without_key(tmp_path):
    pair = user_pair(tmp_path)
    assert errors_for(f"--tls-cert-file={pair.cert_file}") == [
        "--tls-private-key-file is required when --tls-cert-file is set"
    ]
    assert errors_for(f"--tls-private-key-file={pair.key_file}") == [
        "--tls-cert-file is required when --tls-private-key-file is set"
    ]


def test_tls_files_unreadable_or_mismatched(tmp_path):
    pair = user_pair(tmp_path)
    missing = tmp_path / "nope.crt"
    assert errors_for(f"--tls-cert-file={missing}", f"--tls-private-key-file={pair.key_file}") == [
        f"open {missing}: no such file or directory"
    ]
    assert errors_for(f"--tls-cert-file={pair.ca_file}", f"--tls-private-key-file={pair.key_file}") == [
        "tls: private key does not match public key"
    ]


def test_user_supplied_tls_pair_is_used(tmp_path, data_dir):
    pair = user_pair(tmp_path)
    completed = parse(
        f"--tls-cert-file={pair.cert_file}", f"--tls-private-key-file={pair.key_file}"
    ).complete()
    assert completed.validate() == []
    assert (completed.cert_file, completed.key_file, completed.ca_file) == (
        pair.cert_file,
        pair.key_file,
        pair.cert_file,
    )
    # No self-signed serving certificate: the pki directory holds only the service account signing key.
    assert os.listdir(os.path.join(data_dir, "pki")) == ["sa.key"]


def test_tls_min_version():
    assert errors_for("--tls-min-version=VersionTLS13") == []
    # cliflag.TLSVersion quotes with %q
    assert errors_for("--tls-min-version=TLS1.3") == ['unknown tls version "TLS1.3"']


def test_tls_cipher_suites():
    secure, insecure = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_RC4_128_SHA"
    assert errors_for(f"--tls-cipher-suites={secure},{insecure}") == []
    assert errors_for("--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,AES128-SHA") == [
        "Cipher suite AES128-SHA not supported or doesn't exist"
    ]


def test_authorization_modes():
    assert errors_for("--authorization-mode=RBAC") == []
    assert errors_for("--authorization-mode=Node,RBAC") == []  # kubeadm's
    assert errors_for("--authorization-mode=RBAC,Node") == []
    assert errors_for("--authorization-mode=AlwaysDeny,AlwaysDeny") == [
        'authorization-mode ["AlwaysDeny" "AlwaysDeny"] has mode specified more than once'
    ]
    assert errors_for("--authorization-mode=AlwaysDeny,AlwaysAllow") == []


def test_implemented_modes_can_be_extended(monkeypatch):
    monkeypatch.setattr(authorization, "IMPLEMENTED_MODES", {"AlwaysAllow", "AlwaysDeny", "RBAC"})
    assert errors_for("--authorization-mode=Node,RBAC") == [
        'authorization-mode "Node" is not implemented by this server yet (implemented: AlwaysAllow, AlwaysDeny, RBAC)'
    ]


def test_admission_plugins():
    opts = parse("--enable-admission-plugins=NodeRestriction", "--disable-admission-plugins=ResourceQuota")
    assert opts.admission.enable_plugins == ["NodeRestriction"]
    chain = opts.admission.enabled_plugin_names()
    assert "NodeRestriction" in chain and "ResourceQuota" not in chain and "NamespaceLifecycle" in chain
    assert errors_for("--enable-admission-plugins=Bogus", "--disable-admission-plugins=Bogus") == [
        'enable-admission-plugins plugin "Bogus" is unknown',
        'disable-admission-plugins plugin "Bogus" is unknown',
        "[Bogus] in enable-admission-plugins and disable-admission-plugins overlapped",
    ]


def test_generic_negative_values():
    assert errors_for("--max-requests-inflight=-1", "--shutdown-delay-duration=-5s") == [
        "--max-requests-inflight can not be negative value",
        "--shutdown-delay-duration can not be negative value",
    ]


def test_runtime_config():
    assert parse("--runtime-config=api/all=true,batch/v1").api_enablement.enabled_overrides() == {
        "api/all": True,
        "batch/v1": True,
    }
    # the API Priority and Fairness controller needs flowcontrol/v1 (validateAPIPriorityAndFairness, checked first)
    assert errors_for("--runtime-config=api/all=false") == [
        "--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true",
        "invalid runtime-config with only api/all=false",
    ]
