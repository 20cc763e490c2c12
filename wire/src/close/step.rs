// SPDX-License-Identifier: GPL-2.0

//! The transitions of the close state machine, one method per kind of
//! event, building a [`super::Transition`].

use super::{
    CloseActions, CloseCtx, CloseEvent, CloseFlag, PendingClose, Shutdown, SmcState, SockError,
};

/// Where a transition is being built.
pub(super) struct Step {
    pub(super) state: SmcState,
    pub(super) ctx: CloseCtx,
    pub(super) actions: CloseActions,
}

impl Step {
    /// Flags `flag` and sends it, unless the connection is lost.
    fn send(&mut self, flag: CloseFlag) {
        match flag {
            CloseFlag::DoneWriting => self.ctx.sent_done_writing = true,
            CloseFlag::ConnClosed | CloseFlag::Abort => self.ctx.sent_close = true,
        }
        if !self.ctx.killed {
            self.actions.send = Some(flag);
        }
    }

    /// The final close message: abort when data is left unread.
    fn send_final(&mut self) {
        let flag = if self.ctx.unread_data {
            CloseFlag::Abort
        } else {
            CloseFlag::ConnClosed
        };
        self.send(flag);
    }

    /// Closes the final message after a half close that was not followed
    /// by one yet.
    fn send_final_after_half_close(&mut self) {
        if self.ctx.sent_done_writing && !self.ctx.sent_close {
            self.send_final();
        }
    }

    /// Whether `op` must first wait for the send buffer to empty.
    fn must_wait(&self, op: PendingClose) -> bool {
        if !self.ctx.tx_pending || self.ctx.killed || self.ctx.peer_aborted {
            return false;
        }
        match (self.state, op) {
            (SmcState::Active, _) => true,
            (SmcState::AppCloseWait1, _) => !self.ctx.peer_closed,
            (SmcState::AppCloseWait2, PendingClose::Close | PendingClose::ShutdownReadWrite) => {
                !self.ctx.peer_closed
            }
            _ => false,
        }
    }

    /// A close or shutdown: waits first when it must, else carries it out.
    pub(super) fn request(&mut self, op: PendingClose) {
        if self.ctx.waiting.is_some() || self.must_wait(op) {
            self.ctx.waiting = self.ctx.waiting.max(Some(op));
            self.actions.wait_tx = true;
            return;
        }
        self.finish(op);
    }

    /// Carries out a close or shutdown whose wait is over.
    fn finish(&mut self, op: PendingClose) {
        match op {
            PendingClose::ShutdownWrite => {
                self.shutdown_write();
                self.actions.clcsock_shutdown = Some(Shutdown::Write);
            }
            PendingClose::ShutdownReadWrite => {
                self.close();
                self.actions.clcsock_shutdown = Some(Shutdown::ReadWrite);
            }
            PendingClose::Close => {
                self.close();
                self.ctx.dead = true;
                if self.state == SmcState::Closed {
                    self.actions.free_conn = true;
                    self.actions.release_clcsock = true;
                }
            }
        }
    }

    /// Ends a wait that can end now: the send buffer is empty or the
    /// connection is lost or reset. Not while an abort settles.
    pub(super) fn end_wait_if_over(&mut self, flushed: bool) {
        let over = flushed || self.ctx.killed || self.ctx.peer_aborted;
        if !over || self.ctx.aborting {
            return;
        }
        if let Some(op) = self.ctx.waiting.take() {
            self.finish(op);
        }
    }

    /// The close itself (`close()` and `SHUT_RDWR`).
    pub(super) fn close(&mut self) {
        self.state = match self.state {
            SmcState::Init | SmcState::PeerAbortWait | SmcState::Closed => SmcState::Closed,
            SmcState::Listen => {
                self.actions.wake_state = true;
                self.actions.stop_listening = true;
                self.actions.clcsock_shutdown = Some(Shutdown::ReadWrite);
                SmcState::Closed
            }
            SmcState::Active => {
                self.send_final();
                // Shutting the TCP connection down first keeps the peer
                // out of TIME_WAIT.
                self.actions.clcsock_shutdown = Some(Shutdown::ReadWrite);
                SmcState::PeerCloseWait1
            }
            SmcState::AppFinCloseWait => {
                self.send_final_after_half_close();
                SmcState::Closed
            }
            SmcState::AppCloseWait1 | SmcState::AppCloseWait2 => {
                self.send_final();
                if self.ctx.peer_closed {
                    SmcState::Closed
                } else {
                    SmcState::PeerFinCloseWait
                }
            }
            s @ (SmcState::PeerCloseWait1 | SmcState::PeerCloseWait2) => {
                self.send_final_after_half_close();
                s
            }
            SmcState::PeerFinCloseWait => SmcState::PeerFinCloseWait,
            SmcState::ProcessAbort => {
                self.send(CloseFlag::Abort);
                SmcState::Closed
            }
        };
    }

