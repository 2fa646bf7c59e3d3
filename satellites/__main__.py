"""The satellite client (microphone and speaker per room) arrives with its own issue."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print(
        "satellite: the room client is not part of this release yet; "
        "see README.md (Satellites) for its status.",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
