"""lazy_import: a module's code runs on the first attribute read, once, even when threads race for it."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from kube_apiserver.lazyimport import lazy_import


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh package `lazypkg` on sys.path; its modules record each run of their code in lazypkg.RUNS."""
    root = tmp_path / "lazypkg"
    root.mkdir()
    (root / "__init__.py").write_text("RUNS = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [n for n in sys.modules if n == "lazypkg" or n.startswith("lazypkg.")]:
        del sys.modules[name]


def write(package, name: str, code: str) -> None:
    (package / f"{name}.py").write_text("import lazypkg\nlazypkg.RUNS.append(__name__)\n" + code)


def test_code_runs_on_the_first_attribute_read(package):
    write(package, "heavy", "VALUE = 42\n")
    module = lazy_import("lazypkg.heavy")
    import lazypkg

    assert lazypkg.RUNS == []
    assert sys.modules["lazypkg.heavy"] is module
    assert lazypkg.heavy is module  # bound on the parent, as `import lazypkg.heavy` does
    assert module.VALUE == 42
    assert module.VALUE == 42
    assert lazypkg.RUNS == ["lazypkg.heavy"]
    assert lazy_import("lazypkg.heavy") is module


def test_from_import_of_a_lazy_module_loads_it(package):
    write(package, "heavy", "def f():\n    return 'f'\n")
    lazy_import("lazypkg.heavy")
    from lazypkg.heavy import f

    assert f() == "f"


def test_a_missing_module_fails_at_once(package):
    with pytest.raises(ModuleNotFoundError):
        lazy_import("lazypkg.nosuchmodule")


def test_threads_wait_for_the_one_running_the_code(package):
    # The first reader runs the code; the others must wait for it, not see a half-made module.
    write(package, "slow", "import time\ntime.sleep(0.2)\nVALUE = 'done'\n")
    module = lazy_import("lazypkg.slow")
    seen: list[object] = []

    def read() -> None:
        try:
            seen.append(module.VALUE)
        except AttributeError as err:
            seen.append(err)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join()
    import lazypkg

    assert seen == ["done"] * 4
    assert lazypkg.RUNS == ["lazypkg.slow"]


def test_a_failing_module_raises_its_error_and_is_forgotten(package):
    write(package, "broken", "raise ValueError('broken at import')\n")
    module = lazy_import("lazypkg.broken")
    with pytest.raises(ValueError, match="broken at import"):
        module.anything  # noqa: B018 - the read is the point
    assert "lazypkg.broken" not in sys.modules
