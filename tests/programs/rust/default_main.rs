//! default_main: sites::site_rust_keep on Rust's default allocator (libc's malloc).
fn main() {
    let v = sites::site_rust_keep(1000);
    println!("{} vectors", v.len());
}
