// SPDX-License-Identifier: GPL-2.0

//! The first contact extension of an SMC v2 Accept or Confirm, and the GID
//! list an SMC-Rv2 Confirm appends to it.
//!
//! When a v2 accept or confirm sets the first contact bit (a new link
//! group), the fixed part (104 bytes without the trailer) is followed by:
//!
//! ```text
//!   +0   1  bit 7: v2_direct (peer reachable without a gateway), rest reserved
//!   +1   1  os_type (high nibble), release (low nibble)
//!   +2   2  reserved
//!   +4  32  host name, blank padded
//!   --- release 0 as Linux before 6.5 sent it ends here (36 bytes) ---
//!  +36   1  max_conns (SMC-R)
//!  +37   1  max_links (SMC-R)
//!  +38   2  feature_mask
//!  +40   4  vendor options
//!  +44   8  reserved
//!   --- 52 bytes: what Linux 6.5 and later send for SMC-R, any release ---
//! ```
//!
//! A Confirm (the client's message) then carries the GID list: a count,
//! three reserved bytes, and 16 bytes per GID of the client's RoCE devices.
//! Linux sends at most two (the device in use and one alternate).

use super::{ClcError, Reader, Writer, GID_LEN};

/// Length of the host name in a first contact extension.
pub const HOSTNAME_LEN: usize = 32;
/// Length of a release 0 first contact extension (Linux before 6.5).
pub const FCE_LEN_V20: usize = 36;
/// Length of a first contact extension with the release 1 fields: what
/// Linux 6.5 and later send for SMC-R whatever the release.
pub const FCE_LEN_V2X: usize = 52;
/// Length of the GID list's count and reserved bytes.
pub const GID_LIST_HEADER_LEN: usize = 4;
/// The most GIDs a GID list may carry here. Linux sends at most two.
pub const MAX_FCE_GIDS: usize = 8;

/// SMC release 1 (v2.1): connection and link limits and a feature mask.
pub const SMC_RELEASE_1: u8 = 1;
/// The latest SMC release Linux 6.12 speaks.
pub const SMC_RELEASE: u8 = SMC_RELEASE_1;
/// The supplemental features Linux 6.12 offers: bit 0, emulated ISM.
pub const SMC_FEATURE_MASK: u16 = 1;

/// The first contact extension of a v2 accept or confirm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FirstContactExt {
    /// The sender reaches the peer without a gateway (SMC-Rv2).
    pub v2_direct: bool,
    /// Operating system of the sender (4 bits; [`super::OS_LINUX`]).
    pub os_type: u8,
    /// SMC release the sender agreed on (4 bits).
    pub release: u8,
    /// Host name of the sender, blank padded.
    pub hostname: [u8; HOSTNAME_LEN],
    /// Connections per link group (release 1 and later; else 0).
    pub max_conns: u8,
    /// Links per link group (release 1 and later; else 0).
    pub max_links: u8,
    /// Supplemental features (release 1 and later; else 0).
    pub feature_mask: u16,
}

impl FirstContactExt {
    /// Reads the 36 bytes every release has; the release 1 fields read as
    /// zero.
    fn read_base(r: &mut Reader<'_>) -> Result<Self, ClcError> {
        let direct = r.u8()?;
        let os_release = r.u8()?;
        r.skip(2)?;
        Ok(FirstContactExt {
            v2_direct: direct & 0x80 != 0,
            os_type: os_release >> 4,
            release: os_release & 0xf,
            hostname: r.array()?,
            max_conns: 0,
            max_links: 0,
            feature_mask: 0,
        })
    }

