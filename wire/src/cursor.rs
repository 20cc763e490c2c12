// SPDX-License-Identifier: GPL-2.0

//! Cursors into the ring buffers of an SMC-R connection, their arithmetic,
//! and the checks that make a peer's cursors safe to use.
//!
//! A cursor names a byte position in a ring of `size` bytes (an RMBE or a
//! send buffer): `count` is the offset in the ring and `wrap` counts, modulo
//! 2^16, how often the ring was wrapped. Producer and consumer cursors only
//! move forward, by at most `size` bytes at a time, and at any moment
//!
//! ```text
//! consumer <= producer <= consumer + size
//! ```
//!
//! ("<=" along the byte stream): a ring never holds more than `size`
//! unread bytes. Every valid cursor has `count < size`.
//!
//! [`Cursor::add`], [`Cursor::diff`], [`Cursor::comp`] and
//! [`Cursor::diff_large`] are upstream's `smc_curs_add`, `smc_curs_diff`,
//! `smc_curs_comp` and `smc_curs_diff_large` (`net/smc/smc_cdc.h`), made
//! total: on any input they return, never panic or overflow. They trust
//! their arguments the way upstream does; a cursor the peer sent must first
//! pass [`peer_producer_advance`] or [`peer_consumer_advance`], which
//! reject every cursor that breaks the invariants above.

/// A position in a ring buffer, as carried in CDC messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Cursor {
    /// How often the ring has wrapped, modulo 2^16.
    pub wrap: u16,
    /// The offset in the ring; below the ring size in a valid cursor.
    pub count: u32,
}

/// Why a cursor or a cursor update is not acceptable.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CursorError {
    /// The ring size is zero.
    BadSize,
    /// The cursor's count is not below the ring size.
    OutOfRing,
    /// The new cursor lies before the previous one: cursors only move forward.
    Behind,
    /// The new cursor lies too far ahead: the ring would hold more than its
    /// size, or the peer consumed bytes that were never produced.
    Overrun,
    /// Our own cursors passed in are not consistent with each other (a bug
    /// on our side, not the peer's).
    Inconsistent,
}

/// Upstream's `max_t(int, 0, x)` on an unsigned difference: the value as
/// a C `int`, negative ones cut to zero.
fn nonneg_int(x: u32) -> u32 {
    if x > i32::MAX as u32 {
        0
    } else {
        x
    }
}

impl Cursor {
    /// A cursor at `count` in wrap `wrap`.
    pub const fn new(wrap: u16, count: u32) -> Self {
        Cursor { wrap, count }
    }

    /// The cursor lies in a ring of `size` bytes: `size > 0` and
    /// `count < size`.
    pub fn check(self, size: u32) -> Result<(), CursorError> {
        if size == 0 {
            Err(CursorError::BadSize)
        } else if self.count >= size {
            Err(CursorError::OutOfRing)
        } else {
            Ok(())
        }
    }

    /// The cursor `n` bytes further on in a ring of `size` bytes
    /// (`smc_curs_add`): the wrap count goes up by one, modulo 2^16, when
    /// the ring wraps. The cursor must lie in the ring and `n` may not
    /// exceed `size`.
    pub fn add(self, n: u32, size: u32) -> Result<Cursor, CursorError> {
        self.check(size)?;
        if n > size {
            return Err(CursorError::Overrun);
        }
        // count < size and n <= size: the sum fits in 33 bits.
        let sum = u64::from(self.count) + u64::from(n);
        if sum >= u64::from(size) {
            let count = u32::try_from(sum - u64::from(size)).map_err(|_| CursorError::Overrun)?;
            Ok(Cursor {
                wrap: self.wrap.wrapping_add(1),
                count,
            })
        } else {
            let count = u32::try_from(sum).map_err(|_| CursorError::Overrun)?;
            Ok(Cursor {
                wrap: self.wrap,
                count,
            })
        }
    }

