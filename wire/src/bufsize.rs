// SPDX-License-Identifier: GPL-2.0

//! Buffer sizes of an SMC-R connection, and when the receiver tells the
//! sender how much it has read.
//!
//! Send buffers and RMB elements come in size classes: class `c` is
//! `16 KiB << c`. The class of the RMB element travels in the CLC accept
//! and confirm as a 4-bit "compressed" size. A socket asks for its buffers
//! through `SO_RCVBUF`/`SO_SNDBUF`; as for TCP, the socket's value is twice
//! what is usable (the kernel doubles what `setsockopt` gets), so the
//! buffer is sized for half of it, rounded up to the next class, and the
//! socket value becomes twice the size chosen.
//!
//! The receiver moves its consumer cursor as the application reads, but
//! announcing every move would cost a CDC message per read. As RFC 7609
//! asks, it announces only a worthwhile window increase (at least 10% of
//! the RMB element, with a floor), and then only when the sender may run
//! short of room; or at once when the sender asked for it or the read
//! passed urgent data. [`consumer_update`] decides.

use super::cursor::Cursor;

/// The smallest buffer: size class 0.
pub const SMC_BUF_MIN_SIZE: u32 = 16384;
/// The largest size class of an SMC-R buffer: 16 KiB << 15 = 512 MiB.
pub const SMCR_MAX_SIZE_CLASS: u8 = 15;
/// `SOCK_MIN_SNDBUF` of Linux 6.12 on x86_64 and arm64 (64-byte cache
/// lines, a 232-byte `struct sk_buff`): twice 2048 plus the `sk_buff`
/// rounded up to a cache line.
pub const SOCK_MIN_SNDBUF: u32 = 2 * (2048 + 256);

/// The size class of a buffer of at least `size` bytes: the smallest class
/// that holds `size`, at most [`SMCR_MAX_SIZE_CLASS`] (larger requests get
/// the largest class). Everything up to 16 KiB is class 0.
pub fn compress(size: u32) -> u8 {
    if size <= SMC_BUF_MIN_SIZE {
        return 0;
    }
    // Whole 16 KiB units below `size`, at least 1 here; the class is one
    // more than their binary logarithm, which rounds up to a power of two.
    let units = (size - 1) >> 14;
    let log2 = 31 - units.leading_zeros();
    let class = log2 + 1;
    u8::try_from(class)
        .unwrap_or(SMCR_MAX_SIZE_CLASS)
        .min(SMCR_MAX_SIZE_CLASS)
}

/// The size in bytes of size class `class`. The wire field has 4 bits, so
/// classes past [`SMCR_MAX_SIZE_CLASS`] cannot be received; they are taken
/// as the largest.
pub fn uncompress(class: u8) -> u32 {
    SMC_BUF_MIN_SIZE << class.min(SMCR_MAX_SIZE_CLASS)
}

/// The size class of the buffer made for a socket whose `sk_rcvbuf` (for
/// the RMB, `is_rmb`) or `sk_sndbuf` (for the send buffer) is `sock_buf`:
/// half of it, rounded up to a class. `is_rmb` matters only on
/// architectures without scatterlist chaining, where RMBs are capped
/// lower; x86_64 and arm64 chain, so both kinds get the same class.
///
/// When no buffer of that class can be had, the caller tries the classes
/// below it down to 0, as Linux does.
pub fn size_class_for(sock_buf: u32, is_rmb: bool) -> u8 {
    let _ = is_rmb;
    compress(sock_buf / 2)
}

/// The `sk_rcvbuf`/`sk_sndbuf` a socket ends up with once its buffer of
/// class `class` exists: twice the buffer.
pub fn sock_buf_for_class(class: u8) -> u32 {
    uncompress(class).saturating_mul(2)
}

/// The smallest consumer cursor advance worth announcing for an RMB
/// element of `rmbe_size` bytes: a tenth of it (RFC 7609's "10% of the
/// receive buffer space"), but at least half of [`SOCK_MIN_SNDBUF`].
pub fn rmb_wnd_update_limit(rmbe_size: u32) -> u32 {
    (rmbe_size / 10).max(SOCK_MIN_SNDBUF / 2)
}

