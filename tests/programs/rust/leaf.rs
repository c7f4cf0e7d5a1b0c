//! leaf: Rust allocation sites whose memory comes through Rust's allocation plumbing
//! (Vec growth: RawVec::grow_one, alloc::raw_vec::finish_grow, __rust_realloc, __rdl_realloc;
//! Vec::reserve_exact: the same from the reserve path; Box::new: exchange_malloc,
//! __rust_alloc), for tests/integration/leaf_rust.sh: with drop_frames the bytes belong to
//! the function that asked. No crates; built with the machine's rustc, without debug
//! information, so an inlined Vec::push is no frame of its own. Every block stays live until
//! exit (leaked on purpose). Prints the truth, one line per site: NAME flat INUSE_SPACE, from
//! the capacities the vectors reached.
use std::hint::black_box;

#[inline(never)]
fn site_vec(n: usize) -> Vec<u64> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(black_box(i as u64));
    }
    v
}

#[inline(never)]
fn site_reserve(n: usize) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::new();
    v.reserve_exact(black_box(n));
    v.push(1);
    v
}

#[inline(never)]
fn site_box() -> Box<[u8; 1000]> {
    Box::new(black_box([7u8; 1000]))
}

fn main() {
    let v = site_vec(1 << 20);
    let r = site_reserve(100_000);
    let mut boxes = Vec::with_capacity(1000);
    for _ in 0..1000 {
        boxes.push(site_box());
    }
    println!("site_vec flat {}", v.capacity() * 8);
    println!("site_reserve flat {}", r.capacity() * 4);
    println!("site_box flat {}", boxes.len() * 1000);
    std::mem::forget(v);
    std::mem::forget(r);
    std::mem::forget(boxes);
}
