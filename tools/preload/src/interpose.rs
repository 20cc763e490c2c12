// SPDX-License-Identifier: GPL-2.0

//! The interposed `socket()`, the next `socket` it calls, and the
//! configuration read at load time. Allocation-free and lock-free.

use crate::config;
use core::ffi::{c_int, c_void, CStr};
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

/// The signature of `socket(2)`.
type SocketFn = unsafe extern "C" fn(c_int, c_int, c_int) -> c_int;

/// The next `socket` in the lookup order (libc's, or another preloaded
/// library's), as an address; 0 until resolved, 1 when there is none (the
/// system call is made directly then).
static NEXT_SOCKET: AtomicUsize = AtomicUsize::new(0);
/// No `socket` found by `dlsym(RTLD_NEXT)`.
const NO_NEXT: usize = 1;
/// Whether the configuration below has been read.
static CONFIGURED: AtomicBool = AtomicBool::new(false);
/// `SMC_DEBUG`.
static DEBUG: AtomicBool = AtomicBool::new(false);
/// `SMC_SNDBUF` in bytes, -1 when unset or invalid.
static SNDBUF: AtomicI32 = AtomicI32::new(-1);
/// `SMC_RCVBUF` in bytes, -1 when unset or invalid.
static RCVBUF: AtomicI32 = AtomicI32::new(-1);
/// `SMC_FAMILY`: 0 `smc`, 1 `inet`, 2 `auto`.
static FAMILY: AtomicI32 = AtomicI32::new(0);

fn family() -> config::Family {
    match FAMILY.load(Ordering::Relaxed) {
        1 => config::Family::Inet,
        2 => config::Family::Auto,
        _ => config::Family::Smc,
    }
}

/// Runs when the library is loaded, before the program's `main` (and again
/// in every program an `exec` starts with `LD_PRELOAD` inherited).
#[used]
#[link_section = ".init_array"]
static LOAD_HOOK: extern "C" fn() = on_load;

extern "C" fn on_load() {
    configure();
}

/// Reads the environment and resolves the next `socket`, once. Two
/// threads racing here (a constructor of another library calling
/// `socket()` from a thread) compute and store the same values.
fn configure() {
    DEBUG.store(config::debug_enabled(env(c"SMC_DEBUG")), Ordering::Relaxed);
    SNDBUF.store(size_from_env(c"SMC_SNDBUF"), Ordering::Relaxed);
    RCVBUF.store(size_from_env(c"SMC_RCVBUF"), Ordering::Relaxed);
    let f = match config::family(env(c"SMC_FAMILY")) {
        config::Family::Smc => 0,
        config::Family::Inet => 1,
        config::Family::Auto => 2,
    };
    FAMILY.store(f, Ordering::Relaxed);
    NEXT_SOCKET.store(lookup_next_socket(), Ordering::Relaxed);
    CONFIGURED.store(true, Ordering::Release);
}

/// `getenv(name)` as bytes.
fn env(name: &CStr) -> Option<&'static [u8]> {
    // SAFETY: `name` is NUL-terminated; getenv() only reads the
    // environment and returns NULL or a NUL-terminated string in it.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        return None;
    }
    // SAFETY: non-NULL: a NUL-terminated string that lives as long as the
    // environment entry, which this library never changes.
    Some(unsafe { CStr::from_ptr(value) }.to_bytes())
}

/// A buffer size from the environment, -1 when unset or not a size (said
/// on stderr in debug mode).
fn size_from_env(name: &CStr) -> i32 {
    let Some(value) = env(name) else {
        return -1;
    };
    match config::parse_size(value) {
        Some(size) => size,
        None => {
            if config::debug_enabled(env(c"SMC_DEBUG")) {
                let mut line = Line::new();
                let _ = write!(
                    line,
                    "libsmc-preload: ignoring invalid {}=",
                    name.to_str().unwrap_or("size")
                );
                line.push_bytes(value);
                line.emit();
            }
            -1
        }
    }
}

/// The address of the next `socket`, or [`NO_NEXT`].
fn lookup_next_socket() -> usize {
    // SAFETY: RTLD_NEXT with a NUL-terminated symbol name; dlsym() returns
    // NULL or the symbol's address.
    let sym: *mut c_void = unsafe { libc::dlsym(libc::RTLD_NEXT, c"socket".as_ptr()) };
    if sym.is_null() {
        NO_NEXT
    } else {
        sym as usize
    }
}