    /// `shutdown(SHUT_WR)`: "done writing" from an open connection.
    pub(super) fn shutdown_write(&mut self) {
        self.state = match self.state {
            SmcState::Active => {
                self.send(CloseFlag::DoneWriting);
                SmcState::PeerCloseWait1
            }
            SmcState::AppCloseWait1 => {
                self.send(CloseFlag::DoneWriting);
                SmcState::AppCloseWait2
            }
            s => s,
        };
    }

    /// The peer is done writing or closed (flags already in the context).
    fn peer_closing(&mut self) {
        self.state = match self.state {
            SmcState::Init | SmcState::Active => SmcState::AppCloseWait1,
            SmcState::PeerCloseWait1 | SmcState::PeerCloseWait2 => {
                let s = if self.ctx.peer_done_writing {
                    SmcState::PeerCloseWait2
                } else {
                    self.state
                };
                if !self.ctx.peer_closed {
                    s
                } else if self.ctx.dead && self.ctx.sent_close {
                    SmcState::Closed
                } else {
                    SmcState::AppFinCloseWait
                }
            }
            SmcState::PeerFinCloseWait if self.ctx.peer_closed => SmcState::Closed,
            s => s,
        };
    }

    /// The peer aborted (flags already in the context).
    fn peer_abort(&mut self) {
        self.state = match self.state {
            SmcState::Init
            | SmcState::Active
            | SmcState::AppCloseWait1
            | SmcState::AppFinCloseWait => SmcState::ProcessAbort,
            SmcState::PeerCloseWait1 | SmcState::PeerCloseWait2 => {
                if self.ctx.sent_done_writing && !self.ctx.sent_close {
                    SmcState::ProcessAbort
                } else {
                    SmcState::Closed
                }
            }
            SmcState::AppCloseWait2 | SmcState::PeerFinCloseWait | SmcState::PeerAbortWait => {
                SmcState::Closed
            }
            s => s,
        };
    }

    /// Any CDC close flag from the peer.
    pub(super) fn peer_event(&mut self, event: CloseEvent) {
        let before = self.state;
        self.actions.rcv_shutdown = true;
        match event {
            CloseEvent::PeerDoneWriting => self.ctx.peer_done_writing = true,
            CloseEvent::PeerConnClosed => self.ctx.peer_closed = true,
            _ => {
                // Every later message of ours carries the abort flag too.
                self.ctx.peer_closed = true;
                self.ctx.peer_aborted = true;
                self.ctx.sent_close = true;
                self.actions.sock_error = Some(SockError::ConnReset);
            }
        }
        if event == CloseEvent::PeerConnAbort {
            self.peer_abort();
        } else {
            self.peer_closing();
        }
        self.actions.wake_io = true;
        if self.state != before && self.state == SmcState::Closed && self.ctx.dead {
            self.actions.free_conn = true;
            self.actions.release_clcsock = true;
        }
    }

    /// We lost the connection.
    pub(super) fn local_abort(&mut self) {
        let open = !matches!(
            self.state,
            SmcState::Listen | SmcState::Closed | SmcState::PeerAbortWait
        );
        if !open {
            return;
        }
        if !self.ctx.killed {
            self.send(CloseFlag::Abort);
        }
        self.ctx.killed = true;
        self.actions.wake_io = true;
        if self.state == SmcState::Init {
            return;
        }
        self.actions.sock_error = Some(SockError::ConnAborted);
        self.actions.clcsock_abort = true;
        self.ctx.abort_frees = !matches!(
            self.state,
            SmcState::Active | SmcState::AppCloseWait1 | SmcState::AppCloseWait2
        );
        self.state = SmcState::PeerAbortWait;
        self.ctx.aborting = true;
        self.actions.cancel_close_work = true;
    }

    /// The abort settled: CLOSED, freeing what the original state allows,
    /// unless a peer abort or the application's close got there first.
    pub(super) fn abort_settled(&mut self) {
        if !self.ctx.aborting {
            return;
        }
        self.ctx.aborting = false;
        self.ctx.dead = true;
        self.actions.wake_state = true;
        if self.state != SmcState::PeerAbortWait {
            return;
        }
        self.state = SmcState::Closed;
        if self.ctx.abort_frees {
            self.actions.free_conn = true;
            self.actions.release_clcsock = true;
        }
    }
}
