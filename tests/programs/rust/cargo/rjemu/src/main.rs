//! rjemu: tikv-jemallocator's allocator over jemalloc-sys 0.3 built unprefixed (unprefixed_malloc_on_supported_platforms, as jemalloc_pprof recommends): the executable defines malloc, free, mallocx, sdallocx, rallocx; no LTO.
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/jemalloc.rs");
include!("../../common/sites.rs");
