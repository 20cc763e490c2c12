// SPDX-License-Identifier: GPL-2.0

//! Gives the library the SONAME it is installed under
//! (`libsmc-preload.so`, as upstream's), whatever cargo names the file.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsmc-preload.so");
    println!("cargo:rerun-if-changed=build.rs");
}
