"""klog-style log lines and -v verbosity."""

from __future__ import annotations

import logging
import os
import re

import pytest

from kube_apiserver import logs

HEADER = re.compile(r"^([IWEF])(\d{4}) (\d\d:\d\d:\d\d\.\d{6}) ([ \d]{7}) ([\w.]+):(\d+)\] (.*)$")


@pytest.fixture
def klog(capsys):
    logs.setup(2)
    yield capsys
    logs.reset()


def lines(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_header_format(klog):
    logs.info("hello %s", "world")
    (line,) = lines(klog)
    match = HEADER.match(line)
    assert match, line
    assert match.group(1) == "I"
    assert match.group(4) == f"{os.getpid():>7}"
    assert match.group(5) == "test_logs.py"
    assert match.group(7) == "hello world"


def test_severities(klog):
    logs.warning("w")
    logs.error("e")
    logging.getLogger("some.library").critical("f")
    assert [line[0] for line in lines(klog)] == ["W", "E", "F"]


def test_verbosity_gates_info_v(klog):
    assert logs.V(2) and not logs.V(3)
    logs.info_v(2, "shown")
    logs.info_v(3, "hidden")
    output = lines(klog)
    assert len(output) == 1 and output[0].endswith("] shown")
    assert "test_logs.py:" in output[0]  # the caller's file, not logs.py


def test_fatal_exits_255(klog):
    with pytest.raises(SystemExit) as exc:
        logs.fatal("boom")
    assert exc.value.code == 255
    assert lines(klog)[0].startswith("F")
