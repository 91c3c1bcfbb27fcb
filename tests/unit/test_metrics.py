"""The labelled counters and histograms of /metrics (kube_apiserver/metrics.py) in Prometheus' text format."""

from __future__ import annotations

from kube_apiserver import metrics


def test_counter_lines_sorted_and_escaped():
    counter = metrics.Counter("things_total", "Things.", ("kind",))
    assert counter.lines() == []  # nothing observed: no header either
    counter.inc('b"x')
    counter.inc("a", amount=2)
    assert counter.lines() == ["# HELP things_total [ALPHA] Things.", "# TYPE things_total counter",
                               'things_total{kind="a"} 2', 'things_total{kind="b\\"x"} 1']


def test_histogram_buckets_are_cumulative():
    histogram = metrics.Histogram("took_seconds", "Took.", ("result",), (0.1, 1.0))
    for value in (0.05, 0.5, 5.0):
        histogram.observe("ok", value=value)
    assert histogram.lines()[2:] == ['took_seconds_bucket{result="ok",le="0.1"} 1',
                                     'took_seconds_bucket{result="ok",le="1.0"} 2',
                                     'took_seconds_bucket{result="ok",le="+Inf"} 3',
                                     'took_seconds_sum{result="ok"} 5.55', 'took_seconds_count{result="ok"} 3']
    assert metrics.exponential_buckets(0.001, 2, 3) == (0.001, 0.002, 0.004)
