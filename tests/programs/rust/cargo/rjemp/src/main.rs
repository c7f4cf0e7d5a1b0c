//! rjemp: tikv-jemallocator's allocator over jemalloc-sys 0.3 with its default, prefixed API (_rjem_malloc, _rjem_mallocx, _rjem_sdallocx, _rjem_rallocx), no LTO.
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
