//! rjemp_lto: as rjemp (prefixed _rjem_* API), with fat LTO and one codegen unit, as TiKV's and RisingWave's release builds.
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
