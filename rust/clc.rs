// SPDX-License-Identifier: GPL-2.0

//! The CLC handshake over the clcsock (RFC 7609, section 3.7; SMC-Rv2);
//! what a client remembers of the peers it offered SMC to is [`peers`].

mod decline;
mod ism;
pub(crate) mod peers;
mod outcome;
mod recv;

pub(crate) use outcome::{ClientOutcome, ServerOutcome};

pub(crate) use recv::CLC_WAIT_MS;
use decline::{decline_unless_peer_did, send_decline};
use ism::{client_smcd, server_smcd};
use recv::{recv_message, RecvError};

use crate::ib::{find_smcr_v2_device, local_systemid, SmcrV2Device};
use crate::smcr::inject;
use crate::smcr::registry::registry;
use crate::smcr::setup::{
    abort_conn, client_accept, client_confirm_link, server_accept, server_confirm,
    ClientProposal, ServerConn, DECL_NOSRVLINK,
};
use crate::sys::args::SockAddr;
use crate::sys::errno::{EAGAIN, EINVAL};
use crate::sys::net::Net;
use crate::sys::print::smc_dbg;
use crate::sys::route::find_route_v4;
use crate::sys::tcp::KernelSocket;
use crate::ueid::UeidTable;
use crate::wire::clc::{
    choose_variant, encode_proposal_smcd, ClcError, Decline, DeclineReason, Header, IsmDevice,
    LocalInfo, MsgType, Proposal, ProposalParams, ServerCaps, SmcdAcceptConfirm,
    SmcdProposalParams, SmcrAcceptConfirm, Variant, DECLINE_LEN_V2, EID_LEN,
    EYECATCHER_SMCD, EYECATCHER_SMCR, HEADER_LEN, MAX_MESSAGE_LEN, SMC_V1, SMC_V2, SYSTEMID_LEN,
};

/// SMC release 1 (v2.1): maximum links and connections are negotiated.
const SMC_RELEASE_1: u8 = 1;
use kernel::prelude::*;

/// What a client can offer: an SMC-Rv2 device on the route to the peer,
/// and the UEIDs (SMC-Rv2 needs at least one).
struct Offer {
    dev: SmcrV2Device,
    ueids: UeidTable,
}

/// Whether a client connecting to `addr` in `net` is sure, before the TCP
/// handshake, to have nothing to propose: no UEID (SMC-Rv2 needs one, and
/// SMC-Rv1 is never offered), a peer that is not IPv4 (SMC-Rv2 runs over
/// IPv4 only), or no RDMA port up that sockets of `net` may use. Such a
/// connect does not offer SMC at all: upstream's client, which asks the
/// peer first, would decline with `NOSMCDEV` at this point anyway.
///
/// RCU reads only (no lock): cheap enough for every `connect()`. A device
/// that is up but not on the route to the peer is only found after the
/// TCP handshake ([`find_offer`]).
pub(crate) fn nothing_to_propose(net: &Net, addr: &SockAddr<'_>) -> bool {
    const V4_MAPPED: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
    let ipv4 = match addr.ip() {
        Some(ip) if ip.len() == 4 => true,
        Some(ip) => ip.get(..12) == Some(&V4_MAPPED[..]),
        None => false,
    };
    (!ipv4 || !crate::ueid::any() || !crate::ib::any_port_up(net)) && ism::client_offer(net).is_none()
}

fn find_offer(net: &Net, clc: &KernelSocket) -> Option<Offer> {
    let ueids = crate::ueid::snapshot();
    ueids.iter().next()?;
    let (saddr, daddr) = (clc.local_addr()?, clc.peer_addr()?);
    let route = find_route_v4(net, saddr, daddr).ok()?;
    let dev = find_smcr_v2_device(net, &route)?;
    Some(Offer { dev, ueids })
}

