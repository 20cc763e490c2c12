// SPDX-License-Identifier: GPL-2.0

//! The link groups that handshakes are making now, by peer: what stands in
//! for upstream's host-wide "lgr pending" locks without holding anything
//! across a wait for the network.
//!
//! Upstream serialises every server's link group decision on one mutex and
//! keeps it held while a new link group waits for the client's Confirm
//! (up to the CLC timeout) and for its link's confirmation, and the same on
//! the client: one silent client (or server) stalls every SMC-R handshake
//! of the host, in every namespace. Here a handshake that makes a link
//! group says so ([`Setups::begin`], [`Setups::find_or_begin`]); a later
//! handshake toward the same peer, in the same namespace, that finds no
//! link group ready waits ([`Setups::find_waiting`]) while one being made
//! could still come up — up to
//! [`SERVER_PATIENCE_MS`] after that one began, on the server — and then
//! joins it, or makes its own. Handshakes toward other peers or in other
//! namespaces never wait for each other.
//!
//! Locks: `entries` (a mutex, process context) nests outside the
//! registry's `lgrs`: the lookup a wait repeats runs under it, so a setup
//! that ends between the lookup and the wait still wakes the waiter.

use crate::wire::lgr_match::LgrIdentity;
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::{new_condvar, new_mutex, Arc, CondVar, CondVarTimeoutResult, Mutex};
use kernel::time::{ktime_ms_delta, msecs_to_jiffies, Ktime};

/// How long a server's new link group is worth waiting for: a later
/// handshake from the same client waits this long after that link group
/// began for it to come up, then makes one of its own. A client that never
/// confirms thus delays the others by a second at most.
pub(crate) const SERVER_PATIENCE_MS: u32 = 1000;

/// How long a client waits for the link group a server's Accept names
/// while its own first contact still brings it up. The server confirmed
/// that link already, so it comes up at once; this only bounds a wait
/// that nothing ends.
pub(crate) const CLIENT_PATIENCE_MS: u32 = 10_000;

/// A link group being made.
#[derive(Clone, Copy)]
struct Entry {
    /// Where it goes: namespace, role, peer (and the peer's queue pair on a
    /// client).
    key: LgrIdentity,
    began: Ktime,
}

/// The link groups handshakes are making, and a wake-up when one ends.
#[pin_data]
pub(crate) struct Setups {
    /// Slots never move: a [`Setup`] knows its own by index.
    #[pin]
    entries: Mutex<KVec<Option<Entry>>>,
    #[pin]
    ended: CondVar,
}

/// A link group this handshake is making; dropped once the link group is
/// in the registry or was given up, which wakes the handshakes waiting
/// for it.
pub(crate) struct Setup {
    setups: Arc<Setups>,
    slot: usize,
}

impl Setups {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Setups {
            entries <- new_mutex!(KVec::new(), "Setups::entries"),
            ended <- new_condvar!("Setups::ended"),
        })
    }

    /// Looks up with `find` until it finds a link group, waiting while one
    /// toward `key`'s peer is being made and began less than `patience_ms`
    /// ago; `None` when it found none. A signal ends the wait (the lookup
    /// is tried once more).
    pub(crate) fn find_waiting<R>(
        this: &Arc<Self>,
        key: &LgrIdentity,
        patience_ms: u32,
        find: impl FnMut() -> Option<R>,
    ) -> Option<R> {
        let mut entries = this.entries.lock();
        this.wait(&mut entries, key, patience_ms, find)
    }

    /// As [`find_waiting`](Self::find_waiting); when it finds none, the
    /// caller's own setup toward `key`'s peer, announced under the same
    /// lock (concurrent handshakes make one link group, not one each).
    pub(crate) fn find_or_begin<R>(
        this: &Arc<Self>,
        key: LgrIdentity,
        patience_ms: u32,
        find: impl FnMut() -> Option<R>,
    ) -> Result<core::result::Result<R, Setup>> {
        let mut entries = this.entries.lock();
        if let Some(r) = this.wait(&mut entries, &key, patience_ms, find) {
            return Ok(Ok(r));
        }
        Self::announce(this, &mut entries, key).map(Err)
    }

    /// Announces the caller's own setup toward `key`'s peer, without
    /// looking for one (a client told to make a new link group).
    pub(crate) fn begin(this: &Arc<Self>, key: LgrIdentity) -> Result<Setup> {
        let mut entries = this.entries.lock();
        Self::announce(this, &mut entries, key)
    }

    fn wait<R>(
        &self,
        entries: &mut Guard<'_, KVec<Option<Entry>>, MutexBackend>,
        key: &LgrIdentity,
        patience_ms: u32,
        mut find: impl FnMut() -> Option<R>,
    ) -> Option<R> {
        loop {
            if let Some(r) = find() {
                return Some(r);
            }
            let now = Ktime::ktime_get();
            // The youngest setup to the same peer: how long it stays worth
            // waiting for (at most `patience_ms`: times only go forward).
            let left = entries
                .iter()
                .flatten()
                .filter(|e| e.key.admits(key))
                .map(|e| i64::from(patience_ms) - ktime_ms_delta(now, e.began))
                .max()
                .unwrap_or(0);
            if left <= 0 {
                return None;
            }
            let jiffies = msecs_to_jiffies(left as u32);
            if let CondVarTimeoutResult::Signal { .. } =
                self.ended.wait_interruptible_timeout(entries, jiffies)
            {
                return find();
            }
        }
    }

    fn announce(
        this: &Arc<Self>,
        entries: &mut Guard<'_, KVec<Option<Entry>>, MutexBackend>,
        key: LgrIdentity,
    ) -> Result<Setup> {
        let entry = Some(Entry {
            key,
            began: Ktime::ktime_get(),
        });
        let slot = match entries.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                entries.push(None, GFP_KERNEL)?;
                entries.len() - 1
            }
        };
        if let Some(s) = entries.get_mut(slot) {
            *s = entry;
        }
        Ok(Setup {
            setups: this.clone(),
            slot,
        })
    }

    fn end(&self, slot: usize) {
        if let Some(s) = self.entries.lock().get_mut(slot) {
            *s = None;
        }
        self.ended.notify_all();
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.setups.end(self.slot);
    }
}
