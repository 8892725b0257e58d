"""``python -m memskill`` and the ``memskill`` console script: the command line."""

import sys


def main() -> None:
    """Runs the command line with ``sys.argv`` and exits with its status."""
    from . import main as run

    sys.exit(run(["memskill", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
