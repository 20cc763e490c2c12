// SPDX-License-Identifier: GPL-2.0

//! Compiles the BPF program of `smc_run --bpf` (`bpf/smc_run.bpf.c`) with
//! clang into `OUT_DIR/smc_run.bpf.o`, which `smc_run` embeds. `CLANG`
//! names another clang; the libbpf headers are libbpf-dev's (Debian puts
//! `asm/` under the multiarch include directory, hence that `-I`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The BPF source, relative to the package.
const SOURCE: &str = "bpf/smc_run.bpf.c";

/// `__TARGET_ARCH_*` of `bpf_tracing.h` for a Rust target architecture.
fn bpf_target_arch(arch: &str) -> &str {
    match arch {
        "x86_64" | "x86" => "x86",
        "aarch64" => "arm64",
        "powerpc64" => "powerpc",
        "riscv64" => "riscv",
        other => other,
    }
}

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CLANG");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets the target architecture");
    let os = env::var("CARGO_CFG_TARGET_OS").expect("cargo sets the target OS");
    let target_env = env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let multiarch = format!("/usr/include/{arch}-{os}-{target_env}");
    let clang = env::var_os("CLANG").unwrap_or_else(|| "clang".into());
    let object = out.join("smc_run.bpf.o");
    let status = Command::new(&clang)
        .args(["-target", "bpf", "-O2", "-g", "-Wall", "-Werror"])
        .arg(format!("-D__TARGET_ARCH_{}", bpf_target_arch(&arch)))
        .arg(format!("-I{multiarch}"))
        .args(["-c", SOURCE, "-o"])
        .arg(&object)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e} (install clang)",
                clang.to_string_lossy()
            )
        });
    assert!(status.success(), "clang could not compile {SOURCE}");
}
