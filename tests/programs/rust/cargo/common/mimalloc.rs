// mimalloc.rs: the #[global_allocator] of rmimalloc, included at its crate root. It calls
// mimalloc's API the way the `mimalloc` crate's `MiMalloc` does (there is no mimalloc crate
// in Debian's registry, so the four functions are declared here), from Debian's
// libmimalloc.so (libmimalloc-dev; it ships no static archive):
//   alloc mi_malloc_aligned(size, align), alloc_zeroed mi_zalloc_aligned(size, align),
//   dealloc mi_free(ptr), realloc mi_realloc_aligned(ptr, new_size, align).
// Paths in full: sites.rs, included after, has its own `use` lines.
#[link(name = "mimalloc")]
extern "C" {
    fn mi_malloc_aligned(size: usize, alignment: usize) -> *mut std::os::raw::c_void;
    fn mi_zalloc_aligned(size: usize, alignment: usize) -> *mut std::os::raw::c_void;
    fn mi_realloc_aligned(
        p: *mut std::os::raw::c_void,
        newsize: usize,
        alignment: usize,
    ) -> *mut std::os::raw::c_void;
    fn mi_free(p: *mut std::os::raw::c_void);
}

pub struct Mi;

unsafe impl std::alloc::GlobalAlloc for Mi {
    #[inline]
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        mi_malloc_aligned(l.size(), l.align()) as *mut u8
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        mi_zalloc_aligned(l.size(), l.align()) as *mut u8
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, _l: std::alloc::Layout) {
        mi_free(p as *mut std::os::raw::c_void)
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
        mi_realloc_aligned(p as *mut std::os::raw::c_void, new_size, l.align()) as *mut u8
    }
}

#[global_allocator]
static GLOBAL: Mi = Mi;
