// SPDX-License-Identifier: GPL-2.0

//! How an SMC connection closes, as pure logic: states, events, and for
//! each (state, event) the next state and what to do, following Linux 6.12
//! step by step.
//!
//! Each side tells the other, in the connection state flags of a CDC
//! message, that it is done writing (a half close, `shutdown(SHUT_WR)`),
//! that it closed the connection, or that it aborted it. Closing sends
//! "closed" when everything received was read and "abort" when unread data
//! is left. The side that closes first (active close) waits in the
//! PEERCLOSEWAIT states for the peer's close; the side that learns of the
//! peer's close first (passive close) waits in the APPCLOSEWAIT states for
//! its application to close. When the local side loses the connection
//! (its link group goes down, it is killed), it sends an abort where it
//! still can and settles in CLOSED through PEERABORTWAIT; an abort from
//! the peer leads through PROCESSABORT, where the local close answers it.
//!
//! Before the close or half close goes out, the data already in the send
//! buffer should reach the peer: the machine asks the caller to wait
//! ([`CloseActions::wait_tx`]) and finishes the close when the wait ends
//! ([`CloseEvent::TxFlushed`], which the caller also delivers when its
//! linger time runs out, or at once when it does not linger), or when an
//! abort ends it.
//!
//! [`on_event`] is total: an event that means nothing in a state leaves
//! state and context as they are, and never panics.

mod step;

use step::Step;

/// States of an SMC socket, numbered as Linux numbers them (`smcss` and
/// `sock_diag` report these numbers).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum SmcState {
    /// Connected.
    Active = 1,
    /// Created, connecting, or handshaking.
    Init = 2,
    /// Closed.
    Closed = 7,
    /// Listening.
    Listen = 10,
    /// We closed (or shut down writing); waiting for the peer's close.
    PeerCloseWait1 = 20,
    /// We closed or shut down writing and the peer is done writing;
    /// waiting for its close.
    PeerCloseWait2 = 21,
    /// The peer is done writing or closed; waiting for our application.
    AppCloseWait1 = 22,
    /// As [`SmcState::AppCloseWait1`], and we are done writing too.
    AppCloseWait2 = 23,
    /// We shut down writing and the peer closed; waiting for our close.
    AppFinCloseWait = 24,
    /// The peer shut down writing and we closed; waiting for its close.
    PeerFinCloseWait = 25,
    /// We aborted; settling (pending close work cancelled).
    PeerAbortWait = 26,
    /// The peer aborted; waiting for our close to answer.
    ProcessAbort = 27,
}

impl SmcState {
    /// Every state.
    pub const ALL: [SmcState; 12] = [
        SmcState::Active,
        SmcState::Init,
        SmcState::Closed,
        SmcState::Listen,
        SmcState::PeerCloseWait1,
        SmcState::PeerCloseWait2,
        SmcState::AppCloseWait1,
        SmcState::AppCloseWait2,
        SmcState::AppFinCloseWait,
        SmcState::PeerFinCloseWait,
        SmcState::PeerAbortWait,
        SmcState::ProcessAbort,
    ];

    /// The state with number `v`.
    pub fn from_u8(v: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| *s as u8 == v)
    }

    /// `shutdown()` is allowed: the connection is up or half closed.
    fn may_shut_down(self) -> bool {
        matches!(
            self,
            SmcState::Active
                | SmcState::PeerCloseWait1
                | SmcState::PeerCloseWait2
                | SmcState::AppCloseWait1
                | SmcState::AppCloseWait2
                | SmcState::AppFinCloseWait
        )
    }
}

/// Which way `shutdown()` closes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Shutdown {
    /// `SHUT_RD`.
    Read,
    /// `SHUT_WR`.
    Write,
    /// `SHUT_RDWR`.
    ReadWrite,
}