/// Runs the client side on a connected clcsock. With an SMC-Rv2 device on
/// the route and a UEID, the proposal offers SMC-Rv2; without, it offers
/// nothing (typev1 and typev2 N): a CLC peer answers with a decline,
/// anything else shows the peer is not CLC.
pub(crate) fn client_handshake(net: &Net, clc: &KernelSocket) -> Result<ClientOutcome> {
    if !clc.peer_offered_smc() {
        return Ok(ClientOutcome::PeerNoSmc);
    }
    let offer = find_offer(net, clc);
    let ism = ism::client_offer(net);
    // SMC-Rv2.1: `net.smc.smcr_max_conns_per_lgr` and `_links_` (one link
    // at most here).
    let proposal_limits = crate::sysctl::proposal_limits(net);
    // The UEIDs go with any v2 offer (SMC-Rv2 needs one).
    let mut ueids = [[0u8; EID_LEN]; crate::ueid::MAX_UEIDS];
    let mut n_ueids = 0;
    let snapshot = match &offer {
        Some(o) => Some(o.ueids),
        None if ism.is_some() => Some(crate::ueid::snapshot()),
        None => None,
    };
    if let Some(all) = &snapshot {
        for (slot, u) in ueids.iter_mut().zip(all.iter()) {
            *slot = *u;
            n_ueids += 1;
        }
    }
    let ueids = ueids.get(..n_ueids).unwrap_or(&[]);
    let mut params = ProposalParams::default();
    if let Some(o) = &offer {
        params = ProposalParams {
            v2: true,
            local: LocalInfo {
                peer_id: local_systemid(),
                gid: o.dev.gid,
                mac: o.dev.mac,
            },
            roce_gid: o.dev.gid,
            ueids,
            release: SMC_RELEASE_1,
            max_conns: proposal_limits.0,
            max_links: proposal_limits.1,
            ..ProposalParams::default()
        };
    }
    // SMC-Dv2 over the loopback device, offered first (upstream's order).
    let ism_devices: [IsmDevice; 1] = [ism.unwrap_or_default()];
    let mut smcd = SmcdProposalParams::default();
    if ism.is_some() {
        smcd = SmcdProposalParams {
            v2: true,
            // Off s390 the system EID is disabled (see `ism`).
            seid: None,
            devices: &ism_devices,
            ..SmcdProposalParams::default()
        };
        params.ueids = ueids;
        params.release = SMC_RELEASE_1;
    }
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let n = encode_proposal_smcd(&params, &smcd, &mut buf).map_err(|_| Error::from(EINVAL))?;
    clc.send_all(&buf[..n])?;

    let header = match recv_message(clc, &mut buf) {
        Ok(h) => h,
        Err(RecvError::Silent) => return Ok(ClientOutcome::Silent),
        Err(RecvError::Clc(e)) => return Ok(ClientOutcome::NotClc(e)),
        Err(RecvError::Os(e)) => return Err(e),
    };
    let msg = &buf[..header.length as usize];
    match header.kind {
        MsgType::Decline => match Decline::parse(msg) {
            Ok(d) => {
                smc_dbg!("client: peer declined with {:#010x}", d.reason.code());
                Ok(ClientOutcome::Declined {
                    reason: if offer.is_some() || ism.is_some() {
                        DeclineReason::PeerDeclined
                    } else {
                        DeclineReason::NoSmcDevice
                    },
                    peer_diagnosis: d.reason.code(),
                })
            }
            Err(e) => Ok(ClientOutcome::NotClc(e)),
        },
        MsgType::Accept if ism.is_some() && ism::is_smcd_accept(msg) => {
            match SmcdAcceptConfirm::parse(msg) {
                Ok(a) if a.version >= SMC_V2 && a.kind == MsgType::Accept => client_smcd(clc, &a),
                _ => {
                    send_decline(clc, DeclineReason::SyncError)?;
                    Ok(ClientOutcome::Declined {
                        reason: DeclineReason::SyncError,
                        peer_diagnosis: 0,
                    })
                }
            }
        }
        MsgType::Accept => {
            let accepted = match (&offer, SmcrAcceptConfirm::parse(msg)) {
                (Some(o), Ok(a)) if a.version >= SMC_V2 && o.ueids.iter().any(|u| *u == a.eid) => {
                    Some((o, a))
                }
                _ => None,
            };
            let Some((o, a)) = accepted else {
                // An accept of what we did not offer: tell the peer no.
                let reason = if offer.is_some() {
                    DeclineReason::SyncError
                } else {
                    DeclineReason::NoSmcDevice
                };
                send_decline(clc, reason)?;
                return Ok(ClientOutcome::Declined {
                    reason,
                    peer_diagnosis: 0,
                });
            };
            client_smcr(clc, o, &a)
        }
        // Our own proposal coming back: an echo, not a CLC peer.
        MsgType::Proposal | MsgType::Confirm => Ok(ClientOutcome::NotClc(ClcError::BadType)),
    }
}

