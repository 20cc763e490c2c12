// SPDX-License-Identifier: GPL-2.0

//! User-defined Enterprise IDs (UEIDs): SMC-Rv2 and SMC-Dv2 peers only talk
//! when they share one. Up to four, set by the operator through the SMC
//! generic netlink family (`SMC_NETLINK_ADD_UEID`, ...), exactly as with
//! upstream SMC, so the same tools configure both.

use crate::sys::errno::{EEXIST, EINVAL, ENOENT, ERANGE};
use crate::sys::sync::RcuPointer;
use kernel::prelude::*;

/// The length of an EID on the wire: upper-case characters, blank-padded.
pub(crate) const EID_LEN: usize = 32;
/// How many UEIDs a system may have (`SMC_MAX_UEID`).
pub(crate) const MAX_UEIDS: usize = 4;

/// An EID as the CLC messages carry it.
pub(crate) type Eid = [u8; EID_LEN];

/// A snapshot of the table; replaced whole on every change.
#[derive(Clone, Copy, Default)]
pub(crate) struct UeidTable {
    entries: [Eid; MAX_UEIDS],
    len: usize,
}

impl UeidTable {
    /// The UEIDs, in the order they were added.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Eid> {
        self.entries.iter().take(self.len)
    }
}

static TABLE: RcuPointer<UeidTable> = RcuPointer::new();

/// Whether `ueid` is a valid UEID: after dropping trailing blanks, not
/// empty, starting with an upper-case letter or a digit, and made of those,
/// `.` and `-` (upstream's rules).
pub(crate) fn valid(ueid: &Eid) -> bool {
    let end = ueid
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let Some(text) = ueid.get(..end) else {
        return false;
    };
    let upper_alnum = |b: &u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    match text.first() {
        Some(first) if upper_alnum(first) => {}
        _ => return false,
    }
    text.iter()
        .all(|b| upper_alnum(b) || *b == b'.' || *b == b'-')
}

/// A copy of the current table.
pub(crate) fn snapshot() -> UeidTable {
    TABLE.read(|t| t.copied().unwrap_or_default())
}

/// Whether any UEID is set (a read under RCU, no copy).
pub(crate) fn any() -> bool {
    TABLE.read(|t| t.is_some_and(|t| t.len > 0))
}

/// Publishes `table`. Callers serialise (the netlink core runs the family's
/// handlers one at a time).
fn publish(table: UeidTable) -> Result {
    TABLE.replace(Some(KBox::new(table, GFP_KERNEL)?));
    Ok(())
}

/// Adds `ueid`: `EINVAL` when it is not valid, `EEXIST` when present,
/// `ERANGE` when the table is full.
pub(crate) fn add(ueid: &Eid) -> Result {
    if !valid(ueid) {
        return Err(EINVAL.into());
    }
    let mut t = snapshot();
    if t.iter().any(|e| e == ueid) {
        return Err(EEXIST.into());
    }
    let slot = t.entries.get_mut(t.len).ok_or(ERANGE)?;
    *slot = *ueid;
    t.len += 1;
    publish(t)
}

/// Removes `ueid`: `ENOENT` when it is not there.
pub(crate) fn remove(ueid: &Eid) -> Result {
    let old = snapshot();
    let mut t = UeidTable::default();
    for e in old.iter().filter(|e| *e != ueid) {
        if let Some(slot) = t.entries.get_mut(t.len) {
            *slot = *e;
            t.len += 1;
        }
    }
    if t.len == old.len {
        return Err(ENOENT.into());
    }
    publish(t)
}

/// Removes every UEID.
pub(crate) fn flush() {
    TABLE.replace(None);
}

/// Owns the table for the module's life: frees it at unload.
pub(crate) struct Ueids(());

impl Ueids {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Ueids(())
    }
}

impl Drop for Ueids {
    fn drop(&mut self) {
        flush();
    }
}
