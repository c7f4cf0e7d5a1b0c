//! own_main: sites::site_rust_keep under a #[global_allocator] of the program's own (bump).
#[global_allocator]
static A: bump::Bump = bump::Bump;

fn main() {
    let v = sites::site_rust_keep(1000);
    println!("{} vectors", v.len());
}
