// SPDX-License-Identifier: GPL-2.0

//! The SMC-D (ISM) parts of a CLC Proposal: the SMC-D area and the SMC-Dv2
//! extension, and the ISM devices a client offers in them.
//!
//! Every proposal Linux sends has the 40-byte SMC-D area right after the
//! fixed part (offsets from the start of the message):
//!
//! ```text
//!  40   8  GID of the native ISM device offered for SMC-Dv1 (else zero)
//!  48   2  its CHID
//!  50   2  v2 extension offset, counted from 52
//!  52   3  vendor OUI, 55 5 vendor options, 60 20 reserved: all zero
//! ```
//!
//! When v2 indicates SMC-D, the header of the v2 extension counts the GID
//! entries (`+1`) and locates the SMC-Dv2 extension (`+6`, a 16-bit offset
//! counted from `+8`). Linux puts it right after the UEIDs:
//!
//! ```text
//!  +0  32  system EID (when the SEID flag of the v2 extension is set)
//! +32  16  reserved
//! +48  10  per entry: 8-byte GID, 2-byte CHID
//! ```
//!
//! A native ISM device takes one entry. An emulated one (CHID 0xFF00 to
//! 0xFFFF; the loopback device of Linux 6.9 and later is 0xFFFF) has a
//! 128-bit GID and takes two: the first carries the GID, the second its
//! extension, with the same CHID.

use super::proposal::{PROPOSAL_BASE_LEN, PROPOSAL_SMCD_LEN, V2_EXT_LEN};
use super::{ClcError, Header, Proposal, Reader, SmcType, EID_LEN, MAX_UEIDS, SMC_V2, TRAILER_LEN};

/// Length of the fixed part of the SMC-Dv2 extension (system EID and
/// reserved bytes; `struct smc_clc_smcd_v2_extension_fixed`).
pub const SMCD_V2_EXT_LEN: usize = 48;
/// Length of one GID/CHID entry (`struct smc_clc_smcd_gid_chid`).
pub const GID_CHID_LEN: usize = 10;
/// Where the SMC-Dv2 extension offset field ends in the v2 extension: the
/// offset counts from there.
pub(super) const SMCD_OFFSET_END: usize = 8;
/// The largest SMC-Dv2 extension offset upstream follows: up to where the
/// extension starts in the largest proposal Linux sends, eight UEIDs.
pub const MAX_SMCD_V2_EXT_OFFSET: usize = V2_EXT_LEN + MAX_UEIDS * EID_LEN - SMCD_OFFSET_END;
/// The CHID bits that mark an emulated ISM device when all set.
const EMULATED_CHID_MASK: u16 = 0xff00;
/// The CHID of the loopback ISM device (Linux 6.9 and later).
pub const LOOPBACK_CHID: u16 = 0xffff;

/// Whether `chid` is that of an emulated ISM device (virtio-ism or the
/// loopback device), whose GIDs are 128 bits.
pub fn chid_is_emulated(chid: u16) -> bool {
    chid & EMULATED_CHID_MASK == EMULATED_CHID_MASK
}

/// An SMC-D GID: 64 bits, and 64 more for emulated ISM devices.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SmcdGid {
    /// The GID (of a native ISM device: all of it).
    pub gid: u64,
    /// The extension of an emulated device's GID; zero for native ones.
    pub gid_ext: u64,
}

/// One GID/CHID entry as it is on the wire, and the SMC-D area's device.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct GidChid {
    /// ISM GID (or, in the second entry of an emulated device, its
    /// extension).
    pub gid: u64,
    /// ISM CHID.
    pub chid: u16,
}

impl GidChid {
    /// Reads the 10 bytes of an entry.
    fn read(r: &mut Reader<'_>) -> Result<Self, ClcError> {
        Ok(GidChid {
            gid: r.be64()?,
            chid: r.be16()?,
        })
    }
}

/// An ISM device a client offers for SMC-Dv2: its CHID and whole GID.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct IsmDevice {
    /// CHID; [`chid_is_emulated`] tells whether `gid.gid_ext` is part of
    /// the GID.
    pub chid: u16,
    /// GID.
    pub gid: SmcdGid,
}

impl IsmDevice {
    /// Entries the device takes in an SMC-Dv2 extension: two for an
    /// emulated device, else one.
    pub fn entries(&self) -> usize {
        if chid_is_emulated(self.chid) {
            2
        } else {
            1
        }
    }
}

/// The SMC-Dv2 extension of a proposal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SmcdV2Ext<'a> {
    /// The client's system EID; meaningful when the v2 extension has the
    /// SEID flag ([`super::ProposalV2::seid`]).
    pub system_eid: [u8; EID_LEN],
    /// The GID/CHID entries, [`GID_CHID_LEN`] bytes each.
    entries: &'a [u8],
}

