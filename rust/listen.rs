// SPDX-License-Identifier: GPL-2.0

//! The server side of AF_SMC: a listening SMC socket takes the connections
//! of its TCP listener as soon as TCP has them, runs the CLC handshake of
//! each on the handshake workqueue, and queues the finished ones for
//! `accept()`. The listener itself never waits for a handshake, so a slow
//! or silent client cannot hold up the others.
//!
//! Who takes them from TCP: `accept()` itself, as a TCP listener's does,
//! when it is called (or waits) while TCP holds connections; TCP's wake-up
//! reaches waiters and pollers directly. A connection without SMC thus
//! costs no more hops than with TCP. The listener's work item takes them
//! only while a client that offered SMC waits for its handshake and no
//! task waits in `accept()` to start it.
//!
//! Like TCP's accept queue, the number of connections taken (queued or in
//! their handshake) is bounded by the backlog; beyond it they stay in the
//! TCP listener's own queue, and TCP applies its backlog to new SYNs.

use crate::clc::{server_handshake, ServerOutcome, CLC_WAIT_MS};
use crate::smcr::conn::Conn;
use crate::smcr::settle;
use crate::stats::{count, Event, Side};
use crate::sys::errno::{EAGAIN, EINVAL};
use crate::sys::listen::ListenHook;
use crate::sys::print::smc_dbg;
use crate::sys::readable::when_readable;
use crate::sys::sock::{SmcSk, SockGuard};
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::sys::tcp::{KernelSocket, TcpSock};
use crate::wire::clc::DeclineReason;
use core::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// A connection whose handshake is done, waiting for `accept()`.
pub(crate) struct Accepted {
    pub(crate) clcsock: KernelSocket,
    /// Why it uses TCP.
    pub(crate) reason: DeclineReason,
    /// What the client's decline said, if it sent one.
    pub(crate) peer_diagnosis: u32,
    /// The SMC-R connection, when SMC-R was agreed.
    pub(crate) smcr: Option<Arc<Conn>>,
}

impl Accepted {
    /// Drops a connection nobody will accept, as TCP resets one from its
    /// accept queue: the clcsock is reset, an SMC connection aborted and
    /// let go (its link group frees it once the abort went out).
    fn reset(self) {
        self.clcsock.abort();
        if let Some(c) = self.smcr {
            settle::abandon(&c);
        }
    }
}

/// First-in first-out queue of finished connections: a ring that doubles
/// when full (it never holds more than the backlog allows).
struct AcceptQueue {
    slots: KVec<Option<Accepted>>,
    head: usize,
    len: usize,
}

impl AcceptQueue {
    fn new() -> Self {
        AcceptQueue {
            slots: KVec::new(),
            head: 0,
            len: 0,
        }
    }

    fn push(&mut self, conn: Accepted) -> core::result::Result<(), Accepted> {
        if self.len == self.slots.len() && self.grow().is_err() {
            return Err(conn);
        }
        let tail = (self.head + self.len).checked_rem(self.slots.len());
        match tail.and_then(|t| self.slots.get_mut(t)) {
            Some(slot) => {
                *slot = Some(conn);
                self.len += 1;
                Ok(())
            }
            None => Err(conn),
        }
    }

    fn grow(&mut self) -> Result {
        let cap = self.slots.len();
        let new_cap = (cap * 2).max(8);
        let mut slots = KVec::with_capacity(new_cap, GFP_KERNEL)?;
        for i in 0..new_cap {
            let item = if i < self.len {
                (self.head + i)
                    .checked_rem(cap)
                    .and_then(|at| self.slots.get_mut(at))
                    .and_then(Option::take)
            } else {
                None
            };
            // Within the capacity reserved above: does not allocate.
            slots.push(item, GFP_KERNEL)?;
        }
        self.slots = slots;
        self.head = 0;
        Ok(())
    }

    fn pop(&mut self) -> Option<Accepted> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots.get_mut(self.head).and_then(Option::take);
        self.head = (self.head + 1).checked_rem(self.slots.len()).unwrap_or(0);
        self.len -= 1;
        item
    }
}