    /// Bytes from `old` to `new` in a ring of `size` bytes, where `old` is
    /// at most one wrap behind `new` (`smc_curs_diff`); 0 when `new` is
    /// behind `old` in the same wrap. When the wraps differ at all, this is
    /// `size - old.count + new.count`, however far apart they are: the
    /// result is only meaningful for cursors that satisfy the invariants.
    /// Computed as upstream does (32-bit, a negative `int` gives 0), so
    /// it is at most `i32::MAX`.
    pub fn diff(old: Cursor, new: Cursor, size: u32) -> u32 {
        if old.wrap != new.wrap {
            nonneg_int(size.wrapping_sub(old.count).wrapping_add(new.count))
        } else {
            nonneg_int(new.count.wrapping_sub(old.count))
        }
    }

    /// Signed distance from `old` to `new` (`smc_curs_comp`): negative when
    /// `new` is behind `old`, comparing wrap counts as plain numbers.
    pub fn comp(old: Cursor, new: Cursor, size: u32) -> i32 {
        let behind = old.wrap > new.wrap || (old.wrap == new.wrap && old.count > new.count);
        if behind {
            // diff() is at most i32::MAX, so its negation is an i32.
            0i32.saturating_sub(i32::try_from(Cursor::diff(new, old, size)).unwrap_or(i32::MAX))
        } else {
            i32::try_from(Cursor::diff(old, new, size)).unwrap_or(i32::MAX)
        }
    }

    /// Bytes from `old` to `new` where `new` may be any number of wraps
    /// ahead, capped at `size` (`smc_curs_diff_large`); the wrap distance
    /// is taken modulo 2^16, so a wrap count that rolled over from 0xffff
    /// to 0 still counts as ahead. In the same wrap, 0 when `new` is
    /// behind. Upstream computes the uncapped distance in 32 bits, which
    /// can overflow for distances of 2^31 bytes and more; here it cannot,
    /// so for such inputs this returns `size` where upstream's result is
    /// arbitrary.
    pub fn diff_large(old: Cursor, new: Cursor, size: u32) -> u32 {
        if old.wrap == new.wrap {
            return nonneg_int(new.count.wrapping_sub(old.count));
        }
        let whole_rings = u64::from(new.wrap.wrapping_sub(old.wrap).wrapping_sub(1));
        let size64 = u64::from(size);
        // At most 2^16 * 2^32 + 2^33: no overflow in 64 bits.
        let dist = (whole_rings * size64 + size64 + u64::from(new.count))
            .saturating_sub(u64::from(old.count));
        u32::try_from(dist.min(size64)).unwrap_or(size)
    }
}

/// Bytes from `from` forward to `to`, both in a ring of `size` bytes, when
/// `to` is no more than one wrap ahead: then the distance is below
/// `2 * size`. A `to` in the back half of the 2^16-wrap circle is behind,
/// one in the front half more than a wrap ahead.
fn forward(from: Cursor, to: Cursor, size: u32) -> Result<u64, CursorError> {
    let dw = to.wrap.wrapping_sub(from.wrap);
    let (from_count, to_count) = (u64::from(from.count), u64::from(to.count));
    match dw {
        0 if to_count >= from_count => Ok(to_count - from_count),
        0 => Err(CursorError::Behind),
        // from.count < size, so this does not underflow.
        1 => Ok((u64::from(size) + to_count).saturating_sub(from_count)),
        d if d < 0x8000 => Err(CursorError::Overrun),
        _ => Err(CursorError::Behind),
    }
}

/// How many new bytes the peer's producer cursor announces: `prev` is our
/// last view of the peer's producer cursor into our RMBE, `new` the one
/// in the CDC message just received, `cons` our consumer cursor (the one
/// we last sent the peer is the strictest bound, our current one also
/// works for a well-behaved peer), `size` the RMBE size.
///
/// On success `prev <= new` and `cons <= new <= cons + size`, so the
/// returned count added to the unread bytes never exceeds `size`. Errors:
/// [`CursorError::OutOfRing`] when `new.count >= size`,
/// [`CursorError::Behind`] when `new` is before `prev`,
/// [`CursorError::Overrun`] when more than `size` bytes would be unread,
/// [`CursorError::Inconsistent`] when `prev` or `cons` is not in the ring
/// or `prev` is not within `size` bytes after `cons`.
///
/// Upstream (`smc_cdc_cursor_to_host`) keeps its old view when the new
/// cursor is behind (except that a wrap count of 0 always counts as
/// ahead) and trusts everything else. Mirroring it, the receive path can
/// treat [`CursorError::Behind`] as "no new bytes"; every other error is a
/// peer that writes outside what we allowed and ends the connection.
pub fn peer_producer_advance(
    prev: Cursor,
    new: Cursor,
    cons: Cursor,
    size: u32,
) -> Result<u32, CursorError> {
    advance_within(prev, new, cons, size, false)
}

