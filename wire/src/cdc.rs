// SPDX-License-Identifier: GPL-2.0

//! The CDC (Connection Data Control) message of SMC-R: the 44-byte
//! message each side sends over the RoCE link after writing into the
//! peer's RMBE (its producer cursor) or reading from its own (its consumer
//! cursor), with the connection's flags (RFC 7609, section 3.6;
//! upstream's `struct smc_cdc_msg` in `net/smc/smc_cdc.h`).
//!
//! Layout, all integers big-endian:
//!
//! ```text
//!  0  type 0xFE        1  length 44        2..4  sequence number
//!  4..8   alert token of the receiver's connection
//!  8..16  producer cursor: 8..10 reserved, 10..12 wrap, 12..16 count
//! 16..24  consumer cursor: the same layout
//! 24  producer flags   25  connection state flags   26..44 reserved
//! ```
//!
//! The cursors parsed here are as the peer sent them: check them with
//! [`super::cursor::peer_producer_advance`] and
//! [`super::cursor::peer_consumer_advance`] before using them.

use super::codec::{CodecError, Reader, Writer};
use super::cursor::Cursor;

/// The type byte of a CDC message, which shares the first byte of the
/// LLC header.
pub const CDC_MSG_TYPE: u8 = 0xfe;
/// The length of a CDC message, and the value of its length field.
pub const CDC_LEN: usize = 44;
/// The fewest bytes upstream accepts as a CDC message: everything before
/// the reserved tail (`offsetof(struct smc_cdc_msg, reserved)`).
pub const CDC_MIN_LEN: usize = 26;

/// Errors in a CDC message. Upstream drops such a message silently
/// (`smc_cdc_rx_handler`), and so should the receive path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CdcError {
    /// Fewer than [`CDC_MIN_LEN`] bytes.
    Truncated,
    /// The type byte is not [`CDC_MSG_TYPE`].
    BadType,
    /// The length field is not [`CDC_LEN`].
    BadLength,
    /// The output buffer is smaller than [`CDC_LEN`].
    BufferTooSmall,
}

impl From<CodecError> for CdcError {
    #[inline]
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Truncated => CdcError::Truncated,
            CodecError::BufferTooSmall => CdcError::BufferTooSmall,
        }
    }
}

/// The sender's producer flags (`struct smc_cdc_producer_flags`; the
/// first field is the most significant bit).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ProducerFlags {
    /// The sender has data to write but no room in our RMBE (0x80).
    pub write_blocked: bool,
    /// Urgent data is pending: on its way (0x40).
    pub urg_data_pending: bool,
    /// Urgent data is present: the last byte produced is urgent (0x20).
    pub urg_data_present: bool,
    /// The sender asks for a consumer cursor update (0x10).
    pub cons_curs_upd_req: bool,
    /// A message replayed after a link failover, only to validate the
    /// sequence number (0x08).
    pub failover_validation: bool,
}

impl ProducerFlags {
    /// The flags in their byte; the three reserved bits are zero.
    pub fn to_byte(self) -> u8 {
        u8::from(self.write_blocked) << 7
            | u8::from(self.urg_data_pending) << 6
            | u8::from(self.urg_data_present) << 5
            | u8::from(self.cons_curs_upd_req) << 4
            | u8::from(self.failover_validation) << 3
    }

    /// The flags of a byte; reserved bits are ignored.
    pub fn from_byte(b: u8) -> Self {
        ProducerFlags {
            write_blocked: b & 0x80 != 0,
            urg_data_pending: b & 0x40 != 0,
            urg_data_present: b & 0x20 != 0,
            cons_curs_upd_req: b & 0x10 != 0,
            failover_validation: b & 0x08 != 0,
        }
    }
}

/// The sender's connection state flags (`struct
/// smc_cdc_conn_state_flags`; the first field is the most significant
/// bit).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ConnStateFlags {
    /// The sender will write no more: shutdown(SHUT_WR) (0x80).
    pub peer_done_writing: bool,
    /// The sender closed the connection (0x40).
    pub peer_conn_closed: bool,
    /// The sender aborted the connection (0x20).
    pub peer_conn_abort: bool,
}

impl ConnStateFlags {
    /// The flags in their byte; the five reserved bits are zero.
    pub fn to_byte(self) -> u8 {
        u8::from(self.peer_done_writing) << 7
            | u8::from(self.peer_conn_closed) << 6
            | u8::from(self.peer_conn_abort) << 5
    }

    /// The flags of a byte; reserved bits are ignored.
    pub fn from_byte(b: u8) -> Self {
        ConnStateFlags {
            peer_done_writing: b & 0x80 != 0,
            peer_conn_closed: b & 0x40 != 0,
            peer_conn_abort: b & 0x20 != 0,
        }
    }

    /// The peer closed or aborted (`smc_cdc_rxed_any_close`).
    pub fn any_close(self) -> bool {
        self.peer_conn_closed || self.peer_conn_abort
    }
}

