// SPDX-License-Identifier: GPL-2.0

//! Physical network IDs (PNETIDs): which RDMA ports are attached to the
//! same physical network as an IP interface. Upstream assigns them by
//! hardware (s390) or by the operator's PNET table; an interface with a
//! PNETID may only use RDMA ports with the same one. Without PNETIDs (the
//! common case, and rxe's) a port serves the interface it is bound to.
//!
//! The PNET table is kept per network namespace, as upstream's
//! (`smc_pnet.c`): entries that give an interface name a PNETID, and, in
//! the initial namespace only, entries that give a port of an RDMA device
//! one. Names are matched when a connection looks its interface up, so an
//! entry may name an interface (or device) that does not exist yet.
//! Readers (the connect path) look under RCU without a lock or an
//! allocation; the netlink requests that change it take a mutex and
//! publish a new copy.

use crate::sys::errno::{EEXIST, EINVAL, ENOENT};
use crate::sys::net::{Net, IFNAMSIZ};
use crate::sys::pernet::{self, PernetData};
use crate::sys::sync::RcuPointer;
use core::sync::atomic::AtomicU32;
use kernel::prelude::*;
use kernel::sync::{new_mutex, Mutex};

/// The length of a PNETID: upper-case characters, blank- or NUL-padded.
pub(crate) const PNETID_LEN: usize = 16;

/// The size of an RDMA device name with its NUL (`IB_DEVICE_NAME_MAX`).
pub(crate) const IB_NAME_LEN: usize = crate::sys::bindings::IB_DEVICE_NAME_MAX as usize;

/// The ports of an RDMA device SMC uses (`SMC_MAX_PORTS`).
pub(crate) const SMC_MAX_PORTS: u8 = 2;

/// A PNETID that is set (not all blanks or NULs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PnetId([u8; PNETID_LEN]);

/// Whether `b` ends a PNETID (the padding).
fn is_pad(b: u8) -> bool {
    b == 0 || b == b' '
}

/// Whether two raw PNETIDs name the same network: equal up to where both
/// end, NUL and blank padding being the same (upstream's `smc_pnet_match`).
fn raw_matches(a: &[u8; PNETID_LEN], b: &[u8; PNETID_LEN]) -> bool {
    for (a, b) in a.iter().zip(b.iter()) {
        if is_pad(*a) && is_pad(*b) {
            break;
        }
        if a != b {
            return false;
        }
    }
    true
}

impl PnetId {
    /// The PNETID held in `raw`, `None` when it is empty.
    pub(crate) fn new(raw: [u8; PNETID_LEN]) -> Option<Self> {
        match raw.first() {
            Some(b) if !is_pad(*b) => Some(PnetId(raw)),
            _ => None,
        }
    }

    /// Whether two PNETIDs name the same network.
    pub(crate) fn matches(&self, other: &PnetId) -> bool {
        raw_matches(&self.0, &other.0)
    }

    /// The PNETID as it is stored: NUL-padded.
    pub(crate) fn raw(&self) -> &[u8; PNETID_LEN] {
        &self.0
    }
}

/// `s` up to its first NUL, copied into `N` bytes, NUL-padded; `None` when
/// it does not fit with a NUL after it.
fn padded<const N: usize>(s: &[u8]) -> Option<[u8; N]> {
    let len = s.iter().position(|b| *b == 0).unwrap_or(s.len());
    let mut out = [0u8; N];
    out.get_mut(..len)?.copy_from_slice(s.get(..len)?);
    (len < N).then_some(out)
}

/// A PNETID as a request gives it to look one up or delete it: as it is,
/// not checked (upstream's), NUL-padded.
pub(crate) fn raw_pnetid(s: &[u8]) -> [u8; PNETID_LEN] {
    let len = s.iter().position(|b| *b == 0).unwrap_or(s.len());
    let mut out = [0u8; PNETID_LEN];
    for (d, s) in out.iter_mut().zip(s.iter().take(len)) {
        *d = *s;
    }
    out
}

/// A PNETID as a request gives it to add an entry, checked and made as
/// upstream's `smc_pnetid_valid` does: surrounding white space dropped,
/// 1 to 16 letters and digits, lower case made upper. `None` otherwise.
pub(crate) fn valid_pnetid(s: &[u8]) -> Option<PnetId> {
    let len = s.iter().position(|b| *b == 0).unwrap_or(s.len());
    let s = s.get(..len)?;
    let start = s.iter().position(|b| !b.is_ascii_whitespace())?;
    let end = s.iter().rposition(|b| !b.is_ascii_whitespace())?;
    let word = s.get(start..=end)?;
    if word.len() > PNETID_LEN || !word.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let mut out = [0u8; PNETID_LEN];
    for (d, s) in out.iter_mut().zip(word) {
        *d = s.to_ascii_uppercase();
    }
    PnetId::new(out)
}

