// SPDX-License-Identifier: GPL-2.0

//! The connect side of an SMC socket: `connect()`, the CLC handshake after
//! TCP's, the work item that finishes a non-blocking connect, and the waits
//! of calls that come while it runs.

use super::sock::{clc, enter_smcr, switch_to_fallback, Guard, SmcSock, SmcState, Sock, CONNECT_WORK};
use crate::clc::peers::PeerMemory;
use crate::clc::{client_handshake, nothing_to_propose, ClientOutcome};
use crate::smcr::conn::Conn;
use crate::smcr::settle;
use crate::stats::{count, Event, Side};
use crate::sys::args::SockAddr;
use crate::sys::bindings as b;
use crate::sys::errno::{EAGAIN, EALREADY, EINPROGRESS, EINVAL, EISCONN, ENOMEM};
use crate::sys::net::Net;
use crate::sys::print::smc_dbg;
use crate::sys::sock::SmcSk;
use crate::sys::socket::{with_user_socket, FileRedirect};
use crate::sys::tcp::KernelSocket;
use crate::wire::clc::DeclineReason;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// `connect(2)` on an SMC socket.
pub(super) fn connect(sock: &Sock<'_>, addr: SockAddr<'_>, flags: i32) -> Result {
    let mut st = sock.sk().lock();
    match st.state {
        SmcState::Init => {}
        SmcState::Connecting(_) if flags & b::O_NONBLOCK as i32 != 0 => return Err(EALREADY.into()),
        // A blocking connect() on a connecting socket waits for the
        // outcome up to `SO_SNDTIMEO` (then `EALREADY`), as TCP's does;
        // TCP then reports it (0 or the error).
        SmcState::Connecting(_) => {
            drop(st);
            let sk = sock.sk();
            return match wait_connect_done(sk, sk.sndtimeo(false)) {
                Err(e) if e == EAGAIN => Err(EALREADY.into()),
                Err(e) => Err(e),
                Ok(()) => clc(sock).connect(addr, flags),
            };
        }
        SmcState::Fallback(_) => return Err(EISCONN.into()),
        // A non-blocking connect that made it: the next connect() says so
        // once, as TCP's does.
        SmcState::Smcr {
            ref mut reported, ..
        } => {
            if *reported {
                return Err(EISCONN.into());
            }
            *reported = true;
            return Ok(());
        }
        SmcState::Listen(_) | SmcState::Closed => return Err(EINVAL.into()),
    }
    let net = sock.sk().net();
    // A peer known to echo the option without speaking CLC gets plain
    // TCP: it cannot do SMC. So does every peer when we have nothing to
    // propose: no extra round trip for a connection that cannot use SMC.
    // A too short address or a wrong family is TCP's to reject.
    let reason = if NON_CLC_PEERS.contains(net, &addr) {
        smc_dbg!("client: peer known not to speak CLC, plain TCP");
        DeclineReason::PeerNoSmc
    } else if nothing_to_propose(net, &addr) {
        smc_dbg!("client: no SMC device or no UEID, plain TCP without the SMC option");
        DeclineReason::NoSmcDevice
    } else {
        return connect_offering_smc(sock, &mut st, addr, flags);
    };
    let clc = clc(sock);
    // A connect that offered SMC before and failed left the option on.
    clc.set_syn_smc(false);
    match clc.connect(addr, flags) {
        Ok(()) => {
            switch_to_fallback(sock, &mut st, Side::Client, reason);
            Ok(())
        }
        // Non-blocking: the TCP handshake goes on; from now on the file is
        // TCP's, so poll and SO_ERROR report its completion exactly.
        Err(e) if e == EINPROGRESS => {
            switch_to_fallback(sock, &mut st, Side::Client, reason);
            Err(e)
        }
        Err(e) => Err(e),
    }
}

