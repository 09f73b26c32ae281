/* Test-only stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks.
 * cryptography's Rust extension imports ProcessPrng (the Rust standard library's random source
 * since Windows 10); here it draws from RtlGenRandom. Copied into a test prefix's system32 by
 * the Windows lane, never shipped: real Windows has the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
