// SPDX-License-Identifier: GPL-2.0

//! The links of a link group by slot (upstream's `lgr->lnk[]`), with the
//! group's type: which link group messages go on, where a new link goes,
//! which link a peer names.

use super::link::{Link, LinkState};
use crate::wire::lgr_links::{LgrType, LinkSlot, SlotState, LINKS_MAX};
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// The links of a link group. Never empty: a link group ends with its
/// last link, which stays here until then.
pub(crate) struct LinkSet {
    /// The link that link group messages go on (upstream's
    /// `smc_llc_usable_link`): the first link, or a surviving one after a
    /// failover.
    main: Arc<Link>,
    /// Every link by its slot ([`Link::idx`]), `main` among them.
    by_idx: [Option<Arc<Link>>; LINKS_MAX],
    /// The group's type (upstream's `lgr->type`).
    pub(crate) kind: LgrType,
}

impl LinkSet {
    /// The set of a new link group: its first link.
    pub(crate) fn new(first: Arc<Link>) -> Self {
        let mut by_idx = [const { None }; LINKS_MAX];
        if let Some(s) = by_idx.get_mut(first.idx) {
            *s = Some(first.clone());
        }
        LinkSet {
            main: first,
            by_idx,
            kind: LgrType::None,
        }
    }

    /// The link that link group messages go on.
    pub(crate) fn main(&self) -> &Arc<Link> {
        &self.main
    }

    /// Every link, by slot.
    pub(crate) fn all(&self) -> &[Option<Arc<Link>>; LINKS_MAX] {
        &self.by_idx
    }

    /// The slots as the link group rules see them.
    pub(crate) fn slots(&self) -> [LinkSlot; LINKS_MAX] {
        let mut out = [LinkSlot::default(); LINKS_MAX];
        for (o, l) in out.iter_mut().zip(self.by_idx.iter()) {
            if let Some(l) = l {
                o.state = match l.state() {
                    LinkState::Activating => SlotState::Activating,
                    LinkState::Active => SlotState::Active,
                    LinkState::Down => SlotState::Inactive,
                };
                o.asym = l.asym.load(Ordering::Relaxed);
            }
        }
        out
    }

    /// Puts a new link in its slot, which must be free.
    pub(crate) fn insert(&mut self, link: Arc<Link>) -> bool {
        match self.by_idx.get_mut(link.idx) {
            Some(s @ None) => {
                *s = Some(link);
                true
            }
            _ => false,
        }
    }

    /// Takes the link of slot `idx` out, unless it is the last one; an
    /// active link becomes the main link if it was.
    pub(crate) fn remove(&mut self, idx: usize) -> Option<Arc<Link>> {
        let others = self
            .by_idx
            .iter()
            .enumerate()
            .filter(|(i, l)| *i != idx && l.is_some())
            .count();
        if others == 0 {
            return None;
        }
        let taken = self.by_idx.get_mut(idx)?.take()?;
        if Arc::ptr_eq(&self.main, &taken) {
            if let Some(next) = self.pick_main() {
                self.main = next;
            }
        }
        Some(taken)
    }

    /// Makes an active link other than a down one the main link.
    pub(crate) fn promote(&mut self) {
        if self.main.state() == LinkState::Active {
            return;
        }
        if let Some(next) = self.pick_main() {
            self.main = next;
        }
    }

    fn pick_main(&self) -> Option<Arc<Link>> {
        let mut links = self.by_idx.iter().flatten();
        let active = links.clone().find(|l| l.state() == LinkState::Active);
        active.or_else(|| links.find(|l| l.state() != LinkState::Down)).cloned()
    }

    /// Whether `link` is still in the group (not cleared).
    pub(crate) fn holds(&self, link: &Link) -> bool {
        let slot = self.by_idx.get(link.idx).and_then(Option::as_ref);
        slot.is_some_and(|l| core::ptr::eq(&**l, link))
    }

    /// The active link whose peer end is `qpn` at `gid` (a CLC Accept or
    /// Confirm names it).
    pub(crate) fn for_peer(&self, qpn: u32, gid: &[u8; 16]) -> Option<Arc<Link>> {
        self.by_idx
            .iter()
            .flatten()
            .find(|l| {
                let p = l.peer();
                l.state() == LinkState::Active && p.qpn == qpn && p.gid == *gid
            })
            .cloned()
    }

    /// The link with link id `num`.
    pub(crate) fn by_num(&self, num: u8) -> Option<Arc<Link>> {
        self.by_idx
            .iter()
            .flatten()
            .find(|l| l.link_num.load(Ordering::Relaxed) == num)
            .cloned()
    }

    /// The active links, in slot order.
    pub(crate) fn active(&self) -> impl Iterator<Item = &Arc<Link>> {
        self.by_idx
            .iter()
            .flatten()
            .filter(|l| l.state() == LinkState::Active)
    }
}
