// SPDX-License-Identifier: GPL-2.0

//! LLC flows: which received message goes where, as upstream's
//! `smc_llc_enqueue`, `smc_llc_rx_response`, `smc_llc_event_handler`,
//! `smc_llc_flow_start` and `smc_llc_flow_initiate` decide it. Pure
//! logic: the caller keeps the state and does the work.
//!
//! A link group runs at most one local flow (one this side started, or
//! one a peer's request started that needs more messages: adding or
//! deleting a link) and one remote flow (a peer's CONFIRM_RKEY or
//! DELETE_RKEY, answered at once). Every request is answered by a message
//! of the same type with the response flag set. A response (except to
//! REQ_ADD_LINK, which is handled like a request) only counts when the
//! local flow of its kind waits for it; otherwise it is dropped.

use super::LlcKind;

/// The kind of a flow (upstream's `enum smc_llc_flowtype`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum FlowType {
    /// No flow.
    #[default]
    None = 0,
    /// Adding a link (ADD_LINK, ADD_LINK_CONT, CONFIRM_LINK).
    AddLink = 2,
    /// Deleting a link (DELETE_LINK).
    DelLink = 4,
    /// A client's REQ_ADD_LINK waits for the server (v2).
    ReqAddLink = 5,
    /// Confirming or deleting an rkey.
    Rkey = 6,
}

impl FlowType {
    /// The flow a request of `kind` starts (`smc_llc_flow_start`).
    pub fn of_request(kind: LlcKind) -> FlowType {
        match kind {
            LlcKind::AddLink => FlowType::AddLink,
            LlcKind::DeleteLink => FlowType::DelLink,
            LlcKind::ConfirmRkey | LlcKind::DeleteRkey => FlowType::Rkey,
            _ => FlowType::None,
        }
    }
}

/// The side of the link group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// The side that connected.
    Client,
    /// The side that listened.
    Server,
}

/// What the receive path knows of the link group's flows.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FlowState {
    /// The local flow.
    pub local: FlowType,
    /// The local flow already holds a message it has not consumed.
    pub local_has_msg: bool,
    /// The remote flow.
    pub remote: FlowType,
    /// A message already waits as the link group's delayed event.
    pub delayed_pending: bool,
    /// This side started the local flow: the task that started it waits
    /// for its messages. Otherwise a peer's request started it, and the
    /// link group's work item runs it ([`work_item_takes`]).
    pub local_here: bool,
}

/// What to do with a received LLC message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LlcAction {
    /// Answer with the same message, response flag set (TEST_LINK).
    Echo,
    /// A TEST_LINK response: the link's keepalive got its answer (if the
    /// link is active).
    TestLinkDone,
    /// Hand the message to the local flow, which waits for it.
    ToLocalFlow,
    /// Start a local flow of this type with the message, processed in
    /// process context (upstream's add or delete link work).
    StartLocalFlow(FlowType),
    /// The local REQ_ADD_LINK flow is answered by the server's ADD_LINK:
    /// it becomes an ADD_LINK flow holding this message (dropping any it
    /// held) and is processed.
    TakeOverLocalFlow,
    /// End the local REQ_ADD_LINK flow: the server will not add a link.
    StopLocalFlow,
    /// Start the remote flow with the message and answer it at once.
    StartRemoteFlow,
    /// Another flow runs: keep the message as the link group's delayed
    /// event, run when the local flow ends.
    Delay,
    /// Drop the message.
    Drop,
}

/// A request of `kind` arrives for a flow now of type `current`: if
/// there is none, `started`; else upstream's `smc_llc_flow_parallel`: an
/// ADD_LINK or DELETE_LINK during a flow of another type is delayed (one
/// at most), anything else dropped.
fn start(current: FlowType, kind: LlcKind, started: LlcAction, st: &FlowState) -> LlcAction {
    if current == FlowType::None {
        return started;
    }
    // Upstream compares the flow type with the message type numerically:
    // ADD_LINK is 2 in both, DELETE_LINK 4 in both.
    let add_or_del = matches!(kind, LlcKind::AddLink | LlcKind::DeleteLink);
    if add_or_del && current as u8 != kind as u8 && !st.delayed_pending {
        LlcAction::Delay
    } else {
        LlcAction::Drop
    }
}