/// The client's part after an SMC-Rv2 Accept: connection and link group,
/// the Confirm, and on a new link group the LLC confirmation of its link.
fn client_smcr(clc: &KernelSocket, o: &Offer, a: &SmcrAcceptConfirm) -> Result<ClientOutcome> {
    let Some(reg) = registry() else {
        send_decline(clc, DeclineReason::InternalError)?;
        return Ok(ClientOutcome::Declined {
            reason: DeclineReason::InternalError,
            peer_diagnosis: 0,
        });
    };
    // A new link group is announced until it is in the registry; a
    // connection the server puts on an existing one waits only for the one
    // it names, if that is still coming up (see smcr::setups).
    let cc = match client_accept(&reg, &o.dev, a, clc.abort_handle()) {
        Ok(cc) => cc,
        Err(reason) => {
            smc_dbg!(
                "client: SMC-R setup failed, declining with {:#010x}",
                reason.code()
            );
            send_decline(clc, reason)?;
            return Ok(ClientOutcome::Declined {
                reason,
                peer_diagnosis: 0,
            });
        }
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let mut confirm = cc.confirm;
    hold_back(clc, inject::smcr_clc_out(&mut confirm));
    let sent = confirm
        .encode(&mut buf)
        .map_err(|_| Error::from(EINVAL))
        .and_then(|n| clc.send_all(buf.get(..n).ok_or(EINVAL)?));
    if let Err(e) = sent {
        abort_conn(cc.lgr, cc.conn, cc.first_contact);
        return Err(e);
    }
    if cc.first_contact {
        if let Err(e) = client_confirm_link(&reg, &cc) {
            smc_dbg!("client: link confirmation failed ({:?})", e);
            // No other handshake waits for this one's link group now.
            abort_conn(cc.lgr, cc.conn, true);
            drop(cc.setup);
            let (reason, peer_diagnosis) =
                decline_unless_peer_did(clc, DeclineReason::TimeoutConfirmLink)?;
            return Ok(ClientOutcome::Declined {
                reason,
                peer_diagnosis,
            });
        }
    }
    drop(cc.setup);
    smc_dbg!("client: SMC-R connection up, token {:#x}", cc.conn.token);
    Ok(ClientOutcome::Smcr(cc.conn))
}

/// Holds the CLC message about to be sent back `ms` milliseconds, as the
/// fault injection seam says (a test's slow peer; 0 outside tests). The
/// peer says nothing before it: this waits the time, or until the peer
/// gives up on the connection.
fn hold_back(clc: &KernelSocket, ms: u32) {
    if ms > 0 {
        let _ = clc.peek_exact(&mut [0u8; 1], ms);
    }
}

/// The device and the client's terms for a proposal that offers SMC-Rv2:
/// a UEID both sides have, and an SMC-Rv2 device on the route to the
/// client's RoCE address.
fn server_offer(clc: &KernelSocket, p: &Proposal<'_>) -> Option<(SmcrV2Device, ClientProposal)> {
    let v2 = p.v2.as_ref()?;
    let ours = crate::ueid::snapshot();
    let eid = v2
        .ueids()
        .find_map(|u| ours.iter().find(|o| o.as_slice() == u).copied())?;
    // The client's RoCE address: an IPv4-mapped GID.
    let gid = v2.roce_gid;
    if gid.get(..12) != Some(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff][..]) {
        return None;
    }
    let mut daddr = [0u8; 4];
    daddr.copy_from_slice(gid.get(12..)?);
    let net = clc.net();
    let route = find_route_v4(net, clc.local_addr()?, daddr).ok()?;
    let dev = find_smcr_v2_device(net, &route)?;
    Some((
        dev,
        ClientProposal {
            systemid: p.local.peer_id,
            gid,
            eid,
            release: v2.release,
            max_conns: v2.max_conns,
            max_links: v2.max_links,
            feature_mask: v2.feature_mask,
        },
    ))
}

