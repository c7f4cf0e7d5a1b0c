//! rsites: an allocation site in a library crate. Its calls reach the #[global_allocator]
//! through __rust_alloc (rustc calls the allocator directly only in the crate that declares
//! it), unless the program is built with LTO, which inlines them too. A heapsift that hooks
//! both __rust_alloc and the allocator's API must count each block once.

/// keep_site: KEEP_N vectors of KEEP_SIZE bytes, kept.
pub const KEEP_N: usize = 1000;
pub const KEEP_SIZE: usize = 1000;

#[inline(never)]
pub fn keep_site(out: &mut Vec<Vec<u8>>, n: usize) {
    for i in 0..n {
        let mut v: Vec<u8> = Vec::with_capacity(KEEP_SIZE);
        v.resize(KEEP_SIZE, (i % 250) as u8 + 1);
        out.push(v);
    }
}
