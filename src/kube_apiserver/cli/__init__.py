"""Command-line plumbing shared by the server's flags: a pflag-compatible flag parser, Go-style values
(durations, IPs, port ranges...), cobra/component-base style help output and error aggregation."""