impl<'a> SmcdV2Ext<'a> {
    /// The GID/CHID entries as sent.
    pub fn entries(&self) -> impl Iterator<Item = GidChid> + 'a {
        self.entries
            .chunks_exact(GID_CHID_LEN)
            .filter_map(|c| GidChid::read(&mut Reader::new(c)).ok())
    }

    /// The devices the entries offer, as upstream's server reads them: an
    /// entry with an emulated CHID and the next one with the same CHID are
    /// one device (the second gives the GID extension); an emulated entry
    /// without such a partner is skipped.
    pub fn devices(&self) -> IsmDevices<'a> {
        IsmDevices {
            entries: self.entries,
        }
    }
}

/// The devices of an SMC-Dv2 extension: see [`SmcdV2Ext::devices`].
#[derive(Clone, Debug)]
pub struct IsmDevices<'a> {
    /// The entries not read yet.
    entries: &'a [u8],
}

impl IsmDevices<'_> {
    /// The next entry, consumed.
    fn take(&mut self) -> Option<GidChid> {
        let mut r = Reader::new(self.entries);
        let e = GidChid::read(&mut r).ok()?;
        self.entries = self.entries.get(GID_CHID_LEN..).unwrap_or(&[]);
        Some(e)
    }

    /// The next entry, left in place.
    fn peek(&self) -> Option<GidChid> {
        GidChid::read(&mut Reader::new(self.entries)).ok()
    }
}

impl Iterator for IsmDevices<'_> {
    type Item = IsmDevice;

    fn next(&mut self) -> Option<IsmDevice> {
        loop {
            let e = self.take()?;
            let mut gid = SmcdGid {
                gid: e.gid,
                gid_ext: 0,
            };
            if chid_is_emulated(e.chid) {
                match self.peek() {
                    Some(next) if next.chid == e.chid => {
                        gid.gid_ext = next.gid;
                        self.take();
                    }
                    _ => continue,
                }
            }
            return Some(IsmDevice { chid: e.chid, gid });
        }
    }
}

impl Proposal<'_> {
    /// The ISM devices a server may match for SMC-Dv2, in upstream's
    /// order: the SMC-D area's device when its CHID is not zero (with a
    /// 64-bit GID), then those of the SMC-Dv2 extension. None without the
    /// extension.
    pub fn smcd_v2_devices(&self) -> impl Iterator<Item = IsmDevice> + '_ {
        let ext = self.smcd_v2.as_ref();
        let native = self
            .smcd
            .filter(|a| a.chid != 0 && ext.is_some())
            .map(|a| IsmDevice {
                chid: a.chid,
                gid: SmcdGid {
                    gid: a.gid,
                    gid_ext: 0,
                },
            });
        native
            .into_iter()
            .chain(ext.into_iter().flat_map(|e| e.devices()))
    }
}

/// Reads the SMC-D area's device of a proposal when it indicates SMC-D
/// (`typev1`, or `typev2` from version 2 on). An SMC-Dv1 offer needs the
/// area where the IP area offset says it is, right before the prefix
/// area; without it upstream finds no SMC-D area (`smc_get_clc_msg_smcd`):
/// SMC-D is out (`Ok(None)`), and a proposal indicating a v2 variant,
/// whose v2 extension that area locates, is malformed.
pub(super) fn read_smcd_area(
    msg: &[u8],
    header: &Header,
    iparea_offset: usize,
) -> Result<Option<GidChid>, ClcError> {
    let typev2 = if header.version >= SMC_V2 {
        SmcType::from_bits(header.typev2)
    } else {
        SmcType::N
    };
    if header.typev1.has_d() && iparea_offset != PROPOSAL_SMCD_LEN {
        return if typev2 != SmcType::N {
            Err(ClcError::BadLayout)
        } else {
            Ok(None)
        };
    }
    if !header.typev1.has_d() && !typev2.has_d() {
        return Ok(None);
    }
    Ok(Some(GidChid::read(&mut Reader::at(
        msg,
        PROPOSAL_BASE_LEN,
    ))?))
}

