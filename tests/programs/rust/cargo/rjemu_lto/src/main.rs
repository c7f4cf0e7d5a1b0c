//! rjemu_lto: as rjemu (unprefixed), with fat LTO and one codegen unit.
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
