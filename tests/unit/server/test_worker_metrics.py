"""--workers: a scrape reaches one worker, which merges the other workers' metrics into its own
(metrics.merge, server/peers.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kube_apiserver.metrics import merge
from kube_apiserver.server.metrics import SHARED_STATE_GAUGES
from kube_apiserver.server.peers import PeerExpositions


def exposition(requests: int, get_404: int, inflight: int, pods: int, bucket: int, seconds: float) -> str:
    return f"""# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{{verb="POST",code="201"}} {requests}
apiserver_request_total{{verb="GET",code="404"}} {get_404}
# HELP apiserver_current_inflight_requests [STABLE] Inflight.
# TYPE apiserver_current_inflight_requests gauge
apiserver_current_inflight_requests{{request_kind="readOnly"}} {inflight}
# HELP apiserver_storage_objects [STABLE] Number of stored objects.
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{{resource="pods"}} {pods}
# HELP apiserver_request_duration_seconds [STABLE] Latency.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{{verb="POST",le="0.005"}} {bucket}
apiserver_request_duration_seconds_bucket{{verb="POST",le="+Inf"}} {requests}
apiserver_request_duration_seconds_sum{{verb="POST"}} {seconds}
apiserver_request_duration_seconds_count{{verb="POST"}} {requests}
"""


def test_counters_histograms_and_held_gauges_are_summed_shared_state_taken_once() -> None:
    one = exposition(requests=3, get_404=1, inflight=2, pods=7, bucket=2, seconds=0.25)
    other = exposition(requests=5, get_404=0, inflight=1, pods=7, bucket=4, seconds=0.5)
    assert merge([one, other], SHARED_STATE_GAUGES) == exposition(
        requests=8, get_404=1, inflight=3, pods=7, bucket=6, seconds=0.75)


def test_a_family_or_sample_only_one_worker_has_is_kept_and_each_header_given_once() -> None:
    one = exposition(requests=1, get_404=0, inflight=0, pods=1, bucket=1, seconds=0.5)
    other = ("# HELP only_here_total [ALPHA] Seen by one worker.\n# TYPE only_here_total counter\n"
             'only_here_total{a="x"} 4\n'
             '# HELP apiserver_request_total [STABLE] Counter of apiserver requests.\n'
             '# TYPE apiserver_request_total counter\n'
             'apiserver_request_total{verb="DELETE",code="200"} 2\n')
    merged = merge([one, other], SHARED_STATE_GAUGES)
    assert merged.count("# TYPE apiserver_request_total counter") == 1
    assert 'only_here_total{a="x"} 4\n' in merged
    requests = merged.split("# HELP apiserver_request_total")[1].split("# HELP")[0]
    assert requests.splitlines()[2:] == ['apiserver_request_total{verb="POST",code="201"} 1',
                                         'apiserver_request_total{verb="GET",code="404"} 0',
                                         'apiserver_request_total{verb="DELETE",code="200"} 2']


def test_one_process_exposition_is_left_as_it_is() -> None:
    text = exposition(requests=2, get_404=1, inflight=0, pods=3, bucket=1, seconds=0.125)
    assert merge([text], SHARED_STATE_GAUGES) == text


def test_each_worker_hears_every_other_and_not_itself(tmp_path: Path) -> None:
    """And the last worker to stop removes the directory, which a killed storage process leaves behind."""
    directory = tmp_path / "peers"
    directory.mkdir()

    async def main() -> None:
        workers = [PeerExpositions(str(directory), index, lambda index=index: f"text of {index}\n")
                   for index in range(3)]
        for worker in workers:
            await worker.start()
        try:
            assert sorted(await workers[0].others()) == ["text of 1\n", "text of 2\n"]
            assert sorted(await workers[2].others()) == ["text of 0\n", "text of 1\n"]
        finally:
            for worker in workers[:2]:
                await worker.stop()
            assert [path.name for path in directory.iterdir()] == ["2.sock"]
            await workers[2].stop()
        assert not directory.exists()

    asyncio.run(main())


def test_a_gone_worker_or_an_answer_cut_short_is_left_out(tmp_path: Path) -> None:
    async def main() -> None:
        asking = PeerExpositions(str(tmp_path), 0, lambda: "")
        await asking.start()
        (tmp_path / "1.sock").touch()  # a worker that exited without removing its socket: refused

        async def cut_short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"apiserver_request_total 3\n")  # no end mark: the worker died mid-answer
            writer.close()

        dying = await asyncio.start_unix_server(cut_short, path=str(tmp_path / "2.sock"))
        whole = PeerExpositions(str(tmp_path), 3, lambda: "whole\n")
        await whole.start()
        try:
            assert await asking.others() == ["whole\n"]
        finally:
            dying.close()
            await whole.stop()
            await asking.stop()

    asyncio.run(main())