    /// Reads the extension at the reader, `len` ([`FCE_LEN_V20`] or
    /// [`FCE_LEN_V2X`]) bytes long. The release 1 fields are kept only for
    /// release 1 and later: before, they carry no meaning.
    pub(super) fn read(r: &mut Reader<'_>, len: usize) -> Result<Self, ClcError> {
        let mut fce = Self::read_base(r)?;
        if len == FCE_LEN_V2X {
            let max_conns = r.u8()?;
            let max_links = r.u8()?;
            let feature_mask = r.be16()?;
            r.skip(12)?;
            if fce.release >= SMC_RELEASE_1 {
                fce.max_conns = max_conns;
                fce.max_links = max_links;
                fce.feature_mask = feature_mask;
            }
        }
        Ok(fce)
    }

    /// Writes the [`FCE_LEN_V2X`] bytes Linux sends for SMC-R: the release
    /// 1 fields only for release 1 and later, zero before.
    pub(super) fn write(&self, w: &mut Writer<'_>) -> Result<(), ClcError> {
        w.u8(if self.v2_direct { 0x80 } else { 0 })?;
        w.u8((self.os_type << 4) | (self.release & 0xf))?;
        w.zeros(2)?;
        w.put(&self.hostname)?;
        if self.release >= SMC_RELEASE_1 {
            w.u8(self.max_conns)?;
            w.u8(self.max_links)?;
            w.be16(self.feature_mask)?;
        } else {
            w.zeros(4)?;
        }
        w.zeros(12)?;
        Ok(())
    }
}

/// The GIDs of the client's RoCE devices in an SMC-Rv2 confirm.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct GidList {
    count: u8,
    /// Unused entries stay zero, so that equal lists compare equal.
    gids: [[u8; GID_LEN]; MAX_FCE_GIDS],
}

impl GidList {
    /// A list of `gids`, at most [`MAX_FCE_GIDS`].
    pub fn new(gids: &[[u8; GID_LEN]]) -> Result<Self, ClcError> {
        let mut list = GidList::default();
        list.gids
            .get_mut(..gids.len())
            .ok_or(ClcError::BadLayout)?
            .copy_from_slice(gids);
        list.count = u8::try_from(gids.len()).map_err(|_| ClcError::BadLayout)?;
        Ok(list)
    }

    /// The GIDs.
    pub fn gids(&self) -> &[[u8; GID_LEN]] {
        self.gids.get(..usize::from(self.count)).unwrap_or(&[])
    }

    /// Bytes the list takes in a message.
    pub fn encoded_len(&self) -> usize {
        GID_LIST_HEADER_LEN + usize::from(self.count) * GID_LEN
    }

    /// The count byte and the length of a list that has it.
    fn len_for_count(count: u8) -> usize {
        GID_LIST_HEADER_LEN + usize::from(count) * GID_LEN
    }

    /// Reads a list that must take exactly `len` bytes.
    fn read(r: &mut Reader<'_>, len: usize) -> Result<Self, ClcError> {
        let count = r.u8()?;
        if Self::len_for_count(count) != len {
            return Err(ClcError::BadLength);
        }
        if usize::from(count) > MAX_FCE_GIDS {
            return Err(ClcError::BadLayout);
        }
        r.skip(3)?;
        let mut list = GidList {
            count,
            ..GidList::default()
        };
        for g in list.gids.iter_mut().take(usize::from(count)) {
            *g = r.array()?;
        }
        Ok(list)
    }

    /// Writes the count, the reserved bytes and the GIDs.
    pub(super) fn write(&self, w: &mut Writer<'_>) -> Result<(), ClcError> {
        w.u8(self.count)?;
        w.zeros(3)?;
        for g in self.gids() {
            w.put(g)?;
        }
        Ok(())
    }
}

/// Reads what follows the fixed part of a v2 first contact accept or
/// confirm: `body` is exactly those bytes (the trailer excluded).
///
/// Release 1 and later take [`FCE_LEN_V2X`] bytes. Release 0 takes
/// [`FCE_LEN_V20`] from Linux before 6.5 and [`FCE_LEN_V2X`] from later
/// ones; when a GID list follows, its count tells which: the count must
/// match the bytes that remain, and in the longer layout the byte where the
/// short one has its count is `max_conns`, zero for release 0.
///
/// `body` is part of a complete message: running out of it means the
/// message length disagrees with the layout, `BadLength`.
pub(super) fn read_extensions(body: &[u8]) -> Result<(FirstContactExt, Option<GidList>), ClcError> {
    read_extensions_in(body).map_err(|e| match e {
        ClcError::Truncated => ClcError::BadLength,
        other => other,
    })
}

