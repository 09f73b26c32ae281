/* Test-only stand-in for Windows' icuuc.dll (Windows 10 1903+ ships ICU), which Wine 8 lacks.
 * Qt6Core imports only the converter functions (QStringConverter's extra encodings); this
 * stand-in has no converter at all, so ucnv_open fails and Qt keeps its built-in UTF-8/16/32
 * and Latin-1. Copied into a test prefix's system32 by the Windows lane, never shipped. */
#include <stddef.h>

typedef int UErrorCode;
#define U_FILE_ACCESS_ERROR 4
#define EXPORT __declspec(dllexport)

EXPORT void *ucnv_open(const char *name, UErrorCode *error)
{
    (void)name;
    if (error != NULL && *error <= 0)
        *error = U_FILE_ACCESS_ERROR;
    return NULL;
}

EXPORT int ucnv_countAvailable(void) { return 0; }
EXPORT const char *ucnv_getAvailableName(int n) { (void)n; return NULL; }

EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *error)
{
    (void)name; (void)standard;
    if (error != NULL && *error <= 0)
        *error = U_FILE_ACCESS_ERROR;
    return NULL;
}

/* Never reached without a converter; present so that Qt6Core.dll links. */
#define UNREACHABLE(name) EXPORT void name(void) {}
UNREACHABLE(ucnv_close)
UNREACHABLE(ucnv_reset)
UNREACHABLE(UCNV_FROM_U_CALLBACK_SUBSTITUTE)
UNREACHABLE(UCNV_TO_U_CALLBACK_SUBSTITUTE)
UNREACHABLE(ucnv_setToUCallBack)
UNREACHABLE(ucnv_setFromUCallBack)
UNREACHABLE(ucnv_getToUCallBack)
UNREACHABLE(ucnv_getFromUCallBack)
UNREACHABLE(ucnv_cbToUWriteUChars)
UNREACHABLE(ucnv_cbFromUWriteUChars)
UNREACHABLE(ucnv_toUnicode)
UNREACHABLE(ucnv_fromUnicode)
UNREACHABLE(ucnv_toUCountPending)
UNREACHABLE(ucnv_fromUCountPending)

EXPORT signed char ucnv_getMaxCharSize(const void *converter) { (void)converter; return 1; }
EXPORT const char *ucnv_getName(const void *converter, UErrorCode *error)
{
    (void)converter; (void)error;
    return "";
}
