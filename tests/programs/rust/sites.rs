//! sites: Rust allocation sites with known counts, in a library crate: its calls reach the
//! global allocator through __rust_alloc (rustc calls a #[global_allocator] directly only
//! from the crate that declares it).
/// 1000 vectors of 1000 bytes each, kept: 1000 allocations here, plus the outer vector.
#[inline(never)]
pub fn site_rust_keep(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![(i % 250) as u8 + 1; 1000]).collect()
}
