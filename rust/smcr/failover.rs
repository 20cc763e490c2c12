// SPDX-License-Identifier: GPL-2.0

//! Moving connections off a link that went down, onto another link of the
//! group, without losing a byte (upstream's `smc_switch_conns` and
//! `smc_switch_cursor`): each connection writes again, over the new link,
//! what the peer may not have got -- everything after the end of its last
//! CDC message that completed, or after what the peer consumed when that
//! is further -- and announces its cursors and closing flags again. The
//! dead link is then cleared and the peer told (DELETE LINK). Process
//! context: the link group's work item.

use super::addlink::{clear_link, conns_of, send_delete_link, Cleared};
use super::conn::Conn;
use super::lgr::LinkGroup;
use super::flows::WAIT_MS;
use super::link::{Link, LinkState, Role};
use super::settle;
use super::tx;
use crate::sys::print::smc_dbg;
use crate::wire::cdc::ConnStateFlags;
use crate::wire::lgr_links::{switch_resend_from, LgrType, LINKS_MAX};
use crate::wire::llc::{FlowType, LlcMessage, LLC_LEN};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Moves the connections of every link that is down, then clears it.
pub(crate) fn run(lgr: &Arc<LinkGroup>) {
    // Declared before `conf`: the cleared links' queue pairs are
    // destroyed after it (see `clear_link`).
    let mut cleared: [Option<Cleared>; LINKS_MAX] = [const { None }; LINKS_MAX];
    let _conf = lgr.conf.lock();
    for (down, gone) in lgr.links().iter().zip(cleared.iter_mut()) {
        let Some(down) = down else { continue };
        if down.state() != LinkState::Down {
            continue;
        }
        let Some(moved) = move_off(lgr, down) else {
            // The last link: the group ends, its connections with it.
            lgr.conns.lock().for_each(settle::abort);
            return;
        };
        let to = moved.to.clone();
        let num = down.link_num.load(Ordering::Relaxed);
        smc_dbg!("smcr: link {} down, its connections moved to link {}", num, to.link_num.load(Ordering::Relaxed));
        // The peer hears of it over the link that is left (upstream: the
        // client asks the server to delete the link, the server runs the
        // deletion itself and tells the client), before the connections
        // send again over it (`moved` dropped).
        if down.role == Role::Server && lgr.flows.initiate(FlowType::DelLink) {
            // The server's own deletion waits for the client's answer.
            send_delete_link(&to, num, true);
            drop(moved);
            let mut buf = [0u8; LLC_LEN];
            let is_answer = |m: &LlcMessage<'_>| matches!(m, LlcMessage::DeleteLink(r) if r.resp);
            let _ = lgr.flows.wait(WAIT_MS, &mut buf, is_answer);
            lgr.stop_flow();
        } else {
            send_delete_link(&to, num, true);
            drop(moved);
        }
        *gone = Some(clear_link(lgr, down));
        if lgr.with_links(|s| s.active().count()) == 1 {
            lgr.set_kind(LgrType::Single);
        }
    }
}

/// Moves every connection on `from` to another active link of the group;
/// `None` when there is none. The connections send again over the new
/// link once the returned [`Moved`] is dropped: the caller tells the peer
/// first (an upstream server that hears of a lost link only after a
/// connection's data or cursors arrived over the other link may still
/// answer over the lost one).
pub(crate) fn move_off(lgr: &LinkGroup, from: &Link) -> Option<Moved> {
    let to = lgr.with_links(|s| {
        s.promote();
        s.active().find(|l| l.idx != from.idx).cloned()
    })?;
    let all = conns_of(lgr).unwrap_or_default();
    // Room for every connection: the pushes below do not allocate.
    let mut conns = KVec::with_capacity(all.len(), GFP_KERNEL).unwrap_or_default();
    for c in all.into_iter().filter(|c| c.link_idx() == from.idx) {
        switch(lgr, &c, &to);
        if conns.push(c.clone(), GFP_KERNEL).is_err() {
            resume(&c);
        }
    }
    Some(Moved { to, conns })
}

fn resume(conn: &Arc<Conn>) {
    tx::push(conn);
    conn.wake();
}

/// Connections [`move_off`] switched to `to`: dropping it lets them send
/// what the peer may not have, and wakes their readers and writers.
pub(crate) struct Moved {
    pub(crate) to: Arc<Link>,
    conns: KVec<Arc<Conn>>,
}

impl Drop for Moved {
    fn drop(&mut self) {
        self.conns.iter().for_each(resume);
    }
}

/// Moves `conn` to `to`: what the peer may not have is due again.
fn switch(lgr: &LinkGroup, conn: &Arc<Conn>, to: &Arc<Link>) {
    // The keys on `to` first: a send that sees the new link has them.
    conn.reload_peer_keys(&lgr.peer_keys);
    let Ok(old) = conn.set_link(to.clone()) else {
        return;
    };
    old.forget_slot_waiter(conn.token);
    let mut sh = conn.shared.lock();
    let from = switch_resend_from(sh.tx_fin, sh.tx_acked);
    sh.tx_fin = sh.tx_fin.max(sh.tx_acked);
    if from < sh.tx_prod {
        sh.tx_prod = from;
    }
    // Flags and the consumer cursor the lost messages carried go
    // again with the next message.
    if sh.sent_state != ConnStateFlags::default() {
        sh.announced_state = ConnStateFlags::default();
    }
    // Both cursors go once, even with nothing to write again: the
    // peer's device acknowledged our last messages, but the peer may
    // not have taken them all from its completion queue.
    sh.cursors_due = sh.tx_prod > 0 || sh.rx_cons > 0;
}