/// A CDC message.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CdcMsg {
    /// The connection's sequence number of this message; it wraps.
    pub seqno: u16,
    /// The alert token that names the receiver's connection in its link
    /// group.
    pub token: u32,
    /// How far the sender has written into the receiver's RMBE.
    pub prod: Cursor,
    /// How far the sender has read from its own RMBE: the piggybacked
    /// "ack" of what the receiver wrote.
    pub cons: Cursor,
    /// Producer flags.
    pub prod_flags: ProducerFlags,
    /// Connection state flags.
    pub conn_state_flags: ConnStateFlags,
}

/// Reads a cursor: 2 reserved bytes (ignored, like upstream), the wrap
/// count and the count.
fn read_cursor(r: &mut Reader<'_>) -> Result<Cursor, CdcError> {
    r.skip(2)?;
    let wrap = r.be16()?;
    let count = r.be32()?;
    Ok(Cursor { wrap, count })
}

/// Writes a cursor with its reserved bytes zero.
fn write_cursor(w: &mut Writer<'_>, c: Cursor) -> Result<(), CdcError> {
    w.zeros(2)?;
    w.be16(c.wrap)?;
    w.be32(c.count)?;
    Ok(())
}

impl CdcMsg {
    /// Parses a received CDC message. Like upstream, at least
    /// [`CDC_MIN_LEN`] bytes must be there, the type must be
    /// [`CDC_MSG_TYPE`] and the length field [`CDC_LEN`]; the reserved
    /// bytes (and reserved flag bits) are not looked at.
    pub fn parse(buf: &[u8]) -> Result<CdcMsg, CdcError> {
        if buf.len() < CDC_MIN_LEN {
            return Err(CdcError::Truncated);
        }
        let mut r = Reader::new(buf);
        if r.u8()? != CDC_MSG_TYPE {
            return Err(CdcError::BadType);
        }
        if usize::from(r.u8()?) != CDC_LEN {
            return Err(CdcError::BadLength);
        }
        let seqno = r.be16()?;
        let token = r.be32()?;
        let prod = read_cursor(&mut r)?;
        let cons = read_cursor(&mut r)?;
        let prod_flags = ProducerFlags::from_byte(r.u8()?);
        let conn_state_flags = ConnStateFlags::from_byte(r.u8()?);
        Ok(CdcMsg {
            seqno,
            token,
            prod,
            cons,
            prod_flags,
            conn_state_flags,
        })
    }

    /// Encodes the 44-byte message into `buf`; returns [`CDC_LEN`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, CdcError> {
        let mut w = Writer::new(buf, CDC_LEN)?;
        w.u8(CDC_MSG_TYPE)?;
        w.u8(CDC_LEN as u8)?;
        w.be16(self.seqno)?;
        w.be32(self.token)?;
        write_cursor(&mut w, self.prod)?;
        write_cursor(&mut w, self.cons)?;
        w.u8(self.prod_flags.to_byte())?;
        w.u8(self.conn_state_flags.to_byte())?;
        // The reserved tail stays zero.
        Ok(CDC_LEN)
    }

    /// The message in three words, for a queue between two ends of this
    /// host that passes words, not bytes (SMC-D over loopback): every field
    /// and flag, the reserved bits zero.
    pub fn to_words(self) -> [u64; 3] {
        let head = u64::from(self.seqno) << 48
            | u64::from(self.prod_flags.to_byte()) << 40
            | u64::from(self.conn_state_flags.to_byte()) << 32
            | u64::from(self.token);
        let cursor = |c: Cursor| u64::from(c.wrap) << 32 | u64::from(c.count);
        [head, cursor(self.prod), cursor(self.cons)]
    }

    /// The message [`to_words`](Self::to_words) gave.
    pub fn from_words(w: [u64; 3]) -> CdcMsg {
        let [head, prod, cons] = w;
        let cursor = |c: u64| Cursor::new((c >> 32) as u16, c as u32);
        CdcMsg {
            seqno: (head >> 48) as u16,
            token: head as u32,
            prod: cursor(prod),
            cons: cursor(cons),
            prod_flags: ProducerFlags::from_byte((head >> 40) as u8),
            conn_state_flags: ConnStateFlags::from_byte((head >> 32) as u8),
        }
    }
}

