//! rsys: the sites on Rust's default allocator (no #[global_allocator]).
//! The sites are shared with the other variants (../../common).
include!("../../common/sites.rs");
