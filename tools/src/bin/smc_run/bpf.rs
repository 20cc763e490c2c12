// SPDX-License-Identifier: GPL-2.0

//! The BPF program of `smc_run --bpf` (`bpf/smc_run.bpf.c`, embedded):
//! checks that the kernel can take it, loads it, scopes it to one cgroup
//! and attaches it to `update_socket_protocol()`, through libbpf-rs.

use libbpf_rs::btf::types::Func;
use libbpf_rs::{Btf, ErrorKind, Link, MapCore, MapFlags, Object, ObjectBuilder, PrintLevel};
use std::fs::File;
use std::os::fd::AsRawFd;

/// The compiled program (build.rs).
static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/smc_run.bpf.o"));
/// The program in the object.
pub const PROGRAM: &str = "smc_run_protocol";
/// Its map of one cgroup.
const CGROUP_MAP: &str = "smc_run_cgroup";
/// The kernel function whose return value the program sets.
pub const HOOK: &str = "update_socket_protocol";

/// Why the program could not be attached.
#[derive(Debug)]
pub enum AttachError {
    /// The kernel has no BTF or no modifiable `update_socket_protocol()`
    /// (the detail says which, for `-v`).
    NoHook(String),
    /// The kernel refused for lack of privilege.
    NotPermitted(String),
    /// Anything else, said as it is.
    Other(String),
}

/// The attached program; dropping it detaches it and unloads it.
pub struct Attached {
    // The link first: it is dropped (detached) before the object.
    link: Link,
    object: Object,
}

/// libbpf's messages (each begins with `libbpf: `) on stderr, with `-v`;
/// without `-v` there are none: `smc_run` says the errors itself.
fn print_libbpf(_level: PrintLevel, message: String) {
    eprint!("{message}");
}

/// Whether the running kernel's BTF describes the hook, so that a tracing
/// program can find it.
fn check_hook() -> Result<(), AttachError> {
    let btf = Btf::from_vmlinux().map_err(|e| {
        AttachError::NoHook(format!("no vmlinux BTF (/sys/kernel/btf/vmlinux): {e}"))
    })?;
    if btf.type_by_name::<Func<'_>>(HOOK).is_none() {
        return Err(AttachError::NoHook(format!(
            "the kernel's BTF has no function {HOOK}()"
        )));
    }
    Ok(())
}

/// Sorts a libbpf error of loading or attaching.
fn sort_error(what: &str, e: &libbpf_rs::Error) -> AttachError {
    let text = format!("{what}: {e:#}");
    match e.kind() {
        ErrorKind::PermissionDenied => AttachError::NotPermitted(text),
        // The verifier refuses a hook that is not modifiable (no MPTCP)
        // with EINVAL, a function it cannot find with ESRCH or ENOENT.
        ErrorKind::InvalidInput | ErrorKind::NotFound | ErrorKind::Unsupported => {
            AttachError::NoHook(text)
        }
        _ => AttachError::Other(text),
    }
}

/// Loads the program for the tasks of the cgroup whose directory `cgroup`
/// is (and of the cgroups below it) and attaches it. `verbose` lets
/// libbpf speak.
pub fn attach(cgroup: &File, verbose: bool) -> Result<Attached, AttachError> {
    libbpf_rs::set_print(verbose.then_some((PrintLevel::Info, print_libbpf as _)));
    let open = ObjectBuilder::default()
        .open_memory(OBJECT)
        .map_err(|e| AttachError::Other(format!("cannot open the BPF object: {e:#}")))?;
    // Only when the load fails is the kernel's BTF looked at here, to say why.
    let object = open
        .load()
        .map_err(|e| match sort_error("cannot load the BPF program", &e) {
            AttachError::NotPermitted(text) => AttachError::NotPermitted(text),
            other => check_hook().err().unwrap_or(other),
        })?;
    let map = object
        .maps()
        .find(|m| m.name() == CGROUP_MAP)
        .ok_or_else(|| AttachError::Other(format!("the BPF object has no map {CGROUP_MAP}")))?;
    let fd = u32::try_from(cgroup.as_raw_fd())
        .map_err(|_| AttachError::Other("a negative descriptor".to_string()))?;
    map.update(&0u32.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
        .map_err(|e| AttachError::Other(format!("cannot set the cgroup: {e:#}")))?;
    let link = {
        let prog = object
            .progs_mut()
            .find(|p| p.name() == PROGRAM)
            .ok_or_else(|| {
                AttachError::Other(format!("the BPF object has no program {PROGRAM}"))
            })?;
        prog.attach_trace()
            .map_err(|e| sort_error("cannot attach the BPF program", &e))?
    };
    Ok(Attached { link, object })
}

impl Attached {
    /// The kernel's ids of the link and of the program, for `-v`.
    pub fn ids(&self) -> Option<(u32, u32)> {
        self.link.info().ok().map(|info| (info.id, info.prog_id))
    }

    /// How many sockets the program has made `IPPROTO_SMC` so far (its
    /// counter in `.bss`).
    pub fn sockets(&self) -> Option<u64> {
        let bss = self
            .object
            .maps()
            .find(|m| m.name().to_string_lossy().ends_with(".bss"))?;
        let value = bss.lookup(&0u32.to_ne_bytes(), MapFlags::ANY).ok()??;
        let bytes: [u8; 8] = value.get(..8)?.try_into().ok()?;
        Some(u64::from_ne_bytes(bytes))
    }
}
