// SPDX-License-Identifier: GPL-2.0

//! What operators see of SMC-R: a connection's buffers and cursors
//! (smc_diag's `SMC_DIAG_CONNINFO`), its link (`SMC_DIAG_LGRINFO`), and a
//! link group with its link as the SMC generic netlink family lists them.
//! Everything here only reads; values are numbered as upstream numbers
//! them, so upstream's tools read them unchanged.

use super::conn::{cursor_of, Conn};
use super::about::LgrAbout;
use super::lgr::LinkGroup;
use super::link::{Link, LinkState, Role};
use crate::sys::diag::{ConnDiag, LinkDiag, GID_TEXT_LEN, IBNAME_LEN};
use crate::wire::clc::SmcrAcceptConfirm;
use core::sync::atomic::Ordering;

/// Upstream's `enum smc_link_state`.
const LINK_INACTIVE: u32 = 1;
const LINK_ACTIVATING: u32 = 2;
const LINK_ACTIVE: u32 = 3;
/// The SMC version of every link group here.
pub(crate) const LGR_SMC_VERSION: u8 = 2;

impl LinkGroup {
    /// A first contact's CLC message from the peer (the server's Accept,
    /// the client's Confirm) tells who the peer is; `eid` is the UEID the
    /// two agreed on, `limits` the link group's maximums.
    pub(crate) fn record_peer(&self, msg: &SmcrAcceptConfirm, eid: [u8; 32], limits: (u8, u8)) {
        let mut a = self.about.lock();
        if let Some(fce) = msg.fce.as_ref() {
            a.peer_release = fce.release;
            a.peer_os = fce.os_type;
            a.peer_hostname = fce.hostname;
        }
        a.negotiated_eid = eid;
        (a.max_conns, a.max_links) = limits;
    }

    /// The record of the handshakes.
    pub(crate) fn about(&self) -> LgrAbout {
        *self.about.lock()
    }

    /// The link group id as upstream reports it: its four bytes read as a
    /// host-order word.
    pub(crate) fn id_word(&self) -> u32 {
        u32::from_ne_bytes(self.id)
    }

    /// Bytes of send buffers and RMBs the link group holds (in use by its
    /// connections and kept in its pool). Process context.
    pub(crate) fn allocated_bytes(&self) -> (u64, u64) {
        let (mut sndbufs, mut rmbs) = (0u64, 0u64);
        self.conns.lock().for_each(|c| {
            sndbufs += u64::from(c.sndbuf_size());
            rmbs += u64::from(c.rmb_size());
        });
        for (rmb, sndbuf) in self.pool.lock().iter().flatten() {
            rmbs += rmb.len() as u64;
            sndbufs += sndbuf.len() as u64;
        }
        (sndbufs, rmbs)
    }
}

impl Conn {
    /// The connection's buffers and cursors. Any context.
    pub(crate) fn diag(&self) -> ConnDiag {
        let (rmb, snd) = (self.rmb_size(), self.sndbuf_size());
        let sh = self.shared.lock();
        ConnDiag {
            token: self.token,
            sndbuf_size: snd,
            rmbe_size: rmb,
            peer_rmbe_size: sh.peer.size,
            rx_prod: sh.rx_prod_curs,
            rx_cons: sh.peer_cons_curs,
            tx_prod: cursor_of(sh.tx_prod, sh.peer.size),
            tx_cons: cursor_of(sh.rx_cons_sent, rmb),
            rx_prod_flags: sh.peer_flags.to_byte(),
            rx_conn_state_flags: sh.peer_state.to_byte(),
            // The producer flags we sent are not kept.
            tx_prod_flags: 0,
            tx_conn_state_flags: sh.sent_state.to_byte(),
            tx_prep: cursor_of(sh.tx_copied, snd),
            tx_sent: cursor_of(sh.tx_prod, snd),
            tx_fin: cursor_of(sh.tx_fin, snd),
        }
    }
}

/// A GID as upstream's `smc_gid_be16_convert` writes it:
/// `%04x:%04x:...` of its eight big-endian 16-bit words.
pub(crate) fn gid_text(gid: &[u8; 16]) -> [u8; GID_TEXT_LEN] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; GID_TEXT_LEN];
    let mut at = 0;
    for (i, b) in gid.iter().enumerate() {
        if i > 0 && i % 2 == 0 {
            if let Some(o) = out.get_mut(at) {
                *o = b':';
            }
            at += 1;
        }
        for nibble in [b >> 4, b & 0xf] {
            if let (Some(o), Some(h)) = (out.get_mut(at), HEX.get(usize::from(nibble))) {
                *o = *h;
            }
            at += 1;
        }
    }
    out
}

impl Link {
    /// The CONFIRM LINK exchange gave both link user ids.
    pub(crate) fn record_uids(&self, ours: [u8; 4], peer: [u8; 4]) {
        self.uid.store(u32::from_ne_bytes(ours), Ordering::Relaxed);
        self.peer_uid.store(u32::from_ne_bytes(peer), Ordering::Relaxed);
    }

    /// Our link user id and the peer's, as upstream reports them (the
    /// four bytes read as a host-order word).
    pub(crate) fn uids(&self) -> (u32, u32) {
        (
            self.uid.load(Ordering::Relaxed),
            self.peer_uid.load(Ordering::Relaxed),
        )
    }

    /// The link id (link number) the server gave.
    pub(crate) fn link_id(&self) -> u8 {
        self.link_num.load(Ordering::Relaxed)
    }

    /// `SMC_LGR_ROLE`-style number: 0 client, 1 server.
    pub(crate) fn role_number(&self) -> u8 {
        match self.role {
            Role::Client => 0,
            Role::Server => 1,
        }
    }

    /// The link's state as upstream's `enum smc_link_state`.
    pub(crate) fn link_state_number(&self) -> u32 {
        match self.state() {
            LinkState::Activating => LINK_ACTIVATING,
            LinkState::Active => LINK_ACTIVE,
            LinkState::Down => LINK_INACTIVE,
        }
    }

    /// The RDMA device's name, NUL terminated and padded.
    pub(crate) fn ibname(&self) -> [u8; IBNAME_LEN] {
        let mut out = [0u8; IBNAME_LEN];
        let name = self.dev.device.ib().name().to_bytes();
        for (o, b) in out.iter_mut().take(IBNAME_LEN - 1).zip(name) {
            *o = *b;
        }
        out
    }

    /// The link of a live link group (`None` once it went down). Any
    /// context.
    pub(crate) fn link_diag(&self) -> Option<LinkDiag> {
        if self.state() == LinkState::Down {
            return None;
        }
        Some(LinkDiag {
            link_id: self.link_id(),
            ibname: self.ibname(),
            ibport: self.dev.port as u8,
            gid: gid_text(&self.dev.gid),
            peer_gid: gid_text(&self.peer().gid),
            role: self.role_number(),
        })
    }
}
