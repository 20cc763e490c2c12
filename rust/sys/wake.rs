// SPDX-License-Identifier: GPL-2.0

//! Wake-ups on a socket's wait queue: who sleeps there (readers and
//! writers of the SMC socket in its calls, pollers, epoll) and which
//! wake-up reaches whom. A change of the connection's state wakes everyone
//! (`sk_state_change`); new bytes wake those waiting to read, room those
//! waiting to write, as TCP's `sk_data_ready` does: keyed, so that an
//! epoll waiting for other events is not woken, and synchronous (the
//! waker is about to wait itself, so the scheduler may keep the woken task
//! on this CPU).

use super::bindings;
use super::tcp::TcpSock;

/// `EPOLL*` bits (uapi/linux/eventpoll.h; bindgen cannot read their casts).
pub(crate) mod epoll {
    pub(crate) const EPOLLIN: u32 = 0x0001;
    pub(crate) const EPOLLPRI: u32 = 0x0002;
    pub(crate) const EPOLLOUT: u32 = 0x0004;
    pub(crate) const EPOLLERR: u32 = 0x0008;
    pub(crate) const EPOLLHUP: u32 = 0x0010;
    pub(crate) const EPOLLRDNORM: u32 = 0x0040;
    pub(crate) const EPOLLRDBAND: u32 = 0x0080;
    pub(crate) const EPOLLWRNORM: u32 = 0x0100;
    pub(crate) const EPOLLWRBAND: u32 = 0x0200;
    pub(crate) const EPOLLRDHUP: u32 = 0x2000;
}

/// Whom an event wakes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Wake {
    /// Poll events it is for.
    events: u32,
    /// Everyone, whatever they wait for.
    all: bool,
}

impl Wake {
    /// Nobody.
    pub(crate) const NONE: Wake = Wake {
        events: 0,
        all: false,
    };
    /// Those waiting for bytes or urgent data to read.
    pub(crate) const READERS: Wake = Wake {
        events: epoll::EPOLLIN | epoll::EPOLLPRI | epoll::EPOLLRDNORM | epoll::EPOLLRDBAND,
        all: false,
    };
    /// Those waiting for room to write.
    pub(crate) const WRITERS: Wake = Wake {
        events: epoll::EPOLLOUT | epoll::EPOLLWRNORM | epoll::EPOLLWRBAND,
        all: false,
    };
    /// Everyone: the connection's state changed.
    pub(crate) const ALL: Wake = Wake { events: 0, all: true };

    /// `self` and `other`.
    pub(crate) fn or(self, other: Wake) -> Wake {
        Wake {
            events: self.events | other.events,
            all: self.all || other.all,
        }
    }

    /// Whether it reaches those waiting to read.
    pub(crate) fn reaches_readers(self) -> bool {
        self.all || self.events & epoll::EPOLLIN != 0
    }

    /// Whether it reaches those waiting to write.
    pub(crate) fn reaches_writers(self) -> bool {
        self.all || self.events & epoll::EPOLLOUT != 0
    }

    /// `self`, and `w` when `cond`.
    pub(crate) fn or_if(self, cond: bool, w: Wake) -> Wake {
        if cond {
            self.or(w)
        } else {
            self
        }
    }
}

impl TcpSock {
    /// Wakes those that `w` is for among the waiters on the socket; nothing
    /// when nobody waits. Any context.
    pub(crate) fn wake(&self, w: Wake) {
        if w.all {
            self.wake_waiters();
        } else if w.events != 0 {
            // SAFETY: live socket (type invariant); the helper reads its
            // wait queue under RCU, as `sock_def_readable` does.
            unsafe { bindings::smc_rs_sk_wake_poll(self.as_raw(), w.events) };
        }
    }

    /// Wakes everyone waiting on the socket, so that pollers look again
    /// (any context).
    pub(crate) fn wake_waiters(&self) {
        let sk = self.as_raw();
        // SAFETY: live socket; `sk_state_change` is set for every socket.
        unsafe {
            if let Some(f) = (*sk).sk_state_change {
                f(sk);
            }
        }
    }
}
