"""Freed arrays go back to the operating system: the server's memory after a burst of users.

glibc's malloc serves a block above its mmap threshold (128 KiB at start) with a mapping of its
own, unmapped when freed, but raises the threshold to the size of each such block freed, up to
32 MiB. After one large grid is freed, later reruns' numpy columns are carved from the heap,
between small long-lived objects, and the heap keeps their pages once they are freed.
`return_freed_arrays` fixes the threshold (which turns the raising off) and `trim` hands the
heap's free pages back after a cache or a lapsed session drops its frames. It also holds the
process to ARENA_MAX malloc arenas: every rerun runs in a thread of its own, and glibc gives
threads up to eight arenas per core, each keeping its own freed pages between small live blocks
(a server started with MALLOC_ARENA_MAX=2 peaked 26 MiB lower in the same burst).

Why 1 MiB: on a 16-client burst (bench/memory_burst.py, the planner's grids still in session
state) a fixed 128 KiB threshold left the server at 293 MiB after the burst against 359 MiB with
glibc's default, but made a 50,000-row serve_sweep 1.8× slower (34 → 60 ms: every column a
fresh mapping); 1 MiB left that sweep unchanged. Smaller columns then stay on the heap, which
`trim` returns.
"""

from __future__ import annotations

import ctypes
import functools
import gc

M_MMAP_THRESHOLD = -3  # mallopt's parameter numbers (glibc's malloc.h)
M_ARENA_MAX = -8
MMAP_THRESHOLD = 1 << 20  # bytes: a block this large or larger gets its own mapping
ARENA_MAX = 2  # malloc arenas for the process's threads (glibc's default: 8 per core)


def _libc(name: str):
    """The C library's function `name` (ctypes), or None where it has none (macOS, Windows)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError, TypeError):
        return None


@functools.cache
def return_freed_arrays() -> bool:
    """Fix glibc's mmap threshold at MMAP_THRESHOLD and its arenas at ARENA_MAX for this
    process (once); whether both were set. False where the C library has no mallopt (macOS,
    Windows) or refuses it: nothing changes."""
    mallopt = _libc("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    threshold = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return mallopt(M_ARENA_MAX, ARENA_MAX) == 1 and threshold


def trim() -> bool:
    """Collect the garbage in reference cycles, then give the heap's free pages back to the OS
    (glibc's malloc_trim, also pages between live blocks); whether any were. Called after a
    cache or the session sweeper drops something.

    A dropped session or result is often a cycle (a session's callbacks refer to it, a frame's
    cached columns to the frame): only the collector frees it, and its oldest generation runs
    after many new allocations, which an idle server after a burst never makes. Collecting
    takes about 0.1-0.2 s of the server's lock, at most once per cache sweep."""
    gc.collect()
    malloc_trim = _libc("malloc_trim")
    if malloc_trim is None:
        return False
    malloc_trim.argtypes, malloc_trim.restype = (ctypes.c_size_t,), ctypes.c_int
    return malloc_trim(0) == 1