/// What the receiver knows when deciding whether to send its consumer
/// cursor, after the application read (or when a CDC message arrived).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConsumerView {
    /// Size of our RMB element.
    pub rmbe_size: u32,
    /// [`rmb_wnd_update_limit`] of it.
    pub update_limit: u32,
    /// The consumer cursor the peer last received from us.
    pub confirmed: Cursor,
    /// Our consumer cursor now.
    pub consumer: Cursor,
    /// The peer's producer cursor, as last received.
    pub peer_producer: Cursor,
    /// The peer asked for a consumer cursor update (`cons_curs_upd_req`).
    pub peer_requested: bool,
    /// The peer is blocked writing for lack of room (`write_blocked`).
    pub peer_write_blocked: bool,
    /// The caller wants the cursor sent now: the read reached or skipped
    /// urgent data.
    pub force: bool,
    /// The connection was killed or the peer aborted it: nothing is sent.
    pub aborted: bool,
    /// Bytes in the RMB element not read yet.
    pub bytes_to_receive: u32,
}

/// What to do about the consumer cursor.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ConsumerUpdate {
    /// Send a CDC message with the consumer cursor. When it cannot be sent
    /// now (no free slot), retry from a work item and skip the rest.
    pub send: bool,
    /// Forget the peer's `write_blocked`: everything it wrote was read.
    pub clear_write_blocked: bool,
}

