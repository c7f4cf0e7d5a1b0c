//! rmimalloc: the mimalloc crate's allocator (mi_malloc_aligned, mi_zalloc_aligned, mi_realloc_aligned, mi_free), declared here, linked against Debian's libmimalloc.so.
//! The allocator and the sites are shared with the other variants (../../common).
include!("../../common/mimalloc.rs");
include!("../../common/sites.rs");