/// Calls the next `socket` (or makes the system call).
fn next_socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int {
    match NEXT_SOCKET.load(Ordering::Relaxed) {
        0 | NO_NEXT => {
            // SAFETY: socket(2) takes three integers and touches no memory
            // of ours.
            unsafe { libc::syscall(libc::SYS_socket, domain, ty, protocol) as c_int }
        }
        addr => {
            // SAFETY: `addr` is what dlsym() returned for "socket": a
            // function with the signature of socket(2) that lives as long
            // as the process (libc is never unloaded).
            let f: SocketFn = unsafe { core::mem::transmute::<usize, SocketFn>(addr) };
            // SAFETY: socket() takes three integers.
            unsafe { f(domain, ty, protocol) }
        }
    }
}

/// `errno` of this thread.
fn errno() -> c_int {
    // SAFETY: __errno_location() returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Sets `errno` of this thread.
fn set_errno(value: c_int) {
    // SAFETY: __errno_location() returns this thread's errno slot.
    unsafe { *libc::__errno_location() = value };
}

/// The interposed `socket(3)`: TCP sockets become SMC sockets.
#[no_mangle]
pub extern "C" fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int {
    if !CONFIGURED.load(Ordering::Acquire) {
        configure();
    }
    let Some(tries) = config::smc_sockets_for(domain, ty, protocol, family()) else {
        return next_socket(domain, ty, protocol);
    };
    let debug = DEBUG.load(Ordering::Relaxed);
    let saved = errno();
    let mut fd = -1;
    let count = tries.iter().flatten().count();
    for (n, (d, t, p)) in tries.into_iter().flatten().enumerate() {
        let what = if p == config::IPPROTO_SMC { "IPPROTO_SMC" } else { "AF_SMC" };
        fd = next_socket(d, t, p);
        if fd >= 0 {
            if debug {
                let mut line = Line::new();
                let _ = write!(line, "libsmc-preload: map sock to {what} (fd {fd})");
                line.emit();
            }
            break;
        }
        // No SMC here (no module, or a kernel without it): the next try,
        // or TCP.
        if debug {
            let mut line = Line::new();
            let last = if n + 1 == count { ", keeping TCP" } else { "" };
            let _ = write!(
                line,
                "libsmc-preload: {what} socket failed (errno {}){last}",
                errno()
            );
            line.emit();
        }
    }
    if fd < 0 {
        set_errno(saved);
        fd = next_socket(domain, ty, protocol);
        if fd < 0 {
            return fd;
        }
    }
    set_buffer(
        fd,
        libc::SO_SNDBUF,
        "SO_SNDBUF",
        SNDBUF.load(Ordering::Relaxed),
        debug,
    );
    set_buffer(
        fd,
        libc::SO_RCVBUF,
        "SO_RCVBUF",
        RCVBUF.load(Ordering::Relaxed),
        debug,
    );
    set_errno(saved);
    fd
}

/// `setsockopt(fd, SOL_SOCKET, opt, size)` when a size was given.
fn set_buffer(fd: c_int, opt: c_int, name: &str, size: i32, debug: bool) {
    if size < 0 {
        return;
    }
    let value: c_int = size;
    // SAFETY: `value` is a live int for the duration of the call and the
    // length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&value as *const c_int).cast::<c_void>(),
            core::mem::size_of::<c_int>() as libc::socklen_t,
        )
    };
    if debug {
        let mut line = Line::new();
        let _ = if rc == 0 {
            write!(line, "libsmc-preload: {name} set to {size} (fd {fd})")
        } else {
            write!(
                line,
                "libsmc-preload: {name} {size} failed (fd {fd}, errno {})",
                errno()
            )
        };
        line.emit();
    }
}

/// One line of debug output, formatted on the stack and written to stderr
/// in one `write(2)` (lines of concurrent threads do not interleave).
struct Line {
    buf: [u8; 160],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 160],
            len: 0,
        }
    }

    /// Appends what fits, leaving room for the newline.
    fn push_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len + 1 >= self.buf.len() {
                return;
            }
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b;
                self.len += 1;
            }
        }
    }

    fn emit(mut self) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b'\n';
            self.len += 1;
        }
        let saved = errno();
        // SAFETY: the buffer holds `len` initialised bytes; write(2) only
        // reads them.
        unsafe { libc::write(2, self.buf.as_ptr().cast::<c_void>(), self.len) };
        set_errno(saved);
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push_bytes(s.as_bytes());
        Ok(())
    }
}
