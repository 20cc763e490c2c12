// SPDX-License-Identifier: GPL-2.0

//! The link group's work item: what its links and the peer's LLC messages
//! leave to do in process context -- failovers first (connections wait
//! for them), then the local LLC flow a message started (the peer's ADD
//! LINK or DELETE LINK, see [`addlink`](super::addlink) and
//! [`dellink`](super::dellink)), then a link this side adds.

use super::addlink::{client_add_link, client_request_add_link, refuse_request, server_add_link};
use super::lgr::{LinkGroup, PENDING_ADD_LINK, PENDING_FAILOVER};
use super::link::Role;
use crate::wire::llc::{FlowType, LlcMessage, LLC_V2_MAX_LEN};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{impl_has_work, WorkItem};

/// Rounds of the work item before it lets others run.
const ROUNDS: usize = 8;

impl_has_work! {
    impl HasWork<Self> for LinkGroup { self.llc_work }
}

impl WorkItem for LinkGroup {
    type Pointer = Arc<LinkGroup>;

    fn run(lgr: Arc<LinkGroup>) {
        run(&lgr);
    }
}

/// One turn of the work item.
fn run(lgr: &Arc<LinkGroup>) {
    let Ok(mut buf) = KVec::from_elem(0u8, LLC_V2_MAX_LEN, GFP_KERNEL) else {
        return;
    };
    for _ in 0..ROUNDS {
        let pending = lgr.pending.swap(0, Ordering::AcqRel);
        if pending & PENDING_FAILOVER != 0 {
            super::failover::run(lgr);
        }
        if let Some(t) = lgr.flows.take_started(&mut buf) {
            let msg = buf.get(..t.len).unwrap_or(&[]);
            match (t.flow, lgr.link().role) {
                (FlowType::AddLink, Role::Client) => client_add_link(lgr, t.link, msg),
                (FlowType::AddLink, Role::Server) => {
                    let asked = matches!(LlcMessage::parse(msg), Ok(LlcMessage::ReqAddLink(_)));
                    if !server_add_link(lgr) && asked {
                        if let Some(via) = lgr.links().get(t.link).cloned().flatten() {
                            refuse_request(&via);
                        }
                    }
                }
                (FlowType::DelLink, _) => super::dellink::peer_delete_link(lgr, t.link, msg),
                _ => {}
            }
            let _ = lgr.flows.stop();
            continue;
        }
        if pending & PENDING_ADD_LINK != 0 {
            let ran = if lgr.link().role == Role::Client {
                client_request_add_link(lgr)
            } else if lgr.flows.initiate(FlowType::AddLink) {
                let _ = server_add_link(lgr);
                let _ = lgr.flows.stop();
                true
            } else {
                false
            };
            if !ran {
                // A flow of ours runs (a CONFIRM RKEY): the link is added
                // once it ended, whose task runs the work item again when
                // it finds the bit (`rkeys::in_flow`); set before looking,
                // so that a flow ending meanwhile finds it, or we see it
                // ended.
                lgr.pending.fetch_or(PENDING_ADD_LINK, Ordering::AcqRel);
                if lgr.flows.busy() {
                    break;
                }
            }
            continue;
        }
        if lgr.pending.load(Ordering::Acquire) == 0 {
            break;
        }
    }
}