/// Reads the SMC-Dv2 extension of a complete proposal whose v2 extension
/// starts at `v2_start` and counts `count` entries.
///
/// An offset of zero or past [`MAX_SMCD_V2_EXT_OFFSET`] locates none, as
/// upstream sees it: `Ok(None)`. An extension whose fixed part or entries
/// would not lie inside the message before its trailer is `BadLayout`:
/// upstream would read bytes that are not part of the message.
pub(super) fn read_smcd_v2_ext(
    msg: &[u8],
    v2_start: usize,
    count: u8,
) -> Result<Option<SmcdV2Ext<'_>>, ClcError> {
    let off_pos = v2_start
        .checked_add(SMCD_OFFSET_END - 2)
        .ok_or(ClcError::BadLayout)?;
    let off = usize::from(Reader::at(msg, off_pos).be16()?);
    if off == 0 || off > MAX_SMCD_V2_EXT_OFFSET {
        return Ok(None);
    }
    let body = msg
        .len()
        .checked_sub(TRAILER_LEN)
        .and_then(|end| msg.get(..end))
        .ok_or(ClcError::BadLength)?;
    // Inside the message: running out of it is a bad offset or count.
    let outside = |_| ClcError::BadLayout;
    let mut r = Reader::at(body, off_pos.saturating_add(2 + off));
    let system_eid = r.array().map_err(outside)?;
    r.skip(SMCD_V2_EXT_LEN - EID_LEN).map_err(outside)?;
    let entries = r
        .bytes(usize::from(count) * GID_CHID_LEN)
        .map_err(outside)?;
    Ok(Some(SmcdV2Ext {
        system_eid,
        entries,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;
    use super::GidChid as Entry;

    fn native(gid: u64, chid: u16) -> IsmDevice {
        IsmDevice {
            chid,
            gid: SmcdGid { gid, gid_ext: 0 },
        }
    }

    fn loopback() -> IsmDevice {
        IsmDevice {
            chid: LO_CHID,
            gid: SmcdGid {
                gid: LO_GID,
                gid_ext: LO_GID_EXT,
            },
        }
    }

    #[test]
    fn emulated_chids_are_the_top_256() {
        assert!(chid_is_emulated(0xffff) && chid_is_emulated(0xff00));
        assert!(!chid_is_emulated(0xfeff) && !chid_is_emulated(0) && !chid_is_emulated(0x0123));
        assert_eq!(LOOPBACK_CHID, 0xffff);
        assert_eq!((loopback().entries(), native(1, 1).entries()), (2, 1));
        // Upstream's bound: the SMC-Dv2 extension of a proposal with eight
        // UEIDs starts 288 bytes past the offset field.
        assert_eq!(MAX_SMCD_V2_EXT_OFFSET, 288);
        assert_eq!((SMCD_V2_EXT_LEN, GID_CHID_LEN), (48, 10));
    }

    #[test]
    fn smcd_v1_proposal() {
        let b = proposal_smcd_v1_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!((p.header.typev1, p.header.typev2), (SmcType::D, 2));
        assert_eq!(
            p.smcd,
            Some(Entry {
                gid: ISM_GID,
                chid: ISM_CHID
            })
        );
        assert_eq!(p.ipv4_prefix.map(|x| x.len), Some(24));
        assert!(p.v2.is_none() && p.smcd_v2.is_none());
        assert_eq!(p.local, LocalInfo::default());
        // No v2 offer: nothing to match for SMC-Dv2.
        assert_eq!(p.smcd_v2_devices().count(), 0);
    }

    #[test]
    fn smcd_v2_proposal_with_loopback() {
        let b = proposal_smcd_v2_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!(p.header.typev1, SmcType::N);
        assert!(p.ipv4_prefix.is_none());
        // SMC-D is indicated (in v2): the area is there, without a device.
        assert_eq!(p.smcd, Some(Entry::default()));
        let v2 = p.v2.unwrap();
        assert!(v2.seid);
        assert_eq!((v2.release, v2.ism_gid_count, v2.feature_mask), (1, 3, 1));
        assert_eq!((v2.roce_gid, v2.max_conns, v2.max_links), ([0; 16], 0, 0));
        let ext = p.smcd_v2.unwrap();
        assert_eq!(&ext.system_eid, SEID);
        let entries = [
            Entry {
                gid: LO_GID,
                chid: LO_CHID,
            },
            Entry {
                gid: LO_GID_EXT,
                chid: LO_CHID,
            },
            Entry {
                gid: ISM2_GID,
                chid: ISM2_CHID,
            },
        ];
        assert!(ext.entries().eq(entries));
        let devices = [loopback(), native(ISM2_GID, ISM2_CHID)];
        assert!(ext.devices().eq(devices));
        // The area's CHID is zero: it offers no device.
        assert!(p.smcd_v2_devices().eq(devices));
    }

    #[test]
    fn smcd_and_smcr_in_v1_and_v2() {
        let b = proposal_smcd_all_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!(p.local.peer_id, ID);
        assert_eq!(
            p.smcd,
            Some(Entry {
                gid: ISM_GID,
                chid: ISM_CHID
            })
        );
        let v2 = p.v2.unwrap();
        assert_eq!(
            (v2.roce_gid, v2.max_conns, v2.max_links),
            (ROCE_GID, 255, 2)
        );
        assert_eq!(v2.ueids().count(), 1);
        // The SMC-D area's device comes first, with a 64-bit GID.
        let devices = [
            native(ISM_GID, ISM_CHID),
            native(ISM2_GID, ISM2_CHID),
            loopback(),
        ];
        assert!(p.smcd_v2_devices().eq(devices));
        // What SMC-R choice sees is unchanged by the SMC-D parts.
        let all = ServerCaps {
            smcr_v1: true,
            smcr_v2: true,
        };
        assert_eq!(choose_variant(&p, all), Ok(Variant::SmcrV2));
    }

    #[test]
    fn unpaired_emulated_entries_are_skipped() {
        let mut raw = [0u8; 5 * GID_CHID_LEN];
        let entries = [
            (1u64, 0xff01u16), // the next one's CHID differs: skipped
            (2, 0xff02),
            (3, 0xff02),
            (4, 0x0042),
            (5, 0xffff), // last one, no partner: skipped
        ];
        for (c, (gid, chid)) in raw.chunks_exact_mut(GID_CHID_LEN).zip(entries) {
            c[..8].copy_from_slice(&gid.to_be_bytes());
            c[8..].copy_from_slice(&chid.to_be_bytes());
        }
        let ext = SmcdV2Ext {
            system_eid: [0; 32],
            entries: &raw,
        };
        let want = [
            IsmDevice {
                chid: 0xff02,
                gid: SmcdGid { gid: 2, gid_ext: 3 },
            },
            native(4, 0x0042),
        ];
        assert!(ext.devices().eq(want));
        assert_eq!(ext.entries().count(), 5);
    }

    #[test]
    fn smcd_v2_extension_offsets_as_upstream_follows_them() {
        // No offset, or one past upstream's bound: no SMC-Dv2 extension
        // (upstream declines SMC-Dv2 with NOV2DEXT); the rest still parses.
        for off in [0u16, 289, 0xffff] {
            let mut b = proposal_smcd_v2_bytes();
            b[86..88].copy_from_slice(&off.to_be_bytes());
            let p = Proposal::parse(&b).unwrap();
            assert!(p.smcd_v2.is_none() && p.v2.is_some());
            assert_eq!(p.smcd_v2_devices().count(), 0);
        }
        // An extension elsewhere inside the message is read there.
        let mut b = proposal_smcd_v2_bytes();
        b[86..88].copy_from_slice(&60u16.to_be_bytes());
        let ext = Proposal::parse(&b).unwrap().smcd_v2.unwrap();
        assert_eq!(ext.system_eid[..4], UEID[28..32]);
        // One that would run into the trailer or past the message.
        for off in [65u16, 100, 288] {
            b[86..88].copy_from_slice(&off.to_be_bytes());
            assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout), "{off}");
        }
    }

    #[test]
    fn hostile_counts_and_layouts_are_errors() {
        // More entries than upstream allows.
        let mut b = proposal_smcd_v2_bytes();
        for count in [9u8, 0xff] {
            b[81] = count;
            assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        }
        // A count the length does not match.
        for count in [0u8, 2, 4, 8] {
            b[81] = count;
            assert_eq!(Proposal::parse(&b), Err(ClcError::BadLength));
        }
        // SMC-Dv1 offered, but the IP area offset leaves no SMC-D area.
        for (mut b, ver) in [
            (proposal_smcd_v1_bytes(), 0x20),
            (proposal_smcd_v1_bytes(), 0x10),
        ] {
            b[7] = ver | 1;
            b[38..40].copy_from_slice(&0u16.to_be_bytes());
            assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        }
        let mut b = proposal_smcd_all_bytes();
        b[38..40].copy_from_slice(&20u16.to_be_bytes());
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        // A v1 message: typev2 means nothing, no SMC-D area is read for it.
        let mut b = proposal_v1_bytes();
        b[7] = 0x10 | (1 << 2);
        assert_eq!(Proposal::parse(&b).unwrap().smcd, None);
    }

    #[test]
    fn every_truncation_is_an_error_and_mutations_never_panic() {
        let (a, b, c) = (
            proposal_smcd_v1_bytes(),
            proposal_smcd_v2_bytes(),
            proposal_smcd_all_bytes(),
        );
        let msgs: [&[u8]; 3] = [&a, &b, &c];
        let mut buf = [0u8; 256];
        for m in msgs {
            for n in 0..m.len() {
                assert!(Proposal::parse(&m[..n]).is_err(), "prefix of {n} parsed");
            }
            for i in 0..m.len() {
                for v in [0u8, 1, 2, 3, 9, 0x40, 0x7f, 0x80, 0xfe, 0xff] {
                    buf[..m.len()].copy_from_slice(m);
                    buf[i] = v;
                    if let Ok(p) = Proposal::parse(&buf[..m.len()]) {
                        // Whatever parses can be walked without a panic.
                        let n = p.smcd_v2_devices().count();
                        assert!(n <= MAX_ISM_GIDS + 1);
                        if let Some(e) = p.smcd_v2 {
                            assert!(e.entries().count() <= MAX_ISM_GIDS);
                        }
                    }
                }
            }
        }
    }
}
