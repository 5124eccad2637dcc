"""The one way the engine reads a file it is given, and what every reader of one shares.

Catalogues, profiles, measurements, traces and config.json files are untrusted input. A file's
reported size is not trusted (devices and FIFOs report 0: `/dev/zero` would be read forever),
so at most `limit + 1` bytes are read, and one byte over the limit refuses the file.

Rules every reader follows: a leading UTF-8 byte order mark is dropped (Excel and Notepad
write one), a value from the file is echoed in a message cut at MAX_ECHO_CHARS (`echo`: a
4,000-digit number is not printed whole), and a name given twice (a CSV column, a JSON key) is
refused by name (`repeated`), never read as its last value. TOML refuses a key given twice by
itself (the TOML 1.0 spec); `toml_problem` quotes the line tomllib points at, so its message
names the key too.

MAX_UPLOAD_MB is the one size limit of a file a user gives: the app's server takes uploads of at
most that many megabytes (`server.maxUploadSize` in .streamlit/config.toml, checked equal by
tests/test_dockerfile.py), its uploaders say it and refuse larger files in the browser, and the
engine reads at most MAX_UPLOAD_BYTES of a trace, a measurements file, a catalogue or a
config.json. Streamlit's server counts a megabyte as 2**20 bytes and the browser's uploader as
10**6 (2**20 on Windows); the engine counts 10**6, the smallest of them, so every file the
uploader takes reaches the server, and one the engine refuses is refused with its size.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

MAX_ECHO_CHARS = 40  # a value echoed in a message is cut here, with "…"

MAX_UPLOAD_MB = 1  # megabytes a user may upload (the server's server.maxUploadSize)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1_000_000  # what the engine reads of a file a user gives


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


def echo(value: object, limit: int = MAX_ECHO_CHARS) -> str:
    """A value from an untrusted file as a message shows it, at most `limit` characters and
    "…": text quoted (echo("-4") == "'-4'"), anything else as printed (echo(12) == "12")."""
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit] + "…")
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def repeated(names: Iterable[str]) -> list[str]:
    """The names given more than once (a header's columns, an object's keys), in order."""
    counts = Counter(names)
    return [name for name, n in counts.items() if n > 1]


def toml_problem(exc: Exception, text: str) -> str:
    """tomllib's message with the line it points at quoted, so that a key given twice is named:
    "Cannot overwrite a value (at line 4, column 15): 'efficiency = 0.6'"."""
    message = str(exc)
    found = re.search(r"at line (\d+)", message)
    lines = text.splitlines()
    if found is None or not 1 <= int(found[1]) <= len(lines):
        return message
    return f"{message}: {echo(lines[int(found[1]) - 1].strip(), 60)}"
