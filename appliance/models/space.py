"""Disk space checks and a friendly message when the disk is full."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from appliance.models.errors import ModelFetchError
from appliance.models.progress import human_bytes

MARGIN = 16 * 1024 * 1024  # leave this much free for everything else


def ensure_free_space(folder: Path, needed: int, *, what: str) -> None:
    """Refuse early when ``needed`` bytes (plus a margin) will not fit in ``folder``."""
    if needed <= 0:
        return
    free = shutil.disk_usage(folder).free
    if free < needed + MARGIN:
        raise ModelFetchError(
            f"not enough disk space for {what}: it needs {human_bytes(needed)}, "
            f"{human_bytes(free)} is free in {folder}. Free some space and try again."
        )


def is_disk_full(err: OSError) -> bool:
    return err.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_error(folder: Path, err: OSError) -> ModelFetchError:
    return ModelFetchError(
        f"the disk is full while writing to {folder} ({err.strerror}). "
        "Free some space and run the same command again: the download resumes."
    )
