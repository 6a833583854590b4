//! Gives this crate's tests and examples an rpath to the libmxq that mxq-sys linked
//! (DEP_MXQ_LIB_DIR), so `cargo test` runs without LD_LIBRARY_PATH. Library consumers are unaffected.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_MXQ_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_MXQ_LIB_DIR") {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
        println!("cargo:rustc-link-arg-examples=-Wl,-rpath,{dir}");
    }
}