/// Whether to announce the consumer cursor (see the module docs): at once
/// when the peer asked for it or the caller forces it; otherwise when the
/// cursor moved by more than the update limit since it was last sent, and
/// the sender either sees at most half of the RMB element free or is
/// blocked. Nothing is sent on a killed or aborted connection.
pub fn consumer_update(v: &ConsumerView) -> ConsumerUpdate {
    let unannounced = Cursor::diff(v.confirmed, v.consumer, v.rmbe_size);
    let worth_it = unannounced > v.update_limit;
    // What the sender believes free: the ring minus what it wrote past
    // the consumer cursor it knows.
    let sender_free = || {
        v.rmbe_size.saturating_sub(Cursor::diff_large(
            v.confirmed,
            v.peer_producer,
            v.rmbe_size,
        ))
    };
    let send = v.peer_requested
        || v.force
        || (worth_it && (v.peer_write_blocked || sender_free() <= v.rmbe_size / 2));
    if send && v.aborted {
        return ConsumerUpdate::default();
    }
    ConsumerUpdate {
        send,
        clear_write_blocked: v.peer_write_blocked && v.bytes_to_receive == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_powers_of_two_from_16k() {
        assert_eq!(compress(0), 0);
        assert_eq!(compress(1), 0);
        assert_eq!(compress(16384), 0);
        assert_eq!(compress(16385), 1);
        assert_eq!(compress(32768), 1);
        assert_eq!(compress(32769), 2);
        assert_eq!(compress(65536), 2);
        assert_eq!(compress(1 << 20), 6);
        assert_eq!(compress(512 << 20), 15);
        assert_eq!(compress((512 << 20) + 1), 15);
        assert_eq!(compress(u32::MAX), 15);
        assert_eq!(uncompress(0), 16384);
        assert_eq!(uncompress(2), 65536);
        assert_eq!(uncompress(15), 512 << 20);
        assert_eq!(uncompress(16), 512 << 20);
        assert_eq!(uncompress(u8::MAX), 512 << 20);
    }

    #[test]
    fn a_class_holds_what_was_asked_and_no_class_below_does() {
        let mut size = 0u32;
        while size < (512 << 20) {
            let c = compress(size);
            assert!(uncompress(c) >= size, "{size}");
            if c > 0 {
                assert!(uncompress(c - 1) < size, "{size}");
            }
            assert_eq!(compress(uncompress(c)), c);
            size = size.wrapping_mul(3) / 2 + 1;
        }
        for c in 0..=SMCR_MAX_SIZE_CLASS {
            assert_eq!(compress(uncompress(c)), c);
            assert_eq!(compress(uncompress(c) + 1), (c + 1).min(15));
        }
    }

    #[test]
    fn socket_buffers_size_half_their_value() {
        // The default: net.smc.rmem 64 KiB, doubled into sk_rcvbuf.
        assert_eq!(size_class_for(2 * 65536, true), 2);
        assert_eq!(sock_buf_for_class(2), 2 * 65536);
        // setsockopt(SO_RCVBUF, 100000): sk_rcvbuf 200000, 100000 usable,
        // a 128 KiB RMB, sk_rcvbuf 256 KiB.
        assert_eq!(size_class_for(200_000, true), 3);
        assert_eq!(sock_buf_for_class(3), 262_144);
        // The minimum socket buffer gives the smallest class.
        assert_eq!(size_class_for(SOCK_MIN_SNDBUF, false), 0);
        assert_eq!(size_class_for(u32::MAX, true), 15);
        assert_eq!(sock_buf_for_class(15), 1 << 30);
    }

    #[test]
    fn window_update_limit() {
        assert_eq!(rmb_wnd_update_limit(16384), 2304);
        assert_eq!(rmb_wnd_update_limit(32768), 3276);
        assert_eq!(rmb_wnd_update_limit(65536), 6553);
        assert_eq!(rmb_wnd_update_limit(0), 2304);
    }

    fn cur(wrap: u16, count: u32) -> Cursor {
        Cursor { wrap, count }
    }

    /// A 64 KiB RMB element: the peer wrote up to 40000, we had announced
    /// 0 and have read up to `read`.
    fn view(read: u32) -> ConsumerView {
        ConsumerView {
            rmbe_size: 65536,
            update_limit: rmb_wnd_update_limit(65536),
            confirmed: cur(0, 0),
            consumer: cur(0, read),
            peer_producer: cur(0, 40000),
            peer_requested: false,
            peer_write_blocked: false,
            force: false,
            aborted: false,
            bytes_to_receive: 40000 - read,
        }
    }

    #[test]
    fn small_reads_are_not_announced() {
        let u = consumer_update(&view(6553));
        assert_eq!(u, ConsumerUpdate::default());
        // One byte past the limit, and the sender sees only 25536 bytes
        // free, less than half.
        assert!(consumer_update(&view(6554)).send);
    }

    #[test]
    fn a_sender_with_room_is_not_told() {
        // The peer wrote only 20000 bytes: it sees 45536 free, more than
        // half, so even a large read is not announced...
        let v = ConsumerView {
            peer_producer: cur(0, 20000),
            bytes_to_receive: 0,
            ..view(20000)
        };
        assert!(!consumer_update(&v).send);
        // ...unless it is blocked.
        let blocked = ConsumerView {
            peer_write_blocked: true,
            ..v
        };
        assert_eq!(
            consumer_update(&blocked),
            ConsumerUpdate {
                send: true,
                clear_write_blocked: true
            }
        );
    }

    #[test]
    fn requests_and_forcing_send_at_once_unless_aborted() {
        for (req, force) in [(true, false), (false, true)] {
            let v = ConsumerView {
                peer_requested: req,
                force,
                ..view(1)
            };
            assert!(consumer_update(&v).send);
            let dead = ConsumerView { aborted: true, ..v };
            assert_eq!(consumer_update(&dead), ConsumerUpdate::default());
        }
        // Nothing to send: an abort changes nothing.
        let v = ConsumerView {
            aborted: true,
            ..view(1)
        };
        assert_eq!(consumer_update(&v), ConsumerUpdate::default());
    }

    #[test]
    fn write_blocked_is_kept_while_data_is_unread() {
        let v = ConsumerView {
            peer_write_blocked: true,
            ..view(10)
        };
        assert_eq!(consumer_update(&v), ConsumerUpdate::default());
    }

    #[test]
    fn across_a_wrap() {
        // Announced at 60000 in wrap 3; read on to 10000 in wrap 4 (15536
        // bytes); the peer wrote up to 50000 in wrap 4: it sees 10000 free.
        let v = ConsumerView {
            rmbe_size: 65536,
            update_limit: 6553,
            confirmed: cur(3, 60000),
            consumer: cur(4, 10000),
            peer_producer: cur(4, 50000),
            peer_requested: false,
            peer_write_blocked: false,
            force: false,
            aborted: false,
            bytes_to_receive: 40000,
        };
        assert!(consumer_update(&v).send);
    }
}
