// SPDX-License-Identifier: GPL-2.0

//! The links of an SMC-R link group as upstream 6.12 keeps them
//! (`smc_core.c`, `smc_llc.c`): the group's type, where a new link goes,
//! what type a link added by the server or the client makes of the group,
//! which link a new connection runs on, and where a connection resends
//! from when it moves to another link. Pure decisions: the link group
//! carries them out.

/// Most links a link group has (`SMC_LINKS_PER_LGR_MAX`).
pub const LINKS_MAX: usize = 3;

/// A link group's type, by the RNICs each side has active in it, with
/// upstream's values (`enum smc_lgr_type`, reported through netlink and
/// smc_diag).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum LgrType {
    /// No link yet.
    None = 0,
    /// One active RNIC on each side.
    Single = 1,
    /// Two active RNICs on each side.
    Symmetric = 2,
    /// This side has two, the peer one active RNIC.
    AsymmetricPeer = 3,
    /// This side has one, the peer two active RNICs.
    AsymmetricLocal = 4,
}

/// A link slot's state (`enum smc_link_state`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum SlotState {
    /// Free.
    #[default]
    Unused,
    /// Being set up, not confirmed yet.
    Activating,
    /// Confirmed, carrying traffic.
    Active,
    /// Gone down, not yet cleared.
    Inactive,
}

/// What the link group knows of one of its link slots.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LinkSlot {
    /// Its state.
    pub state: SlotState,
    /// It is the second link of an asymmetric group: it stands by and
    /// carries no connection (`link_is_asym`).
    pub asym: bool,
}

/// The slot a new link takes (`smc_llc_alloc_alt_link`), `None` when the
/// group has all the links its type allows: a symmetric group gets none
/// more, an asymmetric one no second asymmetric link. A symmetric link
/// takes the lowest free slot, an asymmetric one the highest.
pub fn alloc_alt_link(cur: LgrType, new: LgrType, slots: &[LinkSlot; LINKS_MAX]) -> Option<usize> {
    let asym = matches!(new, LgrType::AsymmetricLocal | LgrType::AsymmetricPeer);
    if cur == LgrType::Symmetric || (cur != LgrType::Single && asym) {
        return None;
    }
    let free = |i: &usize| slots.get(*i).is_some_and(|s| s.state == SlotState::Unused);
    if asym {
        (0..LINKS_MAX).rev().find(free)
    } else {
        (0..LINKS_MAX).find(free)
    }
}

/// What the client makes of the server's ADD_LINK request
/// (`smc_llc_cli_add_link`): the group's type once the new link is
/// confirmed, or `None` to reject it. `peer_same_port`: the request's
/// sender GID (and, in v1, MAC) is the current link's peer's, so the peer
/// has one RNIC; `local_alt`: this side found another RNIC for the new
/// link (else it runs on the current one).
pub fn client_add_link_type(peer_same_port: bool, local_alt: bool) -> Option<LgrType> {
    match (peer_same_port, local_alt) {
        (true, false) => None,
        (true, true) => Some(LgrType::AsymmetricPeer),
        (false, false) => Some(LgrType::AsymmetricLocal),
        (false, true) => Some(LgrType::Symmetric),
    }
}

/// What the server makes of its own added link (`smc_llc_srv_add_link`):
/// `local_alt` as for the client; `peer_same_port`: the client's
/// ADD_LINK response names the current link's peer port. The peer's
/// single port counts only while the group is [`LgrType::Single`].
pub fn server_add_link_type(cur: LgrType, local_alt: bool, peer_same_port: bool) -> LgrType {
    if cur == LgrType::Single && peer_same_port {
        LgrType::AsymmetricPeer
    } else if !local_alt {
        LgrType::AsymmetricLocal
    } else {
        LgrType::Symmetric
    }
}

/// The link a new connection runs on (`smcr_lgr_conn_assign_link`): the
/// first link in `want` state that is not an asymmetric stand-by; a
/// server puts every other connection (`conns` odd: the count before this
/// one joins) on the next such link, so connections spread over both
/// links. A client takes the first (the server's Confirm names the link,
/// see upstream). `first`: the group's first connection, whose link is
/// still being confirmed.
pub fn assign_link(slots: &[LinkSlot; LINKS_MAX], server: bool, conns: usize, first: bool) -> Option<usize> {
    let want = if first { SlotState::Activating } else { SlotState::Active };
    let usable = |i: &usize| slots.get(*i).is_some_and(|s| s.state == want && !s.asym);
    let i = (0..LINKS_MAX).find(usable)?;
    if server && conns % 2 == 1 {
        if let Some(j) = (i + 1..LINKS_MAX).find(usable) {
            return Some(j);
        }
    }
    Some(i)
}

/// Where a connection that moves to another link resends from, as stream
/// positions (`smc_switch_cursor`): from the end of what its last
/// completed CDC message announced (`fin`), as writes after it may not
/// have landed; but not before what the peer has consumed (its consumer
/// cursor can be ahead of `fin` when a later CDC message reached it and
/// its completion was lost with the link). The bytes between this and
/// the producer cursor are written again.
pub fn switch_resend_from(fin: u64, peer_cons: u64) -> u64 {
    fin.max(peer_cons)
}

