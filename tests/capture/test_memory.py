"""trim_heap: glibc asked to give freed memory back; Windows (and macOS) left to their own heap."""

from __future__ import annotations

import sys

import pytest

from app.capture.memory import trim_heap


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_heaps_are_left_alone(platform: str) -> None:
    # Windows' heap decommits large freed regions itself: nothing is called there.
    assert trim_heap(platform) is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_on_linux_glibc_is_asked_to_trim() -> None:
    blocks = [bytearray(64 * 1024) for _ in range(200)]  # freed below: something to give back
    del blocks
    assert trim_heap() is True
