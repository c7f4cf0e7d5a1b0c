/*
 * The libraries libheapsift.so loads with dlopen at run time (they are in no DT_NEEDED),
 * named once: src/preload/reach/patch.c loads the decoder, and src/cli/attach_deps.c copies it
 * into a target that lacks it.
 */
#ifndef HS_RUNTIME_LIBS_H
#define HS_RUNTIME_LIBS_H

/* Zydis 4, the x86 decoder of in-place patching (Debian's package libzydis4.0). */
#define HS_DECODER_SONAME "libZydis.so.4.0"

#endif
