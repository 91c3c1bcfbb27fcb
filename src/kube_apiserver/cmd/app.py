"""The kube-apiserver command: parse -> complete -> validate -> run (cmd/kube-apiserver/app)."""

from __future__ import annotations

import sys

import uvloop

from .. import logs
from ..apimachinery.field import aggregate_message
from .options import ServerRunOptions


def main(argv: list[str] | None = None) -> None:
    opts = ServerRunOptions.parse(sys.argv[1:] if argv is None else argv)
    completed = opts.complete()
    errs = completed.validate()
    if errs:
        sys.stderr.write(f"Error: {aggregate_message(errs)}\n")
        raise SystemExit(1)
    logs.setup(completed.verbosity)
    opts.print_flags()
    from .server import run
    uvloop.run(run(completed))


if __name__ == "__main__":
    main()
