"""Qt's own words in Portuguese: the Yes/No of message boxes, Cancel, the file dialogs, the
calendar's months and week days, numbers and dates.

Qt ships its translations (``qtbase_pt_BR.qm`` in pyside6-essentials, under Qt's translations
path); without a translator loaded, every standard button and dialog speaks English. The locale
is the default for every widget made afterwards, so this runs before the first window.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

log = logging.getLogger(__name__)
BRAZIL = QLocale(QLocale.Language.Portuguese, QLocale.Country.Brazil)
CATALOGS = ("qtbase",)  # qt_pt_BR.qm is only a meta-catalog naming qtbase and the other modules
_PROPERTY = "capturaPortuguese"


def install_portuguese(app: QCoreApplication | None) -> bool:
    """Load Qt's pt_BR catalogs into ``app`` and make pt_BR the default locale (once per app).

    False (logged) when a catalog is missing: the app still runs, in Qt's English.
    """
    QLocale.setDefault(BRAZIL)
    if app is None or app.property(_PROPERTY):
        return True
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    complete = True
    for catalog in CATALOGS:
        translator = QTranslator(app)  # parented: lives as long as the application
        if translator.load(BRAZIL, catalog, "_", folder):
            app.installTranslator(translator)
        else:
            complete = False
            log.warning("Tradução do Qt não encontrada: %s_pt_BR.qm em %s", catalog, folder)
    app.setProperty(_PROPERTY, True)
    return complete
