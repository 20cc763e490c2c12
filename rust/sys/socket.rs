// SPDX-License-Identifier: GPL-2.0

//! The user-facing `struct socket` of an SMC socket, and the redirection of
//! its file to the clcsock when a connection falls back to TCP.

use super::args::SockoptIn;
use super::bindings;
use super::sock::{SmcSk, SockGuard, SockState};
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr::null_mut;
use kernel::error::{to_result, Result};

/// The user-facing `struct socket` of an SMC socket, borrowed for one call of
/// a `proto_ops` callback (or under the socket lock, see [`with_user_socket`]).
///
/// # Invariants
///
/// `raw` is live for `'a` and `raw->sk` is a live `SmcSk<S>` with initialised
/// state.
pub(crate) struct Socket<'a, S: SockState> {
    raw: *mut bindings::socket,
    _sk: PhantomData<&'a SmcSk<S>>,
}

impl<'a, S: SockState> Socket<'a, S> {
    /// # Safety
    ///
    /// `raw` must satisfy the type invariant for `'a`.
    pub(super) unsafe fn from_raw(raw: *mut bindings::socket) -> Self {
        // INVARIANT: the caller's promise.
        Socket {
            raw,
            _sk: PhantomData,
        }
    }

    /// The SMC `struct sock` behind this socket.
    pub(crate) fn sk(&self) -> &'a SmcSk<S> {
        // SAFETY: by the type invariant `raw->sk` is a live `SmcSk<S>` for `'a`.
        unsafe { SmcSk::from_raw((*self.raw).sk) }
    }

    /// Marks the socket connected (`SS_CONNECTED`), as `getpeername`
    /// expects. `state` is written under the socket lock, which `_locked`
    /// proves is held.
    pub(crate) fn set_connected(&self, _locked: &SockGuard<'_, S>) {
        // SAFETY: live socket (invariant); writers hold the socket lock.
        unsafe { (*self.raw).state = bindings::socket_state_SS_CONNECTED };
    }

    /// Applies a `SOL_SOCKET` option to the SMC socket itself.
    pub(crate) fn setsockopt_own(&self, name: i32, val: SockoptIn<'_>) -> Result {
        // SAFETY: live socket of the current call; `val` is the call's buffer.
        to_result(unsafe {
            bindings::sock_setsockopt(
                self.raw,
                bindings::SOL_SOCKET as c_int,
                name,
                val.val,
                val.len,
            )
        })
    }
}

/// The redirection of an SMC socket's file to the socket's own clcsock, the
/// TCP fallback: every later system call on the file is TCP's own, with
/// TCP's exact semantics and no extra cost. [`FileRedirect::undo`] is its
/// inverse, run by `release` before the clcsock can go.
///
/// A caller that read the file's private data before the switch still calls
/// into the SMC socket's `proto_ops`; in fallback every one of them forwards
/// to the same clcsock, so such a call is served exactly as if it came a
/// moment later. Waiters need no moving: SMC's `poll` queues them on the
/// clcsock's wait queue from the start.
pub(crate) struct FileRedirect;

impl FileRedirect {
    /// Redirects the file of `sock` to its clcsock. Returns false when the
    /// socket has no file (not yet accepted), or it was redirected already.
    /// The socket lock (`_locked`) orders this against `release`.
    pub(crate) fn install<S: SockState>(sock: &Socket<'_, S>, _locked: &SockGuard<'_, S>) -> bool {
        let clc = sock.sk().state().clcsock();
        let tcp = clc.raw();
        // `raw` is live (invariant); `file` is NULL or the live file that
        // holds it, and the TCP socket is owned by this SMC socket, which
        // outlives the redirection (`release` undoes it before it releases
        // the clcsock). The fields of the TCP socket are set before the
        // file's private data publishes them (a release store, which is
        // `WRITE_ONCE` plus ordering).
        // SAFETY: so every pointer dereferenced here is live.
        unsafe {
            let file = (*sock.raw).file;
            if file.is_null() || (*file).private_data != sock.raw.cast() {
                return false;
            }
            (*tcp).file = file;
            (*tcp).wq.fasync_list = (*sock.raw).wq.fasync_list;
            (*sock.raw).wq.fasync_list = null_mut();
            // O_ASYNC (SIGIO) set on the file so far goes with the list.
            let sk = (*sock.raw).sk;
            if bindings::smc_rs_sock_flag(sk, bindings::sock_flags_SOCK_FASYNC) {
                bindings::smc_rs_sock_set_flag(clc.sk().as_raw(), bindings::sock_flags_SOCK_FASYNC);
            }
            bindings::smc_rs_set_file_private(file, tcp.cast());
        }
        true
    }

    /// Points a redirected file back at the SMC socket `sock`, so that the
    /// clcsock can be released (with the last reference to the SMC socket).
    ///
    /// # Safety
    ///
    /// `sock` must be a live SMC socket being released: its file, if any, is
    /// the one being closed, and nobody else calls on it any more.
    pub(super) unsafe fn undo(sock: *mut bindings::socket) {
        // SAFETY: `sock` and its file are live (caller); a file whose private
        // data is not `sock` was redirected by `install` to the live clcsock.
        unsafe {
            let file = (*sock).file;
            if !file.is_null() && (*file).private_data != sock.cast() {
                let tcp = (*file).private_data.cast::<bindings::socket>();
                (*sock).wq.fasync_list = (*tcp).wq.fasync_list;
                (*tcp).wq.fasync_list = null_mut();
                (*tcp).file = null_mut();
                bindings::smc_rs_set_file_private(file, sock.cast());
            }
        }
    }
}

/// Calls `f` with the user socket of a locked SMC socket and its locked
/// state; `None` (without calling `f`) once the socket was orphaned (closed).
pub(crate) fn with_user_socket<S: SockState, R>(
    guard: &mut SockGuard<'_, S>,
    f: impl FnOnce(&Socket<'_, S>, &mut SockGuard<'_, S>) -> R,
) -> Option<R> {
    // `sk_socket` only changes under the socket lock (orphan, graft).
    // SAFETY: `guard` holds that lock on a live socket.
    let raw = unsafe { (*guard.sk().as_raw()).sk_socket };
    if raw.is_null() {
        return None;
    }
    // INVARIANT: a non-NULL `sk_socket` is the live socket whose `sk` is
    // ours, and stays so while the lock is held, which covers the call.
    let sock = Socket {
        raw,
        _sk: PhantomData,
    };
    Some(f(&sock, guard))
}

/// A `struct socket` the socket layer allocated for `accept`, still without a
/// `struct sock`; [`super::family`] installs one.
pub(crate) struct NewSocket<'a> {
    pub(super) raw: *mut bindings::socket,
    _call: PhantomData<&'a mut ()>,
}

impl NewSocket<'_> {
    pub(super) fn new(raw: *mut bindings::socket) -> Self {
        NewSocket {
            raw,
            _call: PhantomData,
        }
    }
}
