//! rjemv0: as rjemp (prefixed), built with RUSTFLAGS='-C symbol-mangling-version=v0' (_RNv... names).
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