/// The cursors `(prod, fin)` once the peer has read the stream up to
/// `delivered`. After a switch moved `prod` back to
/// [`switch_resend_from`], the peer's consumer cursor can pass it (it
/// read bytes whose CDC message reached it over the lost link): those
/// bytes need no second write, and the send buffer below them is free.
/// Otherwise nothing moves: the peer reads no further than `prod`, and
/// `fin` follows the completions of our own messages (the peer may read
/// before they complete, but their writes wait for those completions).
pub fn resume_from_delivered(prod: u64, fin: u64, delivered: u64) -> (u64, u64) {
    if delivered > prod {
        (delivered, fin.max(delivered))
    } else {
        (prod, fin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: LinkSlot = LinkSlot {
        state: SlotState::Unused,
        asym: false,
    };
    const A: LinkSlot = LinkSlot {
        state: SlotState::Active,
        asym: false,
    };

    #[test]
    fn types_have_upstreams_values() {
        assert_eq!(LgrType::None as u8, 0);
        assert_eq!(LgrType::Single as u8, 1);
        assert_eq!(LgrType::Symmetric as u8, 2);
        assert_eq!(LgrType::AsymmetricPeer as u8, 3);
        assert_eq!(LgrType::AsymmetricLocal as u8, 4);
    }

    #[test]
    fn alt_link_slots() {
        let one = [A, U, U];
        assert_eq!(alloc_alt_link(LgrType::Single, LgrType::Symmetric, &one), Some(1));
        assert_eq!(alloc_alt_link(LgrType::Single, LgrType::AsymmetricLocal, &one), Some(2));
        assert_eq!(alloc_alt_link(LgrType::Symmetric, LgrType::Symmetric, &[A, A, U]), None);
        assert_eq!(
            alloc_alt_link(LgrType::AsymmetricPeer, LgrType::AsymmetricLocal, &[A, U, A]),
            None
        );
        // An asymmetric group may still turn symmetric.
        assert_eq!(alloc_alt_link(LgrType::AsymmetricLocal, LgrType::Symmetric, &[A, U, A]), Some(1));
        assert_eq!(alloc_alt_link(LgrType::Single, LgrType::Symmetric, &[A, A, A]), None);
    }

    #[test]
    fn add_link_types() {
        assert_eq!(client_add_link_type(false, true), Some(LgrType::Symmetric));
        assert_eq!(client_add_link_type(true, true), Some(LgrType::AsymmetricPeer));
        assert_eq!(client_add_link_type(false, false), Some(LgrType::AsymmetricLocal));
        assert_eq!(client_add_link_type(true, false), None, "nothing to add on either side");
        assert_eq!(server_add_link_type(LgrType::Single, true, false), LgrType::Symmetric);
        assert_eq!(server_add_link_type(LgrType::Single, true, true), LgrType::AsymmetricPeer);
        assert_eq!(server_add_link_type(LgrType::Single, false, false), LgrType::AsymmetricLocal);
        assert_eq!(
            server_add_link_type(LgrType::AsymmetricLocal, true, true),
            LgrType::Symmetric,
            "the peer's port counts only for a single group"
        );
    }

    #[test]
    fn connections_spread_over_both_links_on_the_server() {
        let two = [A, A, U];
        let picks: [Option<usize>; 4] = core::array::from_fn(|n| assign_link(&two, true, n, false));
        assert_eq!(picks, [Some(0), Some(1), Some(0), Some(1)]);
        assert_eq!(assign_link(&two, false, 1, false), Some(0), "the client's is temporary");
        let stand_by = [
            A,
            U,
            LinkSlot {
                state: SlotState::Active,
                asym: true,
            },
        ];
        assert_eq!(assign_link(&stand_by, true, 1, false), Some(0), "never on an asymmetric link");
        let first = [
            LinkSlot {
                state: SlotState::Activating,
                asym: false,
            },
            U,
            U,
        ];
        assert_eq!(assign_link(&first, true, 0, true), Some(0));
        assert_eq!(assign_link(&first, true, 0, false), None, "no active link");
        assert_eq!(assign_link(&[U, U, U], true, 0, true), None);
    }

    #[test]
    fn resend_starts_at_fin_or_what_the_peer_consumed() {
        assert_eq!(switch_resend_from(4096, 1000), 4096);
        assert_eq!(switch_resend_from(4096, 8192), 8192);
        assert_eq!(switch_resend_from(u64::MAX - 1, 3), u64::MAX - 1);
    }

    #[test]
    fn delivered_bytes_are_not_written_again() {
        // Moved back to 4096 by a switch; the peer read up to 6000.
        assert_eq!(resume_from_delivered(4096, 4096, 6000), (6000, 6000));
        assert_eq!(resume_from_delivered(4096, 2048, 6000), (6000, 6000));
        // Read before our message completed: fin waits for it.
        assert_eq!(resume_from_delivered(8192, 4096, 6000), (8192, 4096));
        assert_eq!(resume_from_delivered(8192, 8192, 8192), (8192, 8192));
        assert_eq!(resume_from_delivered(8192, 8192, 100), (8192, 8192));
    }
}
