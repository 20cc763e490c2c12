// SPDX-License-Identifier: GPL-2.0

//! The peer's RMB keys of a link group (upstream's `lgr->rtokens`): one
//! row per peer RMB, one key and address per link (see
//! [`RtokenTable`](crate::wire::rtokens::RtokenTable), whose rows live in
//! one allocation here). Keys come from the CLC Accept or Confirm, the
//! peer's CONFIRM RKEY and ADD LINK, and go with DELETE RKEY or their
//! link. A connection keeps its row and a copy of the row's keys (see
//! [`PeerRmb`](super::conn::PeerRmb)). Any context.

use crate::sys::errno::{ENOENT, ENOSPC};
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::lgr_links::LINKS_MAX;
use crate::wire::rtokens::{Rtoken, RtokenError, RtokenRow, RtokenTable, EMPTY_ROW, ROWS};
use kernel::prelude::*;

/// A row's keys, by link slot.
pub(crate) type RowKeys = [Option<Rtoken>; LINKS_MAX];

/// The table of a link group.
#[pin_data]
pub(crate) struct PeerKeys {
    #[pin]
    table: SpinLockBh<RtokenTable<KVec<RtokenRow>>>,
}

fn errno(e: RtokenError) -> Error {
    match e {
        RtokenError::Full => ENOSPC.into(),
        RtokenError::NotFound | RtokenError::BadLink => ENOENT.into(),
    }
}

impl PeerKeys {
    /// An empty table. May sleep.
    pub(crate) fn new() -> Result<impl PinInit<Self, Error>> {
        let rows = KVec::from_elem(EMPTY_ROW, ROWS, GFP_KERNEL)?;
        Ok(try_pin_init!(PeerKeys {
            table <- new_spinlock_bh!(RtokenTable::new(rows), "PeerKeys::table"),
        }? Error))
    }

    /// Takes the key an RMB has on link slot `link` (CLC, CONFIRM RKEY):
    /// its row, and the row's keys.
    pub(crate) fn add(&self, link: usize, rkey: u32, addr: u64) -> Result<(usize, RowKeys)> {
        let mut t = self.table.lock();
        let row = t.add(link, rkey, addr).map_err(errno)?;
        Ok((row, row_keys(&t, row)))
    }

    /// The RMB whose key on link slot `link`, a link cleared since, was
    /// `rkey` at `addr` (a CLC message that named that link): its row,
    /// and the row's keys on the links that are left.
    pub(crate) fn adopt(&self, link: usize, rkey: u32, addr: u64) -> Result<(usize, RowKeys)> {
        let t = self.table.lock();
        let row = t.find_retired(link, rkey, addr).ok_or(ENOENT)?;
        Ok((row, row_keys(&t, row)))
    }

    /// Gives `row` the key it has on link slot `link` (CONFIRM RKEY's
    /// other links).
    pub(crate) fn set_at(&self, row: usize, link: usize, rkey: u32, addr: u64) -> Result {
        self.table.lock().set_at(row, link, rkey, addr).map_err(errno)
    }

    /// The RMB with `known` on link slot `link` gets its key on `new_link`
    /// (ADD LINK).
    pub(crate) fn set(&self, link: usize, known: u32, new_link: usize, rkey: u32, addr: u64) -> Result {
        self.table
            .lock()
            .set(link, known, new_link, rkey, addr)
            .map(|_| ())
            .map_err(errno)
    }

    /// Forgets the RMB whose key on link slot `link` is `rkey` (DELETE
    /// RKEY); returns its row.
    pub(crate) fn delete(&self, link: usize, rkey: u32) -> Result<usize> {
        self.table.lock().delete(link, rkey).map_err(errno)
    }

    /// Forgets every key on link slot `link` (the link is gone).
    pub(crate) fn clear_link(&self, link: usize) {
        self.table.lock().clear_link(link);
    }

    /// The keys of `row`.
    pub(crate) fn row(&self, row: usize) -> RowKeys {
        row_keys(&self.table.lock(), row)
    }
}

fn row_keys(t: &RtokenTable<KVec<RtokenRow>>, row: usize) -> RowKeys {
    let mut keys = [None; LINKS_MAX];
    for (link, k) in keys.iter_mut().enumerate() {
        *k = t.get(row, link);
    }
    keys
}
