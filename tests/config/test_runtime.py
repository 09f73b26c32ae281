"""Process-wide runtime settings: Qt's offscreen plugin on Windows finds the app's own fonts."""

from __future__ import annotations

from app.config.runtime import FONT_DIR, qt_font_dir


def test_windows_offscreen_qt_gets_the_fonts_the_app_ships() -> None:
    # Windows has no fontconfig: Qt's offscreen plugin warns "Cannot find font directory" without it.
    environ = {"QT_QPA_PLATFORM": "offscreen"}
    assert qt_font_dir(environ, "win32") == str(FONT_DIR)
    assert environ["QT_QPA_FONTDIR"] == str(FONT_DIR)
    assert {p.name for p in FONT_DIR.glob("*.ttf")} >= {"DejaVuSansCondensed.ttf", "DejaVuSansCondensed-Bold.ttf"}


def test_the_users_choice_and_other_platforms_are_left_alone() -> None:
    chosen = {"QT_QPA_PLATFORM": "offscreen", "QT_QPA_FONTDIR": "C:\\Fontes"}
    assert qt_font_dir(chosen, "win32") == "C:\\Fontes"
    native = {"QT_QPA_PLATFORM": "windows"}  # the native plugin reads the system's fonts
    assert qt_font_dir(native, "win32") is None and "QT_QPA_FONTDIR" not in native
    linux = {"QT_QPA_PLATFORM": "offscreen"}  # fontconfig
    assert qt_font_dir(linux, "linux") is None and "QT_QPA_FONTDIR" not in linux