/// How many connections a listener holds, and how many it may hold.
#[derive(Default)]
struct ListenCounts {
    /// Connections in the accept queue.
    queued: usize,
    /// Connections in their handshake.
    handshaking: usize,
    /// The backlog of `listen(2)`.
    backlog: u32,
}

/// The state of a listener that poll, `accept()` and TCP's SYN handling
/// (softirq) read without the socket lock. The counts change under the
/// socket lock and are read together under their own bh-safe spin lock.
#[pin_data]
pub(crate) struct ListenCounters {
    /// The socket listens.
    listening: AtomicBool,
    /// `SMC_LIMIT_HS`: when handshakes pile up, answer new SYNs without
    /// the SMC option (those connections are plain TCP from the start).
    limit_handshakes: AtomicBool,
    /// Tasks waiting in `accept()`: they take TCP's connections themselves.
    accept_waiters: AtomicU32,
    /// Connection requests with the SMC option (SYNs answered with it) not
    /// taken from TCP yet. Requests that never complete leave it too high,
    /// which only costs a needless run of the work item.
    smc_requests: AtomicU32,
    #[pin]
    counts: SpinLockBh<ListenCounts>,
}

impl ListenCounters {
    /// A socket that does not listen, with `SMC_LIMIT_HS` set to `limit`.
    pub(crate) fn new(limit: bool) -> impl PinInit<Self> {
        pin_init!(ListenCounters {
            listening: AtomicBool::new(false),
            limit_handshakes: AtomicBool::new(limit),
            accept_waiters: AtomicU32::new(0),
            smc_requests: AtomicU32::new(0),
            counts <- new_spinlock_bh!(ListenCounts::default(), "ListenCounters::counts"),
        })
    }

