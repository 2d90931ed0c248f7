//! Bakes the libtorch library folder into every binary of the package as an rpath, so
//! `target/*/epaminondas` and the test binaries run with no LD_LIBRARY_PATH set.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-changed=.libtorch");
    let Some(libtorch) = std::env::var_os("LIBTORCH") else { return };
    // Resolve the `.libtorch` link so the rpath names the cache itself, not the checkout.
    let root = std::fs::canonicalize(&libtorch).unwrap_or_else(|_| PathBuf::from(&libtorch));
    let lib = root.join("lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
}
