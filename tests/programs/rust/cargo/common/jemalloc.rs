// jemalloc.rs: the #[global_allocator] of the jemalloc variants (rjemp*, rjemu*, rjemv0),
// included at each one's crate root. It calls jemalloc-sys's functions the way
// tikv-jemallocator's `Jemalloc` does (the crate RisingWave, TiKV and jemalloc_pprof's users
// declare), written here because Debian's registry has jemalloc-sys but no tikv-jemallocator:
//   alloc         malloc(size), or mallocx(size, MALLOCX_ALIGN(align)) when the alignment
//                 is above malloc's own (16 on x86-64) or above the size;
//   alloc_zeroed  calloc(1, size), or mallocx with MALLOCX_ALIGN | MALLOCX_ZERO;
//   dealloc       sdallocx(ptr, size, the same flags): Rust never calls free;
//   realloc       rallocx(ptr, new_size, flags for the new size).
// With jemalloc-sys's default features these are _rjem_malloc, _rjem_mallocx, ...; with
// `unprefixed_malloc_on_supported_platforms` the executable defines malloc, mallocx, ...
// Paths in full: sites.rs, included after, has its own `use` lines.

/// alignof(max_align_t) on x86-64: what malloc guarantees without flags.
const MALLOC_ALIGN: usize = 16;

#[inline]
fn mallocx_flags(align: usize, size: usize) -> std::os::raw::c_int {
    if align <= MALLOC_ALIGN && align <= size {
        0
    } else {
        jemalloc_sys::MALLOCX_ALIGN(align)
    }
}

pub struct Je;

unsafe impl std::alloc::GlobalAlloc for Je {
    #[inline]
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        let flags = mallocx_flags(l.align(), l.size());
        let p = if flags == 0 {
            jemalloc_sys::malloc(l.size())
        } else {
            jemalloc_sys::mallocx(l.size(), flags)
        };
        p as *mut u8
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        let flags = mallocx_flags(l.align(), l.size());
        let p = if flags == 0 {
            jemalloc_sys::calloc(1, l.size())
        } else {
            jemalloc_sys::mallocx(l.size(), flags | jemalloc_sys::MALLOCX_ZERO)
        };
        p as *mut u8
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        let flags = mallocx_flags(l.align(), l.size());
        jemalloc_sys::sdallocx(p as *mut std::os::raw::c_void, l.size(), flags)
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let flags = mallocx_flags(l.align(), new_size);
        jemalloc_sys::rallocx(p as *mut std::os::raw::c_void, new_size, flags) as *mut u8
    }
}

#[global_allocator]
static GLOBAL: Je = Je;