/// What an entry gives its PNETID to.
#[derive(Clone, Copy)]
pub(crate) enum PnetDevice {
    /// An interface, by name (NUL-padded).
    Eth([u8; IFNAMSIZ]),
    /// A port of an RDMA device, by the device's name (NUL-padded).
    Ib {
        /// The device's name.
        name: [u8; IB_NAME_LEN],
        /// The port, 1 or 2.
        port: u8,
    },
}

/// An entry of the PNET table.
#[derive(Clone, Copy)]
pub(crate) struct PnetEntry {
    /// The PNETID.
    pub(crate) pnetid: PnetId,
    /// What has it.
    pub(crate) device: PnetDevice,
}

/// The PNET table of a namespace.
#[pin_data(PinnedDrop)]
pub(crate) struct PnetTable {
    /// Serialises the changes.
    #[pin]
    writer: Mutex<()>,
    /// The entries, in the order they were added.
    entries: RcuPointer<KVec<PnetEntry>>,
}

static PNET_TABLE_ID: AtomicU32 = AtomicU32::new(0);

impl PernetData for PnetTable {
    fn init() -> impl PinInit<Self, Error> {
        try_pin_init!(PnetTable {
            writer <- new_mutex!((), "PnetTable::writer"),
            entries: RcuPointer::new(),
        }? Error)
    }

    fn id() -> &'static AtomicU32 {
        &PNET_TABLE_ID
    }
}

#[pinned_drop]
impl PinnedDrop for PnetTable {
    fn drop(self: Pin<&mut Self>) {
        self.entries.replace(None);
    }
}

impl PnetTable {
    /// Calls `f` with the entries, under the RCU read lock (`f` must not
    /// sleep).
    fn read<R>(&self, f: impl FnOnce(&[PnetEntry]) -> R) -> R {
        self.entries.read(|e| f(e.map_or(&[], |e| &e[..])))
    }

    /// Replaces the entries with what `change` makes of a copy of them;
    /// nothing changes when it fails.
    fn update(&self, change: impl FnOnce(&mut KVec<PnetEntry>) -> Result) -> Result {
        let _writer = self.writer.lock();
        // Room first, outside the RCU read side (allocating may sleep);
        // the writer lock keeps the entries as they are meanwhile. One more
        // for the entry `change` may add.
        let n = self.read(|entries| entries.len());
        let mut copy = KVec::with_capacity(n + 1, GFP_KERNEL)?;
        let mut failed: Result = Ok(());
        self.read(|entries| {
            for e in entries {
                // Within the capacity: no allocation.
                if let Err(err) = copy.push(*e, GFP_ATOMIC) {
                    failed = Err(err.into());
                    return;
                }
            }
        });
        failed?;
        change(&mut copy)?;
        let new = if copy.is_empty() {
            None
        } else {
            Some(KBox::new(copy, GFP_KERNEL)?)
        };
        self.entries.replace(new);
        Ok(())
    }
}

/// Calls `f` with the PNET table of `net` (none while it is not registered).
fn with_table<R>(net: &Net, f: impl FnOnce(&PnetTable) -> R) -> Option<R> {
    pernet::with::<PnetTable, R>(net, f)
}

/// Calls `f` with the entries of `net`'s table that a dump of `net` shows,
/// matching `pnetid` if given: outside the initial namespace only the
/// interfaces' (as upstream). Under the RCU read lock: `f` must not sleep.
pub(crate) fn with_entries<R>(
    net: &Net,
    f: impl FnOnce(&mut dyn Iterator<Item = &PnetEntry>) -> R,
) -> Option<R> {
    let init = net.is_init();
    with_table(net, |t| {
        t.read(|entries| {
            let mut shown = entries
                .iter()
                .filter(|e| init || matches!(e.device, PnetDevice::Eth(_)));
            f(&mut shown)
        })
    })
}

/// Whether an entry matches the (unchecked) PNETID of a request.
pub(crate) fn entry_matches(e: &PnetEntry, pnetid: &[u8; PNETID_LEN]) -> bool {
    raw_matches(e.pnetid.raw(), pnetid)
}

