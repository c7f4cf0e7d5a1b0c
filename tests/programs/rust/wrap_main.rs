//! wrap_main: sites::site_rust_keep under a #[global_allocator] of the program's own that
//! counts and forwards to System (libc's malloc): heapsift hooks __rust_alloc, and the
//! malloc it reaches is interposed too; each allocation must be counted once.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static CALLS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn main() {
    let v = sites::site_rust_keep(1000);
    println!("{} vectors", v.len());
    assert!(CALLS.load(Ordering::Relaxed) >= 1000);
}
