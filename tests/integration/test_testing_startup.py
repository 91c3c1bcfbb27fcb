"""What a stop leaves: a stopped in-process server's garbage is collected at stop, not during the next start."""

from __future__ import annotations

import gc

from kube_apiserver.testing import APIServer


def test_a_stopped_in_process_server_leaves_no_cyclic_garbage():
    # Its ~20k objects are collected at stop, not by a full collection in the middle of the next start.
    APIServer().start().stop()
    assert gc.collect() < 2000