/// The server's part of an SMC-Rv2 connection: Accept, the client's
/// Confirm, and on a new link group the LLC confirmation of its link.
fn server_smcr(clc: &KernelSocket, dev: &SmcrV2Device, cp: &ClientProposal) -> ServerOutcome {
    let declined = |reason: DeclineReason| {
        if send_decline(clc, reason).is_err() {
            return ServerOutcome::Abort(ClcError::Truncated);
        }
        ServerOutcome::Fallback {
            reason,
            peer_diagnosis: 0,
            not_clc: false,
            error: None,
        }
    };
    let Some(reg) = registry() else {
        return declined(DeclineReason::InternalError);
    };
    let sc = match server_accept(&reg, dev, cp, clc.abort_handle()) {
        Ok(sc) => sc,
        Err(reason) => return declined(reason),
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let mut accept = sc.accept;
    hold_back(clc, inject::smcr_clc_out(&mut accept));
    let sent = accept
        .encode(&mut buf)
        .map_err(|_| Error::from(EINVAL))
        .and_then(|n| clc.send_all(buf.get(..n).ok_or(EINVAL)?));
    if sent.is_err() {
        server_abort(sc);
        return ServerOutcome::Abort(ClcError::Truncated);
    }
    let header = match await_answer(clc, &sc).and_then(|()| recv_message(clc, &mut buf)) {
        Ok(h) => h,
        Err(_) => {
            server_abort(sc);
            return ServerOutcome::Abort(ClcError::Truncated);
        }
    };
    sc.lgr.answered();
    let msg = buf.get(..usize::from(header.length)).unwrap_or(&[]);
    match header.kind {
        MsgType::Confirm => {}
        MsgType::Decline => {
            let diagnosis = Decline::parse(msg).map_or(0, |d| d.reason.code());
            if !sc.first_contact && diagnosis == DECL_NOSRVLINK {
                reg.probe_peer(&sc.lgr);
            }
            server_abort(sc);
            return ServerOutcome::Fallback {
                reason: DeclineReason::PeerDeclined,
                peer_diagnosis: diagnosis,
                not_clc: false,
                error: None,
            };
        }
        _ => {
            server_abort(sc);
            return declined(DeclineReason::SyncError);
        }
    }
    let confirm = match SmcrAcceptConfirm::parse(msg) {
        Ok(c) if c.kind == MsgType::Confirm => c,
        _ => {
            server_abort(sc);
            return declined(DeclineReason::SyncError);
        }
    };
    if let Err(reason) = server_confirm(&reg, &sc, &confirm) {
        smc_dbg!(
            "server: SMC-R setup failed, declining with {:#010x}",
            reason.code()
        );
        server_abort(sc);
        if !matches!(reason, DeclineReason::TimeoutConfirmLink) {
            return declined(reason);
        }
        // The client may have given up on the link first.
        return match decline_unless_peer_did(clc, reason) {
            Ok((reason, peer_diagnosis)) => ServerOutcome::Fallback {
                reason,
                peer_diagnosis,
                not_clc: false,
                error: None,
            },
            Err(_) => ServerOutcome::Abort(ClcError::Truncated),
        };
    }
    smc_dbg!("server: SMC-R connection up, token {:#x}", sc.conn.token);
    // In the registry: handshakes that waited for the link group join it.
    drop(sc.setup);
    ServerOutcome::Smcr(sc.conn)
}

/// The longest wait for an answer while the client answers others.
const ANSWER_WAIT_MAX_MS: u32 = 60_000;

/// Waits for the first byte of the client's answer to our Accept. A client
/// answers the Accepts of a link group one at a time (see
/// [`LinkGroup::answers`](crate::smcr::lgr::LinkGroup::answers)): on an
/// existing one the wait gives up after [`CLC_WAIT_MS`] in which no other
/// Accept was answered ([`ANSWER_WAIT_MAX_MS`] at most), or at once when
/// the connection ends. A client that timed out says so with its Decline.
fn await_answer(clc: &KernelSocket, sc: &ServerConn) -> core::result::Result<(), RecvError> {
    let mut head = [0u8; 1];
    let mut waited = 0;
    loop {
        let before = sc.lgr.answers();
        match clc.peek_exact(&mut head, CLC_WAIT_MS) {
            Ok(n) if n > 0 => return Ok(()),
            // The time ran out; anything else (the end, a reset) is final.
            Err(e) if e == EAGAIN => {}
            Ok(_) => return Err(RecvError::Clc(ClcError::Truncated)),
            Err(e) => return Err(RecvError::Os(e)),
        }
        waited += CLC_WAIT_MS;
        if sc.first_contact || sc.lgr.answers() == before || waited >= ANSWER_WAIT_MAX_MS {
            return Err(RecvError::Clc(ClcError::Truncated));
        }
        smc_dbg!("server: no answer to the Accept yet, the client answers others");
    }
}

/// Undoes [`server_accept`] when the handshake fails after it.
fn server_abort(sc: ServerConn) {
    abort_conn(sc.lgr, sc.conn, sc.first_contact);
    // No other handshake waits for this one's link group after this.
    drop(sc.setup);
}

/// Runs the server side on a connection whose SYN carried the SMC option.
///
/// The first bytes are peeked, not read: a client that does not start with
/// a CLC message (it only echoed the option, or waits for the server to
/// speak) keeps its bytes and gets plain TCP. A CLC proposal is read whole
/// and answered with a decline (smc_rs serves no SMC variant yet) whose
/// reason says why, in the version the client speaks.
///
/// `first_wait_ms`: how long to wait for the first bytes (0 once the time
/// for them ran out).
pub(crate) fn server_handshake(clc: &KernelSocket, first_wait_ms: u32) -> ServerOutcome {
    let not_clc = ServerOutcome::Fallback {
        reason: DeclineReason::PeerNoSmc,
        peer_diagnosis: 0,
        not_clc: true,
        error: None,
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let (head, _) = buf.split_at_mut(HEADER_LEN);
    // Closed, reset or silent: nothing was taken; TCP reports the rest.
    let seen = clc.peek_exact(head, first_wait_ms).unwrap_or(0);
    if seen < HEADER_LEN
        || !(head.starts_with(&EYECATCHER_SMCR) || head.starts_with(&EYECATCHER_SMCD))
    {
        return not_clc;
    }
    // CLC from here on: a header that does not say how long the message is
    // leaves no way to find where the application's data begins.
    let header = match Header::parse(head) {
        Ok(h) => h,
        Err(e) => return ServerOutcome::Abort(e),
    };
    // `Header::parse` bounds the length by `MAX_MESSAGE_LEN`.
    let Some(msg) = buf.get_mut(..usize::from(header.length)) else {
        return ServerOutcome::Abort(ClcError::BadLength);
    };
    match clc.recv_exact(msg, CLC_WAIT_MS) {
        Ok(n) if n == msg.len() => {}
        _ => return ServerOutcome::Abort(ClcError::Truncated),
    }
    let msg = &*msg;
    let version = if header.version >= SMC_V2 {
        SMC_V2
    } else {
        SMC_V1
    };
    let (reason, error) = match header.kind {
        MsgType::Proposal => match Proposal::parse(msg) {
            Ok(p) => {
                // SMC-Dv2 first, as upstream's listener.
                if let Some(m) = ism::server_match(clc.net(), &p) {
                    return server_smcd(clc, &m);
                }
                let offer = server_offer(clc, &p);
                let caps = ServerCaps {
                    smcr_v1: false,
                    smcr_v2: offer.is_some(),
                };
                match (choose_variant(&p, caps), offer) {
                    (Err(reason), _) => (reason, None),
                    (Ok(Variant::SmcrV2), Some((dev, cp))) => return server_smcr(clc, &dev, &cp),
                    // SMC-Rv1 needs a RoCEv1 device, which we never offer.
                    (Ok(_), _) => (DeclineReason::NoSmcrDevice, None),
                }
            }
            Err(ClcError::BadVersion) => {
                (DeclineReason::VersionMismatch, Some(ClcError::BadVersion))
            }
            Err(e) => (DeclineReason::SyncError, Some(e)),
        },
        // The client gave up first: nothing to answer.
        MsgType::Decline => {
            let (diagnosis, error) = match Decline::parse(msg) {
                Ok(d) => (d.reason.code(), None),
                Err(e) => (0, Some(e)),
            };
            return ServerOutcome::Fallback {
                reason: DeclineReason::PeerDeclined,
                peer_diagnosis: diagnosis,
                not_clc: false,
                error,
            };
        }
        MsgType::Accept | MsgType::Confirm => (DeclineReason::SyncError, Some(ClcError::BadType)),
    };
    smc_dbg!(
        "server: declining the client's CLC, reason {:#010x}",
        reason.code()
    );
    let decline = Decline::new(version, [0; SYSTEMID_LEN], reason);
    let mut out = [0u8; DECLINE_LEN_V2];
    let sent = match decline.encode(&mut out).ok().and_then(|n| out.get(..n)) {
        Some(bytes) => clc.send_all(bytes),
        None => Err(EINVAL.into()),
    };
    if sent.is_err() {
        return ServerOutcome::Abort(ClcError::Truncated);
    }
    ServerOutcome::Fallback {
        reason,
        peer_diagnosis: 0,
        not_clc: false,
        error,
    }
}