/// How many bytes of the peer's RMBE the peer's consumer cursor frees:
/// `prev` is our last view of the peer's consumer cursor, `new` the one in
/// the CDC message just received, `prod` the producer cursor we last sent
/// the peer (how far we have written into its RMBE), `size` the peer's
/// RMBE size.
///
/// On success `prev <= new <= prod`, and the result is at most `size`.
/// Errors: [`CursorError::OutOfRing`] when `new.count >= size`,
/// [`CursorError::Behind`] when `new` is before `prev`,
/// [`CursorError::Overrun`] when `new` is after `prod` (the peer claims to
/// have read what we never wrote), [`CursorError::Inconsistent`] when
/// `prev` or `prod` is not in the ring or `prod` is not within `size`
/// bytes after `prev`.
pub fn peer_consumer_advance(
    prev: Cursor,
    new: Cursor,
    prod: Cursor,
    size: u32,
) -> Result<u32, CursorError> {
    advance_within(prev, new, prod, size, true)
}

/// The end of the free part of an SMC-D send buffer (as a stream
/// position) once the peer has read up to `acked`. The send buffer of an
/// SMC-D connection over the loopback device is the peer's RMB itself:
/// bytes are written straight to where the peer reads them, nothing is
/// completed by a device, and room comes back only as the peer reads.
/// `fin` never moves back, and never past `prod` (what was announced):
/// a peer that read more than that was refused by
/// [`peer_consumer_advance`] already.
pub fn ism_tx_fin(fin: u64, prod: u64, acked: u64) -> u64 {
    fin.max(acked.min(prod))
}

