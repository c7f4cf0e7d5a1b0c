//! names: Rust allocation sites with known totals whose names every view must show as a
//! Rust user reads them (tests/integration/names_rust.sh builds it with
//! `--crate-name rjemu`, once with legacy mangling and once with v0). On Rust's default
//! allocator (malloc), no crates. Sizes are the bytes the allocator is asked for.
//!
//! usage: names [N]   (N defaults to 1000)
//!   rjemu::hold_site         N boxes of 1000 bytes and their vector (N * 8 bytes), kept
//!                            to exit
//!   rjemu::churn_site        N blocks of 5000 bytes, each freed at once
//!   rjemu::inner::deep_site  100 blocks of 3000 bytes, kept to exit
//! It prints "held N" and exits without freeing what it keeps.
use std::hint::black_box;

#[inline(never)]
pub fn hold_site(n: usize) -> Vec<Box<[u8; 1000]>> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let mut b = Box::new([0u8; 1000]);
        b[i % 1000] = 1;
        v.push(black_box(b));
    }
    v
}

#[inline(never)]
pub fn churn_site(n: usize) -> usize {
    let mut sum = 0;
    for i in 0..n {
        let v = black_box(vec![(i % 200) as u8; 5000]);
        sum += v[i % 5000] as usize;
    }
    sum
}

pub mod inner {
    #[inline(never)]
    pub fn deep_site() -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        v.reserve_exact(100);
        for i in 0..100 {
            v.push(std::hint::black_box(vec![i as u8; 3000]));
        }
        v
    }
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000usize);
    let held = hold_site(n);
    let sum = churn_site(n);
    let deep = inner::deep_site();
    println!("held {} ({} {})", held.len(), sum > 0, deep.len());
    // Kept to exit: the leak report and the inuse views see them.
    std::mem::forget(held);
    std::mem::forget(deep);
}