    /// Whether the socket listens.
    pub(crate) fn listening(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    /// Whether `SMC_LIMIT_HS` is on.
    pub(crate) fn limit_handshakes(&self) -> bool {
        self.limit_handshakes.load(Ordering::Relaxed)
    }

    /// Sets `SMC_LIMIT_HS`.
    pub(crate) fn set_limit_handshakes(&self, on: bool) {
        self.limit_handshakes.store(on, Ordering::Relaxed);
    }

    /// A connection is waiting (finished, or in TCP's queue to be taken),
    /// or the socket stopped listening: each ends a wait in `accept()`.
    fn accept_ready(&self, tcp: &KernelSocket) -> bool {
        self.acceptable(tcp) || !self.listening()
    }

    /// Whether `accept()` would find a connection: a finished one, or one
    /// in the queue of the TCP listener `tcp` that may be taken (the
    /// backlog is not full). Poll's readable.
    pub(crate) fn acceptable(&self, tcp: &KernelSocket) -> bool {
        let (queued, taken, backlog) = {
            let c = self.counts.lock();
            (c.queued, c.queued + c.handshaking, c.backlog as usize)
        };
        queued > 0 || (taken <= backlog && !tcp.accept_queue_empty())
    }

    /// TCP answered a SYN with the SMC option (softirq).
    pub(crate) fn smc_request(&self) {
        self.smc_requests.fetch_add(1, Ordering::Relaxed);
    }

    /// TCP queued a connection (softirq): whether the listener's work item
    /// must take it. Not when a task waits in `accept()` (it takes it once
    /// woken), nor when no client waits for a handshake (`accept()` takes
    /// plain TCP connections when the application asks for them).
    pub(crate) fn needs_work_item(&self) -> bool {
        // TCP queued the connection before calling us. Pairs with the
        // waiter's decrement and its look at TCP's queue on its way out:
        // either the waiter sees the connection, or this sees no waiter.
        fence(Ordering::SeqCst);
        self.accept_waiters.load(Ordering::SeqCst) == 0
            && self.smc_requests.load(Ordering::Relaxed) > 0
    }

    /// With `SMC_LIMIT_HS`, handshakes are congested once half the backlog
    /// is in a handshake. Called from softirq.
    pub(crate) fn congested(&self) -> bool {
        if !self.limit_handshakes() {
            return false;
        }
        let c = self.counts.lock();
        c.handshaking >= (c.backlog as usize / 2).max(1)
    }

    /// Connections held (queued or in their handshake), and the backlog.
    fn taken(&self) -> (usize, usize) {
        let c = self.counts.lock();
        (c.queued + c.handshaking, c.backlog as usize)
    }

    fn update(&self, f: impl FnOnce(&mut ListenCounts)) {
        f(&mut self.counts.lock());
    }
}

/// What a listening SMC socket owns, behind its socket lock.
pub(crate) struct Listener {
    /// Keeps TCP reporting new connections to us.
    hook: ListenHook,
    queue: AcceptQueue,
    /// The connections in their handshake, to abort them when the listener
    /// closes. A finished one leaves its slot empty for the next.
    handshakes: KVec<Option<ARef<TcpSock>>>,
    /// Taking connections stopped at the backlog; `accept()` resumes it.
    throttled: bool,
}

/// The protocol side a listener needs from the socket type it lives in.
pub(crate) trait ListenSocket: crate::sys::listen::ListenOwner + Sized {
    /// The listener's counters in the socket's state.
    fn counters(&self) -> &ListenCounters;
    /// The listener state of a locked socket, if it is listening.
    fn listener(st: &mut Self::Locked) -> Option<&mut Listener>;
    /// Queues the listener's work item, which calls [`take_connections`].
    fn take_later(sk: &SmcSk<Self>);
}

impl Listener {
    /// Starts listening on `sk`'s TCP listener (already in `listen(2)`).
    /// Connections TCP queued before the hook was in place are taken by the
    /// work item, which the caller schedules once the listener is in place.
    pub(crate) fn new<S: ListenSocket>(st: &SockGuard<'_, S>, backlog: i32) -> Self {
        let sk = st.sk();
        let counters = sk.state().counters();
        counters.update(|c| {
            *c = ListenCounts {
                backlog: backlog.max(0) as u32,
                ..ListenCounts::default()
            }
        });
        counters.smc_requests.store(0, Ordering::Relaxed);
        counters.listening.store(true, Ordering::Release);
        st.set_listening(true);
        Listener {
            hook: ListenHook::new(sk.state().clcsock(), sk),
            queue: AcceptQueue::new(),
            handshakes: KVec::new(),
            throttled: false,
        }
    }

    /// A new `listen(2)` backlog on a listening socket.
    pub(crate) fn set_backlog<S: ListenSocket>(&mut self, sk: &SmcSk<S>, backlog: i32) {
        let backlog = backlog.max(0) as u32;
        sk.state().counters().update(|c| c.backlog = backlog);
        if self.throttled {
            self.throttled = false;
            S::take_later(sk);
        }
    }

    /// Takes the next finished connection, if any.
    pub(crate) fn pop<S: ListenSocket>(&mut self, sk: &SmcSk<S>) -> Option<Accepted> {
        let conn = self.queue.pop()?;
        sk.state()
            .counters()
            .update(|c| c.queued = c.queued.saturating_sub(1));
        if self.throttled {
            // Room again: take what waits in TCP's queue.
            self.throttled = false;
            S::take_later(sk);
        }
        Some(conn)
    }