/// Where a received, parsed message goes: `kind` and `resp` from the
/// message, `role` our side, `st` the flows. The caller first drops
/// messages on a link that is not usable, and ADD_LINK requests of a link
/// group that is going away, as upstream does.
pub fn route(kind: LlcKind, resp: bool, role: Role, st: &FlowState) -> LlcAction {
    let local_waits = |t: FlowType| st.local == t && !st.local_has_msg;
    if resp && kind != LlcKind::ReqAddLink {
        // smc_llc_rx_response
        return match kind {
            LlcKind::TestLink => LlcAction::TestLinkDone,
            LlcKind::AddLink | LlcKind::AddLinkCont | LlcKind::ConfirmLink
                if local_waits(FlowType::AddLink) =>
            {
                LlcAction::ToLocalFlow
            }
            LlcKind::DeleteLink if local_waits(FlowType::DelLink) => LlcAction::ToLocalFlow,
            LlcKind::ConfirmRkey | LlcKind::DeleteRkey if local_waits(FlowType::Rkey) => {
                LlcAction::ToLocalFlow
            }
            _ => LlcAction::Drop,
        };
    }
    // smc_llc_event_handler
    match kind {
        LlcKind::TestLink => LlcAction::Echo,
        LlcKind::AddLink => {
            if role == Role::Client && local_waits(FlowType::AddLink) {
                LlcAction::ToLocalFlow
            } else if role == Role::Client && st.local == FlowType::ReqAddLink {
                LlcAction::TakeOverLocalFlow
            } else {
                start(
                    st.local,
                    kind,
                    LlcAction::StartLocalFlow(FlowType::AddLink),
                    st,
                )
            }
        }
        LlcKind::ConfirmLink | LlcKind::AddLinkCont => {
            if st.local != FlowType::None && !st.local_has_msg {
                LlcAction::ToLocalFlow
            } else {
                LlcAction::Drop
            }
        }
        LlcKind::DeleteLink => {
            if local_waits(FlowType::AddLink) {
                // A DELETE_LINK during an ADD_LINK flow goes to that flow.
                LlcAction::ToLocalFlow
            } else {
                start(
                    st.local,
                    kind,
                    LlcAction::StartLocalFlow(FlowType::DelLink),
                    st,
                )
            }
        }
        LlcKind::ConfirmRkey | LlcKind::DeleteRkey => {
            start(st.remote, kind, LlcAction::StartRemoteFlow, st)
        }
        LlcKind::ConfirmRkeyCont => LlcAction::Drop,
        LlcKind::ReqAddLink => match role {
            Role::Client if resp && st.local == FlowType::ReqAddLink => LlcAction::StopLocalFlow,
            // The server's flow for it is an ADD_LINK flow.
            Role::Server => start(
                st.local,
                kind,
                LlcAction::StartLocalFlow(FlowType::AddLink),
                st,
            ),
            Role::Client => LlcAction::Drop,
        },
    }
}

/// This side starts a local flow of type `t` (once [`may_initiate`]
/// allowed it): no message yet, its answers are for the task that started
/// it.
pub fn initiate(st: &mut FlowState, t: FlowType) {
    st.local = t;
    st.local_has_msg = false;
    st.local_here = true;
}

/// A peer's request (received now, or the delayed event) starts a local
/// flow of type `t`, holding that request for the link group's work item.
pub fn start_for_peer(st: &mut FlowState, t: FlowType) {
    st.local = t;
    st.local_has_msg = true;
    st.local_here = false;
}

/// The local flow ended.
pub fn end_local(st: &mut FlowState) {
    st.local = FlowType::None;
    st.local_has_msg = false;
    st.local_here = false;
}

/// Whether the link group's work item takes the local flow's message: the
/// request a peer's flow started with, not yet taken. Never the answer a
/// flow this side started waits for (taking it would leave that flow
/// without its answer).
pub fn work_item_takes(st: &FlowState) -> bool {
    st.local != FlowType::None && st.local_has_msg && !st.local_here
}

/// This side may start a local flow of type `wanted` now
/// (`smc_llc_flow_initiate`): no local flow runs, and no remote one, but
/// for an rkey flow, which may run beside a remote rkey flow. Otherwise
/// upstream waits for the flows to end.
pub fn may_initiate(wanted: FlowType, st: &FlowState) -> bool {
    st.local == FlowType::None
        && (st.remote == FlowType::None
            || (wanted == FlowType::Rkey && st.remote == FlowType::Rkey))
}

