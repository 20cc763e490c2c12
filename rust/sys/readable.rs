// SPDX-License-Identifier: GPL-2.0

//! Waiting for a TCP connection's first bytes without a thread: the
//! connection's own callbacks (data ready, state change) or a timeout start
//! a job on the handshake workqueue. A thousand silent clients cost a
//! thousand small allocations and timers, not a thousand sleeping workers.

use super::bindings;
use super::errno::ENOMEM;
use super::tcp::KernelSocket;
use super::work::handshake_wq;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

type Callback = unsafe extern "C" fn(*mut bindings::sock);

/// The part of a wait the socket's callbacks use, whatever its job.
#[repr(C)]
struct WaitHead {
    /// First field: the work function finds the wait from it.
    work: Opaque<bindings::delayed_work>,
    /// The callbacks asked for the job (else the time ran out).
    woken: AtomicBool,
    /// The socket's own callbacks, called on and restored afterwards.
    data_ready: Option<Callback>,
    state_change: Option<Callback>,
}

/// A wait for `sock` to become readable, then `job`.
///
/// # Invariants
///
/// Once its callbacks are installed, the wait is owned by them and by its
/// work item: it lives until the work function took the callbacks back
/// under the write side of the socket's callback lock; callbacks touch it
/// only under the read side.
#[repr(C)]
struct Wait<F> {
    head: WaitHead,
    sock: KernelSocket,
    job: F,
}

/// Runs `job(sock, timed_out)` on the handshake workqueue once `sock` has
/// bytes to read, was closed or reset, or `timeout_ms` passed
/// (`timed_out`), whichever comes first. Fails with `ENOMEM` (the socket
/// and the job are dropped) when the wait cannot be allocated or the module
/// unloads.
///
/// The socket must not have callbacks of smc_rs installed, nor anything in
/// `sk_user_data`, until the job runs.
pub(crate) fn when_readable<F>(sock: KernelSocket, timeout_ms: u32, job: F) -> Result
where
    F: FnOnce(KernelSocket, bool) + Send + 'static,
{
    let wq = handshake_wq().ok_or(ENOMEM)?;
    let wait = KBox::new(
        Wait {
            head: WaitHead {
                work: Opaque::uninit(),
                woken: AtomicBool::new(false),
                data_ready: None,
                state_change: None,
            },
            sock,
            job,
        },
        GFP_KERNEL,
    )?;
    let wait = KBox::into_raw(wait);
    let timeout = kernel::time::msecs_to_jiffies(timeout_ms) as core::ffi::c_ulong;
    // `wait` is a valid allocation, not shared yet; `sk` is the live socket
    // it owns. The work function needs the write side of the callback lock
    // before it frees the wait, so the wait stays valid while we hold it,
    // even once the work is queued or a callback ran.
    // SAFETY: so every access below is to live memory, and the callbacks
    // change under their lock as TCP expects.
    unsafe {
        bindings::smc_rs_init_delayed_work((*wait).head.work.get(), Some(run::<F>));
        let sk = (*wait).sock.sk().as_raw();
        bindings::smc_rs_callback_write_lock(sk);
        (*wait).head.data_ready = (*sk).sk_data_ready;
        (*wait).head.state_change = (*sk).sk_state_change;
        bindings::smc_rs_set_user_data_nocopy(sk, wait.cast());
        (*sk).sk_data_ready = Some(data_ready);
        (*sk).sk_state_change = Some(state_change);
        // Bytes or the end that came before the callbacks were in place
        // start the job at once.
        let state = u32::from(core::ptr::read_volatile(core::ptr::addr_of!(
            (*sk).__sk_common.skc_state
        )));
        let delay = if !bindings::smc_rs_sk_rx_queue_empty(sk) || state != bindings::TCP_ESTABLISHED
        {
            (*wait).head.woken.store(true, Ordering::Relaxed);
            0
        } else {
            timeout
        };
        bindings::smc_rs_queue_delayed_work_on(wq, (*wait).head.work.get(), delay);
        bindings::smc_rs_callback_write_unlock(sk);
    }
    Ok(())
}

/// # Safety
///
/// Installed as `sk_data_ready` by [`when_readable`]; TCP calls it with the
/// live socket.
unsafe extern "C" fn data_ready(sk: *mut bindings::sock) {
    // SAFETY: live `sk` (contract).
    unsafe { callback(sk, |h| h.data_ready) };
}

/// # Safety
///
/// Installed as `sk_state_change` by [`when_readable`]; TCP calls it with
/// the live socket.
unsafe extern "C" fn state_change(sk: *mut bindings::sock) {
    // SAFETY: live `sk` (contract).
    unsafe { callback(sk, |h| h.state_change) };
}

/// Calls the socket's own callback chosen by `own`, then wakes the wait.
///
/// # Safety
///
/// `sk` is live and its callbacks are (or were, until a moment ago) the
/// wait's.
unsafe fn callback(sk: *mut bindings::sock, own: impl Fn(&WaitHead) -> Option<Callback>) {
    // SAFETY: live `sk` (caller).
    unsafe { bindings::smc_rs_callback_read_lock(sk) };
    // SAFETY: as above.
    let head = unsafe { bindings::smc_rs_user_data(sk) }.cast::<WaitHead>();
    if !head.is_null() {
        // Valid under the read lock (`Wait` invariant).
        // SAFETY: see above.
        let head = unsafe { &*head };
        if let Some(f) = own(head) {
            // SAFETY: the socket's own callback, called as TCP would.
            unsafe { f(sk) };
        }
        if !head.woken.swap(true, Ordering::AcqRel) {
            if let Some(wq) = handshake_wq() {
                // SAFETY: the work was initialised before the callbacks
                // were installed; `wq` lives while the module does.
                unsafe { bindings::smc_rs_mod_delayed_work(wq, head.work.get(), 0) };
            }
        }
    }
    // SAFETY: taken above.
    unsafe { bindings::smc_rs_callback_read_unlock(sk) };
}

/// The work function of a wait: takes the callbacks back, frees the wait
/// and runs its job.
///
/// # Safety
///
/// Called by the workqueue with the `work_struct` of a `Wait<F>`'s
/// delayed work, which [`when_readable`] queued.
unsafe extern "C" fn run<F>(work: *mut bindings::work_struct)
where
    F: FnOnce(KernelSocket, bool) + Send + 'static,
{
    // The work is the first field of the delayed work, itself the first
    // field of the wait's head, the first field of the `repr(C)` wait.
    let wait = work.cast::<Wait<F>>();
    // SAFETY: `wait` is live until freed below (invariant); its socket is.
    unsafe {
        let sk = (*wait).sock.sk().as_raw();
        bindings::smc_rs_callback_write_lock(sk);
        (*sk).sk_data_ready = (*wait).head.data_ready;
        (*sk).sk_state_change = (*wait).head.state_change;
        bindings::smc_rs_set_user_data_nocopy(sk, core::ptr::null_mut());
        bindings::smc_rs_callback_write_unlock(sk);
        // A callback that ran before the lock may have queued the work
        // again while it ran: no callback can now, so cancel that.
        bindings::cancel_delayed_work((*wait).head.work.get());
    }
    // SAFETY: allocated by `when_readable` with `KBox`; nobody else refers
    // to it any more: the callbacks are gone, the work is not queued and
    // the workqueue does not touch a work item after calling its function.
    let wait = unsafe { KBox::from_raw(wait) };
    let Wait { head, sock, job } = KBox::into_inner(wait);
    job(sock, !head.woken.load(Ordering::Acquire));
}
