"""Freed memory given back to the operating system (issue 20: the tray's footprint).

The capture frees its idle companies' TLS clients (``HttpClientFactory.release_idle``, ~60 kB
each), but glibc's allocator keeps freed blocks inside the process's heap: 200 companies' clients
freed left the resident size unchanged until ``malloc_trim`` (bench_idle: 208.7 → 197.6 MB).
Windows' heap decommits large freed regions by itself, so there (and on macOS, or a C library
without ``malloc_trim``) this does nothing.
"""

from __future__ import annotations

import ctypes
import sys


def trim_heap(platform: str = sys.platform) -> bool:
    """Ask glibc to return the heap's free pages; whether it could be asked (Linux with glibc)."""
    if not platform.startswith("linux"):
        return False  # Windows, macOS: nothing to ask
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):  # musl and other C libraries have no malloc_trim
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True