/// Checks the routing rules for `kind` (a response or not) in every role
/// and flow state: routing never panics, a response (but REQ_ADD_LINK's,
/// handed over to ADD_LINK) never starts a flow, a flow starts only where
/// none runs, a message goes to the local flow only when it has none
/// waiting, and at most one event waits. For tests and fuzzing: it panics.
#[cfg(any(test, feature = "invariants"))]
pub fn check_route_invariants(kind: LlcKind, resp: bool) {
    const TYPES: [FlowType; 5] = [
        FlowType::None,
        FlowType::AddLink,
        FlowType::DelLink,
        FlowType::ReqAddLink,
        FlowType::Rkey,
    ];
    for role in [Role::Client, Role::Server] {
        for local in TYPES {
            for remote in TYPES {
                for bits in 0..8 {
                    let st = FlowState {
                        local,
                        local_has_msg: bits & 1 != 0,
                        remote,
                        delayed_pending: bits & 2 != 0,
                        local_here: bits & 4 != 0,
                    };
                    let a = route(kind, resp, role, &st);
                    if resp && kind != LlcKind::ReqAddLink {
                        assert!(matches!(
                            a,
                            LlcAction::ToLocalFlow | LlcAction::TestLinkDone | LlcAction::Drop
                        ));
                    }
                    match a {
                        LlcAction::StartLocalFlow(_) => assert_eq!(local, FlowType::None),
                        LlcAction::StartRemoteFlow => assert_eq!(remote, FlowType::None),
                        LlcAction::ToLocalFlow => assert!(!st.local_has_msg),
                        LlcAction::Delay => assert!(!st.delayed_pending),
                        _ => {}
                    }
                    let _ = may_initiate(local, &st);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ALL_KINDS;
    use super::*;

    const IDLE: FlowState = FlowState {
        local: FlowType::None,
        local_has_msg: false,
        remote: FlowType::None,
        delayed_pending: false,
        local_here: false,
    };

    fn with(local: FlowType) -> FlowState {
        FlowState { local, ..IDLE }
    }

    #[test]
    fn flow_numbers_are_upstreams() {
        assert_eq!(FlowType::AddLink as u8, LlcKind::AddLink as u8);
        assert_eq!(FlowType::DelLink as u8, LlcKind::DeleteLink as u8);
        assert_eq!(FlowType::ReqAddLink as u8, 5);
        assert_eq!(FlowType::Rkey as u8, 6);
        assert_eq!(FlowType::of_request(LlcKind::ConfirmRkey), FlowType::Rkey);
        assert_eq!(FlowType::of_request(LlcKind::TestLink), FlowType::None);
    }

    #[test]
    fn requests_on_an_idle_link_group() {
        use LlcAction::*;
        for role in [Role::Client, Role::Server] {
            let r = |k| route(k, false, role, &IDLE);
            assert_eq!(r(LlcKind::TestLink), Echo);
            assert_eq!(r(LlcKind::AddLink), StartLocalFlow(FlowType::AddLink));
            assert_eq!(r(LlcKind::DeleteLink), StartLocalFlow(FlowType::DelLink));
            assert_eq!(r(LlcKind::ConfirmRkey), StartRemoteFlow);
            assert_eq!(r(LlcKind::DeleteRkey), StartRemoteFlow);
            assert_eq!(r(LlcKind::ConfirmLink), Drop);
            assert_eq!(r(LlcKind::AddLinkCont), Drop);
            assert_eq!(r(LlcKind::ConfirmRkeyCont), Drop);
        }
        assert_eq!(
            route(LlcKind::ReqAddLink, false, Role::Server, &IDLE),
            StartLocalFlow(FlowType::AddLink)
        );
        assert_eq!(route(LlcKind::ReqAddLink, false, Role::Client, &IDLE), Drop);
    }

    #[test]
    fn responses_need_their_flow() {
        use LlcAction::*;
        let waits = with(FlowType::AddLink);
        for k in [LlcKind::AddLink, LlcKind::AddLinkCont, LlcKind::ConfirmLink] {
            assert_eq!(route(k, true, Role::Server, &waits), ToLocalFlow);
            assert_eq!(route(k, true, Role::Server, &IDLE), Drop);
            let full = FlowState {
                local_has_msg: true,
                ..waits
            };
            assert_eq!(route(k, true, Role::Server, &full), Drop);
        }
        let del = with(FlowType::DelLink);
        assert_eq!(
            route(LlcKind::DeleteLink, true, Role::Client, &del),
            ToLocalFlow
        );
        assert_eq!(route(LlcKind::DeleteLink, true, Role::Client, &waits), Drop);
        let rkey = with(FlowType::Rkey);
        assert_eq!(
            route(LlcKind::ConfirmRkey, true, Role::Client, &rkey),
            ToLocalFlow
        );
        assert_eq!(
            route(LlcKind::DeleteRkey, true, Role::Client, &rkey),
            ToLocalFlow
        );
        assert_eq!(
            route(LlcKind::ConfirmRkeyCont, true, Role::Client, &rkey),
            Drop
        );
        assert_eq!(
            route(LlcKind::TestLink, true, Role::Client, &IDLE),
            TestLinkDone
        );
        // The REQ_ADD_LINK response ends the client's flow.
        let req = with(FlowType::ReqAddLink);
        assert_eq!(
            route(LlcKind::ReqAddLink, true, Role::Client, &req),
            StopLocalFlow
        );
        assert_eq!(route(LlcKind::ReqAddLink, true, Role::Client, &IDLE), Drop);
    }

    #[test]
    fn requests_during_flows() {
        use LlcAction::*;
        let add = with(FlowType::AddLink);
        // The first CONFIRM_LINK arrives in the ADD_LINK flow of the first link.
        assert_eq!(
            route(LlcKind::ConfirmLink, false, Role::Client, &add),
            ToLocalFlow
        );
        assert_eq!(
            route(LlcKind::AddLink, false, Role::Client, &add),
            ToLocalFlow
        );
        assert_eq!(
            route(LlcKind::DeleteLink, false, Role::Server, &add),
            ToLocalFlow
        );
        // A server's ADD_LINK answers a client's REQ_ADD_LINK.
        let req = with(FlowType::ReqAddLink);
        assert_eq!(
            route(LlcKind::AddLink, false, Role::Client, &req),
            TakeOverLocalFlow
        );
        // Parallel ADD_LINK / DELETE_LINK are delayed once, the rest dropped.
        let del = with(FlowType::DelLink);
        assert_eq!(route(LlcKind::AddLink, false, Role::Server, &del), Delay);
        let busy = FlowState {
            delayed_pending: true,
            ..del
        };
        assert_eq!(route(LlcKind::AddLink, false, Role::Server, &busy), Drop);
        assert_eq!(route(LlcKind::DeleteLink, false, Role::Server, &del), Drop);
        let full = FlowState {
            local_has_msg: true,
            ..add
        };
        assert_eq!(
            route(LlcKind::DeleteLink, false, Role::Client, &full),
            Delay
        );
        assert_eq!(route(LlcKind::AddLink, false, Role::Server, &add), Drop);
        let rkey = with(FlowType::Rkey);
        assert_eq!(route(LlcKind::ReqAddLink, false, Role::Server, &rkey), Drop);
        // Rkey requests run in the remote flow, one at a time.
        assert_eq!(
            route(LlcKind::ConfirmRkey, false, Role::Client, &add),
            StartRemoteFlow
        );
        let remote = FlowState {
            remote: FlowType::Rkey,
            ..IDLE
        };
        assert_eq!(
            route(LlcKind::DeleteRkey, false, Role::Client, &remote),
            Drop
        );
    }

    #[test]
    fn initiating_flows() {
        assert!(may_initiate(FlowType::AddLink, &IDLE));
        assert!(!may_initiate(FlowType::AddLink, &with(FlowType::Rkey)));
        let remote_rkey = FlowState {
            remote: FlowType::Rkey,
            ..IDLE
        };
        assert!(may_initiate(FlowType::Rkey, &remote_rkey));
        assert!(!may_initiate(FlowType::DelLink, &remote_rkey));
    }

    /// The answer to a flow this side started is its task's; the request
    /// that started a peer's flow is the work item's; a REQ ADD LINK taken
    /// over by the server's ADD LINK stays with the task that waits in it.
    #[test]
    fn whose_message() {
        use LlcAction::{TakeOverLocalFlow, ToLocalFlow};
        let mut st = IDLE;
        initiate(&mut st, FlowType::Rkey);
        assert!(!work_item_takes(&st));
        assert_eq!(route(LlcKind::ConfirmRkey, true, Role::Server, &st), ToLocalFlow);
        st.local_has_msg = true;
        assert!(!work_item_takes(&st));
        end_local(&mut st);
        assert_eq!(st, IDLE);

        let LlcAction::StartLocalFlow(t) = route(LlcKind::AddLink, false, Role::Client, &st) else {
            panic!("ADD LINK starts a flow");
        };
        start_for_peer(&mut st, t);
        assert!(work_item_takes(&st));
        st.local_has_msg = false;
        assert!(!work_item_takes(&st));

        let mut st = IDLE;
        initiate(&mut st, FlowType::ReqAddLink);
        assert_eq!(route(LlcKind::AddLink, false, Role::Client, &st), TakeOverLocalFlow);
        st.local = FlowType::AddLink;
        st.local_has_msg = true;
        assert!(!work_item_takes(&st));
    }

    /// Every kind, direction, role and state gives some action that
    /// respects the flow rules.
    #[test]
    fn route_is_total() {
        for kind in ALL_KINDS {
            for resp in [false, true] {
                super::check_route_invariants(kind, resp);
            }
        }
    }
}