/// The rest of a non-blocking connect: wait for TCP, run the CLC
/// handshake, fall back, and let waiters see the outcome. The waits run
/// without the socket lock, as TCP's do, so that other calls on the
/// socket (a second `connect()`, `close()`) are not held up.
pub(super) fn finish_connect(sk: &SmcSk<SmcSock>) {
    let SmcState::Connecting(mut saved) = sk.lock().state else {
        return;
    };
    let clc = &sk.state().clcsock;
    // Waits for the TCP handshake the connect() call started, however
    // long TCP takes (`close` aborts it).
    let result = loop {
        match clc.connect(saved.addr(), 0) {
            Err(e) if e == EISCONN => break Ok(()),
            // `SO_SNDTIMEO` ended one wait; TCP is still at it.
            Err(e) if e == EALREADY || e == EINPROGRESS => continue,
            other => break other,
        }
    }
    .and_then(|()| clc_connect(sk.net(), clc, saved.addr(), 0));
    let mut st = sk.lock();
    let mut result = Some(result);
    if matches!(st.state, SmcState::Connecting(_)) {
        let applied = with_user_socket(&mut st, |sock, st| match result.take() {
            None => {}
            Some(Ok(Connected::Fallback(reason, peer_diagnosis))) => {
                st.peer_diagnosis = peer_diagnosis;
                switch_to_fallback(sock, st, Side::Client, reason);
            }
            Some(Ok(Connected::Smcr(conn))) => enter_smcr(sock, st, Side::Client, conn),
            Some(Err(e)) => {
                // The waits consumed the socket error, which the
                // application must see for itself: put it back. From
                // now on the file is TCP's, which reports it.
                smc_dbg!("connect: failed with {:?}, TCP reports it", e);
                clc.restore_error(e);
                st.state = SmcState::Init;
                FileRedirect::install(sock, st);
            }
        });
        if applied.is_none() {
            // Closed meanwhile (release aborted the clcsock).
            st.state = SmcState::Closed;
        }
    }
    if let Some(Ok(Connected::Smcr(conn))) = result {
        // Nobody took the connection its handshake made: the peer's end
        // is aborted with it.
        settle::abandon(&conn);
    }
    sk.state().connecting.store(false, Ordering::Release);
    drop(st);
    clc.wake_waiters();
}

/// Peers that echo the SMC option without speaking CLC, for all namespaces.
static NON_CLC_PEERS: PeerMemory = PeerMemory::new();
/// Peers that answered our proposal in CLC lately: a silence of theirs is
/// load (a server's handshakes queue up), and does not put them among
/// [`NON_CLC_PEERS`], which would take SMC away from every later
/// connection to them for ten minutes.
static CLC_PEERS: PeerMemory = PeerMemory::new();

/// A connect that offers SMC: TCP handshake with the SMC option, then the
/// CLC handshake. A peer that echoed the option without speaking CLC gets the
/// connection made again without the option and is remembered, so that later
/// connections skip SMC. A blocking connect does all this within the call; a
/// non-blocking one starts the TCP handshake and leaves the rest to the
/// socket's work item; until it is done, poll reports nothing and sends and
/// receives would block.
fn connect_offering_smc(
    sock: &Sock<'_>,
    st: &mut Guard<'_>,
    addr: SockAddr<'_>,
    flags: i32,
) -> Result {
    let clc = clc(sock);
    clc.set_syn_smc(true);
    match clc.connect(addr, flags) {
        // Only a blocking call gets here connected.
        Ok(()) if flags & b::O_NONBLOCK as i32 == 0 => {
            match clc_connect(sock.sk().net(), clc, addr, flags)? {
                Connected::Fallback(reason, peer_diagnosis) => {
                    st.peer_diagnosis = peer_diagnosis;
                    switch_to_fallback(sock, st, Side::Client, reason);
                }
                Connected::Smcr(conn) => enter_smcr(sock, st, Side::Client, conn),
            }
            return Ok(());
        }
        Ok(()) => {}
        // Non-blocking, or blocking past `SO_SNDTIMEO`: TCP goes on in the
        // background, and so do we.
        Err(e) if e == EINPROGRESS => {}
        Err(e) => return Err(e),
    }
    let sk = sock.sk();
    st.state = SmcState::Connecting(addr.save());
    sk.state().connecting.store(true, Ordering::Release);
    if !sk.queue_work::<CONNECT_WORK>() {
        // Not queued (no queue): give up on this connect like TCP would.
        sk.state().connecting.store(false, Ordering::Release);
        st.state = SmcState::Init;
        clc.abort();
        return Err(ENOMEM.into());
    }
    Err(EINPROGRESS.into())
}

