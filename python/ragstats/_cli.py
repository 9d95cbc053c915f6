"""The ``stats`` console entry point: the Rust command line, run in this process."""

import signal
import sys


def main() -> None:
    from ragstats import _ragstats

    # Ctrl-C stops the command as it stops the native binary: Python's own SIGINT handler
    # only runs between bytecodes, and none run while the command does.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_ragstats.run_cli(["stats", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