    /// Stops listening: no more callbacks from TCP, handshakes in flight
    /// are aborted, finished but unaccepted connections are reset (as TCP
    /// does with its accept queue), waiters in `accept()` wake up.
    pub(crate) fn stop<S: ListenSocket>(self, st: &SockGuard<'_, S>) {
        let Listener {
            hook,
            mut queue,
            handshakes,
            ..
        } = self;
        // First, TCP stops telling us about connections.
        drop(hook);
        let sk = st.sk();
        let counters = sk.state().counters();
        counters.listening.store(false, Ordering::Release);
        st.set_listening(false);
        for h in handshakes.iter().flatten() {
            h.abort();
        }
        while let Some(conn) = queue.pop() {
            conn.reset();
        }
        counters.update(|c| {
            c.queued = 0;
            c.handshaking = 0;
        });
        // Everyone waiting in accept() or poll looks again.
        sk.state().clcsock().wake_waiters();
    }
}

/// The listener's work item: takes the connections TCP has ready, up to
/// the backlog. Connections that offered SMC get a handshake job; the
/// others are plain TCP and go to the accept queue at once.
pub(crate) fn take_connections<S: ListenSocket>(sk: &SmcSk<S>) {
    let mut st = sk.lock();
    take_locked(sk, &mut st, true);
}

/// Takes the connections TCP has ready, up to the backlog, with the socket
/// locked; `wake`: tell a waiter, the pollers and an `O_ASYNC` owner of
/// each one queued (TCP's wake-up did not: the work item took it).
fn take_locked<S: ListenSocket>(sk: &SmcSk<S>, st: &mut SockGuard<'_, S>, wake: bool) {
    let net = sk.net();
    let counters = sk.state().counters();
    let clcsock = sk.state().clcsock();
    while let Some(l) = S::listener(st) {
        // Looked at first (every accept() comes here, lock-free): an accept
        // that finds nothing still allocates a socket.
        if clcsock.accept_queue_empty() {
            break;
        }
        // The counters change only under the socket lock, which we hold.
        let (taken, backlog) = counters.taken();
        if taken > backlog {
            l.throttled = true;
            break;
        }
        // `EAGAIN`: another task took it. Other errors concern one child
        // only; the next one (or the next call) goes on.
        let Ok(child) = l.hook.accept(clcsock) else {
            break;
        };
        if !child.peer_offered_smc() {
            let conn = Accepted {
                clcsock: child,
                reason: DeclineReason::PeerNoSmc,
                peer_diagnosis: 0,
                smcr: None,
            };
            count(net, Side::Server, Event::Connection);
            count(net, Side::Server, Event::Fallback(conn.reason));
            smc_dbg!("server: client without the SMC option, plain TCP");
            if let Err(conn) = l.queue.push(conn) {
                conn.clcsock.abort();
                continue;
            }
            counters.update(|c| c.queued += 1);
            if wake {
                l.hook.wake_one();
                sk.signal_readable();
            }
            continue;
        }
        // Saturating: requests answered before the hook was in place
        // were not counted.
        let _ = counters
            .smc_requests
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        let free = l.handshakes.iter().position(Option::is_none);
        if free.is_none() && l.handshakes.reserve(1, GFP_KERNEL).is_err() {
            child.abort();
            continue;
        }
        let handle = child.abort_handle();
        let listener = ARef::from(sk);
        // No thread waits for the client's proposal: its bytes (or the
        // time for them running out) start the handshake job.
        let job = move |child, timed_out| finish_handshake(listener, child, timed_out);
        if when_readable(child, CLC_WAIT_MS, job).is_err() {
            // The child was dropped: the client sees a reset, as when TCP
            // cannot allocate a child.
            count(net, Side::Server, Event::HandshakeError);
            continue;
        }
        match free.and_then(|i| l.handshakes.get_mut(i)) {
            Some(slot) => *slot = Some(handle),
            // Within the capacity reserved above: cannot fail.
            None => {
                let _ = l.handshakes.push(Some(handle), GFP_KERNEL);
            }
        }
        counters.update(|c| c.handshaking += 1);
    }
}

/// A handshake job, once `child` has bytes to read or `timed_out` waiting
/// for them: runs the server side of CLC on it, then hands the connection
/// to `listener`'s accept queue, or drops it.
fn finish_handshake<S: ListenSocket>(
    listener: ARef<SmcSk<S>>,
    child: KernelSocket,
    timed_out: bool,
) {
    let outcome = server_handshake(&child, if timed_out { 0 } else { CLC_WAIT_MS });
    let sk = &*listener;
    let net = sk.net();
    let mut st = sk.lock();
    let Some(l) = S::listener(&mut st) else {
        // The listener closed and aborted this connection (the handshake
        // may have finished meanwhile).
        abandon(child, outcome);
        return;
    };
    let Some(slot) = l
        .handshakes
        .iter_mut()
        .find(|h| h.as_ref().is_some_and(|h| core::ptr::eq(&**h, child.sk())))
    else {
        // Started by an earlier listen() of this socket, which was stopped.
        abandon(child, outcome);
        return;
    };
    drop(slot.take());
    let counters = sk.state().counters();
    counters.update(|c| c.handshaking = c.handshaking.saturating_sub(1));
    let (reason, peer_diagnosis, smcr) = match outcome {
        ServerOutcome::Smcr(conn) => (DeclineReason::PeerNoSmc, 0, Some(conn)),
        ServerOutcome::Fallback {
            reason,
            peer_diagnosis,
            not_clc,
            error,
        } => {
            if not_clc {
                smc_dbg!("server: client with the SMC option does not speak CLC, plain TCP");
                count(net, Side::Server, Event::NonClcPeer);
            }
            if let Some(e) = error {
                smc_dbg!("server: malformed CLC from the client ({:?}), declined", e);
                count(net, Side::Server, Event::HandshakeError);
            }
            (reason, peer_diagnosis, None)
        }
        ServerOutcome::Abort(e) => {
            smc_dbg!(
                "server: CLC handshake aborted ({:?}), connection dropped",
                e
            );
            count(net, Side::Server, Event::HandshakeError);
            child.abort();
            return;
        }
    };
    count(net, Side::Server, Event::Connection);
    match smcr {
        Some(ref c) if c.is_ism() => count(net, Side::Server, Event::SmcdV2),
        Some(_) => count(net, Side::Server, Event::SmcrV2),
        None => count(net, Side::Server, Event::Fallback(reason)),
    }
    let conn = Accepted {
        clcsock: child,
        reason,
        peer_diagnosis,
        smcr,
    };
    if let Err(conn) = l.queue.push(conn) {
        conn.reset();
        return;
    }
    counters.update(|c| c.queued += 1);
    // One waiter in accept() and every poller; SIGIO for O_ASYNC.
    l.hook.wake_one();
    sk.signal_readable();
}

/// Drops a handshake's connection whose listener is gone, as its accept
/// queue's: the clcsock is reset and an SMC connection it made is aborted
/// and let go (else its link group would keep it, and its peer's end,
/// waiting for a close that never comes).
fn abandon(child: KernelSocket, outcome: ServerOutcome) {
    child.abort();
    if let ServerOutcome::Smcr(conn) = outcome {
        settle::abandon(&conn);
    }
}

/// `accept()` on a listening socket: the next finished connection, waiting
/// for one unless `nonblock`, up to `SO_RCVTIMEO`, interruptible.
pub(crate) fn accept<S: ListenSocket>(sk: &SmcSk<S>, nonblock: bool) -> Result<Accepted> {
    let mut timeo = sk.rcvtimeo(nonblock);
    let counters = sk.state().counters();
    let mut st = sk.lock();
    let clcsock = sk.state().clcsock();
    loop {
        // Also after each wait: TCP's wake-up may have left a connection
        // to this task instead of the work item.
        take_locked(sk, &mut st, false);
        let Some(l) = S::listener(&mut st) else {
            return Err(EINVAL.into());
        };
        if let Some(conn) = l.pop(sk) {
            if l.queue.len > 0 {
                // Taken here, nobody was woken for the others.
                l.hook.wake_one();
            }
            return Ok(conn);
        }
        if timeo == 0 {
            return Err(EAGAIN.into());
        }
        counters.accept_waiters.fetch_add(1, Ordering::SeqCst);
        let waited = st.wait_exclusive(clcsock, &mut timeo, || counters.accept_ready(clcsock));
        counters.accept_waiters.fetch_sub(1, Ordering::SeqCst);
        if let Err(e) = waited {
            // Connections TCP queued while this task waited were left to
            // it: their clients may wait for a handshake.
            take_locked(sk, &mut st, true);
            return Err(e);
        }
    }
}
