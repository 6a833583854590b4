//! Tells cargo where libmxq is. Search order, first hit wins:
//!   1. MXQ_LIB_DIR: a directory holding libmxq.so (a CMake build directory works);
//!   2. pkg-config (`pkg-config --libs mxq`, PKG_CONFIG / PKG_CONFIG_PATH honoured), i.e. an installed mxq.
//!
//! Implemented without the pkg-config crate so the workspace needs nothing from crates.io.
//! The directory is passed on to dependents as DEP_MXQ_LIB_DIR (this crate `links = "mxq"`), which the
//! `mxq` crate uses to give its own tests and examples an rpath.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn emit(dir: &Path) {
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=mxq");
    println!("cargo:lib_dir={}", dir.display());
    // This crate's own test binary only (link args never reach dependents); applications choose
    // their own rpath.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}

fn main() {
    for var in ["MXQ_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    if let Some(dir) = env::var_os("MXQ_LIB_DIR") {
        let dir = PathBuf::from(dir);
        let found = ["libmxq.so", "libmxq.dylib", "mxq.lib"].iter().any(|f| dir.join(f).exists());
        if !found {
            panic!(
                "MXQ_LIB_DIR={} holds no libmxq.so: point it at the CMake build directory \
                    (or the install's lib directory)",
                dir.display()
            );
        }
        emit(&dir);
        return;
    }

    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    match Command::new(&pkg_config).args(["--libs", "mxq"]).output() {
        Ok(out) if out.status.success() => {
            let flags = String::from_utf8_lossy(&out.stdout);
            let mut dir = None;
            for flag in flags.split_whitespace() {
                if let Some(d) = flag.strip_prefix("-L") {
                    dir = Some(PathBuf::from(d));
                } else if let Some(l) = flag.strip_prefix("-l") {
                    if l != "mxq" {
                        println!("cargo:rustc-link-lib={l}");
                    }
                }
            }
            match dir {
                Some(d) => emit(&d),
                None => {
                    // Installed in a default linker directory.
                    println!("cargo:rustc-link-lib=dylib=mxq");
                }
            }
        }
        _ => panic!(
            "libmxq not found. Set MXQ_LIB_DIR to the directory holding libmxq.so \
             (e.g. MXQ_LIB_DIR=/path/to/mxq/build), or install mxq so that `{pkg_config} --libs mxq` works."
        ),
    }
}
