// SPDX-License-Identifier: GPL-2.0

//! Where a run of the byte stream lies in two rings at once: our send
//! buffer, which it is written from, and the peer's RMB, which it is
//! written into. Both rings hold the stream at its position modulo their
//! size, so a run is cut wherever either ring wraps.

/// The pieces of the run of `n` bytes at stream position `pos`, as
/// `(offset in the send buffer, offset in the peer's RMB, length)`, in
/// stream order, for a send buffer of `size` bytes and an RMB of `psize`.
/// A run no longer than either ring crosses each ring's end at most once:
/// three pieces at most, unused ones of length 0. `None` for a run longer
/// than a ring, or an empty ring.
pub fn write_pieces(pos: u64, n: u64, size: u64, psize: u64) -> Option<[(u64, u64, u64); 3]> {
    if size == 0 || psize == 0 || n > size || n > psize {
        return None;
    }
    let mut out = [(0, 0, 0); 3];
    let mut done = 0;
    for piece in out.iter_mut() {
        if done >= n {
            break;
        }
        let at = pos.wrapping_add(done);
        let (src, dst) = (at % size, at % psize);
        let len = (n - done).min(size - src).min(psize - dst);
        *piece = (src, dst, len);
        done += len;
    }
    (done == n).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte of the run once, in order, at its place in both rings.
    fn check(pos: u64, n: u64, size: u64, psize: u64) {
        let p = write_pieces(pos, n, size, psize).unwrap();
        let mut at = pos;
        for &(src, dst, len) in p.iter().filter(|p| p.2 > 0) {
            assert_eq!(src, at % size);
            assert_eq!(dst, at % psize);
            assert!(src + len <= size && dst + len <= psize);
            at += len;
        }
        assert_eq!(at, pos + n);
        assert!(p.iter().skip_while(|p| p.2 > 0).all(|p| p.2 == 0));
    }

    #[test]
    fn cuts_where_either_ring_wraps() {
        assert_eq!(write_pieces(0, 100, 1024, 1024), Some([(0, 0, 100), (0, 0, 0), (0, 0, 0)]));
        // Only the peer's ring wraps.
        assert_eq!(write_pieces(1000, 100, 4096, 1024), Some([(1000, 1000, 24), (1024, 0, 76), (0, 0, 0)]));
        // Both, at different places.
        assert_eq!(
            write_pieces(4000, 200, 4096, 1000),
            Some([(4000, 0, 96), (0, 96, 104), (0, 0, 0)])
        );
        // Both, at the same place.
        assert_eq!(
            write_pieces(3990, 1000, 4096, 2048),
            Some([(3990, 1942, 106), (0, 0, 894), (0, 0, 0)])
        );
        // Three pieces.
        assert_eq!(
            write_pieces(1000, 1000, 1024, 1536),
            Some([(1000, 1000, 24), (0, 1024, 512), (512, 0, 464)])
        );
    }

    #[test]
    fn every_run_in_place() {
        for size in [1024u64, 4096, 65536] {
            for psize in [1024u64, 16384, 65536] {
                for pos in [0u64, 1, 1023, 1024, 4095, 65535, 65536 * 7 + 17, u64::MAX - 70000] {
                    for n in [0u64, 1, 512, size.min(psize) - 1, size.min(psize)] {
                        check(pos, n, size, psize);
                    }
                }
            }
        }
    }

    #[test]
    fn too_long_or_empty_ring() {
        assert_eq!(write_pieces(0, 1025, 1024, 4096), None);
        assert_eq!(write_pieces(0, 1025, 4096, 1024), None);
        assert_eq!(write_pieces(0, 1, 0, 4096), None);
    }
}
