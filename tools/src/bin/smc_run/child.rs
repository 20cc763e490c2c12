// SPDX-License-Identifier: GPL-2.0

//! The command of `smc_run --bpf` in its cgroup, and `smc_run` waiting for
//! it. SIGINT, SIGTERM and SIGCHLD are blocked in `smc_run` and taken one
//! at a time with `sigwaitinfo()`: a SIGINT or SIGTERM sent to `smc_run`
//! (by `kill`) is passed on to the command; one from the terminal (the
//! kernel's, `SI_KERNEL`) is not, as the terminal sends it to the command
//! too. The command starts with no signal blocked (the standard library
//! clears the mask in the child).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};

/// The signals `smc_run --bpf` takes itself, blocked.
pub struct Signals {
    set: libc::sigset_t,
}

impl Signals {
    /// Blocks SIGINT, SIGTERM and SIGCHLD in this (single-threaded)
    /// process, so that they wait for [`Signals::next`].
    pub fn block() -> io::Result<Self> {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: `sigemptyset()` initialises the set it is given, which
        // is valid for writes.
        if unsafe { libc::sigemptyset(set.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: initialised by `sigemptyset()` above.
        let mut set = unsafe { set.assume_init() };
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            // SAFETY: `set` is an initialised set; the signals are valid.
            unsafe {
                libc::sigaddset(&mut set, signal);
            }
        }
        // SAFETY: `set` is initialised; the old mask is not asked for.
        let rc = unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { set })
    }

    /// Waits for one of the blocked signals: its number, and whether a
    /// process sent it (rather than the kernel, as a terminal's SIGINT).
    pub fn next(&self) -> io::Result<(i32, bool)> {
        loop {
            let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
            // SAFETY: `self.set` is an initialised set; `info` is valid for
            // writes of a `siginfo_t`.
            let signal = unsafe { libc::sigwaitinfo(&self.set, info.as_mut_ptr()) };
            if signal > 0 {
                // SAFETY: `sigwaitinfo()` filled `info` when it returned a
                // signal.
                let info = unsafe { info.assume_init() };
                return Ok((signal, info.si_code != libc::SI_KERNEL));
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Waits for SIGINT or SIGTERM (the end of `--cgroup` mode); returns it.
    pub fn wait_for_stop(&self) -> io::Result<i32> {
        loop {
            let (signal, _) = self.next()?;
            if signal == libc::SIGINT || signal == libc::SIGTERM {
                return Ok(signal);
            }
        }
    }
}

/// Starts `command` (not empty) so that it joins the cgroup whose
/// `cgroup.procs` is `procs` before it is executed: every socket it and
/// its children make is seen from inside the cgroup.
pub fn spawn_in_cgroup(command: &[OsString], procs: File) -> io::Result<Child> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    let move_self = move || (&procs).write_all(b"0");
    // SAFETY: the closure runs in the forked child before `exec`; it
    // makes one `write()` system call on a descriptor that is open in the
    // child (inherited, closed by `exec`), allocates nothing and takes no
    // lock, so it is safe after `fork()` (and `smc_run` has one thread).
    unsafe {
        cmd.pre_exec(move_self);
    }
    cmd.spawn()
}

/// Waits for `child`, passing on SIGINT and SIGTERM sent to `smc_run`.
pub fn wait_forwarding(child: &mut Child, signals: &Signals) -> io::Result<ExitStatus> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a pid out of range"))?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let (signal, from_process) = signals.next()?;
        if (signal == libc::SIGINT || signal == libc::SIGTERM) && from_process {
            // SAFETY: `kill()` touches no memory of ours; the child is not
            // reaped yet (only this loop reaps it), so `pid` is still it.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

/// Ends `smc_run` as the command ended: with its exit code, or killed by
/// its signal (without a core file of `smc_run`'s own).
pub fn exit_as(status: ExitStatus) -> ! {
    if let Some(code) = status.code() {
        std::process::exit(code);
    }
    let Some(signal) = status.signal() else {
        std::process::exit(smc_tools::EXIT_FAILURE);
    };
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let mut all = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `setrlimit()` reads the limit it is given; `signal()` sets a
    // default action; `sigfillset()` initialises `all`, which
    // `sigprocmask()` then reads; `raise()` takes a signal number the
    // kernel has just reported.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        if libc::sigfillset(all.as_mut_ptr()) == 0 {
            libc::sigprocmask(libc::SIG_UNBLOCK, all.as_ptr(), std::ptr::null_mut());
        }
        libc::raise(signal);
    }
    // A signal whose default is not to end a process.
    std::process::exit(128 + signal);
}