/// What happens to a connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum CloseEvent {
    /// The handshake succeeded (from [`SmcState::Init`]).
    Connected,
    /// `listen()` (from [`SmcState::Init`]).
    Listen,
    /// The application closed the socket (`close()`, release).
    AppClose,
    /// The application called `shutdown()`.
    AppShutdown(Shutdown),
    /// A CDC message from the peer said it is done writing.
    PeerDoneWriting,
    /// A CDC message from the peer said it closed the connection.
    PeerConnClosed,
    /// A CDC message from the peer said it aborted the connection.
    PeerConnAbort,
    /// We lost the connection: link group down, connection killed.
    LocalAbort,
    /// After [`CloseActions::cancel_close_work`]: no peer event is being
    /// handled any more.
    AbortSettled,
    /// The send buffer has nothing left to send, or the wait for it timed
    /// out (see [`CloseActions::wait_tx`]).
    TxFlushed,
}

/// A close or shutdown waiting for the send buffer to empty, strongest
/// last.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum PendingClose {
    /// `shutdown(SHUT_WR)`.
    ShutdownWrite,
    /// `shutdown(SHUT_RDWR)`.
    ShutdownReadWrite,
    /// `close()`.
    Close,
}

/// The connection state flag a CDC message carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum CloseFlag {
    /// `peer_done_writing`.
    DoneWriting,
    /// `peer_conn_closed`.
    ConnClosed,
    /// `peer_conn_abort`.
    Abort,
}

/// The error the socket reports from now on (`sk_err`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SockError {
    /// `ECONNRESET`: the peer aborted.
    ConnReset,
    /// `ECONNABORTED`: we lost the connection.
    ConnAborted,
}

/// What the machine remembers besides the state, and two facts the caller
/// keeps current before each event.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct CloseCtx {
    /// Caller: received data the application has not read yet.
    pub unread_data: bool,
    /// Caller: data in the send buffer not yet sent to the peer.
    pub tx_pending: bool,
    /// We sent (or flagged for sending) "done writing".
    pub sent_done_writing: bool,
    /// We sent (or flagged) "closed" or "abort".
    pub sent_close: bool,
    /// The peer is done writing.
    pub peer_done_writing: bool,
    /// The peer closed or aborted.
    pub peer_closed: bool,
    /// The peer aborted.
    pub peer_aborted: bool,
    /// The connection was lost locally; nothing can be sent any more.
    pub killed: bool,
    /// The application closed the socket, or it was aborted locally.
    pub dead: bool,
    /// A local abort is settling ([`CloseActions::cancel_close_work`]).
    pub aborting: bool,
    /// The abort came from a state where settling frees the connection.
    pub abort_frees: bool,
    /// A close or shutdown waiting for the send buffer.
    pub waiting: Option<PendingClose>,
}

/// What to do for a transition. Several can apply at once; do them in
/// the order of the fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct CloseActions {
    /// `shutdown()` in a state where it is not allowed: fail with
    /// `ENOTCONN`, nothing else.
    pub not_connected: bool,
    /// Report this error on the socket from now on.
    pub sock_error: Option<SockError>,
    /// Abort the TCP connection (`tcp_abort`).
    pub clcsock_abort: bool,
    /// Send a CDC message with this flag (the flag stays set in every
    /// later message).
    pub send: Option<CloseFlag>,
    /// Wait until the send buffer is empty or the linger time is over,
    /// then deliver [`CloseEvent::TxFlushed`].
    pub wait_tx: bool,
    /// Cancel the pending close work (peer events being handled), then
    /// deliver [`CloseEvent::AbortSettled`].
    pub cancel_close_work: bool,
    /// Close the connections not accepted yet, stop taking new ones.
    pub stop_listening: bool,
    /// Shut down the TCP connection this way.
    pub clcsock_shutdown: Option<Shutdown>,
    /// Nothing more will be read: reads return end of file once the
    /// buffer is empty.
    pub rcv_shutdown: bool,
    /// Wake readers and writers.
    pub wake_io: bool,
    /// The state changed: wake who waits on it.
    pub wake_state: bool,
    /// Free the connection: unregister it, return its buffers. The peer
    /// can no longer write into the RMB.
    pub free_conn: bool,
    /// Release the TCP socket.
    pub release_clcsock: bool,
}