/// Waits for a non-blocking connect's handshakes before a send or receive,
/// up to the send or receive timeout (`sending`); `EAGAIN` for a
/// non-blocking call or after the timeout, as TCP's wait for a connection.
pub(super) fn wait_connected(sock: &Sock<'_>, flags: u32, sending: bool) -> Result {
    let sk = sock.sk();
    if !sk.state().connecting.load(Ordering::Acquire) {
        return Ok(());
    }
    let nonblock = flags & b::MSG_DONTWAIT != 0;
    let timeo = if sending {
        sk.sndtimeo(nonblock)
    } else {
        sk.rcvtimeo(nonblock)
    };
    wait_connect_done(sk, timeo)
}

/// What a connect ends in.
enum Connected {
    /// TCP, for this reason, with what the peer's decline said.
    Fallback(DeclineReason, u32),
    /// SMC-R over this connection.
    Smcr(Arc<Conn>),
}

/// The part of an SMC connect after the TCP handshake, on the clcsock only
/// (no socket lock needed): CLC, and for a peer that echoed the option
/// without speaking CLC a new connection without it.
fn clc_connect(net: &Net, clc: &KernelSocket, addr: SockAddr<'_>, flags: i32) -> Result<Connected> {
    // Made again without the option: the peer's application may have our
    // proposal as its first bytes.
    let reconnect = || -> Result<Connected> {
        count(net, Side::Client, Event::HandshakeError);
        clc.disconnect()?;
        clc.set_syn_smc(false);
        clc.connect(addr, flags)?;
        Ok(Connected::Fallback(DeclineReason::PeerNoSmc, 0))
    };
    match client_handshake(net, clc) {
        Ok(ClientOutcome::Smcr(conn)) => {
            CLC_PEERS.insert(net, &addr);
            Ok(Connected::Smcr(conn))
        }
        Ok(ClientOutcome::PeerNoSmc) => Ok(Connected::Fallback(DeclineReason::PeerNoSmc, 0)),
        Ok(ClientOutcome::Declined {
            reason,
            peer_diagnosis,
        }) => {
            CLC_PEERS.insert(net, &addr);
            Ok(Connected::Fallback(reason, peer_diagnosis))
        }
        Ok(ClientOutcome::NotClc(e)) => {
            smc_dbg!(
                "client: peer echoed the SMC option without CLC ({:?}), reconnecting",
                e
            );
            count(net, Side::Client, Event::NonClcPeer);
            NON_CLC_PEERS.insert(net, &addr);
            reconnect()
        }
        Ok(ClientOutcome::Silent) if CLC_PEERS.contains(net, &addr) => {
            smc_dbg!("client: no CLC answer in time from a peer that speaks CLC, reconnecting");
            reconnect()
        }
        Ok(ClientOutcome::Silent) => {
            smc_dbg!("client: peer echoed the SMC option and stayed silent, reconnecting");
            count(net, Side::Client, Event::NonClcPeer);
            NON_CLC_PEERS.insert(net, &addr);
            reconnect()
        }
        // A signal or a reset in the middle of the handshake: the stream may
        // hold half a CLC message, so this connection cannot be used. Drop
        // it and stay unconnected: a restarted or repeated connect() starts
        // afresh, as it can after an interrupted TCP connect.
        Err(e) => {
            smc_dbg!("client: CLC handshake failed with {:?}", e);
            count(net, Side::Client, Event::HandshakeError);
            let _ = clc.disconnect();
            Err(e)
        }
    }
}

/// Waits, for a call on a socket whose non-blocking connect is still in its
/// work item, until the work item is done: up to `timeo` jiffies
/// (`EAGAIN` after), interruptible like TCP's waits for a connection.
fn wait_connect_done(sk: &SmcSk<SmcSock>, mut timeo: core::ffi::c_long) -> Result {
    let state = sk.state();
    let done = || !state.connecting.load(Ordering::Acquire);
    let mut st = sk.lock();
    while !done() {
        if timeo == 0 {
            return Err(EAGAIN.into());
        }
        st.wait_exclusive(&state.clcsock, &mut timeo, done)?;
    }
    Ok(())
}
