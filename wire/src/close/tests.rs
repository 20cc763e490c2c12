// SPDX-License-Identifier: GPL-2.0

//! Tests of the close state machine: the usual ways to close, aborts from
//! either side, and an exhaustive walk of every reachable state and
//! context.

extern crate std;

use super::*;
use std::collections::{HashSet, VecDeque};
use std::vec::Vec;

use CloseEvent as E;
use SmcState as S;

const EVENTS: [CloseEvent; 12] = [
    E::Connected,
    E::Listen,
    E::AppClose,
    E::AppShutdown(Shutdown::Read),
    E::AppShutdown(Shutdown::Write),
    E::AppShutdown(Shutdown::ReadWrite),
    E::PeerDoneWriting,
    E::PeerConnClosed,
    E::PeerConnAbort,
    E::LocalAbort,
    E::AbortSettled,
    E::TxFlushed,
];

/// Runs `events` from `state`, returning the last transition.
fn run(state: SmcState, ctx: CloseCtx, events: &[CloseEvent]) -> Transition {
    let mut t = Transition {
        state,
        ctx,
        actions: CloseActions::default(),
    };
    for e in events {
        t = on_event(t.state, *e, t.ctx);
    }
    t
}

#[test]
fn numbers_are_upstreams() {
    let want = [
        (S::Active, 1),
        (S::Init, 2),
        (S::Closed, 7),
        (S::Listen, 10),
        (S::PeerCloseWait1, 20),
        (S::PeerCloseWait2, 21),
        (S::AppCloseWait1, 22),
        (S::AppCloseWait2, 23),
        (S::AppFinCloseWait, 24),
        (S::PeerFinCloseWait, 25),
        (S::PeerAbortWait, 26),
        (S::ProcessAbort, 27),
    ];
    for (s, n) in want {
        assert_eq!(s as u8, n);
        assert_eq!(SmcState::from_u8(n), Some(s));
    }
    assert_eq!(SmcState::from_u8(0), None);
    assert_eq!(SmcState::from_u8(3), None);
}

