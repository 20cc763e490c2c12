// SPDX-License-Identifier: GPL-2.0

//! The cgroup (v2) that `smc_run --bpf` scopes its program to: a transient
//! `smc_run.<pid>` directory at the root of the hierarchy for a command, or
//! an existing one (`--cgroup PATH`). Where no cgroup v2 file system is
//! mounted, `smc_run` mounts one on a private directory for as long as it
//! runs (the hierarchy is the same wherever it is mounted), and takes it
//! away again.

use smc_tools::smc_run_bpf;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a transient cgroup's removal waits for its last tasks.
const REMOVE_WAIT: Duration = Duration::from_secs(2);

/// A cgroup v2 file system `smc_run` mounted itself.
struct PrivateMount {
    point: PathBuf,
}

/// The cgroup the program is scoped to.
pub struct Cgroup {
    path: PathBuf,
    dir: File,
    transient: bool,
    /// Held until the cgroup is done with; unmounted when dropped.
    _mount: Option<PrivateMount>,
}

/// `path` as a C string, for the system calls.
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))
}

impl PrivateMount {
    /// Mounts cgroup v2 on a new directory in the temporary directory.
    fn new() -> io::Result<Self> {
        let point = std::env::temp_dir().join(format!("smc_run.{}.cgroup2", std::process::id()));
        std::fs::create_dir(&point)?;
        let target = c_path(&point)?;
        // SAFETY: the strings are NUL-terminated and outlive the call; no
        // mount data is passed.
        let rc = unsafe {
            libc::mount(
                c"cgroup2".as_ptr(),
                target.as_ptr(),
                c"cgroup2".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            let err = io::Error::last_os_error();
            let _ = std::fs::remove_dir(&point);
            return Err(err);
        }
        Ok(Self { point })
    }
}

impl Drop for PrivateMount {
    fn drop(&mut self) {
        if let Ok(target) = c_path(&self.point) {
            // SAFETY: the string is NUL-terminated and outlives the call.
            unsafe {
                libc::umount2(target.as_ptr(), libc::MNT_DETACH);
            }
        }
        let _ = std::fs::remove_dir(&self.point);
    }
}

/// Whether `path` is a directory of a cgroup v2 hierarchy (only those
/// have `cgroup.controllers`).
fn is_cgroup2_dir(path: &Path) -> bool {
    path.join("cgroup.controllers").is_file()
}

impl Cgroup {
    /// A new cgroup `smc_run.<pid>` at the root of the cgroup v2
    /// hierarchy (mounted privately if it is nowhere), removed again by
    /// [`Cgroup::remove`].
    pub fn create_transient() -> Result<Self, String> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let (root, mount) = match smc_run_bpf::cgroup2_mount(&mountinfo) {
            Some(root) => (root, None),
            None => {
                let mount = PrivateMount::new()
                    .map_err(|e| format!("no cgroup v2 mounted, and cannot mount it: {e}"))?;
                (mount.point.clone(), Some(mount))
            }
        };
        let path = root.join(smc_run_bpf::transient_cgroup_name(std::process::id()));
        // One left by an earlier smc_run of the same pid that was killed
        // goes first, when it is empty.
        if std::fs::create_dir(&path).is_err() {
            let _ = std::fs::remove_dir(&path);
            std::fs::create_dir(&path)
                .map_err(|e| format!("cannot create cgroup {}: {e}", path.display()))?;
        }
        match File::open(&path) {
            Ok(dir) => Ok(Self {
                path,
                dir,
                transient: true,
                _mount: mount,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&path);
                Err(format!("cannot open cgroup {}: {e}", path.display()))
            }
        }
    }

    /// An existing cgroup v2 directory.
    pub fn existing(path: &Path) -> Result<Self, String> {
        if !is_cgroup2_dir(path) {
            return Err(format!("{} is not a cgroup v2 directory", path.display()));
        }
        let dir =
            File::open(path).map_err(|e| format!("cannot open cgroup {}: {e}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            dir,
            transient: false,
            _mount: None,
        })
    }

    /// Where the cgroup is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open directory (the program's map takes its descriptor).
    pub fn dir(&self) -> &File {
        &self.dir
    }

    /// The kernel's id of the cgroup (its directory's inode number).
    pub fn id(&self) -> Option<u64> {
        self.dir.metadata().ok().map(|m| m.ino())
    }

    /// `cgroup.procs`, open for writing: a task that writes `0` to it
    /// moves itself into the cgroup.
    pub fn procs(&self) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.procs"))
    }

    /// Removes a transient cgroup (waiting a little for tasks that are
    /// still leaving it); an existing one is left as it is. The private
    /// mount, if any, goes when `self` does.
    pub fn remove(self) -> Result<(), String> {
        if !self.transient {
            return Ok(());
        }
        let start = Instant::now();
        loop {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => return Ok(()),
                Err(e)
                    if e.raw_os_error() == Some(libc::EBUSY) && start.elapsed() < REMOVE_WAIT =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    return Err(format!(
                        "cgroup {} still has tasks (left running by the command); not removed",
                        self.path.display()
                    ))
                }
                Err(e) => return Err(format!("cannot remove cgroup {}: {e}", self.path.display())),
            }
        }
    }
}