/// The two checks: `new` moves forward from `prev`, and stays within
/// `size` bytes after `anchor` (producer) or at most at `anchor`
/// (consumer).
fn advance_within(
    prev: Cursor,
    new: Cursor,
    anchor: Cursor,
    size: u32,
    consumer: bool,
) -> Result<u32, CursorError> {
    if size == 0 {
        return Err(CursorError::BadSize);
    }
    if prev.check(size).is_err() || anchor.check(size).is_err() {
        return Err(CursorError::Inconsistent);
    }
    let size64 = u64::from(size);
    // Our own cursors first: cons <= prev <= cons + size (producer), or
    // prev <= prod <= prev + size (consumer).
    let (from, to) = if consumer {
        (prev, anchor)
    } else {
        (anchor, prev)
    };
    let own = match forward(from, to, size) {
        Ok(d) if d <= size64 => d,
        _ => return Err(CursorError::Inconsistent),
    };
    new.check(size)?;
    let adv = forward(prev, new, size)?;
    // Producer: the unread bytes, `own`, and the new ones fit in the ring.
    // Consumer: the peer reads no further than we wrote, `own` bytes on.
    let limit = if consumer {
        own
    } else {
        size64.saturating_sub(own)
    };
    if adv > limit {
        return Err(CursorError::Overrun);
    }
    u32::try_from(adv).map_err(|_| CursorError::Overrun)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64: a small deterministic generator for property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// A ring size: small ones, upstream's RMBE sizes, and odd ones.
        fn size(&mut self) -> u32 {
            match self.below(4) {
                0 => 1 + self.below(8) as u32,
                1 => 16384 << self.below(6),
                2 => 1 + self.below(1 << 20) as u32,
                _ => u32::MAX - self.below(4) as u32,
            }
        }
        fn cursor(&mut self, size: u32) -> Cursor {
            Cursor::new(self.next() as u16, self.below(u64::from(size)) as u32)
        }
    }

    /// A stream position as a number: the reference model.
    fn pos(c: Cursor, size: u32) -> u128 {
        u128::from(c.wrap) * u128::from(size) + u128::from(c.count)
    }

    #[test]
    fn add_matches_upstream() {
        let c = Cursor::new(0, 10);
        assert_eq!(c.add(5, 16), Ok(Cursor::new(0, 15)));
        assert_eq!(c.add(6, 16), Ok(Cursor::new(1, 0)));
        assert_eq!(c.add(16, 16), Ok(Cursor::new(1, 10)));
        assert_eq!(c.add(0, 16), Ok(c));
        assert_eq!(Cursor::new(0xffff, 15).add(1, 16), Ok(Cursor::new(0, 0)));
        assert_eq!(c.add(17, 16), Err(CursorError::Overrun));
        assert_eq!(c.add(1, 10), Err(CursorError::OutOfRing));
        assert_eq!(c.add(1, 0), Err(CursorError::BadSize));
        let top = Cursor::new(3, u32::MAX - 1);
        assert_eq!(
            top.add(u32::MAX, u32::MAX),
            Ok(Cursor::new(4, u32::MAX - 1))
        );
    }

    #[test]
    fn diff_matches_upstream() {
        let s = 100;
        assert_eq!(Cursor::diff(Cursor::new(1, 10), Cursor::new(1, 30), s), 20);
        assert_eq!(Cursor::diff(Cursor::new(1, 30), Cursor::new(1, 10), s), 0);
        assert_eq!(Cursor::diff(Cursor::new(1, 90), Cursor::new(2, 10), s), 20);
        // Upstream only looks at whether the wraps differ.
        assert_eq!(Cursor::diff(Cursor::new(1, 90), Cursor::new(7, 10), s), 20);
        assert_eq!(
            Cursor::diff(Cursor::new(0xffff, 90), Cursor::new(0, 10), s),
            20
        );
        // Hostile counts never panic; a negative int is 0.
        assert_eq!(
            Cursor::diff(Cursor::new(0, 0), Cursor::new(0, u32::MAX), s),
            0
        );
        assert_eq!(
            Cursor::diff(Cursor::new(0, u32::MAX), Cursor::new(1, 0), u32::MAX),
            0
        );
    }

    #[test]
    fn comp_and_diff_large_match_upstream() {
        let s = 100;
        let (a, b) = (Cursor::new(1, 90), Cursor::new(2, 10));
        assert_eq!(Cursor::comp(a, b, s), 20);
        assert_eq!(Cursor::comp(b, a, s), -20);
        assert_eq!(Cursor::comp(a, a, s), 0);
        assert_eq!(Cursor::diff_large(a, b, s), 20);
        assert_eq!(
            Cursor::diff_large(Cursor::new(1, 90), Cursor::new(1, 95), s),
            5
        );
        assert_eq!(
            Cursor::diff_large(Cursor::new(1, 95), Cursor::new(1, 90), s),
            0
        );
        assert_eq!(
            Cursor::diff_large(Cursor::new(1, 90), Cursor::new(3, 10), s),
            100
        );
        assert_eq!(
            Cursor::diff_large(Cursor::new(0xffff, 90), Cursor::new(0, 10), s),
            20
        );
        assert_eq!(
            Cursor::diff_large(Cursor::new(0xffff, 90), Cursor::new(1, 0), s),
            100
        );
        assert_eq!(
            Cursor::diff_large(Cursor::new(0, 5), Cursor::new(0xfffe, 0), u32::MAX),
            u32::MAX
        );
    }

    /// add then diff gives back the step, across wraps and the 2^16 wrap
    /// of the wrap count; comp and diff_large agree within a ring.
    #[test]
    fn add_diff_round_trip() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let size = rng.size();
            let c = rng.cursor(size);
            let n = rng.below(u64::from(size) + 1) as u32;
            let d = c.add(n, size).unwrap();
            assert!(d.check(size).is_ok());
            let model = (pos(c, size) + u128::from(n)) % (u128::from(size) << 16);
            assert_eq!(pos(d, size), model);
            assert_eq!(peer_producer_advance(c, d, c, size), Ok(n));
            assert_eq!(peer_consumer_advance(c, d, d, size), Ok(n));
            if size <= i32::MAX as u32 {
                assert_eq!(Cursor::diff(c, d, size), n);
                assert_eq!(Cursor::diff_large(c, d, size), n);
                // comp compares wrap counts as numbers: not across 0xffff -> 0.
                if c.wrap <= d.wrap {
                    assert_eq!(Cursor::comp(c, d, size), n as i32);
                    assert_eq!(Cursor::comp(d, c, size), -(n as i32));
                }
            }
            // Adding in two steps is adding once.
            let m = rng.below(u64::from(n) + 1) as u32;
            let two = c.add(m, size).unwrap().add(n - m, size).unwrap();
            assert_eq!(two, d);
        }
    }

    /// peer_producer_advance accepts exactly the cursors the model allows.
    #[test]
    fn producer_checks_match_model() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            let size = rng.size();
            let cons = rng.cursor(size);
            let unread = rng.below(u64::from(size) + 1) as u32;
            let prev = cons.add(unread, size).unwrap();
            // A new cursor near prev, or anywhere.
            let new = match rng.below(3) {
                0 => {
                    let step = rng.below(u64::from(size) + 1) as u32;
                    prev.add(step, size).unwrap()
                }
                1 => Cursor::new(
                    prev.wrap.wrapping_add(rng.below(3) as u16).wrapping_sub(1),
                    rng.below(u64::from(size)) as u32,
                ),
                _ => Cursor::new(rng.next() as u16, rng.next() as u32),
            };
            let res = peer_producer_advance(prev, new, cons, size);
            if new.count >= size {
                assert_eq!(res, Err(CursorError::OutOfRing));
                continue;
            }
            // Model: positions on the 2^16-wrap circle, relative to cons.
            let circle = u128::from(size) << 16;
            let rel = |c: Cursor| (pos(c, size) + circle - pos(cons, size)) % circle;
            let (p, n) = (rel(prev), rel(new));
            let half = circle / 2;
            match res {
                Ok(adv) => {
                    assert!(n >= p && n <= u128::from(size));
                    assert_eq!(u128::from(adv), n - p);
                    assert_eq!(prev.add(adv, size), Ok(new));
                }
                Err(CursorError::Behind) => {
                    let back = (pos(prev, size) + circle - pos(new, size)) % circle;
                    assert!(back > 0 && back <= half + u128::from(size));
                    assert!(!(n >= p && n <= u128::from(size)));
                }
                Err(CursorError::Overrun) => assert!(n > u128::from(size)),
                Err(e) => panic!("{e:?} for valid own cursors"),
            }
        }
    }

    /// peer_consumer_advance: prev <= new <= prod.
    #[test]
    fn consumer_checks_match_model() {
        let mut rng = Rng(0xdead_beef_cafe_f00d);
        for _ in 0..200_000 {
            let size = rng.size();
            let prev = rng.cursor(size);
            let written = rng.below(u64::from(size) + 1) as u32;
            let prod = prev.add(written, size).unwrap();
            let new = if rng.below(2) == 0 {
                prev.add(rng.below(u64::from(size) + 1) as u32, size)
                    .unwrap()
            } else {
                Cursor::new(
                    prev.wrap.wrapping_add(rng.below(3) as u16).wrapping_sub(1),
                    rng.next() as u32 % size.saturating_add(2).max(1),
                )
            };
            let res = peer_consumer_advance(prev, new, prod, size);
            if new.count >= size {
                assert_eq!(res, Err(CursorError::OutOfRing));
                continue;
            }
            let circle = u128::from(size) << 16;
            let rel = (pos(new, size) + circle - pos(prev, size)) % circle;
            match res {
                Ok(adv) => {
                    assert!(adv <= written);
                    assert_eq!(u128::from(adv), rel);
                }
                Err(CursorError::Overrun) => assert!(rel > u128::from(written)),
                Err(CursorError::Behind) => assert!(rel > u128::from(size)),
                Err(e) => panic!("{e:?}"),
            }
        }
    }

    #[test]
    fn hostile_cursors_are_rejected() {
        let s = 1000;
        let c = Cursor::new(5, 100);
        // Beyond the ring.
        assert_eq!(
            peer_producer_advance(c, Cursor::new(5, 1000), c, s),
            Err(CursorError::OutOfRing)
        );
        // Behind, in the same wrap and a wrap back.
        assert_eq!(
            peer_producer_advance(c, Cursor::new(5, 99), c, s),
            Err(CursorError::Behind)
        );
        assert_eq!(
            peer_producer_advance(c, Cursor::new(4, 500), c, s),
            Err(CursorError::Behind)
        );
        // More than a ring ahead of the consumer.
        assert_eq!(
            peer_producer_advance(c, Cursor::new(6, 101), c, s),
            Err(CursorError::Overrun)
        );
        assert_eq!(
            peer_producer_advance(c, Cursor::new(6, 100), c, s),
            Ok(1000)
        );
        assert_eq!(
            peer_producer_advance(c, Cursor::new(9, 0), c, s),
            Err(CursorError::Overrun)
        );
        // Unread bytes count against the ring.
        let prev = Cursor::new(5, 600);
        assert_eq!(
            peer_producer_advance(prev, Cursor::new(6, 101), c, s),
            Err(CursorError::Overrun)
        );
        assert_eq!(
            peer_producer_advance(prev, Cursor::new(6, 100), c, s),
            Ok(500)
        );
        // Wrap count rollover is fine.
        let w = Cursor::new(0xffff, 900);
        assert_eq!(peer_producer_advance(w, Cursor::new(0, 50), w, s), Ok(150));
        // Our own inconsistency and a zero size.
        assert_eq!(
            peer_producer_advance(Cursor::new(7, 0), Cursor::new(7, 0), c, s),
            Err(CursorError::Inconsistent)
        );
        assert_eq!(
            peer_producer_advance(c, c, Cursor::new(0, 5000), s),
            Err(CursorError::Inconsistent)
        );
        assert_eq!(peer_producer_advance(c, c, c, 0), Err(CursorError::BadSize));
        // The consumer may not pass what we produced.
        let prod = Cursor::new(5, 400);
        assert_eq!(
            peer_consumer_advance(c, Cursor::new(5, 400), prod, s),
            Ok(300)
        );
        assert_eq!(
            peer_consumer_advance(c, Cursor::new(5, 401), prod, s),
            Err(CursorError::Overrun)
        );
        assert_eq!(
            peer_consumer_advance(c, Cursor::new(5, 50), prod, s),
            Err(CursorError::Behind)
        );
        assert_eq!(
            peer_consumer_advance(prod, c, c, s),
            Err(CursorError::Inconsistent)
        );
    }

    /// Arbitrary inputs: every function returns, and an accepted advance
    /// keeps the ring invariant.
    #[test]
    fn random_inputs_never_panic() {
        let mut rng = Rng(7);
        for _ in 0..200_000 {
            let size = if rng.below(8) == 0 {
                0
            } else {
                rng.next() as u32
            };
            let c = |r: &mut Rng| Cursor::new(r.next() as u16, r.next() as u32);
            let (a, b, k) = (c(&mut rng), c(&mut rng), c(&mut rng));
            let n = rng.next() as u32;
            let _ = a.add(n, size);
            let _ = Cursor::diff(a, b, size);
            let _ = Cursor::comp(a, b, size);
            assert!(Cursor::diff_large(a, b, size) <= size.max(i32::MAX as u32));
            if let Ok(adv) = peer_producer_advance(a, b, k, size) {
                assert!(adv <= size);
                assert_eq!(a.add(adv, size), Ok(b));
            }
            if let Ok(adv) = peer_consumer_advance(a, b, k, size) {
                assert!(adv <= size);
                assert_eq!(a.add(adv, size), Ok(b));
            }
        }
    }

    #[test]
    fn ism_send_buffer_frees_as_the_peer_reads() {
        assert_eq!(ism_tx_fin(0, 100, 40), 40);
        assert_eq!(ism_tx_fin(40, 100, 100), 100);
        // Never back, never past what was announced.
        assert_eq!(ism_tx_fin(60, 100, 40), 60);
        assert_eq!(ism_tx_fin(0, 100, 300), 100);
    }
}