#[test]
fn active_close_then_peer_closes() {
    let t = run(S::Init, CloseCtx::default(), &[E::Connected, E::AppClose]);
    assert_eq!(t.state, S::PeerCloseWait1);
    assert_eq!(t.actions.send, Some(CloseFlag::ConnClosed));
    assert_eq!(t.actions.clcsock_shutdown, Some(Shutdown::ReadWrite));
    assert!(t.actions.wake_state && !t.actions.free_conn);
    assert!(t.ctx.dead && t.ctx.sent_close);
    let t = on_event(t.state, E::PeerConnClosed, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert!(t.actions.free_conn && t.actions.release_clcsock && t.actions.wake_io);
    assert_eq!(t.actions.send, None);
}

#[test]
fn passive_close() {
    let t = run(S::Active, CloseCtx::default(), &[E::PeerConnClosed]);
    assert_eq!(t.state, S::AppCloseWait1);
    assert!(t.actions.rcv_shutdown && t.actions.wake_io && t.actions.wake_state);
    assert!(!t.actions.free_conn);
    let t = on_event(t.state, E::AppClose, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert_eq!(t.actions.send, Some(CloseFlag::ConnClosed));
    assert!(t.actions.free_conn && t.actions.release_clcsock);
}

#[test]
fn closing_with_unread_data_aborts() {
    let ctx = CloseCtx {
        unread_data: true,
        ..CloseCtx::default()
    };
    let t = on_event(S::Active, E::AppClose, ctx);
    assert_eq!(t.actions.send, Some(CloseFlag::Abort));
    assert_eq!(t.state, S::PeerCloseWait1);
}

#[test]
fn both_sides_half_close() {
    let t = run(
        S::Active,
        CloseCtx::default(),
        &[E::AppShutdown(Shutdown::Write)],
    );
    assert_eq!(t.state, S::PeerCloseWait1);
    assert_eq!(t.actions.send, Some(CloseFlag::DoneWriting));
    assert_eq!(t.actions.clcsock_shutdown, Some(Shutdown::Write));
    let t = on_event(t.state, E::PeerDoneWriting, t.ctx);
    assert_eq!(t.state, S::PeerCloseWait2);
    let t = on_event(t.state, E::PeerConnClosed, t.ctx);
    // Not closed locally yet.
    assert_eq!(t.state, S::AppFinCloseWait);
    assert!(!t.actions.free_conn);
    let t = on_event(t.state, E::AppClose, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert_eq!(t.actions.send, Some(CloseFlag::ConnClosed));
    assert!(t.actions.free_conn);
}

#[test]
fn peer_half_closes_first() {
    let t = run(
        S::Active,
        CloseCtx::default(),
        &[E::PeerDoneWriting, E::AppShutdown(Shutdown::Write)],
    );
    assert_eq!(t.state, S::AppCloseWait2);
    assert_eq!(t.actions.send, Some(CloseFlag::DoneWriting));
    let t = on_event(t.state, E::AppClose, t.ctx);
    assert_eq!(t.state, S::PeerFinCloseWait);
    assert_eq!(t.actions.send, Some(CloseFlag::ConnClosed));
    let t = on_event(t.state, E::PeerConnClosed, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert!(t.actions.free_conn && t.actions.release_clcsock);
}

#[test]
fn close_waits_for_the_send_buffer() {
    let ctx = CloseCtx {
        tx_pending: true,
        ..CloseCtx::default()
    };
    let t = on_event(S::Active, E::AppClose, ctx);
    assert_eq!(t.state, S::Active);
    assert!(t.actions.wait_tx && t.actions.send.is_none());
    assert_eq!(t.ctx.waiting, Some(PendingClose::Close));
    assert!(!t.ctx.dead);
    // The peer closes meanwhile; the wait goes on.
    let t = on_event(t.state, E::PeerConnClosed, t.ctx);
    assert_eq!(t.state, S::AppCloseWait1);
    assert_eq!(t.ctx.waiting, Some(PendingClose::Close));
    let t = on_event(t.state, E::TxFlushed, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert_eq!(t.actions.send, Some(CloseFlag::ConnClosed));
    assert!(t.actions.free_conn && t.ctx.waiting.is_none());
    // A TxFlushed nobody waits for changes nothing.
    let again = on_event(t.state, E::TxFlushed, t.ctx);
    assert_eq!((again.state, again.ctx), (t.state, t.ctx));
    assert_eq!(again.actions, CloseActions::default());
}

#[test]
fn peer_abort_ends_the_wait() {
    let ctx = CloseCtx {
        tx_pending: true,
        ..CloseCtx::default()
    };
    let t = run(S::Active, ctx, &[E::AppClose, E::PeerConnAbort]);
    // The abort lands in PROCESSABORT; the close answers it at once.
    assert_eq!(t.state, S::Closed);
    assert_eq!(t.actions.send, Some(CloseFlag::Abort));
    assert_eq!(t.actions.sock_error, Some(SockError::ConnReset));
    assert!(t.actions.free_conn);
}

#[test]
fn peer_abort_then_close() {
    let t = run(S::Active, CloseCtx::default(), &[E::PeerConnAbort]);
    assert_eq!(t.state, S::ProcessAbort);
    assert_eq!(t.actions.sock_error, Some(SockError::ConnReset));
    assert!(t.ctx.sent_close);
    let t = on_event(t.state, E::AppClose, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert_eq!(t.actions.send, Some(CloseFlag::Abort));
    // After we closed, the peer's abort ends it.
    let t = run(
        S::Active,
        CloseCtx::default(),
        &[E::AppClose, E::PeerConnAbort],
    );
    assert_eq!(t.state, S::Closed);
    assert!(t.actions.free_conn);
}

#[test]
fn local_abort_settles_in_closed() {
    let t = on_event(S::Active, E::LocalAbort, CloseCtx::default());
    assert_eq!(t.state, S::PeerAbortWait);
    assert_eq!(t.actions.send, Some(CloseFlag::Abort));
    assert_eq!(t.actions.sock_error, Some(SockError::ConnAborted));
    assert!(t.actions.clcsock_abort && t.actions.cancel_close_work);
    let t = on_event(t.state, E::AbortSettled, t.ctx);
    assert_eq!(t.state, S::Closed);
    // The application still holds the socket: its close frees.
    assert!(!t.actions.free_conn);
    let t = on_event(t.state, E::AppClose, t.ctx);
    assert!(t.actions.free_conn && t.actions.release_clcsock);
    assert_eq!(t.actions.send, None);
    // After a local close, settling frees.
    let t = run(
        S::Active,
        CloseCtx::default(),
        &[E::AppClose, E::LocalAbort],
    );
    // A lost connection sends the abort flag whatever was sent before.
    assert_eq!(t.actions.send, Some(CloseFlag::Abort));
    let t = on_event(t.state, E::AbortSettled, t.ctx);
    assert_eq!(t.state, S::Closed);
    assert!(t.actions.free_conn && t.actions.release_clcsock);
}

#[test]
fn shutdown_needs_a_connection() {
    for s in [
        S::Init,
        S::Listen,
        S::Closed,
        S::PeerFinCloseWait,
        S::ProcessAbort,
    ] {
        for how in [Shutdown::Read, Shutdown::Write, Shutdown::ReadWrite] {
            let t = on_event(s, E::AppShutdown(how), CloseCtx::default());
            assert_eq!(t.state, s);
            assert_eq!(t.ctx, CloseCtx::default());
            assert_eq!(
                t.actions,
                CloseActions {
                    not_connected: true,
                    ..CloseActions::default()
                }
            );
        }
    }
    let t = on_event(
        S::Active,
        E::AppShutdown(Shutdown::Read),
        CloseCtx::default(),
    );
    assert_eq!(t.state, S::Active);
    assert_eq!(t.actions.clcsock_shutdown, Some(Shutdown::Read));
}

#[test]
fn closing_a_listener() {
    let t = run(S::Init, CloseCtx::default(), &[E::Listen, E::AppClose]);
    assert_eq!(t.state, S::Closed);
    assert!(t.actions.stop_listening && t.actions.free_conn);
    assert_eq!(t.actions.clcsock_shutdown, Some(Shutdown::ReadWrite));
}

/// The caller's facts, in every combination.
fn with_facts(ctx: CloseCtx) -> [CloseCtx; 4] {
    [(false, false), (false, true), (true, false), (true, true)].map(|(u, t)| CloseCtx {
        unread_data: u,
        tx_pending: t,
        ..ctx
    })
}

/// Every (state, context) reachable from a new socket.
fn reachable() -> HashSet<(SmcState, CloseCtx)> {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    let start = (S::Init, CloseCtx::default());
    seen.insert(start);
    queue.push_back(start);
    while let Some((s, ctx)) = queue.pop_front() {
        for c in with_facts(ctx) {
            for e in EVENTS {
                let t = on_event(s, e, c);
                if seen.insert((t.state, t.ctx)) {
                    queue.push_back((t.state, t.ctx));
                }
            }
        }
    }
    seen
}

#[test]
fn every_state_is_reachable() {
    let r = reachable();
    for s in SmcState::ALL {
        assert!(r.iter().any(|(q, _)| *q == s), "{s:?} unreachable");
    }
}

#[test]
fn closed_is_reachable_from_everywhere() {
    let r = reachable();
    // Walk backwards from CLOSED over the reachable transitions.
    let mut edges: Vec<((SmcState, CloseCtx), (SmcState, CloseCtx))> = Vec::new();
    for &(s, ctx) in &r {
        for c in with_facts(ctx) {
            for e in EVENTS {
                let t = on_event(s, e, c);
                edges.push(((s, ctx), (t.state, t.ctx)));
            }
        }
    }
    let mut good: HashSet<(SmcState, CloseCtx)> =
        r.iter().copied().filter(|(s, _)| *s == S::Closed).collect();
    loop {
        let before = good.len();
        for (from, to) in &edges {
            if good.contains(to) {
                good.insert(*from);
            }
        }
        if good.len() == before {
            break;
        }
    }
    for n in &r {
        assert!(good.contains(n), "CLOSED unreachable from {n:?}");
    }
}

/// Invariants of every transition from every reachable (state, context),
/// with every caller fact.
#[test]
fn transitions_keep_their_promises() {
    for (s, ctx) in reachable() {
        for c in with_facts(ctx) {
            for e in EVENTS {
                let t = on_event(s, e, c);
                let a = t.actions;
                // CLOSED is final.
                if s == S::Closed {
                    assert_eq!(t.state, S::Closed, "{e:?} left CLOSED");
                }
                // Freeing only in CLOSED, and only once the peer cannot
                // write any more: it closed, we lost the connection, or
                // there never was one.
                if a.free_conn {
                    assert_eq!(t.state, S::Closed);
                    assert!(a.release_clcsock);
                    assert!(
                        t.ctx.peer_closed
                            || t.ctx.killed
                            || !t.ctx.sent_close && !t.ctx.sent_done_writing
                            || s == S::Closed,
                        "{s:?} {e:?} {c:?}"
                    );
                }
                // Nothing is sent on a lost connection.
                if c.killed {
                    assert_eq!(a.send, None);
                }
                match a.send {
                    Some(CloseFlag::DoneWriting) => assert!(t.ctx.sent_done_writing),
                    Some(_) => assert!(t.ctx.sent_close),
                    None => {}
                }
                // A refused shutdown changes nothing.
                if a.not_connected {
                    assert_eq!((t.state, t.ctx), (s, c));
                }
                if t.state != s {
                    assert!(a.wake_state);
                }
                // Connected and Listen only from INIT (Listen again in LISTEN).
                if matches!(e, E::Connected | E::Listen) && s != S::Init {
                    assert_eq!((t.state, t.ctx), (s, c), "{e:?} in {s:?}");
                    assert_eq!(a, CloseActions::default());
                }
            }
        }
    }
}

/// Every state, event and context, reachable or not: a transition, no
/// panic.
#[test]
fn on_event_is_total() {
    let mut n = 0u32;
    for s in SmcState::ALL {
        for bits in 0u32..1 << 11 {
            for waiting in [
                None,
                Some(PendingClose::ShutdownWrite),
                Some(PendingClose::ShutdownReadWrite),
                Some(PendingClose::Close),
            ] {
                let b = |i: u32| bits & (1 << i) != 0;
                let ctx = CloseCtx {
                    unread_data: b(0),
                    tx_pending: b(1),
                    sent_done_writing: b(2),
                    sent_close: b(3),
                    peer_done_writing: b(4),
                    peer_closed: b(5),
                    peer_aborted: b(6),
                    killed: b(7),
                    dead: b(8),
                    aborting: b(9),
                    abort_frees: b(10),
                    waiting,
                };
                for e in EVENTS {
                    let t = on_event(s, e, ctx);
                    if ctx.killed {
                        assert_eq!(t.actions.send, None);
                    }
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 12 * 2048 * 4 * 12);
}

#[test]
fn machine_closes_both_ways() {
    let mut m = CloseMachine::active();
    assert!(!m.write_closed() && !m.closed());
    let a = m.step(E::AppClose, false, false);
    assert_eq!(a.send, Some(CloseFlag::ConnClosed));
    assert!(m.write_closed());
    assert!(!m.closed(), "the peer has not closed yet");
    m.step(E::PeerConnClosed, false, false);
    assert_eq!(m.state, S::Closed);
    assert!(m.closed());
}

#[test]
fn machine_abort_is_closed_only_once_settled() {
    let mut m = CloseMachine::active();
    let a = m.step(E::LocalAbort, false, true);
    assert!(a.cancel_close_work);
    assert!(!m.closed(), "an abort that has not settled keeps the buffers");
    m.step(E::AbortSettled, false, true);
    assert!(m.closed());
}

#[test]
fn tx_flushed_matters_only_while_a_close_awaits_it() {
    for (s, ctx) in reachable() {
        for c in with_facts(ctx) {
            let m = CloseMachine { state: s, ctx: c };
            if m.awaits_flush() {
                continue;
            }
            let t = on_event(s, E::TxFlushed, c);
            assert_eq!((t.state, t.ctx), (s, c), "{s:?} {c:?}");
            assert_eq!(t.actions, CloseActions::default(), "{s:?} {c:?}");
        }
    }
}
