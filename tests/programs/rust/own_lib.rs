//! own_lib: a Rust cdylib (as a Python extension built with PyO3 is) with a
//! #[global_allocator] of its own (bump), loaded by tests/programs/dlopen_rust.c with
//! dlopen after the program started: its __rust_alloc entry points are local symbols of
//! the library, bound inside it. tests/integration/reach_hooks.sh builds it with rustc.
#[global_allocator]
static A: bump::Bump = bump::Bump;

/// sites::site_rust_keep(n), its vectors kept for ever; returns how many.
#[no_mangle]
pub extern "C" fn rust_keep(n: usize) -> usize {
    let v = sites::site_rust_keep(n);
    let k = v.len();
    std::mem::forget(v);
    k
}
