// SPDX-License-Identifier: GPL-2.0

//! What a link group that keeps a single link does with each LLC message
//! its peer sends: the answers upstream 6.12 (`smc_llc.c`) gives when it
//! does not add a second link, because the link group may have one link
//! only (SMC-Rv2.1 `max_links` 1) or because no second device gives an
//! alternate path. Pure logic: the caller sends what it is told to and
//! keeps the link or ends it.
//!
//! The message is routed by [`route`] with the flows such a link group
//! has: during the link's confirmation the local ADD_LINK flow of the
//! first link waits for its CONFIRM_LINK, afterwards no flow runs. Then,
//! by message:
//!
//! | message | client | server |
//! |---|---|---|
//! | ADD_LINK request | ADD_LINK response, reject flag, reason no alternate path (`smc_llc_cli_add_link_reject`; in v2 the length hides the reason); an empty one is the local trigger upstream's client makes itself, which with one GID sends nothing | nothing: `smc_llc_srv_add_link` stops before its own ADD_LINK |
//! | REQ_ADD_LINK (v2), request or response | nothing: no REQ_ADD_LINK flow of ours waits | REQ_ADD_LINK response, all data cleared (`smc_llc_send_req_add_link_response`) |
//! | DELETE_LINK of the whole group | the link group ends | DELETE_LINK of the whole group back, orderly, same reason; the link group ends |
//! | DELETE_LINK of our link | DELETE_LINK response, reason 0; the link, the last one, ends the group | the request sent back as it came; the link ends the group |
//! | DELETE_LINK of another link id | DELETE_LINK response, reason unknown link (`SMC_LLC_DEL_NOLNK`) | nothing: upstream takes it for an asymmetric link already deleted |
//! | CONFIRM_LINK, ADD_LINK_CONT outside the confirmation; any response we asked nothing for | dropped | dropped |
//!
//! During the confirmation an ADD_LINK (client), ADD_LINK_CONT or
//! DELETE_LINK reaches the waiting flow instead, which expects
//! CONFIRM_LINK only: upstream drops it and its confirmation fails,
//! and so does the link here. TEST_LINK is echoed; CONFIRM_RKEY and
//! DELETE_RKEY are confirmed as they came (one link: no other link's
//! keys to keep), CONFIRM_RKEY negative with retry for more than three
//! keys, as upstream's `smc_llc_rmt_conf_rkey`.
//!
//! Answers upstream builds with `smc_llc_init_msg_hdr` carry the link
//! group's LLC version; echoes (TEST_LINK, a client's DELETE_LINK
//! response, a server's DELETE_LINK sent back) keep the message's.

use super::{
    route, AddLink, ConfirmRkey, DeleteLink, DeleteRkey, EntryList, FlowState, FlowType, LlcAction,
    LlcError, LlcKind, LlcMessage, LlcVersion, ReqAddLink, Role, TestLink, DEL_NOLNK,
    LLC_HEADER_LEN, LLC_LEN, REJ_RSN_NO_ALT_PATH,
};

/// The link group as far as answering needs it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OneLink {
    /// Our side of the link group.
    pub role: Role,
    /// The LLC version of the link group.
    pub version: LlcVersion,
    /// The link's id (the server assigns it in CONFIRM_LINK).
    pub link_num: u8,
    /// The link's confirmation runs: it waits for CONFIRM_LINK.
    pub confirming: bool,
}

/// Why a message was refused, for the counters of a receiver.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Refusal {
    /// A request to add a link (ADD_LINK, REQ_ADD_LINK): answered as
    /// upstream refuses it, or ignored where upstream ignores it.
    AddLink,
    /// A DELETE_LINK of a link id that is not ours.
    UnknownLink,
    /// No flow waits for it: a response to a request we never sent, a
    /// CONFIRM_LINK or ADD_LINK_CONT outside the link's confirmation.
    OutOfFlow,
}

