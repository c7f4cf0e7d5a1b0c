//! hold_macro: a function-like proc macro that holds rustc still, for attaching to it
//! mid-compile (tests/integration/rust_rustc.sh). rustc runs proc macros in its own
//! process, so while hold!() expands, rustc is in this code. When HS_RUSTC_HOLD names a
//! directory, the macro writes rustc's pid to DIR/ready and then opens DIR/fifo (a FIFO
//! the test made) for reading: the open blocks until the test opens it for writing, and
//! the read lasts until the test closes it. Without HS_RUSTC_HOLD it returns at once.
//! Built with rustc alone (no crates): rustc --crate-type proc-macro hold_macro.rs
extern crate proc_macro;
use proc_macro::TokenStream;

#[proc_macro]
pub fn hold(input: TokenStream) -> TokenStream {
    if let Some(dir) = std::env::var_os("HS_RUSTC_HOLD") {
        let dir = std::path::PathBuf::from(dir);
        let tmp = dir.join("ready.tmp");
        std::fs::write(&tmp, format!("{}\n", std::process::id())).expect("hold: write ready");
        std::fs::rename(&tmp, dir.join("ready")).expect("hold: rename ready");
        std::fs::read(dir.join("fifo")).expect("hold: read fifo");
    }
    input
}
