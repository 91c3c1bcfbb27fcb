"""usable_cores: the affinity mask, bounded by a cgroup v2 CPU quota rounded up (as Go 1.25 sizes GOMAXPROCS)."""

import os

from kube_apiserver.cmd.cores import cgroup_cpu_limit, usable_cores


def test_a_cgroup_quota_is_counted_in_whole_cores_rounded_up(tmp_path):
    cpu_max = tmp_path / "cpu.max"
    for text, cores in (("max 100000\n", 0), ("150000 100000\n", 2), ("50000 100000\n", 1),
                        ("200000 100000\n", 2), ("", 0), ("x y\n", 0), ("100 0\n", 0)):
        cpu_max.write_text(text)
        assert cgroup_cpu_limit(str(cpu_max)) == cores, text
    assert cgroup_cpu_limit(str(tmp_path / "absent")) == 0


def test_the_cores_are_the_affinity_mask_within_the_quota(tmp_path):
    mask = len(os.sched_getaffinity(0))
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("max 100000\n")
    assert usable_cores(str(cpu_max)) == mask
    cpu_max.write_text("100000 100000\n")
    assert usable_cores(str(cpu_max)) == 1
    cpu_max.write_text(f"{100000 * (mask + 3)} 100000\n")
    assert usable_cores(str(cpu_max)) == mask
