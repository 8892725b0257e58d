"""``python -m memskill`` and the ``memskill`` console script: the command line."""

import signal
import sys


def main() -> None:
    """Runs the command line with ``sys.argv`` and exits with its status. Ctrl-C behaves as
    in the native ``memskill`` binary: ``train`` and ``eval`` stop at their next safe point
    and exit 75 (docs/reliability.md), every other command ends at once (the command runs in
    Rust, where Python's KeyboardInterrupt would never be raised)."""
    from . import main as run

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(run(["memskill", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
