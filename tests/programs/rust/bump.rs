//! bump: a global allocator of its own, as a crate of its own (as tikv-jemallocator or
//! mimalloc are): a bump allocator over one mmap'd region, declared with extern "C" so that
//! no crate is needed. tests/integration/reach_hooks.sh builds it with rustc.
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
}

pub struct Bump;

static BASE: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Deallocations seen (it frees nothing; counting keeps dealloc more than a bare `ret`).
pub static FREES: AtomicU64 = AtomicU64::new(0);
const SIZE: usize = 1 << 28;

unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let mut base = BASE.load(Ordering::Acquire);
        if base == 0 {
            // PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
            let p = mmap(std::ptr::null_mut(), SIZE, 3, 0x22, -1, 0) as usize;
            base = match BASE.compare_exchange(0, p, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => p,
                Err(q) => q,
            };
        }
        let at = NEXT.fetch_add(l.size() + l.align(), Ordering::Relaxed);
        let start = (at + l.align() - 1) & !(l.align() - 1);
        if start + l.size() > SIZE {
            return std::ptr::null_mut();
        }
        (base + start) as *mut u8
    }
    unsafe fn dealloc(&self, _p: *mut u8, _l: Layout) {
        FREES.fetch_add(1, Ordering::Relaxed);
    }
}
