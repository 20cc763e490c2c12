// SPDX-License-Identifier: GPL-2.0

//! `smc_run [ -d ] [ -r SIZE ] [ -t SIZE ] COMMAND`: runs COMMAND with
//! `libsmc-preload.so` preloaded, so that its TCP sockets (and those of
//! its children) are SMC sockets. See `smc_tools::smc_run`.
//!
//! `smc_run --bpf [ -v ] COMMAND` and `smc_run --bpf --cgroup PATH`: the
//! same by a BPF program on the kernel's `socket()` path, for the tasks of
//! a cgroup ([`bpf_mode`]; `smc_tools::smc_run_bpf`).

#![forbid(unsafe_op_in_unsafe_fn)]

mod bpf;
mod bpf_mode;
mod cgroup;
mod child;

use smc_tools::smc_run::{self, Action};
use smc_tools::smc_run_bpf;
use smc_tools::EXIT_FAILURE;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

fn main() {
    let argv: Vec<_> = std::env::args_os().skip(1).collect();
    if smc_run_bpf::wants_bpf(&argv) {
        bpf_mode::main(run_or_exit(smc_run_bpf::parse(&argv)));
    }
    let run = run_or_exit(smc_run::parse(&argv));
    let Some(lib) = find_library() else {
        eprintln!(
            "smc_run: Error: Could not find '{}' next to smc_run or in ../lib, ../lib/{}, ../lib64",
            smc_run::LIB_NAME,
            smc_run::MULTIARCH
        );
        exit(2);
    };
    if !smc_available() {
        eprintln!("{}", smc_run::no_module_warning());
    }
    let mut cmd = Command::new(&run.command[0]);
    cmd.args(&run.command[1..]);
    // Upstream raises the system's limits when a size needs it (root only).
    if let Some(size) = run.rcvbuf {
        raise_core_max("rmem_max", size);
        cmd.env("SMC_RCVBUF", size.to_string());
    }
    if let Some(size) = run.sndbuf {
        raise_core_max("wmem_max", size);
        cmd.env("SMC_SNDBUF", size.to_string());
    }
    cmd.env("SMC_DEBUG", if run.debug { "1" } else { "0" });
    if let Some(f) = run.family {
        cmd.env("SMC_FAMILY", f.word());
    }
    let preload = smc_run::ld_preload(std::env::var_os("LD_PRELOAD").as_deref(), &lib);
    cmd.env("LD_PRELOAD", preload);
    let err = cmd.exec();
    eprintln!(
        "smc_run: {}: {}",
        run.command[0].to_string_lossy(),
        smc_run::exec_failure_text(&err)
    );
    exit(smc_run::exec_failure_code(&err));
}

/// Whether the kernel has an `AF_SMC` module (asking for a socket loads
/// one on demand, as the program's first socket would).
fn smc_available() -> bool {
    // SAFETY: plain system call; a descriptor it returns is closed here.
    let fd = unsafe { libc::socket(43, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd >= 0 {
        // SAFETY: `fd` is ours and used nowhere else.
        unsafe { libc::close(fd) };
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::EAFNOSUPPORT)
}

/// What is to be run, of either mode; for the usage, the version or an
/// error, what they print, and the end.
fn run_or_exit<R>(action: Action<R>) -> R {
    match action {
        Action::Help => {
            print!("{}{}", smc_run::usage(), smc_run_bpf::usage_bpf());
            exit(0);
        }
        Action::Version => {
            print!("{}", smc_run::version());
            exit(0);
        }
        Action::Error(text) => {
            println!("{text}");
            exit(EXIT_FAILURE);
        }
        Action::Run(run) => run,
    }
}

/// The preload library for this `smc_run`, by its real location.
fn find_library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let dir = exe.parent()?;
    smc_run::library_candidates(dir)
        .into_iter()
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

/// `net.core.NAME` up to `size` when it is below (as upstream's
/// `adjust_core_net_max`); a failure is said and the run goes on.
fn raise_core_max(name: &str, size: i32) {
    let path = Path::new("/proc/sys/net/core").join(name);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let Ok(current) = text.trim().parse::<i64>() else {
        return;
    };
    if current >= i64::from(size) {
        return;
    }
    if let Err(e) = std::fs::write(&path, format!("{size}\n")) {
        eprintln!("smc_run: cannot raise net.core.{name} to {size}: {e}");
    }
}
