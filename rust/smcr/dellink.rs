// SPDX-License-Identifier: GPL-2.0

//! The peer's DELETE LINK (upstream's `smc_llc_process_cli_delete_link`
//! and `smc_llc_process_srv_delete_link`): of the whole group, which then
//! ends, or of one link, whose connections move to another link before it
//! is cleared. Process context: the link group's work item.

use super::addlink::clear_link;
use super::failover::move_off;
use super::flows::WAIT_MS;
use super::lgr::LinkGroup;
use super::link::{LinkState, Role};
use super::llc;
use crate::wire::lgr_links::LgrType;
use crate::wire::llc::{DeleteLink, LlcMessage, DEL_NOLNK, LLC_LEN};
use kernel::sync::Arc;

/// Handles the DELETE LINK `msg` that came over link slot `via`.
pub(crate) fn peer_delete_link(lgr: &Arc<LinkGroup>, via: usize, msg: &[u8]) {
    let Ok(LlcMessage::DeleteLink(d)) = LlcMessage::parse(msg) else {
        return;
    };
    let Some(via) = lgr.links().get(via).cloned().flatten() else {
        return;
    };
    let role = via.role;
    if d.all {
        if role == Role::Server {
            // The whole group goes: the server answers with its own.
            let all = DeleteLink {
                version: llc::version(&via),
                resp: false,
                all: true,
                orderly: true,
                link_num: 0,
                reason: d.reason,
            };
            send(&via, &all);
        }
        for l in lgr.links().iter().flatten() {
            l.link_down();
        }
        return;
    }
    // Declared before `conf`: the link's queue pair is destroyed after it
    // (see `clear_link`).
    let cleared;
    let conf = lgr.conf.lock();
    let target = lgr.with_links(|s| s.by_num(d.link_num));
    match role {
        Role::Client => {
            send(
                &via,
                &DeleteLink {
                    resp: true,
                    reason: if target.is_some() { 0 } else { DEL_NOLNK },
                    ..d
                },
            );
            let Some(t) = target else { return };
            if move_off(lgr, &t).is_none() {
                drop(conf);
                t.link_down();
                return;
            }
            cleared = clear_link(lgr, &t);
        }
        Role::Server => {
            // An asymmetric link already deleted: nothing to do.
            let Some(t) = target else { return };
            let Some(moved) = move_off(lgr, &t) else {
                drop(conf);
                t.link_down();
                return;
            };
            // The request goes back to the client, which answers it; the
            // connections send again once it is on its way.
            send(&moved.to, &d);
            drop(moved);
            let mut buf = [0u8; LLC_LEN];
            let is_answer = |m: &LlcMessage<'_>| matches!(m, LlcMessage::DeleteLink(r) if r.resp);
            let _ = lgr.flows.wait(WAIT_MS, &mut buf, is_answer);
            cleared = clear_link(lgr, &t);
        }
    }
    let active = lgr.with_links(|s| s.active().count());
    if active == 1 {
        lgr.set_kind(LgrType::Single);
    }
    drop(conf);
    drop(cleared);
    if role == Role::Server && lgr.link().state() == LinkState::Active {
        // A link may come back when another device can carry it.
        lgr.pending
            .fetch_or(super::lgr::PENDING_ADD_LINK, core::sync::atomic::Ordering::AcqRel);
    }
}

fn send(via: &super::link::Link, msg: &DeleteLink) {
    let _ = llc::send(via, &LlcMessage::DeleteLink(*msg));
}
