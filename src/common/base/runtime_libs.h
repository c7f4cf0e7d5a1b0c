/*
 * The libraries libheapsift.so loads with dlopen at run time (they are in no DT_NEEDED),
 * named once: the library's patch.c loads the decoder and base/dwload.c libdw (with libelf,
 * its dependency), and src/cli/inject/attach_deps.c copies them and their dependencies
 * into a target that lacks them.
 */
#ifndef HS_RUNTIME_LIBS_H
#define HS_RUNTIME_LIBS_H

/* Zydis 4, the x86 decoder of in-place patching (Debian's package libzydis4.0). */
#define HS_DECODER_SONAME "libZydis.so.4.0"
/* elfutils' libdw, for symbolization and the tracker's function lookup (base/dwload.c). */
#define HS_DW_SONAME "libdw.so.1"

#endif
