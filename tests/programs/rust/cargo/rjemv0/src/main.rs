//! rjemv0: as rjemp (prefixed), its own crate built with -C symbol-mangling-version=v0 (_RNv... names; build.sh passes it with cargo rustc).
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