/// Sequence number `a` is before `b`, in 16-bit serial arithmetic
/// (`smc_cdc_before`). Upstream ignores a CDC message whose sequence
/// number is before the last one it processed, unless it is a failover
/// validation.
pub fn seq_before(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) < 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CDC message laid out by hand after `struct smc_cdc_msg`.
    fn cdc_bytes() -> [u8; 44] {
        let mut b = [0u8; 44];
        b[0] = 0xfe; // common.type
        b[1] = 44; // len
        b[2..4].copy_from_slice(&0x1234u16.to_be_bytes()); // seqno
        b[4..8].copy_from_slice(&0x0000_0102u32.to_be_bytes()); // token
                                                                // prod: 8..10 reserved, 10..12 wrap, 12..16 count
        b[10..12].copy_from_slice(&3u16.to_be_bytes());
        b[12..16].copy_from_slice(&0x0001_0000u32.to_be_bytes());
        // cons: 16..18 reserved, 18..20 wrap, 20..24 count
        b[18..20].copy_from_slice(&0xffffu16.to_be_bytes());
        b[20..24].copy_from_slice(&17u32.to_be_bytes());
        b[24] = 0x80 | 0x20; // write_blocked, urg_data_present
        b[25] = 0x40; // peer_conn_closed
        b
    }

    fn cdc_msg() -> CdcMsg {
        CdcMsg {
            seqno: 0x1234,
            token: 0x102,
            prod: Cursor::new(3, 0x1_0000),
            cons: Cursor::new(0xffff, 17),
            prod_flags: ProducerFlags {
                write_blocked: true,
                urg_data_present: true,
                ..ProducerFlags::default()
            },
            conn_state_flags: ConnStateFlags {
                peer_conn_closed: true,
                ..ConnStateFlags::default()
            },
        }
    }

    #[test]
    fn words_keep_every_field() {
        let m = cdc_msg();
        assert_eq!(CdcMsg::from_words(m.to_words()), m);
        let all = CdcMsg {
            seqno: 0xffff,
            token: 0xffff_ffff,
            prod: Cursor::new(0xffff, 0xffff_ffff),
            cons: Cursor::new(0, 0),
            prod_flags: ProducerFlags::from_byte(0xff),
            conn_state_flags: ConnStateFlags::from_byte(0xff),
        };
        assert_eq!(CdcMsg::from_words(all.to_words()), all);
        assert_eq!(CdcMsg::from_words(CdcMsg::default().to_words()), CdcMsg::default());
    }

    #[test]
    fn cdc_matches_upstream_layout() {
        let mut buf = [0xa5u8; 64];
        assert_eq!(cdc_msg().encode(&mut buf), Ok(44));
        assert_eq!(buf[..44], cdc_bytes());
        assert_eq!(buf[44], 0xa5);
        assert_eq!(CdcMsg::parse(&cdc_bytes()), Ok(cdc_msg()));
        assert!(cdc_msg().conn_state_flags.any_close());
    }

    #[test]
    fn flag_bits_are_upstreams() {
        let all = ProducerFlags {
            write_blocked: true,
            urg_data_pending: true,
            urg_data_present: true,
            cons_curs_upd_req: true,
            failover_validation: true,
        };
        assert_eq!(all.to_byte(), 0xf8);
        assert_eq!(ProducerFlags::from_byte(0xff), all);
        assert_eq!(ProducerFlags::from_byte(0x07), ProducerFlags::default());
        let c = ConnStateFlags::from_byte(0xff);
        assert_eq!(c.to_byte(), 0xe0);
        assert!(c.peer_done_writing && c.peer_conn_closed && c.peer_conn_abort);
        assert_eq!(ConnStateFlags::from_byte(0x1f), ConnStateFlags::default());
    }

    #[test]
    fn parse_like_upstream() {
        let b = cdc_bytes();
        // The reserved tail need not be there, nor be zero.
        assert_eq!(CdcMsg::parse(&b[..CDC_MIN_LEN]), Ok(cdc_msg()));
        let mut r = b;
        r[8] = 0xff; // cursor reserved bytes
        r[17] = 0xff;
        r[30] = 0xff;
        assert_eq!(CdcMsg::parse(&r), Ok(cdc_msg()));
        for n in 0..CDC_MIN_LEN {
            assert_eq!(CdcMsg::parse(&b[..n]), Err(CdcError::Truncated));
        }
        let mut t = b;
        t[0] = 0x07; // an LLC type
        assert_eq!(CdcMsg::parse(&t), Err(CdcError::BadType));
        let mut l = b;
        l[1] = 48;
        assert_eq!(CdcMsg::parse(&l), Err(CdcError::BadLength));
        assert_eq!(
            cdc_msg().encode(&mut [0; 43]),
            Err(CdcError::BufferTooSmall)
        );
    }

    #[test]
    fn sequence_numbers_wrap() {
        assert!(seq_before(1, 2));
        assert!(!seq_before(2, 1));
        assert!(!seq_before(5, 5));
        assert!(seq_before(0xffff, 0));
        assert!(!seq_before(0, 0xffff));
        assert!(seq_before(0x8001, 1));
    }

    /// Every single-byte change and random buffers: parsing returns, and
    /// what parses re-encodes to what parses the same.
    #[test]
    fn mutations_never_panic() {
        let b = cdc_bytes();
        let mut out = [0u8; 44];
        for i in 0..44 {
            for v in 0..=255u8 {
                let mut m = b;
                m[i] = v;
                if let Ok(c) = CdcMsg::parse(&m) {
                    c.encode(&mut out).unwrap();
                    assert_eq!(CdcMsg::parse(&out), Ok(c));
                }
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut buf = [0u8; 64];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 64) as usize;
            for (i, v) in buf[..len].iter_mut().enumerate() {
                *v = (x >> (i % 8 * 8)) as u8 ^ i as u8;
            }
            if x & 1 == 0 && len >= 2 {
                buf[0] = 0xfe;
                buf[1] = 44;
            }
            if let Ok(c) = CdcMsg::parse(&buf[..len]) {
                c.encode(&mut out).unwrap();
                assert_eq!(CdcMsg::parse(&out), Ok(c));
            }
        }
    }
}