fn read_extensions_in(body: &[u8]) -> Result<(FirstContactExt, Option<GidList>), ClcError> {
    let base = FirstContactExt::read_base(&mut Reader::new(body))?;
    let fce_len = if base.release >= SMC_RELEASE_1 {
        FCE_LEN_V2X
    } else {
        release0_fce_len(body)
    };
    let fce = FirstContactExt::read(&mut Reader::new(body), fce_len)?;
    let rest = body.len().checked_sub(fce_len).ok_or(ClcError::BadLength)?;
    let gids = if rest == 0 {
        None
    } else {
        Some(GidList::read(&mut Reader::at(body, fce_len), rest)?)
    };
    Ok((fce, gids))
}

/// The extension length of a release 0 sender, from what follows it.
fn release0_fce_len(body: &[u8]) -> usize {
    let short_fits = match body.len().checked_sub(FCE_LEN_V20) {
        Some(0) => true,
        Some(rest) => body
            .get(FCE_LEN_V20)
            .is_some_and(|&count| GidList::len_for_count(count) == rest),
        None => false,
    };
    if short_fits {
        FCE_LEN_V20
    } else {
        FCE_LEN_V2X
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn gid_list_holds_at_most_max_gids() {
        let l = GidList::new(&[ROCE_GID; 2]).unwrap();
        assert_eq!(l.gids(), &[ROCE_GID; 2]);
        assert_eq!(l.encoded_len(), 36);
        assert!(GidList::new(&[ROCE_GID; MAX_FCE_GIDS]).is_ok());
        assert_eq!(
            GidList::new(&[ROCE_GID; MAX_FCE_GIDS + 1]),
            Err(ClcError::BadLayout)
        );
        assert_eq!(GidList::new(&[]).unwrap().gids().len(), 0);
    }

    #[test]
    fn release0_layouts_are_told_apart() {
        // 36-byte extension alone, 52-byte extension alone.
        let mut body = [0u8; 100];
        assert_eq!(release0_fce_len(&body[..36]), FCE_LEN_V20);
        assert_eq!(release0_fce_len(&body[..52]), FCE_LEN_V2X);
        // 56 bytes: a short extension and a list of one GID, or a long one
        // and an empty list (36 + 4 + 16 = 52 + 4). The count decides.
        body[36] = 1;
        assert_eq!(release0_fce_len(&body[..56]), FCE_LEN_V20);
        body[36] = 0;
        assert_eq!(release0_fce_len(&body[..56]), FCE_LEN_V2X);
        let (fce, gids) = read_extensions(&body[..56]).unwrap();
        assert_eq!(fce.release, 0);
        assert_eq!(gids.unwrap().gids().len(), 0);
        // A count that fits neither layout.
        body[36] = 0;
        body[52] = 7;
        assert_eq!(read_extensions(&body[..56]), Err(ClcError::BadLength));
        assert_eq!(read_extensions(&body[..35]), Err(ClcError::BadLength));
        // A short extension and an empty list.
        assert!(read_extensions(&body[..40]).is_ok_and(|(_, g)| g.is_some()));
        // Neither: too short for the long extension.
        assert_eq!(read_extensions(&body[..44]), Err(ClcError::BadLength));
    }

    #[test]
    fn too_many_gids_is_bad_layout() {
        let mut body = [0u8; 52 + 4 + 16 * 9];
        body[1] = 0x21;
        body[52] = 9;
        assert_eq!(read_extensions(&body), Err(ClcError::BadLayout));
        body[52] = 8;
        assert_eq!(read_extensions(&body), Err(ClcError::BadLength));
    }
}
