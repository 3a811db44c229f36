/* SPDX-License-Identifier: BSD-2-Clause */
/* KVMMIO_EXPORT: what libkvmmio.so exports. The library is compiled with
 * -fvisibility=hidden, so a symbol is visible to embedders only when its
 * declaration says so: every public class (its members, vtable and
 * typeinfo, so that exceptions and dynamic_cast work across the library's
 * boundary), every public free function and every C function of
 * kvmmio/kvmmio.h carries this macro. What the library keeps to itself
 * (hw/ private headers, anonymous namespaces) stays hidden, which is what
 * lets docs/embedding.md ("Versions and the ABI") say what the libtool
 * version promises. C and C++ alike: kvmmio/kvmmio.h includes it too. */
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define KVMMIO_EXPORT __attribute__((visibility("default")))
#else
#define KVMMIO_EXPORT
#endif
