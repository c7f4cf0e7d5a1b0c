//! default_lib: the same cdylib as own_lib on Rust's default allocator (libc's malloc,
//! which interposition sees): its __rust_alloc is local too, and must be counted once.
#[no_mangle]
pub extern "C" fn rust_keep(n: usize) -> usize {
    let v = sites::site_rust_keep(n);
    let k = v.len();
    std::mem::forget(v);
    k
}
