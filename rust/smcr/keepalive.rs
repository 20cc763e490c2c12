// SPDX-License-Identifier: GPL-2.0

//! Keeping link groups, as upstream does: a link the peer has been silent
//! on for `net.smc.smcr_testlink_time` (as it was when the link group was
//! made; 0 turns this off) gets a TEST LINK request, and goes down when
//! nothing comes back within the LLC wait time; a link group without
//! connections lingers for a while (10 minutes, the client 10 seconds
//! longer than the server, so that the server's orderly DELETE LINK ends
//! both), then ends; a link group whose link went down leaves the registry.
//! A closed socket's connection whose peer reads nothing for a minute is
//! aborted, as TCP gives up on such an orphan. A connection whose peer's
//! clcsock sent its FIN without the peer's closing flags coming by CDC
//! within a few ticks in which the peer sent nothing at all ends with
//! `ECONNRESET`: the peer's socket is gone
//! and its close message was lost (upstream loses it when a killed task
//! finds no free send slot; upstream's own side would hang there).
//!
//! A link group short of a link it may have (one lost, or one that could
//! not be added) tries to get it again, 5 s after it fell short, then with
//! the wait doubled up to a minute: a server adds it, a client asks its
//! server for it (REQ ADD LINK) when it has another device. Upstream adds
//! links only at first contact and when a port comes back, and a group
//! whose one attempt there failed (as one may while the returning port's
//! network is still settling: an upstream server then offers a link from
//! its same port, which a client without another path to it refuses)
//! stays on one link for good.
//!
//! The registry runs [`LinkGroup::keep`] on each link group once per tick
//! of its ticker, which runs only while there are link groups.

use super::conn::Conn;
use super::lgr::{LinkGroup, PENDING_ADD_LINK};
use super::link::activity::stamp;
use super::link::{Link, LinkState, Role};
use super::llc;
use super::settle;
use crate::sys::errno::ECONNRESET;
use crate::sys::print::smc_dbg;
use core::sync::atomic::Ordering;
use kernel::time::msecs_to_jiffies;

/// How often link groups are looked after, in milliseconds.
pub(crate) const TICK_MS: u32 = 1000;
/// Ticks a closed socket's connection may wait for a peer that does not
/// read before it is aborted (about TCP's time for an orphaned connection
/// whose peer announces no room).
const ORPHAN_STALL_TICKS: u32 = 60_000 / TICK_MS;
/// Ticks without a message from the peer that a connection whose peer's
/// clcsock is finished may wait for the peer's closing flags (they travel
/// over RDMA, the FIN over TCP, so the FIN may come first, seconds first
/// under load) before it ends with `ECONNRESET`.
const PEER_GONE_TICKS: u32 = 3;
/// How long a TEST LINK may go unanswered (upstream's LLC wait time).
const TESTLINK_WAIT_MS: u32 = 2_000;
/// How long a server link group without connections lingers.
const LINGER_SERVER_MS: u32 = 600_000;
/// How long a client link group without connections lingers.
const LINGER_CLIENT_MS: u32 = LINGER_SERVER_MS + 10_000;
/// The first and the longest wait before a server adds a missing link
/// again.
const ADD_RETRY_FIRST_MS: u32 = 5_000;
const ADD_RETRY_MAX_MS: u32 = 60_000;

/// What the keeper decided for a link group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Verdict {
    /// It stays.
    Keep,
    /// It leaves the registry and ends.
    End,
}

/// Whether `since` (jiffies, 0: never) is at least `ms` before `now`.
fn older_than(now: u64, since: u64, ms: u32) -> bool {
    since != 0 && now.wrapping_sub(since) >= msecs_to_jiffies(ms) as u64
}

impl LinkGroup {
    /// The peer said it has no such link group (a client declined an
    /// Accept that named it with `NOSRVLINK`): the link is tested now, not
    /// after `smcr_testlink_time`, so that a link group the peer lost ends
    /// within the LLC wait time and the next connections make a new one
    /// instead of falling back one by one. A peer that still has it (the
    /// client's link group may be another namespace's) answers, and nothing
    /// changes. Process context, may sleep.
    pub(crate) fn probe(&self) {
        let act = &self.link().activity;
        if self.link().state() != LinkState::Active || act.tested.load(Ordering::Relaxed) != 0 {
            return;
        }
        smc_dbg!("lgr: the client knows no such link group, TEST LINK now");
        self.test_link(stamp());
    }

    /// Sends a TEST LINK request, noting when (`now`) for the keeper's
    /// wait for the answer; `false` (the link is down then) when it could
    /// not be sent.
    fn test_link(&self, now: u64) -> bool {
        test_link(&self.link(), now)
    }