/// The next state, context and actions.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Transition {
    /// The new state.
    pub state: SmcState,
    /// The new context.
    pub ctx: CloseCtx,
    /// What to do.
    pub actions: CloseActions,
}

/// The transition for `event` in `state` with context `ctx`.
pub fn on_event(state: SmcState, event: CloseEvent, ctx: CloseCtx) -> Transition {
    let mut s = Step {
        state,
        ctx,
        actions: CloseActions::default(),
    };
    match event {
        CloseEvent::Connected if state == SmcState::Init => s.state = SmcState::Active,
        CloseEvent::Listen if matches!(state, SmcState::Init | SmcState::Listen) => {
            s.state = SmcState::Listen
        }
        CloseEvent::Connected | CloseEvent::Listen => {}
        CloseEvent::AppClose => s.request(PendingClose::Close),
        CloseEvent::AppShutdown(_) if !state.may_shut_down() => s.actions.not_connected = true,
        CloseEvent::AppShutdown(Shutdown::Read) => {
            s.actions.rcv_shutdown = true;
            s.actions.clcsock_shutdown = Some(Shutdown::Read);
        }
        CloseEvent::AppShutdown(Shutdown::Write) => s.request(PendingClose::ShutdownWrite),
        CloseEvent::AppShutdown(Shutdown::ReadWrite) => s.request(PendingClose::ShutdownReadWrite),
        CloseEvent::PeerDoneWriting | CloseEvent::PeerConnClosed | CloseEvent::PeerConnAbort => {
            s.peer_event(event)
        }
        CloseEvent::LocalAbort => s.local_abort(),
        CloseEvent::AbortSettled => s.abort_settled(),
        CloseEvent::TxFlushed => {}
    }
    s.end_wait_if_over(event == CloseEvent::TxFlushed);
    if s.state != state {
        s.actions.wake_state = true;
    }
    Transition {
        state: s.state,
        ctx: s.ctx,
        actions: s.actions,
    }
}

/// A connection's close state and what the machine remembers, moved by
/// [`CloseMachine::step`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct CloseMachine {
    /// The state (the socket's `sk_state` for sock_diag).
    pub state: SmcState,
    /// The context.
    pub ctx: CloseCtx,
}

impl CloseMachine {
    /// An established connection.
    pub fn active() -> Self {
        CloseMachine {
            state: SmcState::Active,
            ctx: CloseCtx::default(),
        }
    }

    /// Takes `event`, with the caller's two facts (unread data, data not
    /// yet sent) current; returns what to do.
    pub fn step(&mut self, event: CloseEvent, unread_data: bool, tx_pending: bool) -> CloseActions {
        self.ctx.unread_data = unread_data;
        self.ctx.tx_pending = tx_pending;
        let t = on_event(self.state, event, self.ctx);
        self.state = t.state;
        self.ctx = t.ctx;
        t.actions
    }

    /// No more bytes may be queued: we are done writing, closed, or a
    /// shutdown for writing waits for the send buffer.
    pub fn write_closed(&self) -> bool {
        self.ctx.sent_done_writing || self.ctx.sent_close || self.ctx.waiting.is_some()
    }

    /// A close or shutdown waits for the send buffer: only then does
    /// [`CloseEvent::TxFlushed`] change anything (a caller that emptied
    /// the send buffer need not deliver it otherwise).
    pub fn awaits_flush(&self) -> bool {
        self.ctx.waiting.is_some()
    }

    /// Closed, by the socket and the peer or by an abort that settled: the
    /// peer can no longer write into the buffers, which may be reused once
    /// the socket let go of the connection.
    pub fn closed(&self) -> bool {
        self.state == SmcState::Closed && !self.ctx.aborting
    }
}

#[cfg(test)]
mod tests;