/// What to do with a received message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OneLinkAction<'a> {
    /// Nothing more (a TEST_LINK response: having heard the peer is all).
    Nothing,
    /// Send this answer; the link stays.
    Answer(LlcMessage<'a>),
    /// Refused, answered with the message if there is one; the link stays.
    Refuse(Refusal, Option<LlcMessage<'a>>),
    /// Hand the message to the confirmation that waits for it.
    ToConfirmation,
    /// Send the message if there is one, then end the link, and with it
    /// the link group.
    EndLink(Option<LlcMessage<'a>>),
}

impl OneLink {
    /// Decides on the received message `buf` (as [`LlcMessage::parse`]
    /// takes it). Errors are the parser's: the message is dropped.
    pub fn decide<'a>(&self, buf: &'a [u8]) -> Result<OneLinkAction<'a>, LlcError> {
        let msg = LlcMessage::parse(buf)?;
        // Upstream's client looks for its own trigger before any flow.
        if self.role == Role::Client
            && msg.kind() == LlcKind::AddLink
            && !msg.is_response()
            && empty_body(buf)
        {
            return Ok(OneLinkAction::Refuse(Refusal::AddLink, None));
        }
        let flows = FlowState {
            local: if self.confirming {
                FlowType::AddLink
            } else {
                FlowType::None
            },
            ..FlowState::default()
        };
        let kind = msg.kind();
        Ok(match route(kind, msg.is_response(), self.role, &flows) {
            LlcAction::Echo => echo_test_link(&msg),
            LlcAction::TestLinkDone => OneLinkAction::Nothing,
            LlcAction::ToLocalFlow if kind == LlcKind::ConfirmLink => OneLinkAction::ToConfirmation,
            // The confirmation expects CONFIRM_LINK only.
            LlcAction::ToLocalFlow => OneLinkAction::EndLink(None),
            LlcAction::StartLocalFlow(FlowType::AddLink) => self.add_link(&msg),
            LlcAction::StartLocalFlow(FlowType::DelLink) => self.delete_link(&msg),
            LlcAction::StartRemoteFlow => self.rkey(&msg),
            // A request to add a link where no flow may start for it.
            LlcAction::Drop
                if !msg.is_response() && matches!(kind, LlcKind::AddLink | LlcKind::ReqAddLink) =>
            {
                OneLinkAction::Refuse(Refusal::AddLink, None)
            }
            // Responses nobody asked for, and what needs flows a link
            // group with one link never runs.
            _ => OneLinkAction::Refuse(Refusal::OutOfFlow, None),
        })
    }

    /// An ADD_LINK (client) or REQ_ADD_LINK (server) that starts an
    /// ADD_LINK flow.
    fn add_link<'a>(&self, msg: &LlcMessage<'a>) -> OneLinkAction<'a> {
        match (msg, self.role) {
            (LlcMessage::AddLink(a), Role::Client) => {
                let reject = AddLink {
                    version: self.version,
                    resp: true,
                    reject: true,
                    reject_reason: REJ_RSN_NO_ALT_PATH,
                    ext: None,
                    ..*a
                };
                OneLinkAction::Refuse(Refusal::AddLink, Some(LlcMessage::AddLink(reject)))
            }
            (LlcMessage::ReqAddLink(_), Role::Server) => {
                let resp = ReqAddLink {
                    resp: true,
                    gids: EntryList::empty(),
                };
                OneLinkAction::Refuse(Refusal::AddLink, Some(LlcMessage::ReqAddLink(resp)))
            }
            _ => OneLinkAction::Refuse(Refusal::AddLink, None),
        }
    }

    /// A DELETE_LINK request that starts a DELETE_LINK flow.
    fn delete_link<'a>(&self, msg: &LlcMessage<'a>) -> OneLinkAction<'a> {
        let LlcMessage::DeleteLink(d) = msg else {
            return OneLinkAction::Refuse(Refusal::OutOfFlow, None);
        };
        let ours = d.link_num == self.link_num;
        match self.role {
            Role::Client if d.all => OneLinkAction::EndLink(None),
            Role::Client => {
                let resp = LlcMessage::DeleteLink(DeleteLink {
                    resp: true,
                    reason: if ours { 0 } else { DEL_NOLNK },
                    ..*d
                });
                if ours {
                    OneLinkAction::EndLink(Some(resp))
                } else {
                    OneLinkAction::Refuse(Refusal::UnknownLink, Some(resp))
                }
            }
            Role::Server if d.all => {
                OneLinkAction::EndLink(Some(LlcMessage::DeleteLink(DeleteLink {
                    version: self.version,
                    resp: false,
                    all: true,
                    orderly: true,
                    link_num: 0,
                    reason: d.reason,
                })))
            }
            Role::Server if ours => OneLinkAction::EndLink(Some(LlcMessage::DeleteLink(*d))),
            Role::Server => OneLinkAction::Refuse(Refusal::UnknownLink, None),
        }
    }

    /// A CONFIRM_RKEY or DELETE_RKEY request, answered at once.
    fn rkey<'a>(&self, msg: &LlcMessage<'a>) -> OneLinkAction<'a> {
        match msg {
            LlcMessage::ConfirmRkey(c) => {
                let refused = c.used().is_none();
                OneLinkAction::Answer(LlcMessage::ConfirmRkey(ConfirmRkey {
                    version: self.version,
                    resp: true,
                    negative: refused,
                    retry: refused,
                    ..*c
                }))
            }
            LlcMessage::DeleteRkey(d) => {
                // A v1 link group echoes the keys; a v2 one answers in v2
                // without them.
                let v1 = self.version == LlcVersion::V1 && d.version == LlcVersion::V1;
                OneLinkAction::Answer(LlcMessage::DeleteRkey(DeleteRkey {
                    version: if v1 { LlcVersion::V1 } else { LlcVersion::V2 },
                    resp: true,
                    negative: false,
                    retry: false,
                    err_mask: 0,
                    rkeys: if v1 { d.rkeys } else { EntryList::empty() },
                    ..*d
                }))
            }
            _ => OneLinkAction::Refuse(Refusal::OutOfFlow, None),
        }
    }
}

/// TEST_LINK request: the same message, response flag set.
fn echo_test_link<'a>(msg: &LlcMessage<'a>) -> OneLinkAction<'a> {
    match msg {
        LlcMessage::TestLink(t) => {
            OneLinkAction::Answer(LlcMessage::TestLink(TestLink { resp: true, ..*t }))
        }
        _ => OneLinkAction::Refuse(Refusal::OutOfFlow, None),
    }
}

/// The link data of an ADD_LINK (after the header) are all zero: the
/// message upstream's client queues itself to start adding a link
/// (`smc_llc_is_local_add_link`).
fn empty_body(buf: &[u8]) -> bool {
    buf.get(LLC_HEADER_LEN..LLC_LEN)
        .is_some_and(|body| body.iter().all(|b| *b == 0))
}

#[cfg(test)]
mod tests;