    /// One look at the link group (process context, may sleep).
    pub(crate) fn keep(&self) -> Verdict {
        if !self.alive() {
            return Verdict::End;
        }
        if self.link().state() != LinkState::Active {
            return Verdict::Keep;
        }
        let now = stamp();
        let act = &self.link().activity;
        if self.conn_count() == 0 {
            let linger = match self.link().role {
                Role::Server => LINGER_SERVER_MS,
                Role::Client => LINGER_CLIENT_MS,
            };
            let since = act.idle_since.load(Ordering::Relaxed);
            if since == 0 {
                act.idle_since.store(now, Ordering::Relaxed);
            } else if older_than(now, since, linger) {
                smc_dbg!("lgr: idle for long, ends");
                llc::send_delete_all(&self.link());
                return Verdict::End;
            }
        } else {
            act.idle_since.store(0, Ordering::Relaxed);
            // A peer that sent nothing over any link for a tick: only such
            // ticks count towards a connection's vanished peer. Under load
            // a closing peer's last bytes and flags may wait seconds for a
            // send slot behind other connections' data, its FIN not.
            let peer_quiet = self.links().iter().flatten().all(|l| {
                older_than(now, l.activity.heard.load(Ordering::Relaxed), TICK_MS)
            });
            self.conns.lock().for_each(|c| {
                if stalled(c, ORPHAN_STALL_TICKS) {
                    smc_dbg!("lgr: closed connection {:#x} stalled, aborted", c.token);
                    settle::abort(c);
                } else if peer_vanished(c, PEER_GONE_TICKS, peer_quiet) {
                    smc_dbg!("lgr: connection {:#x}: the peer's socket is gone", c.token);
                    c.shared.lock().error.get_or_insert(ECONNRESET.into());
                    settle::abort(c);
                }
            });
        }
        self.retry_add_link(now);
        // Each active link is tested on its own: one that does not answer
        // goes down, and its connections move to another one if the group
        // has it.
        for link in self.links().iter().flatten() {
            if link.state() == LinkState::Active {
                keep_link(link, now);
            }
        }
        if self.alive() {
            Verdict::Keep
        } else {
            Verdict::End
        }
    }
}

impl LinkGroup {
    /// A group short of a link adds it, or asks for it, when it is due
    /// (see the module).
    fn retry_add_link(&self, now: u64) {
        let short = self.max_links() > 1 && self.with_links(|s| s.active().count()) < 2;
        let due = self.add_due.load(Ordering::Relaxed);
        let wait = |ms: u32| now.wrapping_add(msecs_to_jiffies(ms) as u64).max(1);
        if !short {
            self.add_due.store(0, Ordering::Relaxed);
            return;
        }
        if due == 0 {
            self.add_backoff_ms.store(ADD_RETRY_FIRST_MS, Ordering::Relaxed);
            self.add_due.store(wait(ADD_RETRY_FIRST_MS), Ordering::Relaxed);
            return;
        }
        if (now.wrapping_sub(due) as i64) < 0 {
            return;
        }
        let next = self.add_backoff_ms.load(Ordering::Relaxed).saturating_mul(2).min(ADD_RETRY_MAX_MS);
        self.add_backoff_ms.store(next, Ordering::Relaxed);
        self.add_due.store(wait(next), Ordering::Relaxed);
        smc_dbg!("lgr: short of a link, adding one again");
        self.pending.fetch_or(PENDING_ADD_LINK, Ordering::AcqRel);
        self.run_work();
    }
}

/// TEST LINK on `link` when the peer was silent for
/// `smcr_testlink_time`; the link goes down when the answer does not come
/// within [`TESTLINK_WAIT_MS`].
fn keep_link(link: &Link, now: u64) {
    let act = &link.activity;
    let tested = act.tested.load(Ordering::Relaxed);
    if tested != 0 {
        if older_than(now, tested, TESTLINK_WAIT_MS) {
            smc_dbg!("lgr: TEST LINK unanswered, link down");
            link.link_down();
        }
    } else if link.params.testlink_ms != 0
        && older_than(now, act.heard.load(Ordering::Relaxed), link.params.testlink_ms)
    {
        test_link(link, now);
    }
}

/// Sends a TEST LINK request on `link`, noting when (`now`); `false` (the
/// link is down then) when it could not be sent.
fn test_link(link: &Link, now: u64) -> bool {
    link.activity.tested.store(now, Ordering::Relaxed);
    if llc::send_test_link(link).is_err() {
        link.link_down();
        return false;
    }
    true
}

/// One keeper tick for a connection whose socket closed while bytes
/// still wait for room in the peer's RMB: true once the peer has not
/// consumed anything for `ticks` ticks in a row (then it is aborted,
/// as TCP gives up on an orphaned connection the peer no longer reads).
fn stalled(conn: &Conn, ticks: u32) -> bool {
    if !conn.is_orphaned() {
        return false;
    }
    let mut sh = conn.shared.lock();
    if sh.tx_copied == sh.tx_prod || sh.error.is_some() {
        sh.stall = (0, 0);
        return false;
    }
    let acked = sh.tx_acked;
    sh.stall = if sh.stall.0 == acked {
        (acked, sh.stall.1.saturating_add(1))
    } else {
        (acked, 0)
    };
    sh.stall.1 >= ticks
}

/// One keeper tick: true once the peer's clcsock has been finished
/// (its FIN came) for `ticks` ticks in which the peer sent nothing
/// (`quiet`: other ticks do not count) while no closing flag came
/// by CDC: the peer's socket is gone and its close message was lost
/// (upstream drops it when a dying task finds no free send slot), so
/// nothing would end the connection otherwise.
fn peer_vanished(conn: &Conn, ticks: u32, quiet: bool) -> bool {
    let mut sh = conn.shared.lock();
    // A peer that shut down its writing (upstream shuts its clcsock
    // down the same way) told us with a flag: not vanished.
    let told = sh.peer_state.any_close() || sh.peer_state.peer_done_writing;
    if told || sh.error.is_some() || !conn.waker.peer_finished() {
        sh.fin_ticks = 0;
        return false;
    }
    if quiet {
        sh.fin_ticks = sh.fin_ticks.saturating_add(1);
    }
    sh.fin_ticks >= ticks
}
