/* SPDX-License-Identifier: GPL-2.0-or-later */
/* winfsp-shim.h — just enough of the Windows API for WinFsp's own name
 * mapping functions (src/shared/ku/posix.c: FspPosixInvalidPathChars,
 * FspPosixMapWindowsToPosixPathEx, FspPosixMapPosixToWindowsPathEx) to
 * compile on Linux, so that winfsp-names-check.sh can hold daemon/win-names.c
 * against them.  WinFsp's code itself is never part of this tree: the script
 * extracts it from a WinFsp source tree the developer names. */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t NTSTATUS;
typedef uint32_t ULONG;
typedef uint32_t UINT32;
typedef uint16_t WCHAR;
typedef WCHAR *PWSTR;
typedef unsigned char BOOLEAN;

#define FSP_API
#define FSP_KU_CODE ((void) 0)
#define STATUS_SUCCESS ((NTSTATUS) 0)
#define STATUS_INSUFFICIENT_RESOURCES ((NTSTATUS) 0xC000009A)
#define NT_SUCCESS(s) ((NTSTATUS)(s) >= 0)
#define CP_UTF8 65001u
#define MemAlloc malloc
#define MemFree free

/* Win32's conversions, for valid input (the check feeds it nothing else):
 * a length of -1 includes the terminating NUL; with no output buffer they
 * return the size needed, else what they wrote; 0 on failure. */
int WideCharToMultiByte(unsigned code_page, ULONG flags, const WCHAR *wide, int wide_len,
                        char *out, int size, const char *default_char, int *used_default);
int MultiByteToWideChar(unsigned code_page, ULONG flags, const char *s, int len, WCHAR *out,
                        int size);
ULONG GetLastError(void);
NTSTATUS FspNtStatusFromWin32(ULONG error);

NTSTATUS FspPosixMapWindowsToPosixPathEx(PWSTR WindowsPath, char **PPosixPath, BOOLEAN Translate);
NTSTATUS FspPosixMapPosixToWindowsPathEx(const char *PosixPath, PWSTR *PWindowsPath,
                                         BOOLEAN Translate);