/// Adds entries to `net`'s table, as upstream's `smc_pnet_enter`: the
/// interface `eth` and (in the initial namespace) port `ib` get `pnetid`.
/// `EEXIST` when neither was added because each name has an entry already
/// (or none was given); `EINVAL` for a name too long or a port other than
/// 1 or 2.
pub(crate) fn add(
    net: &Net,
    pnetid: PnetId,
    eth: Option<&[u8]>,
    ib: Option<(&[u8], u8)>,
) -> Result {
    // Adds `device` unless an entry for the same device exists (one entry
    // per interface name, one per RDMA device whatever its port, as
    // upstream): true when added.
    let insert = |device: PnetDevice| -> Result<bool> {
        let same = |e: &PnetEntry| match (e.device, device) {
            (PnetDevice::Eth(a), PnetDevice::Eth(b)) => a == b,
            (PnetDevice::Ib { name: a, .. }, PnetDevice::Ib { name: b, .. }) => a == b,
            _ => false,
        };
        let r = with_table(net, |t| {
            t.update(|entries| {
                if entries.iter().any(same) {
                    return Err(EEXIST.into());
                }
                entries.push(PnetEntry { pnetid, device }, GFP_KERNEL)?;
                Ok(())
            })
        })
        .unwrap_or(Err(ENOENT.into()));
        match r {
            Ok(()) => Ok(true),
            Err(e) if e == EEXIST => Ok(false),
            Err(e) => Err(e),
        }
    };
    let mut added = false;
    if let Some(name) = eth {
        let name = padded::<IFNAMSIZ>(name).ok_or(EINVAL)?;
        added |= insert(PnetDevice::Eth(name))?;
    }
    if !net.is_init() {
        return if added { Ok(()) } else { Err(EEXIST.into()) };
    }
    if let Some((name, port)) = ib {
        if !(1..=SMC_MAX_PORTS).contains(&port) {
            return Err(EINVAL.into());
        }
        let name = trim(name);
        let name = padded::<IB_NAME_LEN>(name).ok_or(EINVAL)?;
        added |= insert(PnetDevice::Ib { name, port })?;
    }
    if added {
        Ok(())
    } else {
        Err(EEXIST.into())
    }
}

/// `s` up to its NUL, without white space around it (`strim`).
fn trim(s: &[u8]) -> &[u8] {
    let len = s.iter().position(|b| *b == 0).unwrap_or(s.len());
    let s = s.get(..len).unwrap_or(&[]);
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

/// Removes the entries of `net`'s table with PNETID `pnetid` (every entry
/// when `None`). `ENOENT` when a PNETID was given and no entry has it.
pub(crate) fn remove(net: &Net, pnetid: Option<&[u8; PNETID_LEN]>) -> Result {
    let mut removed = false;
    with_table(net, |t| {
        t.update(|entries| {
            let mut kept = KVec::with_capacity(entries.len(), GFP_KERNEL)?;
            for e in entries.iter() {
                if pnetid.map_or(true, |p| entry_matches(e, p)) {
                    removed = true;
                } else {
                    kept.push(*e, GFP_KERNEL)?;
                }
            }
            *entries = kept;
            Ok(())
        })
    })
    .unwrap_or(Ok(()))?;
    if removed || pnetid.is_none() {
        Ok(())
    } else {
        Err(ENOENT.into())
    }
}

/// The PNETID of interface `ifindex` of `net`: its entry in `net`'s PNET
/// table, if any (no hardware PNETIDs outside s390). Does not sleep or
/// allocate.
pub(crate) fn netdev_pnetid(net: &Net, ifindex: i32) -> Option<PnetId> {
    // Most namespaces have no table entries: no name lookup for them.
    let empty = with_table(net, |t| t.read(|e| e.is_empty())).unwrap_or(true);
    if empty {
        return None;
    }
    let name = net.netdev_name(ifindex)?;
    with_table(net, |t| {
        t.read(|entries| {
            entries.iter().find_map(|e| match e.device {
                PnetDevice::Eth(n) if n == name => Some(e.pnetid),
                _ => None,
            })
        })
    })
    .flatten()
}

/// The PNETID the initial namespace's PNET table gives port `port` of the
/// RDMA device called `name`. Does not sleep or allocate.
pub(crate) fn ib_port_pnetid(name: &[u8], port: u32) -> Option<PnetId> {
    let name = padded::<IB_NAME_LEN>(name)?;
    with_table(Net::init(), |t| {
        t.read(|entries| {
            entries.iter().find_map(|e| match e.device {
                PnetDevice::Ib { name: n, port: p } if n == name && u32::from(p) == port => {
                    Some(e.pnetid)
                }
                _ => None,
            })
        })
    })
    .flatten()
}
