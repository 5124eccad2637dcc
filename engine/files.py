"""The one way the engine reads a file it is given: at most a limit, whatever the OS says.

Catalogues, profiles, measurements, traces and config.json files are untrusted input. A file's
reported size is not trusted (devices and FIFOs report 0: `/dev/zero` would be read forever),
so at most `limit + 1` bytes are read, and one byte over the limit refuses the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class FileLimitError(ValueError):
    """A file that cannot be read, or is larger than its limit; the message says which."""


def read_bounded(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The bytes of `path` if it holds at most `limit` bytes.

    Raises:
        FileLimitError: cannot be read (with the OS's reason), not a regular file (a FIFO or a
            device: reading one could block or never end), or larger than `limit`.
    """
    try:
        kind = os.stat(path).st_mode
        if not stat.S_ISREG(kind):  # a FIFO would block until a writer came; a device is endless
            raise FileLimitError(f"{what}: {str(path)[:80]} is not a regular file")
        with Path(path).open("rb") as file:
            data = file.read(limit + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise FileLimitError(f"{what}: cannot read {str(path)[:80]} ({reason})") from None
    if len(data) > limit:
        raise FileLimitError(f"{what}: larger than the limit of {limit:,} bytes")
    return data
