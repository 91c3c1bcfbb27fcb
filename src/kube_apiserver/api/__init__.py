"""Built-in resources, one package or module per API group. Each resource is defined once: its
ResourceInfo (names, scope, kind), strategy, table and storage; routes, discovery and tables
follow from that definition."""
