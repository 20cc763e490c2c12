// SPDX-License-Identifier: GPL-2.0

//! `smc_run --bpf`: checks (privileges, SMC, the kernel's hook), the
//! cgroup, the program attached for it, the command run in it (or the
//! wait for SIGINT/SIGTERM with `--cgroup`), and the way back: detached,
//! the transient cgroup removed, `smc_run` ending as the command did.

use crate::bpf::{self, AttachError, Attached};
use crate::cgroup::Cgroup;
use crate::child::{self, Signals};
use smc_tools::smc_run_bpf::{self, BpfRun};
use smc_tools::{smc_run, strerror, EXIT_FAILURE};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::exit;

/// `IPPROTO_SMC` (`linux/in.h`): what the program turns TCP into.
const IPPROTO_SMC: i32 = 256;

/// The message for a process without the capabilities.
const NEEDS_CAPS: &str = "smc_run: --bpf needs CAP_BPF and CAP_SYS_ADMIN";
/// The message for a kernel that refuses the program to a process that
/// has the capabilities.
const REFUSED: &str = "smc_run: the kernel does not permit the BPF program \
                       (CAP_BPF and CAP_SYS_ADMIN are not enough here: lockdown, an LSM?)";
/// The message for a kernel without the hook.
const NO_HOOK: &str = "smc_run: kernel has no update_socket_protocol hook for BPF \
                       (needs CONFIG_MPTCP=y and vmlinux BTF)";

/// Says `text` on stderr and ends with `EXIT_FAILURE`.
fn fail(text: &str) -> ! {
    eprintln!("{text}");
    exit(EXIT_FAILURE);
}

/// Says why the program could not be attached (the detail with `-v`),
/// and ends.
fn fail_attach(err: AttachError, verbose: bool) -> ! {
    let (text, detail) = match err {
        AttachError::NoHook(detail) => (NO_HOOK.to_string(), detail),
        AttachError::NotPermitted(detail) => (REFUSED.to_string(), detail),
        AttachError::Other(detail) => (format!("smc_run: {detail}"), String::new()),
    };
    if verbose && !detail.is_empty() {
        eprintln!("smc_run: {detail}");
    }
    fail(&text);
}

/// Whether this process has the capabilities (`CapEff` of
/// `/proc/self/status`).
fn privileged() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| smc_run_bpf::effective_caps(&s))
        .is_some_and(smc_run_bpf::caps_suffice)
}

/// Whether the kernel creates `socket(AF_INET, SOCK_STREAM, IPPROTO_SMC)`
/// (an SMC module is loaded, or is loaded by the call); the errno if not.
/// Without it, the sockets the program redirects would fail.
fn smc_protocol() -> Result<(), i32> {
    // SAFETY: `socket()` takes no pointers.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            IPPROTO_SMC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPROTONOSUPPORT));
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns; it is
    // closed here.
    drop(unsafe { OwnedFd::from_raw_fd(fd) });
    Ok(())
}

/// `smc_run` with `--bpf` on its command line, as parsed.
pub fn main(run: BpfRun) -> ! {
    let verbose = run.verbose || smc_run_bpf::debug_env(std::env::var_os("SMC_DEBUG").as_deref());
    if !privileged() {
        fail(NEEDS_CAPS);
    }
    if let Err(errno) = smc_protocol() {
        fail(&format!(
            "smc_run: SMC module not loaded (socket(AF_INET, SOCK_STREAM, IPPROTO_SMC): {})",
            strerror(errno)
        ));
    }
    let cgroup = match &run.cgroup {
        Some(path) => Cgroup::existing(path),
        None => Cgroup::create_transient(),
    }
    .unwrap_or_else(|text| fail(&format!("smc_run: {text}")));
    let signals =
        Signals::block().unwrap_or_else(|e| fail(&format!("smc_run: cannot block signals: {e}")));
    let attached = match bpf::attach(cgroup.dir(), verbose) {
        Ok(attached) => attached,
        Err(err) => {
            let _ = cgroup.remove();
            fail_attach(err, verbose);
        }
    };
    if verbose {
        say_attached(&attached, &cgroup);
    }
    if run.command.is_empty() {
        let stop = signals.wait_for_stop();
        finish(attached, cgroup, verbose);
        if let Err(e) = stop {
            fail(&format!("smc_run: waiting for SIGINT/SIGTERM: {e}"));
        }
        exit(0);
    }
    run_command(&run, attached, cgroup, &signals, verbose)
}

/// `-v`: what is attached where.
fn say_attached(attached: &Attached, cgroup: &Cgroup) {
    let (link, prog) = attached.ids().unwrap_or_default();
    eprintln!(
        "smc_run: BPF program {} (id {prog}) attached to fmod_ret/{} (link id {link}) \
         for cgroup {} (id {}) and the cgroups below it",
        bpf::PROGRAM,
        bpf::HOOK,
        cgroup.path().display(),
        cgroup.id().unwrap_or_default()
    );
}

/// Runs the command in the cgroup, waits for it, cleans up, and ends as
/// it did.
fn run_command(
    run: &BpfRun,
    attached: Attached,
    cgroup: Cgroup,
    signals: &Signals,
    verbose: bool,
) -> ! {
    let spawned = cgroup
        .procs()
        .and_then(|procs| child::spawn_in_cgroup(&run.command, procs, signals));
    let mut command = match spawned {
        Ok(command) => command,
        Err(err) => {
            finish(attached, cgroup, verbose);
            let name = run
                .command
                .first()
                .map(|c| c.to_string_lossy())
                .unwrap_or_default();
            eprintln!("smc_run: {name}: {}", smc_run::exec_failure_text(&err));
            exit(smc_run::exec_failure_code(&err));
        }
    };
    let status = child::wait_forwarding(&mut command, signals);
    finish(attached, cgroup, verbose);
    match status {
        Ok(status) => child::exit_as(status),
        Err(e) => fail(&format!("smc_run: waiting for the command: {e}")),
    }
}

/// Detaches the program and removes a transient cgroup; `-v` says how
/// many sockets were made SMC.
fn finish(attached: Attached, cgroup: Cgroup, verbose: bool) {
    let sockets = attached.sockets();
    drop(attached);
    let path = cgroup.path().to_path_buf();
    let removed = cgroup.remove();
    if verbose {
        eprintln!(
            "smc_run: BPF program detached from cgroup {}; {} sockets were created as IPPROTO_SMC",
            path.display(),
            sockets.map_or_else(|| "?".to_string(), |n| n.to_string())
        );
    }
    if let Err(text) = removed {
        eprintln!("smc_run: {text}");
    }
}
