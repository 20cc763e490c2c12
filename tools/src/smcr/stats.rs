// SPDX-License-Identifier: GPL-2.0

//! `smcr stats` / `smcd stats`: the SMC statistics of the kernel (upstream
//! `stats.c`, smc-tools 1.8.x).
//!
//! * `show` (the default): the text summary of one technology (SMC-R for
//!   `smcr`, SMC-D for `smcd`), `-d` adding the client/server split, the
//!   SMC versions, the three most frequent fallback reasons per side,
//!   buffer downgrades and reuses, and the special socket calls one by one;
//! * `reset`: the same text, then the kernel's values are kept as the new
//!   zero;
//! * `json`: the technology's 63 counters as one JSON object.
//!
//! The words are prefixes (`contains()`): `h`, `s`, `r`, `j`.
//!
//! The kernel's counters only grow. "Reset" is upstream's cache file,
//! `/tmp/.smcstats.u<uid>`: the values at the last reset, which are
//! subtracted from the kernel's unless `-a` (absolute) is given, or unless
//! a counter is below its cached value (wrapped, or the module was
//! reloaded), in which case the file is deleted and the kernel's values are
//! shown as they are. Its layout is upstream's, line for line, so that the
//! two programs share it.
//!
//! Two dumps are read: `SMC_NETLINK_GET_FBACK_STATS` (fallbacks, one
//! message per reason and side), then `SMC_NETLINK_GET_STATS` (one
//! message). Their messages are decoded as upstream's libnl handlers decode
//! them (`handle_gen_fback_stats_reply()`, `handle_gen_stats_reply()`),
//! with the same messages and the same early ends.

use super::common::{
    Detail, Flavor, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_GET_FBACK_STATS, SMC_NETLINK_GET_STATS,
};
use crate::genl::{self, Family, GenlMsg};
use crate::netlink::{attrs, DumpError, DumpWarning, Transport};
use std::fmt::Write as _;
use std::io::{self, Read, Seek, Write as _};
use std::path::{Path, PathBuf};

/// `SMC_GEN_STATS` (nest).
pub const SMC_GEN_STATS: u16 = 7;
/// `SMC_GEN_FBACK_STATS` (nest).
pub const SMC_GEN_FBACK_STATS: u16 = 8;
/// `SMC_GEN_MAX` of upstream's headers.
pub const SMC_GEN_MAX: u16 = 8;

/// `SMC_NLA_STATS_SMCD_TECH` (nest).
pub const SMC_NLA_STATS_SMCD_TECH: u16 = 1;
/// `SMC_NLA_STATS_SMCR_TECH` (nest).
pub const SMC_NLA_STATS_SMCR_TECH: u16 = 2;
/// `SMC_NLA_STATS_CLNT_HS_ERR_CNT` (u64).
pub const SMC_NLA_STATS_CLNT_HS_ERR_CNT: u16 = 3;
/// `SMC_NLA_STATS_SRV_HS_ERR_CNT` (u64).
pub const SMC_NLA_STATS_SRV_HS_ERR_CNT: u16 = 4;

/// `SMC_NLA_STATS_T_TX_RMB_SIZE` (nest of `SMC_NLA_STATS_PLOAD_*`).
pub const SMC_NLA_STATS_T_TX_RMB_SIZE: u16 = 1;
/// `SMC_NLA_STATS_T_RX_RMB_SIZE` (nest of `SMC_NLA_STATS_PLOAD_*`).
pub const SMC_NLA_STATS_T_RX_RMB_SIZE: u16 = 2;
/// `SMC_NLA_STATS_T_TXPLOAD_SIZE` (nest of `SMC_NLA_STATS_PLOAD_*`).
pub const SMC_NLA_STATS_T_TXPLOAD_SIZE: u16 = 3;
/// `SMC_NLA_STATS_T_RXPLOAD_SIZE` (nest of `SMC_NLA_STATS_PLOAD_*`).
pub const SMC_NLA_STATS_T_RXPLOAD_SIZE: u16 = 4;
/// `SMC_NLA_STATS_T_TX_RMB_STATS` (nest of `SMC_NLA_STATS_RMB_*`).
pub const SMC_NLA_STATS_T_TX_RMB_STATS: u16 = 5;
/// `SMC_NLA_STATS_T_RX_RMB_STATS` (nest of `SMC_NLA_STATS_RMB_*`).
pub const SMC_NLA_STATS_T_RX_RMB_STATS: u16 = 6;
/// `SMC_NLA_STATS_T_CLNT_V1_SUCC` (u64).
pub const SMC_NLA_STATS_T_CLNT_V1_SUCC: u16 = 7;
/// `SMC_NLA_STATS_T_CLNT_V2_SUCC` (u64).
pub const SMC_NLA_STATS_T_CLNT_V2_SUCC: u16 = 8;
/// `SMC_NLA_STATS_T_SRV_V1_SUCC` (u64).
pub const SMC_NLA_STATS_T_SRV_V1_SUCC: u16 = 9;
/// `SMC_NLA_STATS_T_SRV_V2_SUCC` (u64).
pub const SMC_NLA_STATS_T_SRV_V2_SUCC: u16 = 10;
/// `SMC_NLA_STATS_T_SENDPAGE_CNT` (u64).
pub const SMC_NLA_STATS_T_SENDPAGE_CNT: u16 = 11;
/// `SMC_NLA_STATS_T_SPLICE_CNT` (u64).
pub const SMC_NLA_STATS_T_SPLICE_CNT: u16 = 12;
/// `SMC_NLA_STATS_T_CORK_CNT` (u64).
pub const SMC_NLA_STATS_T_CORK_CNT: u16 = 13;
/// `SMC_NLA_STATS_T_NDLY_CNT` (u64).
pub const SMC_NLA_STATS_T_NDLY_CNT: u16 = 14;
/// `SMC_NLA_STATS_T_URG_DATA_CNT` (u64).
pub const SMC_NLA_STATS_T_URG_DATA_CNT: u16 = 15;
/// `SMC_NLA_STATS_T_RX_BYTES` (u64).
pub const SMC_NLA_STATS_T_RX_BYTES: u16 = 16;
/// `SMC_NLA_STATS_T_TX_BYTES` (u64).
pub const SMC_NLA_STATS_T_TX_BYTES: u16 = 17;
/// `SMC_NLA_STATS_T_RX_CNT` (u64).
pub const SMC_NLA_STATS_T_RX_CNT: u16 = 18;
/// `SMC_NLA_STATS_T_TX_CNT` (u64).
pub const SMC_NLA_STATS_T_TX_CNT: u16 = 19;
/// `SMC_NLA_STATS_T_MAX` of upstream's headers: the kernel's later
/// `SMC_NLA_STATS_T_RX_RMB_USAGE`/`TX_RMB_USAGE` (20, 21; `uint`) are
/// beyond it and ignored, as upstream ignores them.
pub const SMC_NLA_STATS_T_MAX: u16 = 19;

/// `SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT` (u64); the other
/// `SMC_NLA_STATS_RMB_*` follow in [`RmbCnt`]'s order, up to
/// `SMC_NLA_STATS_RMB_DGRADE_CNT` (7).
pub const SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT: u16 = 1;
/// `SMC_NLA_STATS_RMB_MAX`.
pub const SMC_NLA_STATS_RMB_MAX: u16 = 7;
/// `SMC_NLA_STATS_PLOAD_8K` (u64); `SMC_NLA_STATS_PLOAD_16K` ..
/// `SMC_NLA_STATS_PLOAD_G_1024K` follow (2 .. 9).
pub const SMC_NLA_STATS_PLOAD_8K: u16 = 1;
/// `SMC_NLA_STATS_PLOAD_MAX`.
pub const SMC_NLA_STATS_PLOAD_MAX: u16 = 9;

/// `SMC_NLA_FBACK_STATS_TYPE` (u8: 1 server, 0 client).
pub const SMC_NLA_FBACK_STATS_TYPE: u16 = 1;
/// `SMC_NLA_FBACK_STATS_SRV_CNT` (u64).
pub const SMC_NLA_FBACK_STATS_SRV_CNT: u16 = 2;
/// `SMC_NLA_FBACK_STATS_CLNT_CNT` (u64).
pub const SMC_NLA_FBACK_STATS_CLNT_CNT: u16 = 3;
/// `SMC_NLA_FBACK_STATS_RSN_CODE` (u32).
pub const SMC_NLA_FBACK_STATS_RSN_CODE: u16 = 4;
/// `SMC_NLA_FBACK_STATS_RSN_CNT` (u16).
pub const SMC_NLA_FBACK_STATS_RSN_CNT: u16 = 5;
/// `SMC_NLA_FBACK_STATS_MAX`.
pub const SMC_NLA_FBACK_STATS_MAX: u16 = 5;

/// `SMC_MAX_FBACK_RSN_CNT`: reasons kept per side.
pub const SMC_MAX_FBACK_RSN_CNT: usize = 30;
/// The histogram buckets (`SMC_BUF_8K` .. `SMC_BUF_G_1024K`).
pub const SMC_BUF_MAX: usize = 9;
/// u64 words of [`Tech`] (upstream's `struct smc_stats_tech`).
pub const TECH_WORDS: usize = 4 * SMC_BUF_MAX + 2 * 7 + 13;
/// u64 words of [`Stats`] (upstream's `struct smc_stats`).
pub const STATS_WORDS: usize = 2 * TECH_WORDS + 2;

/// Upstream's index of SMC-R in `smc_stats.smc[]` (`SMC_TYPE_R`).
pub const SMC_TYPE_R: usize = 0;
/// Upstream's index of SMC-D in `smc_stats.smc[]` (`SMC_TYPE_D`).
pub const SMC_TYPE_D: usize = 1;

/// One `stats` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `show`: the text.
    Show,
    /// `reset`: the text, then the cache file rewritten.
    Reset,
    /// `json`: the counters as JSON.
    Json,
}

/// What the arguments after `stats` ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// Run it.
    Run(Command),
    /// The usage on stderr, exit 255.
    Usage,
}

/// Upstream's `handle_cmd_params()`: nothing is `show`; else exactly one
/// word, a prefix of `help` (the usage), `show`, `reset` or `json`, tried
/// in that order.
pub fn parse_args(args: &[Vec<u8>]) -> Args {
    let word = match args {
        [] => return Args::Run(Command::Show),
        [w] => w.as_slice(),
        _ => return Args::Usage,
    };
    let abbr = |w: &str| super::common::abbreviates(word, w);
    if abbr("help") {
        Args::Usage
    } else if abbr("show") {
        Args::Run(Command::Show)
    } else if abbr("reset") {
        Args::Run(Command::Reset)
    } else if abbr("json") {
        Args::Run(Command::Json)
    } else {
        Args::Usage
    }
}

/// The usage (`usage()` of `stats.c`; `json` is not in it there either).
pub fn usage(flavor: Flavor) -> String {
    format!("Usage: {} stats [show | reset]\n", flavor.name())
}

/// `struct smc_stats_rmbcnt`, in the order of its attributes
/// (`SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT` = 1 .. `DGRADE_CNT` = 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RmbCnt {
    /// Send requests larger than the peer's buffer.
    pub buf_size_small_peer_cnt: u64,
    /// Send requests larger than the local buffer.
    pub buf_size_small_cnt: u64,
    /// The peer's buffer was full.
    pub buf_full_peer_cnt: u64,
    /// The local buffer was full.
    pub buf_full_cnt: u64,
    /// Buffers reused.
    pub reuse_cnt: u64,
    /// Buffers allocated.
    pub alloc_cnt: u64,
    /// Buffers smaller than asked for.
    pub dgrade_cnt: u64,
}

impl RmbCnt {
    fn words_mut(&mut self) -> [&mut u64; 7] {
        [
            &mut self.buf_size_small_peer_cnt,
            &mut self.buf_size_small_cnt,
            &mut self.buf_full_peer_cnt,
            &mut self.buf_full_cnt,
            &mut self.reuse_cnt,
            &mut self.alloc_cnt,
            &mut self.dgrade_cnt,
        ]
    }
}

/// `struct smc_stats_tech`: one technology's counters, in upstream's order
/// (which is the order of the cache file and of the JSON names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tech {
    /// Send buffer sizes (`SMC_NLA_STATS_T_TX_RMB_SIZE`).
    pub tx_rmbsize: [u64; SMC_BUF_MAX],
    /// Receive buffer sizes (`SMC_NLA_STATS_T_RX_RMB_SIZE`).
    pub rx_rmbsize: [u64; SMC_BUF_MAX],
    /// Send request sizes (`SMC_NLA_STATS_T_TXPLOAD_SIZE`).
    pub tx_pd: [u64; SMC_BUF_MAX],
    /// Receive request sizes (`SMC_NLA_STATS_T_RXPLOAD_SIZE`).
    pub rx_pd: [u64; SMC_BUF_MAX],
    /// `SMC_NLA_STATS_T_TX_RMB_STATS`.
    pub rmb_tx: RmbCnt,
    /// `SMC_NLA_STATS_T_RX_RMB_STATS`.
    pub rmb_rx: RmbCnt,
    /// `SMC_NLA_STATS_T_CLNT_V1_SUCC`.
    pub clnt_v1_succ_cnt: u64,
    /// `SMC_NLA_STATS_T_CLNT_V2_SUCC`.
    pub clnt_v2_succ_cnt: u64,
    /// `SMC_NLA_STATS_T_SRV_V1_SUCC`.
    pub srv_v1_succ_cnt: u64,
    /// `SMC_NLA_STATS_T_SRV_V2_SUCC`.
    pub srv_v2_succ_cnt: u64,
    /// `SMC_NLA_STATS_T_SENDPAGE_CNT`.
    pub sendpage_cnt: u64,
    /// `SMC_NLA_STATS_T_URG_DATA_CNT`.
    pub urg_data_cnt: u64,
    /// `SMC_NLA_STATS_T_SPLICE_CNT`.
    pub splice_cnt: u64,
    /// `SMC_NLA_STATS_T_CORK_CNT`.
    pub cork_cnt: u64,
    /// `SMC_NLA_STATS_T_NDLY_CNT`.
    pub ndly_cnt: u64,
    /// `SMC_NLA_STATS_T_RX_BYTES`.
    pub rx_bytes: u64,
    /// `SMC_NLA_STATS_T_TX_BYTES`.
    pub tx_bytes: u64,
    /// `SMC_NLA_STATS_T_RX_CNT`.
    pub rx_cnt: u64,
    /// `SMC_NLA_STATS_T_TX_CNT`.
    pub tx_cnt: u64,
}

impl Tech {
    /// The counters in upstream's order, each one by reference.
    pub fn words_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        let scalars = [
            &mut self.clnt_v1_succ_cnt,
            &mut self.clnt_v2_succ_cnt,
            &mut self.srv_v1_succ_cnt,
            &mut self.srv_v2_succ_cnt,
            &mut self.sendpage_cnt,
            &mut self.urg_data_cnt,
            &mut self.splice_cnt,
            &mut self.cork_cnt,
            &mut self.ndly_cnt,
            &mut self.rx_bytes,
            &mut self.tx_bytes,
            &mut self.rx_cnt,
            &mut self.tx_cnt,
        ];
        self.tx_rmbsize
            .iter_mut()
            .chain(self.rx_rmbsize.iter_mut())
            .chain(self.tx_pd.iter_mut())
            .chain(self.rx_pd.iter_mut())
            .chain(self.rmb_tx.words_mut())
            .chain(self.rmb_rx.words_mut())
            .chain(scalars)
    }

    /// The counters in upstream's order.
    pub fn words(&self) -> [u64; TECH_WORDS] {
        let mut copy = *self;
        let mut w = [0u64; TECH_WORDS];
        for (d, s) in w.iter_mut().zip(copy.words_mut()) {
            *d = *s;
        }
        w
    }
}

/// `struct smc_stats`: both technologies (SMC-R first, as upstream's
/// `smc[SMC_TYPE_R]`) and the handshake errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `smc[SMC_TYPE_R]`, `smc[SMC_TYPE_D]`.
    pub smc: [Tech; 2],
    /// `SMC_NLA_STATS_CLNT_HS_ERR_CNT`.
    pub clnt_hshake_err_cnt: u64,
    /// `SMC_NLA_STATS_SRV_HS_ERR_CNT`.
    pub srv_hshake_err_cnt: u64,
}

impl Stats {
    /// The counters in upstream's order (the cache file's first lines).
    pub fn words_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        let [r, d] = &mut self.smc;
        r.words_mut()
            .chain(d.words_mut())
            .chain([&mut self.clnt_hshake_err_cnt, &mut self.srv_hshake_err_cnt])
    }

    /// The counters in upstream's order.
    pub fn words(&self) -> [u64; STATS_WORDS] {
        let mut copy = *self;
        let mut w = [0u64; STATS_WORDS];
        for (d, s) in w.iter_mut().zip(copy.words_mut()) {
            *d = *s;
        }
        w
    }
}

/// `struct smc_stats_fback`: a reason and how often it was seen (code 0:
/// an empty slot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reason {
    /// The CLC decline code.
    pub code: i32,
    /// Its count.
    pub count: i32,
}

/// `struct smc_stats_rsn`: the fallback reasons of each side, in the order
/// the kernel reported them, and the fallback totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fallbacks {
    /// Server side.
    pub srv: [Reason; SMC_MAX_FBACK_RSN_CNT],
    /// Client side.
    pub clnt: [Reason; SMC_MAX_FBACK_RSN_CNT],
    /// `SMC_NLA_FBACK_STATS_SRV_CNT`.
    pub srv_fback_cnt: u64,
    /// `SMC_NLA_FBACK_STATS_CLNT_CNT`.
    pub clnt_fback_cnt: u64,
}

/// libnl's `nla_parse()` with a policy that gives each type up to `max` its
/// minimum length: the payload of the last attribute of each type (flag
/// bits masked, types above `max` ignored), or `None` when one is shorter
/// than its policy wants (`-NLE_RANGE`).
fn parse_nested(buf: &[u8], max: u16, minlen: impl Fn(u16) -> usize) -> Option<Vec<Option<&[u8]>>> {
    let mut tb = vec![None; usize::from(max) + 1];
    for a in attrs(buf) {
        if a.kind > max {
            continue;
        }
        if a.payload.len() < minlen(a.kind) {
            return None;
        }
        tb[usize::from(a.kind)] = Some(a.payload);
    }
    Some(tb)
}

/// A policy of u64 counters from type 1 up; type 0 is the pad.
fn u64_policy(kind: u16) -> usize {
    if kind == 0 {
        0
    } else {
        8
    }
}

fn get_u64(tb: &[Option<&[u8]>], kind: u16) -> Option<u64> {
    let p = tb.get(usize::from(kind)).copied().flatten()?;
    Some(u64::from_ne_bytes(p.get(..8)?.try_into().ok()?))
}

fn get_u32(tb: &[Option<&[u8]>], kind: u16) -> Option<u32> {
    let p = tb.get(usize::from(kind)).copied().flatten()?;
    Some(u32::from_ne_bytes(p.get(..4)?.try_into().ok()?))
}

fn get_u16(tb: &[Option<&[u8]>], kind: u16) -> Option<u16> {
    let p = tb.get(usize::from(kind)).copied().flatten()?;
    Some(u16::from_ne_bytes(p.get(..2)?.try_into().ok()?))
}

fn get_u8(tb: &[Option<&[u8]>], kind: u16) -> Option<u8> {
    tb.get(usize::from(kind))
        .copied()
        .flatten()?
        .first()
        .copied()
}

/// The top-level attributes of a reply (`genlmsg_parse()` with
/// `smc_gen_net_policy`, which checks no length): `None` when the message
/// is shorter than its generic netlink header.
fn parse_top(payload: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    let msg = GenlMsg::parse(payload)?;
    parse_nested(msg.attrs, SMC_GEN_MAX, |_| 0)
}

/// Upstream's message for a reply shorter than a generic netlink header
/// (it adds `nl_msg_dump()`, which we do not).
pub const INVALID_DATA: &str = "smc: invalid data returned";
/// Upstream's message for a top-level nest that fails its policy.
pub const BAD_NEST: &str = "failed to parse nested attributes!";
/// Upstream's message for a technology nest that fails its policy (it
/// names the fallback policy, as upstream does).
pub const BAD_TECH_NEST: &str =
    "Error: Failed to parse nested attributes: smc_gen_stats_fback_policy";
/// Upstream's message for an RMB nest that fails its policy.
pub const BAD_RMB_NEST: &str = "Error: Failed to parse nested attributes: smc_gen_stats_rmb_policy";
/// Upstream's message for a size histogram nest that fails its policy.
pub const BAD_PLOAD_NEST: &str =
    "Error: Failed to parse nested attributes: smc_gen_stats_pload_policy";

/// What one message of a dump did (upstream's handler's return value and
/// what it printed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Messages for stderr.
    pub errors: Vec<&'static str>,
    /// `NL_STOP`: the dump's further messages are not looked at.
    pub stop: bool,
}

impl Step {
    fn stop(errors: Vec<&'static str>) -> Step {
        Step { errors, stop: true }
    }
}

/// `handle_gen_fback_stats_reply()`: one message of the fallback dump into
/// `rsn`. Each message appends its reason to the first empty slot of its
/// side (the last slot when all are taken); the totals come with the
/// first message.
pub fn apply_fback_reply(payload: &[u8], rsn: &mut Fallbacks) -> Step {
    let Some(top) = parse_top(payload) else {
        return Step::stop(vec![INVALID_DATA]);
    };
    let Some(nest) = top[usize::from(SMC_GEN_FBACK_STATS)] else {
        return Step::stop(Vec::new());
    };
    let policy = |kind: u16| match kind {
        SMC_NLA_FBACK_STATS_TYPE => 1,
        SMC_NLA_FBACK_STATS_SRV_CNT | SMC_NLA_FBACK_STATS_CLNT_CNT => 8,
        SMC_NLA_FBACK_STATS_RSN_CODE => 4,
        SMC_NLA_FBACK_STATS_RSN_CNT => 2,
        _ => 0,
    };
    let Some(tb) = parse_nested(nest, SMC_NLA_FBACK_STATS_MAX, policy) else {
        return Step::stop(vec![BAD_NEST]);
    };
    if let Some(srv) = get_u64(&tb, SMC_NLA_FBACK_STATS_SRV_CNT) {
        rsn.srv_fback_cnt = srv;
        // Upstream reads the client total when the server total is there
        // (and would crash without the client's).
        if let Some(clnt) = get_u64(&tb, SMC_NLA_FBACK_STATS_CLNT_CNT) {
            rsn.clnt_fback_cnt = clnt;
        }
    }
    if let Some(kind) = get_u8(&tb, SMC_NLA_FBACK_STATS_TYPE) {
        let side = if kind != 0 {
            &mut rsn.srv
        } else {
            &mut rsn.clnt
        };
        let pos = side
            .iter()
            .position(|r| r.code == 0)
            .unwrap_or(SMC_MAX_FBACK_RSN_CNT - 1);
        if let Some(code) = get_u32(&tb, SMC_NLA_FBACK_STATS_RSN_CODE) {
            side[pos].code = code as i32;
        }
        if let Some(count) = get_u16(&tb, SMC_NLA_FBACK_STATS_RSN_CNT) {
            side[pos].count = i32::from(count);
        }
    }
    Step::default()
}

/// `show_tech_rmb_info()`; a missing nest counts as empty (upstream
/// would crash on it).
fn fill_rmb(nest: Option<&[u8]>, rmb: &mut RmbCnt) -> Result<(), &'static str> {
    let tb = parse_nested(nest.unwrap_or_default(), SMC_NLA_STATS_RMB_MAX, u64_policy)
        .ok_or(BAD_RMB_NEST)?;
    for (kind, slot) in (SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT..).zip(rmb.words_mut()) {
        if let Some(v) = get_u64(&tb, kind) {
            *slot = v;
        }
    }
    Ok(())
}

/// `show_tech_pload_info()`; a missing nest counts as empty.
fn fill_pload(nest: Option<&[u8]>, buf: &mut [u64; SMC_BUF_MAX]) -> Result<(), &'static str> {
    let tb = parse_nested(
        nest.unwrap_or_default(),
        SMC_NLA_STATS_PLOAD_MAX,
        u64_policy,
    )
    .ok_or(BAD_PLOAD_NEST)?;
    for (kind, slot) in (SMC_NLA_STATS_PLOAD_8K..).zip(buf.iter_mut()) {
        if let Some(v) = get_u64(&tb, kind) {
            *slot = v;
        }
    }
    Ok(())
}

/// `fill_tech_info()`: one technology's nest into `tech`; the first
/// failing nest ends it (the values read so far stay).
fn fill_tech(nest: &[u8], tech: &mut Tech) -> Result<(), &'static str> {
    let policy = |kind: u16| match kind {
        SMC_NLA_STATS_T_CLNT_V1_SUCC..=SMC_NLA_STATS_T_TX_CNT => 8,
        _ => 0,
    };
    let tb = parse_nested(nest, SMC_NLA_STATS_T_MAX, policy).ok_or(BAD_TECH_NEST)?;
    let scalars = [
        (SMC_NLA_STATS_T_SRV_V1_SUCC, &mut tech.srv_v1_succ_cnt),
        (SMC_NLA_STATS_T_SRV_V2_SUCC, &mut tech.srv_v2_succ_cnt),
        (SMC_NLA_STATS_T_CLNT_V1_SUCC, &mut tech.clnt_v1_succ_cnt),
        (SMC_NLA_STATS_T_CLNT_V2_SUCC, &mut tech.clnt_v2_succ_cnt),
        (SMC_NLA_STATS_T_RX_BYTES, &mut tech.rx_bytes),
        (SMC_NLA_STATS_T_TX_BYTES, &mut tech.tx_bytes),
        (SMC_NLA_STATS_T_RX_CNT, &mut tech.rx_cnt),
        (SMC_NLA_STATS_T_TX_CNT, &mut tech.tx_cnt),
        (SMC_NLA_STATS_T_SENDPAGE_CNT, &mut tech.sendpage_cnt),
        (SMC_NLA_STATS_T_SPLICE_CNT, &mut tech.splice_cnt),
        (SMC_NLA_STATS_T_CORK_CNT, &mut tech.cork_cnt),
        (SMC_NLA_STATS_T_NDLY_CNT, &mut tech.ndly_cnt),
        (SMC_NLA_STATS_T_URG_DATA_CNT, &mut tech.urg_data_cnt),
    ];
    for (kind, slot) in scalars {
        if let Some(v) = get_u64(&tb, kind) {
            *slot = v;
        }
    }
    let nest = |kind: u16| tb[usize::from(kind)];
    fill_rmb(nest(SMC_NLA_STATS_T_TX_RMB_STATS), &mut tech.rmb_tx)?;
    fill_rmb(nest(SMC_NLA_STATS_T_RX_RMB_STATS), &mut tech.rmb_rx)?;
    fill_pload(nest(SMC_NLA_STATS_T_TXPLOAD_SIZE), &mut tech.tx_pd)?;
    fill_pload(nest(SMC_NLA_STATS_T_RXPLOAD_SIZE), &mut tech.rx_pd)?;
    fill_pload(nest(SMC_NLA_STATS_T_TX_RMB_SIZE), &mut tech.tx_rmbsize)?;
    fill_pload(nest(SMC_NLA_STATS_T_RX_RMB_SIZE), &mut tech.rx_rmbsize)?;
    Ok(())
}

/// `handle_gen_stats_reply()`: one message of the statistics dump into
/// `stats`, which a message with a well-formed `SMC_GEN_STATS` replaces
/// entirely (SMC-R's nest is read first, then SMC-D's).
pub fn apply_stats_reply(payload: &[u8], stats: &mut Stats) -> Step {
    let Some(top) = parse_top(payload) else {
        return Step::stop(vec![INVALID_DATA]);
    };
    let Some(nest) = top[usize::from(SMC_GEN_STATS)] else {
        return Step::stop(Vec::new());
    };
    let policy = |kind: u16| match kind {
        SMC_NLA_STATS_CLNT_HS_ERR_CNT | SMC_NLA_STATS_SRV_HS_ERR_CNT => 8,
        _ => 0,
    };
    let Some(tb) = parse_nested(nest, SMC_NLA_STATS_SRV_HS_ERR_CNT, policy) else {
        return Step::stop(vec![BAD_NEST]);
    };
    *stats = Stats::default();
    if let Some(v) = get_u64(&tb, SMC_NLA_STATS_CLNT_HS_ERR_CNT) {
        stats.clnt_hshake_err_cnt = v;
    }
    if let Some(v) = get_u64(&tb, SMC_NLA_STATS_SRV_HS_ERR_CNT) {
        stats.srv_hshake_err_cnt = v;
    }
    let mut step = Step::default();
    for (kind, idx) in [
        (SMC_NLA_STATS_SMCR_TECH, SMC_TYPE_R),
        (SMC_NLA_STATS_SMCD_TECH, SMC_TYPE_D),
    ] {
        if let Some(tech) = tb[usize::from(kind)] {
            // As upstream, the last technology read decides whether the
            // dump goes on.
            match fill_tech(tech, &mut stats.smc[idx]) {
                Ok(()) => step.stop = false,
                Err(e) => {
                    step.errors.push(e);
                    step.stop = true;
                }
            }
        }
    }
    step
}

/// `get_abbreviated(num, max_digs, res)` of upstream's `util.c`: a number
/// in at most `max_digs` characters: as it is below 1000, else scaled to
/// K, M, G, T, P (or `?`) with as many decimals as fit, right-aligned in
/// `max_digs - 1` characters before the unit.
pub fn abbreviated(num: u64, max_digs: usize) -> String {
    fn digs(leading: usize, max_digs: usize) -> (usize, usize) {
        let full = match leading % 3 {
            0 => 3,
            n => n,
        };
        match max_digs.checked_sub(full + 2) {
            Some(places) if places > 0 => (full, places),
            _ => (max_digs.saturating_sub(1), 0),
        }
    }
    fn magnitude(leading: usize) -> (char, f64) {
        match leading {
            0..=6 => ('K', 1e3),
            7..=9 => ('M', 1e6),
            10..=12 => ('G', 1e9),
            _ => {
                let factor = 1000f64.powf((leading / 3) as f64);
                let unit = match leading {
                    13..=15 => 'T',
                    16..=18 => 'P',
                    _ => '?',
                };
                (unit, factor)
            }
        }
    }
    let mut res = if num == 0 {
        "0".to_string()
    } else {
        // Upstream counts the digits of the number as a signed 64-bit
        // one ("%lld"), so the top half counts its minus sign.
        let mut leading = (num as i64).to_string().len();
        if leading < 4 {
            num.to_string()
        } else {
            let (full, mut places) = digs(leading, max_digs);
            let (mut unit, mut factor) = magnitude(leading);
            let scaled = num as f64 / factor;
            let round_up = 5.0 * 10f64.powf(-1.0 - places as f64);
            if scaled + round_up >= 10f64.powf(full as f64) {
                if places > 0 {
                    places -= 1;
                } else {
                    // Not reached with 6 characters.
                    leading += 1;
                    places = digs(leading, max_digs).1;
                    (unit, factor) = magnitude(leading);
                }
            }
            let width = max_digs.saturating_sub(1);
            format!("{:>width$.places$}{unit}", num as f64 / factor)
        }
    };
    // snprintf(res, max_digs + 1, ...): at most max_digs characters.
    res.truncate(max_digs);
    res
}

/// `get_fbackstr()`: the name upstream gives a CLC decline code.
pub fn reason_name(code: i32) -> &'static str {
    match code as u32 {
        0x0301_0000 => "PEER_NO_SMC",
        0x0101_0000 => "MEMORY",
        0x0201_0000 => "TIMEOUT_CL",
        0x0202_0000 => "TIMEOUT_AL",
        0x0300_0000 => "CNF_ERR",
        0x0302_0000 => "IPSEC",
        0x0303_0000 => "NOSMCDEV",
        0x0303_0001 => "NOSMCDDEV",
        0x0303_0002 => "NOSMCRDEV",
        0x0303_0003 => "NOISM2SUPP",
        0x0303_0004 => "NOV2EXT",
        0x0500_0000 => "PEERDECL",
        0x0400_0000 => "SYNCERR",
        0x030d_0000 => "MAX_DMB",
        0x030c_0000 => "VERSMISMAT",
        0x030b_0000 => "NOSRVLINK",
        0x0303_0006 => "NOSEID",
        0x0303_0007 => "NOSMCD2DEV",
        0x0304_0000 => "MODEUNSUPP",
        0x0305_0000 => "RMBE_EC",
        0x0306_0000 => "OPTUNSUPP",
        0x0307_0000 => "DIFFPREFIX",
        0x0308_0000 => "GETVLANERR",
        0x0309_0000 => "ISMVLANERR",
        0x030a_0000 => "NOACTLINK",
        0x0303_0005 => "NOV2DEXT",
        _ => "[unknown]",
    }
}

/// `print_fback_details()`: the caption and the (at most) three most
/// frequent reasons of one side, most frequent first, ties in the order
/// the kernel reported them.
fn fallback_details(s: &mut String, side: &[Reason; SMC_MAX_FBACK_RSN_CNT], caption: &str) {
    let mut sorted = *side;
    // Upstream's bubble sort moves an entry only past a smaller count:
    // a stable sort by descending count.
    sorted.sort_by_key(|r| std::cmp::Reverse(r.count));
    let mut shown = sorted.iter().filter(|r| r.code != 0).take(3).peekable();
    if shown.peek().is_some() {
        let _ = writeln!(s, "    {caption}");
    }
    for r in shown {
        let _ = writeln!(
            s,
            "     {:<12}            {:>12}",
            reason_name(r.code),
            r.count
        );
    }
}

/// `fillbuffer()`: a histogram as 8 columns of at most 6 characters (the
/// last one is 1024K and above together).
fn histogram(buf: &[u64; SMC_BUF_MAX]) -> String {
    let col = |v: u64| abbreviated(v, 6);
    let mut cols: Vec<String> = buf[..7].iter().map(|&v| col(v)).collect();
    cols.push(col(buf[7].wrapping_add(buf[8])));
    cols.iter()
        .map(|c| format!("{c:>6}"))
        .collect::<Vec<_>>()
        .join("  ")
}

/// A share in percent, as upstream computes it: in double, kept in a
/// `float`.
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    f64::from((part as f64 / whole as f64 * 100.0) as f32)
}

const HISTOGRAM_HEADER: &str =
    "            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB";

/// `print_as_text()`: the summary of `flavor`'s technology.
pub fn format_text(flavor: Flavor, stats: &Stats, rsn: &Fallbacks, details: bool) -> String {
    let mut s = String::new();
    let tech = match flavor {
        Flavor::Smcd => {
            s.push_str("SMC-D Connections Summary\n");
            &stats.smc[SMC_TYPE_D]
        }
        Flavor::Smcr => {
            s.push_str("SMC-R Connections Summary\n");
            &stats.smc[SMC_TYPE_R]
        }
    };
    let clnt_succ = tech.clnt_v1_succ_cnt.wrapping_add(tech.clnt_v2_succ_cnt);
    let srv_succ = tech.srv_v1_succ_cnt.wrapping_add(tech.srv_v2_succ_cnt);
    let smc_conn = clnt_succ.wrapping_add(srv_succ);
    let v1 = tech.clnt_v1_succ_cnt.wrapping_add(tech.srv_v1_succ_cnt);
    let v2 = tech.clnt_v2_succ_cnt.wrapping_add(tech.srv_v2_succ_cnt);
    let hshake = stats
        .clnt_hshake_err_cnt
        .wrapping_add(stats.srv_hshake_err_cnt);
    let fback = rsn.clnt_fback_cnt.wrapping_add(rsn.srv_fback_cnt);
    let total = smc_conn.wrapping_add(hshake).wrapping_add(fback);
    let requests = tech.rx_cnt.wrapping_add(tech.tx_cnt);
    let avg = if smc_conn == 0 {
        0.0
    } else {
        f64::from((requests as f64 / smc_conn as f64) as f32)
    };
    let special = [
        tech.cork_cnt,
        tech.ndly_cnt,
        tech.sendpage_cnt,
        tech.splice_cnt,
        tech.urg_data_cnt,
    ]
    .iter()
    .fold(0u64, |a, &b| a.wrapping_add(b));

    let _ = writeln!(s, "  Total connections handled  {total:>12}");
    if details {
        let _ = writeln!(
            s,
            "  SMC connections            {smc_conn:>12} (client {clnt_succ}, server {srv_succ})"
        );
        let _ = writeln!(s, "    v1                       {v1:>12}");
        let _ = writeln!(s, "    v2                       {v2:>12}");
        let _ = writeln!(
            s,
            "  Handshake errors           {hshake:>12} (client {}, server {})",
            stats.clnt_hshake_err_cnt, stats.srv_hshake_err_cnt
        );
    } else {
        let _ = writeln!(s, "  SMC connections            {smc_conn:>12}");
        let _ = writeln!(s, "  Handshake errors           {hshake:>12}");
    }
    let _ = writeln!(s, "  Avg requests per SMC conn  {avg:>14.1}");
    if details {
        let _ = writeln!(
            s,
            "  TCP fallback               {fback:>12} (client {}, server {})",
            rsn.clnt_fback_cnt, rsn.srv_fback_cnt
        );
        fallback_details(&mut s, &rsn.srv, "Server");
        fallback_details(&mut s, &rsn.clnt, "Client");
    } else {
        let _ = writeln!(s, "  TCP fallback               {fback:>12}");
    }

    s.push_str("\nRX Stats\n");
    let _ = writeln!(
        s,
        "  Data transmitted (Bytes) {:>14} ({})",
        tech.rx_bytes,
        abbreviated(tech.rx_bytes, 6)
    );
    let _ = writeln!(s, "  Total requests             {:>12}", tech.rx_cnt);
    let _ = writeln!(
        s,
        "  Buffer full                {:>12} ({:.2}%)",
        tech.rmb_rx.buf_full_cnt,
        percent(tech.rmb_rx.buf_full_cnt, tech.rx_cnt)
    );
    if details {
        let _ = writeln!(
            s,
            "  Buffer downgrades          {:>12}",
            tech.rmb_rx.dgrade_cnt
        );
        let _ = writeln!(
            s,
            "  Buffer reuses              {:>12}",
            tech.rmb_rx.reuse_cnt
        );
    }
    let _ = writeln!(s, "{HISTOGRAM_HEADER}");
    let _ = writeln!(s, "  Bufs   {}", histogram(&tech.rx_rmbsize));
    let _ = writeln!(s, "  Reqs   {}", histogram(&tech.rx_pd));

    s.push_str("\nTX Stats\n");
    let _ = writeln!(
        s,
        "  Data transmitted (Bytes) {:>14} ({})",
        tech.tx_bytes,
        abbreviated(tech.tx_bytes, 6)
    );
    let _ = writeln!(s, "  Total requests             {:>12}", tech.tx_cnt);
    let tx = &tech.rmb_tx;
    for (label, count) in [
        ("Buffer full               ", tx.buf_full_cnt),
        ("Buffer full (remote)      ", tx.buf_full_peer_cnt),
        ("Buffer too small          ", tx.buf_size_small_cnt),
        ("Buffer too small (remote) ", tx.buf_size_small_peer_cnt),
    ] {
        let _ = writeln!(
            s,
            "  {label} {count:>12} ({:.2}%)",
            percent(count, tech.tx_cnt)
        );
    }
    if details {
        let _ = writeln!(s, "  Buffer downgrades          {:>12}", tx.dgrade_cnt);
        let _ = writeln!(s, "  Buffer reuses              {:>12}", tx.reuse_cnt);
    }
    let _ = writeln!(s, "{HISTOGRAM_HEADER}");
    let _ = writeln!(s, "  Bufs   {}", histogram(&tech.tx_rmbsize));
    let _ = writeln!(s, "  Reqs   {}", histogram(&tech.tx_pd));

    s.push_str("\nExtras\n");
    let _ = writeln!(s, "  Special socket calls       {special:>12}");
    if details {
        for (label, v) in [
            ("cork       ", tech.cork_cnt),
            ("nodelay    ", tech.ndly_cnt),
            ("sendpage   ", tech.sendpage_cnt),
            ("splice     ", tech.splice_cnt),
            ("urgent data", tech.urg_data_cnt),
        ] {
            let _ = writeln!(s, "    {label}              {v:>12}");
        }
    }
    s
}

/// The JSON names of a technology's counters, in upstream's order.
pub const JSON_NAMES: [&str; TECH_WORDS] = [
    "SMC_INT_TX_BUF_8K",
    "SMC_INT_TX_BUF_16K",
    "SMC_INT_TX_BUF_32K",
    "SMC_INT_TX_BUF_64K",
    "SMC_INT_TX_BUF_128K",
    "SMC_INT_TX_BUF_256K",
    "SMC_INT_TX_BUF_512K",
    "SMC_INT_TX_BUF_1024K",
    "SMC_INT_TX_BUF_G_1024K",
    "SMC_INT_RX_BUF_8K",
    "SMC_INT_RX_BUF_16K",
    "SMC_INT_RX_BUF_32K",
    "SMC_INT_RX_BUF_64K",
    "SMC_INT_RX_BUF_128K",
    "SMC_INT_RX_BUF_256K",
    "SMC_INT_RX_BUF_512K",
    "SMC_INT_RX_BUF_1024K",
    "SMC_INT_RX_BUF_G_1024K",
    "SMC_USR_TX_BUF_8K",
    "SMC_USR_TX_BUF_16K",
    "SMC_USR_TX_BUF_32K",
    "SMC_USR_TX_BUF_64K",
    "SMC_USR_TX_BUF_128K",
    "SMC_USR_TX_BUF_256K",
    "SMC_USR_TX_BUF_512K",
    "SMC_USR_TX_BUF_1024K",
    "SMC_USR_TX_BUF_G_1024K",
    "SMC_USR_RX_BUF_8K",
    "SMC_USR_RX_BUF_16K",
    "SMC_USR_RX_BUF_32K",
    "SMC_USR_RX_BUF_64K",
    "SMC_USR_RX_BUF_128K",
    "SMC_USR_RX_BUF_256K",
    "SMC_USR_RX_BUF_512K",
    "SMC_USR_RX_BUF_1024K",
    "SMC_USR_RX_BUF_G_1024K",
    "SMC_INT_TX_BUF_SIZE_SM_PEER_CNT",
    "SMC_INT_TX_BUF_SIZE_SM_CNT",
    "SMC_INT_TX_BUF_FULL_PEER_CNT",
    "SMC_INT_TX_BUF_FULL_CNT",
    "SMC_INT_TX_BUF_REUSE_CNT",
    "SMC_INT_TX_BUF_ALLOC_CNT",
    "SMC_INT_TX_BUF_DGRADE_CNT",
    "SMC_INT_RX_BUF_SIZE_SM_PEER_CNT",
    "SMC_INT_RX_BUF_SIZE_SM_CNT",
    "SMC_INT_RX_BUF_FULL_PEER_CNT",
    "SMC_INT_RX_BUF_FULL_CNT",
    "SMC_INT_RX_BUF_REUSE_CNT",
    "SMC_INT_RX_BUF_ALLOC_CNT",
    "SMC_INT_RX_BUF_DGRADE_CNT",
    "SMC_CLNT_V1_SUCC_CNT",
    "SMC_CLNT_V2_SUCC_CNT",
    "SMC_SRV_V1_SUCC_CNT",
    "SMC_SRV_V2_SUCC_CNT",
    "SMC_SENDPAGE_CNT",
    "SMC_URG_DATA_CNT",
    "SMC_SPLICE_CNT",
    "SMC_CORK_CNT",
    "SMC_NDLY_CNT",
    "SMC_RX_BYTES",
    "SMC_TX_BYTES",
    "SMC_RX_CNT",
    "SMC_TX_CNT",
];

/// `print_as_json()`: `{"SMCR": {"NAME":value,...}}` (or `"SMCD"`), one
/// line; fallbacks and handshake errors are not in it.
pub fn format_json(flavor: Flavor, stats: &Stats) -> String {
    let (key, tech) = match flavor {
        Flavor::Smcd => ("SMCD", &stats.smc[SMC_TYPE_D]),
        Flavor::Smcr => ("SMCR", &stats.smc[SMC_TYPE_R]),
    };
    let fields: Vec<String> = JSON_NAMES
        .iter()
        .zip(tech.words())
        .map(|(n, v)| format!("\"{n}\":{v}"))
        .collect();
    format!("{{\"{key}\": {{{}}}}}\n", fields.join(","))
}

/// The cache file of a user: upstream's `/tmp/.smcstats.u<uid>`.
pub fn default_cache_path() -> PathBuf {
    PathBuf::from(format!("/tmp/.smcstats.u{}", crate::uid()))
}

/// What the cache file holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cache {
    /// The statistics at the last reset.
    pub stats: Stats,
    /// The fallbacks at the last reset.
    pub rsn: Fallbacks,
}

/// `fill_cache_file()`: the file's text: `STATS_WORDS` lines
/// `%-12d%-16llu` (index, value), 60 lines `%-12d%-16d%-16d` (index, code,
/// count; the server's 30 slots, then the client's), and the two fallback
/// totals as `%16llu` (server, client).
///
/// Upstream writes the totals it has shown (after subtracting the old
/// cache), not the kernel's, so that a second reset corrupts them; these
/// are the kernel's, as the other lines are.
pub fn cache_text(stats: &Stats, rsn: &Fallbacks) -> String {
    let mut s = String::new();
    for (i, v) in stats.words().iter().enumerate() {
        let _ = writeln!(s, "{i:<12}{v:<16}");
    }
    for (i, r) in rsn.srv.iter().chain(rsn.clnt.iter()).enumerate() {
        let _ = writeln!(s, "{i:<12}{:<16}{:<16}", r.code, r.count);
    }
    let _ = writeln!(s, "{:>16}", rsn.srv_fback_cnt);
    let _ = writeln!(s, "{:>16}", rsn.clnt_fback_cnt);
    s
}

/// Why upstream's `read_cache_file()` gives up (its `perror()` texts,
/// without the stale `errno` they end in there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// A statistics line without index and value.
    Stats,
    /// A statistics line out of order.
    Index,
    /// A fallback line without index, code and count.
    Fback,
    /// A fallback line with an index above 60.
    FbackIndex,
    /// A total line without a number.
    Counters,
    /// More lines than upstream writes.
    Corrupt,
}

impl CacheError {
    /// The message.
    pub fn message(self) -> &'static str {
        match self {
            CacheError::Stats => "Error: parsing cache file(stats)",
            CacheError::Index => "Error: unexpected value in cache file",
            CacheError::Fback => "Error: parsing cache file (fback stats)",
            CacheError::FbackIndex => "Error: unexpected value in cache file (fback stats)",
            CacheError::Counters => "Error: parsing cache file(fback counters)",
            CacheError::Corrupt => "Error: cache file corrupt",
        }
    }
}

/// A `sscanf()` reader over one line.
struct Scan<'a>(&'a [u8]);

impl Scan<'_> {
    /// Skips white space, reads an optional sign and at least one digit:
    /// the sign and the digits' value (saturated).
    fn number(&mut self) -> Option<(bool, u64)> {
        let s = self.0;
        let start = s
            .iter()
            .position(|c| !c.is_ascii_whitespace() && *c != 0x0b)
            .unwrap_or(s.len());
        let mut i = start;
        let negative = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let digits = s[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let value = s[i..i + digits].iter().fold(0u64, |v, &c| {
            v.saturating_mul(10).saturating_add(u64::from(c - b'0'))
        });
        self.0 = &s[i + digits..];
        Some((negative, value))
    }

    /// `%d`: `strtol()` (saturated to a 64-bit long), then kept in an int.
    fn int(&mut self) -> Option<i32> {
        let (negative, v) = self.number()?;
        let long = if negative {
            if v > 1u64 << 63 {
                i64::MIN
            } else {
                (v as i64).wrapping_neg()
            }
        } else {
            i64::try_from(v).unwrap_or(i64::MAX)
        };
        Some(long as i32)
    }

    /// `%llu`: `strtoull()` (a minus sign negates, modulo 2^64).
    fn ull(&mut self) -> Option<u64> {
        let (negative, v) = self.number()?;
        Some(if negative && v != u64::MAX {
            v.wrapping_neg()
        } else {
            v
        })
    }
}

/// The lines `fgets()` with a 4096-byte buffer returns, each up to its NUL
/// as `sscanf()` reads it.
fn fgets_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let max = rest.len().min(4095);
        let end = rest[..max]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(max, |p| p + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(genl::c_str(line))
    })
}

/// `read_cache_file()`: `None` for an empty file (no reset yet). A file
/// shorter than upstream writes leaves the rest zero, as upstream does.
pub fn parse_cache(text: &[u8]) -> Result<Option<Cache>, CacheError> {
    let mut cache = Cache::default();
    let mut words = [0u64; STATS_WORDS];
    let mut reasons = [Reason::default(); 2 * SMC_MAX_FBACK_RSN_CNT];
    let mut totals = [0u64; 2];
    let mut count = 0usize;
    for line in fgets_lines(text) {
        let mut sc = Scan(line);
        if count < STATS_WORDS {
            let (Some(idx), Some(v)) = (sc.int(), sc.ull()) else {
                return Err(CacheError::Stats);
            };
            if usize::try_from(idx).ok() != Some(count) {
                return Err(CacheError::Index);
            }
            words[count] = v;
        } else if count < STATS_WORDS + 2 * SMC_MAX_FBACK_RSN_CNT {
            let (Some(idx), Some(code), Some(cnt)) = (sc.int(), sc.int(), sc.int()) else {
                return Err(CacheError::Fback);
            };
            if idx > 2 * SMC_MAX_FBACK_RSN_CNT as i32 {
                return Err(CacheError::FbackIndex);
            }
            reasons[count - STATS_WORDS] = Reason { code, count: cnt };
        } else if count < STATS_WORDS + 2 * SMC_MAX_FBACK_RSN_CNT + 2 {
            let Some(v) = sc.ull() else {
                return Err(CacheError::Counters);
            };
            totals[count - STATS_WORDS - 2 * SMC_MAX_FBACK_RSN_CNT] = v;
        } else {
            return Err(CacheError::Corrupt);
        }
        count += 1;
    }
    if count == 0 {
        return Ok(None);
    }
    for (d, s) in cache.stats.words_mut().zip(words) {
        *d = s;
    }
    let (srv, clnt) = reasons.split_at(SMC_MAX_FBACK_RSN_CNT);
    cache.rsn.srv.copy_from_slice(srv);
    cache.rsn.clnt.copy_from_slice(clnt);
    [cache.rsn.srv_fback_cnt, cache.rsn.clnt_fback_cnt] = totals;
    Ok(Some(cache))
}

/// `get_fback_err_cache_count()`: the cached count of `code`'s first slot.
fn cached_count(side: &[Reason; SMC_MAX_FBACK_RSN_CNT], code: i32) -> i32 {
    side.iter().find(|r| r.code == code).map_or(0, |r| r.count)
}

/// `is_data_consistent()`: no counter of the kernel below its cached
/// value (else the kernel's counters wrapped or started again).
pub fn consistent(stats: &Stats, rsn: &Fallbacks, cache: &Cache) -> bool {
    if stats
        .words()
        .iter()
        .zip(cache.stats.words())
        .any(|(k, c)| *k < c)
    {
        return false;
    }
    let sides = [(&rsn.srv, &cache.rsn.srv), (&rsn.clnt, &cache.rsn.clnt)];
    for (kernel, cached) in sides {
        if kernel
            .iter()
            .any(|r| r.count < cached_count(cached, r.code))
        {
            return false;
        }
    }
    rsn.srv_fback_cnt >= cache.rsn.srv_fback_cnt && rsn.clnt_fback_cnt >= cache.rsn.clnt_fback_cnt
}

/// `merge_cache()` after the check: the kernel's values less the cached
/// ones.
pub fn subtract(stats: &mut Stats, rsn: &mut Fallbacks, cache: &Cache) {
    for (k, c) in stats.words_mut().zip(cache.stats.words()) {
        *k = k.wrapping_sub(c);
    }
    let sides = [
        (&mut rsn.srv, &cache.rsn.srv),
        (&mut rsn.clnt, &cache.rsn.clnt),
    ];
    for (kernel, cached) in sides {
        for r in kernel.iter_mut() {
            r.count = r.count.wrapping_sub(cached_count(cached, r.code));
        }
    }
    rsn.srv_fback_cnt = rsn.srv_fback_cnt.wrapping_sub(cache.rsn.srv_fback_cnt);
    rsn.clnt_fback_cnt = rsn.clnt_fback_cnt.wrapping_sub(cache.rsn.clnt_fback_cnt);
}

/// `open_cache_file()`: opened read-write, created with mode 0600, never
/// through a symbolic link, and locked exclusively.
fn open_cache(path: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let perror = |what: &str, e: io::Error| {
        format!(
            "{what}: {}",
            crate::strerror(e.raw_os_error().unwrap_or(libc::EIO))
        )
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| perror("Error: open cache file", e))?;
    crate::lock_exclusive(&file).map_err(|e| perror("Error: cache file lock", e))?;
    Ok(file)
}

/// Reads a dump's messages through `apply` until one stops it; prints
/// what they say; `Err` with the message of a failed dump.
fn read_dump<T: Transport + ?Sized>(
    family: &mut Family<'_, T>,
    cmd: u8,
    o: &mut Output<'_>,
    mut apply: impl FnMut(&[u8]) -> Step,
) -> Result<(), String> {
    let mut warnings: Vec<DumpWarning> = Vec::new();
    let answer = family.dump(cmd, &mut |w| warnings.push(w));
    for w in warnings {
        o.err_line(&w.to_string());
    }
    for m in &answer.messages {
        let step = apply(m);
        for e in step.errors {
            o.err_line(e);
        }
        if step.stop {
            break;
        }
    }
    match answer.result {
        Ok(()) => Ok(()),
        Err(DumpError::Kernel(libc::EOPNOTSUPP)) => {
            Err("Error: operation not supported by kernel".to_string())
        }
        Err(e) => Err(genl::perror(&e)),
    }
}

/// `stats` with `args` after it; the exit status. `cache_path` is the
/// cache file ([`default_cache_path`] in the programs).
pub fn invoke<T: Transport + ?Sized>(
    flavor: Flavor,
    detail: Detail,
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    cache_path: &Path,
    o: &mut Output<'_>,
) -> i32 {
    let cmd = match parse_args(args) {
        Args::Run(c) => c,
        Args::Usage => {
            o.err(usage(flavor).as_bytes());
            return EXIT_OBJECT_FAILURE;
        }
    };
    let (details, absolute) = match detail {
        Detail::None => (false, false),
        Detail::Details | Detail::MoreDetails => (true, false),
        Detail::Absolute => (false, true),
        Detail::DetailsAbsolute => (true, true),
    };

    // The cache is opened (created, locked) and read before the kernel is
    // asked; the lock is held to the end.
    let mut cache = None;
    let _locked = if absolute {
        None
    } else {
        let mut file = match open_cache(cache_path) {
            Ok(f) => f,
            Err(msg) => {
                o.err_line(&msg);
                return EXIT_OBJECT_FAILURE;
            }
        };
        let mut text = Vec::new();
        if let Err(e) = file.read_to_end(&mut text) {
            o.err_line(&format!(
                "Error: read cache file: {}",
                crate::strerror(e.raw_os_error().unwrap_or(libc::EIO))
            ));
            return EXIT_OBJECT_FAILURE;
        }
        match parse_cache(&text) {
            Ok(c) => cache = c,
            Err(e) => {
                o.err_line(e.message());
                return EXIT_OBJECT_FAILURE;
            }
        }
        Some(file)
    };

    // Upstream reports a failed dump and ends successfully, without
    // output.
    let mut rsn = Fallbacks::default();
    if let Err(msg) = read_dump(family, SMC_NETLINK_GET_FBACK_STATS, o, |m| {
        apply_fback_reply(m, &mut rsn)
    }) {
        o.err_line(&msg);
        return 0;
    }
    let mut stats = Stats::default();
    if let Err(msg) = read_dump(family, SMC_NETLINK_GET_STATS, o, |m| {
        apply_stats_reply(m, &mut stats)
    }) {
        o.err_line(&msg);
        return 0;
    }
    let (kernel_stats, kernel_rsn) = (stats, rsn);

    if let Some(c) = &cache {
        if consistent(&stats, &rsn, c) {
            subtract(&mut stats, &mut rsn, c);
        } else {
            let _ = std::fs::remove_file(cache_path);
        }
    }
    match cmd {
        Command::Json => o.out(&format_json(flavor, &stats)),
        Command::Show | Command::Reset => o.out(&format_text(flavor, &stats, &rsn, details)),
    }
    if cmd == Command::Reset {
        let _ = std::fs::remove_file(cache_path);
        let mut file = match open_cache(cache_path) {
            Ok(f) => f,
            Err(msg) => {
                o.err_line(&msg);
                return EXIT_OBJECT_FAILURE;
            }
        };
        if let Err(e) = file.set_len(0) {
            o.err_line(&format!(
                "Error: ftruncate: {}",
                crate::strerror(e.raw_os_error().unwrap_or(libc::EIO))
            ));
        }
        let written = file
            .rewind()
            .and_then(|()| file.write_all(cache_text(&kernel_stats, &kernel_rsn).as_bytes()));
        if let Err(e) = written {
            o.err_line(&format!(
                "Error: write cache file: {}",
                crate::strerror(e.raw_os_error().unwrap_or(libc::EIO))
            ));
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genl::attr;

    fn a(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn u64_attr(kind: u16, v: u64) -> Vec<u8> {
        attr(kind, &v.to_ne_bytes())
    }

    fn reply(cmd: u8, gen: u16, nest: &[u8]) -> Vec<u8> {
        let mut p = vec![cmd, 1, 0, 0];
        p.extend(attr(gen | 0x8000, nest));
        p
    }

    fn fback_msg(srv: bool, totals: Option<(u64, u64)>, code: u32, count: u16) -> Vec<u8> {
        let mut n = attr(SMC_NLA_FBACK_STATS_TYPE, &[u8::from(srv)]);
        if let Some((s, c)) = totals {
            n.extend(attr(0, &[]));
            n.extend(u64_attr(SMC_NLA_FBACK_STATS_SRV_CNT, s));
            n.extend(u64_attr(SMC_NLA_FBACK_STATS_CLNT_CNT, c));
        }
        n.extend(attr(SMC_NLA_FBACK_STATS_RSN_CODE, &code.to_ne_bytes()));
        n.extend(attr(SMC_NLA_FBACK_STATS_RSN_CNT, &count.to_ne_bytes()));
        reply(SMC_NETLINK_GET_FBACK_STATS, SMC_GEN_FBACK_STATS, &n)
    }

    #[test]
    fn arguments_as_handle_cmd_params() {
        assert_eq!(parse_args(&a(&[])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&["s"])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&["show"])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&["r"])), Args::Run(Command::Reset));
        assert_eq!(parse_args(&a(&["reset"])), Args::Run(Command::Reset));
        assert_eq!(parse_args(&a(&["j"])), Args::Run(Command::Json));
        for bad in [
            &["h"][..],
            &["help"],
            &[""],
            &["x"],
            &["shows"],
            &["show", "x"],
            &["reset", "reset"],
        ] {
            assert_eq!(parse_args(&a(bad)), Args::Usage, "{bad:?}");
        }
        assert_eq!(usage(Flavor::Smcd), "Usage: smcd stats [show | reset]\n");
    }

    #[test]
    fn abbreviations_as_get_abbreviated() {
        let ab = |n: u64| abbreviated(n, 6);
        assert_eq!(ab(0), "0");
        assert_eq!(ab(7), "7");
        assert_eq!(ab(999), "999");
        assert_eq!(ab(1000), "1.000K");
        assert_eq!(ab(1234), "1.234K");
        assert_eq!(ab(9999), "9.999K");
        assert_eq!(ab(12345), "12.35K");
        // Rounding up would need another digit: one decimal less.
        assert_eq!(ab(99999), "100.0K");
        assert_eq!(ab(123456), "123.5K");
        assert_eq!(ab(999960), " 1000K");
        assert_eq!(ab(1_295_000), "1.295M");
        assert_eq!(ab(18_130_000), "18.13M");
        assert_eq!(ab(4_294_967_296), "4.295G");
        assert_eq!(ab(1_234_567_890_123), "1.235T");
        assert_eq!(ab(1_234_567_890_123_456), "1.235P");
        assert_eq!(ab(1_234_567_890_123_456_789), "1.235?");
        // The top half counts as negative there.
        assert_eq!(ab(1 << 63), " 9.22?");
        assert_eq!(ab(u64::MAX), "184467");
        assert_eq!(abbreviated(123_456, 4), "123K");
    }

    #[test]
    fn reason_names() {
        assert_eq!(reason_name(0x0301_0000), "PEER_NO_SMC");
        assert_eq!(reason_name(0x0303_0002), "NOSMCRDEV");
        assert_eq!(reason_name(0x0500_0000), "PEERDECL");
        assert_eq!(reason_name(0x0999_0000), "[unknown]");
        assert_eq!(reason_name(0x0303_0008), "[unknown]");
    }

    #[test]
    fn fallback_replies_fill_slots_in_order() {
        let mut rsn = Fallbacks::default();
        let msgs = [
            fback_msg(true, Some((1, 5)), 0x0301_0000, 1),
            fback_msg(false, None, 0x0301_0000, 3),
            fback_msg(false, None, 0x0303_0002, 2),
        ];
        for m in &msgs {
            assert_eq!(apply_fback_reply(m, &mut rsn), Step::default());
        }
        assert_eq!((rsn.srv_fback_cnt, rsn.clnt_fback_cnt), (1, 5));
        assert_eq!(
            rsn.srv[0],
            Reason {
                code: 0x0301_0000,
                count: 1
            }
        );
        assert_eq!(rsn.srv[1], Reason::default());
        assert_eq!(rsn.clnt[1].code, 0x0303_0002);
        // A full side overwrites its last slot.
        let mut full = Fallbacks::default();
        for i in 0..31u32 {
            apply_fback_reply(&fback_msg(true, None, 0x100 + i, 1), &mut full);
        }
        assert_eq!(full.srv[29].code, 0x100 + 30);
    }

    #[test]
    fn bad_fallback_replies() {
        let mut rsn = Fallbacks::default();
        assert_eq!(
            apply_fback_reply(&[8, 1], &mut rsn),
            Step::stop(vec![INVALID_DATA])
        );
        assert_eq!(
            apply_fback_reply(&[8, 1, 0, 0], &mut rsn),
            Step::stop(vec![])
        );
        let short = reply(
            SMC_NETLINK_GET_FBACK_STATS,
            SMC_GEN_FBACK_STATS,
            &attr(SMC_NLA_FBACK_STATS_SRV_CNT, &[1, 0, 0, 0]),
        );
        assert_eq!(
            apply_fback_reply(&short, &mut rsn),
            Step::stop(vec![BAD_NEST])
        );
        assert_eq!(rsn, Fallbacks::default());
    }

    fn tech_nest(base: u64) -> Vec<u8> {
        let mut n = Vec::new();
        for (kind, first) in [(5u16, 100u64), (6, 200)] {
            let mut r = Vec::new();
            for k in 1..=7u16 {
                r.extend(attr(0, &[]));
                r.extend(u64_attr(k, base + first + u64::from(k)));
            }
            n.extend(attr(kind | 0x8000, &r));
        }
        for (kind, first) in [(3u16, 300u64), (4, 400), (1, 500), (2, 600)] {
            let mut r = Vec::new();
            for k in 1..=9u16 {
                r.extend(u64_attr(k, base + first + u64::from(k)));
            }
            n.extend(attr(kind | 0x8000, &r));
        }
        for k in 7..=19u16 {
            n.extend(u64_attr(k, base + u64::from(k)));
        }
        // The kernel's RMB usages (uint, beyond upstream's maximum).
        n.extend(attr(20, &7u32.to_ne_bytes()));
        n.extend(attr(21, &[1]));
        n
    }

    #[test]
    fn statistics_reply_into_upstreams_layout() {
        let mut nest = attr(SMC_NLA_STATS_SMCD_TECH | 0x8000, &tech_nest(10_000));
        nest.extend(attr(SMC_NLA_STATS_SMCR_TECH | 0x8000, &tech_nest(20_000)));
        nest.extend(u64_attr(SMC_NLA_STATS_CLNT_HS_ERR_CNT, 3));
        nest.extend(u64_attr(SMC_NLA_STATS_SRV_HS_ERR_CNT, 4));
        let mut stats = Stats::default();
        let m = reply(SMC_NETLINK_GET_STATS, SMC_GEN_STATS, &nest);
        assert_eq!(apply_stats_reply(&m, &mut stats), Step::default());
        let r = &stats.smc[SMC_TYPE_R];
        assert_eq!(r.rmb_tx.buf_size_small_peer_cnt, 20_101);
        assert_eq!(r.rmb_tx.dgrade_cnt, 20_107);
        assert_eq!(r.rmb_rx.reuse_cnt, 20_205);
        assert_eq!(r.tx_pd[0], 20_301);
        assert_eq!(r.rx_pd[8], 20_409);
        assert_eq!(r.tx_rmbsize[1], 20_502);
        assert_eq!(r.rx_rmbsize[7], 20_608);
        assert_eq!(r.clnt_v1_succ_cnt, 20_007);
        assert_eq!(r.srv_v2_succ_cnt, 20_010);
        assert_eq!(r.sendpage_cnt, 20_011);
        assert_eq!(r.splice_cnt, 20_012);
        assert_eq!(r.cork_cnt, 20_013);
        assert_eq!(r.ndly_cnt, 20_014);
        assert_eq!(r.urg_data_cnt, 20_015);
        assert_eq!(r.rx_bytes, 20_016);
        assert_eq!(r.tx_cnt, 20_019);
        assert_eq!(stats.smc[SMC_TYPE_D].tx_cnt, 10_019);
        assert_eq!(
            (stats.clnt_hshake_err_cnt, stats.srv_hshake_err_cnt),
            (3, 4)
        );

        // A second message replaces the first.
        let m = reply(
            SMC_NETLINK_GET_STATS,
            SMC_GEN_STATS,
            &u64_attr(SMC_NLA_STATS_SRV_HS_ERR_CNT, 9),
        );
        assert_eq!(apply_stats_reply(&m, &mut stats), Step::default());
        assert_eq!(
            stats,
            Stats {
                srv_hshake_err_cnt: 9,
                ..Stats::default()
            }
        );
    }

    #[test]
    fn bad_statistics_replies() {
        let mut stats = Stats::default();
        assert_eq!(
            apply_stats_reply(&[7], &mut stats),
            Step::stop(vec![INVALID_DATA])
        );
        assert_eq!(
            apply_stats_reply(&[7, 1, 0, 0], &mut stats),
            Step::stop(vec![])
        );
        let hs = reply(
            SMC_NETLINK_GET_STATS,
            SMC_GEN_STATS,
            &attr(SMC_NLA_STATS_CLNT_HS_ERR_CNT, &[1]),
        );
        assert_eq!(
            apply_stats_reply(&hs, &mut stats),
            Step::stop(vec![BAD_NEST])
        );
        // A short RMB counter in SMC-R's nest, a short histogram bucket in
        // SMC-D's: both said, values before them kept.
        let mut r = u64_attr(SMC_NLA_STATS_T_TX_CNT, 5);
        r.extend(attr(
            SMC_NLA_STATS_T_TX_RMB_STATS | 0x8000,
            &attr(1, &[0; 4]),
        ));
        let mut d = u64_attr(SMC_NLA_STATS_T_RX_CNT, 6);
        d.extend(attr(
            SMC_NLA_STATS_T_RXPLOAD_SIZE | 0x8000,
            &attr(9, &[0; 2]),
        ));
        let mut nest = attr(SMC_NLA_STATS_SMCR_TECH | 0x8000, &r);
        nest.extend(attr(SMC_NLA_STATS_SMCD_TECH | 0x8000, &d));
        let step = apply_stats_reply(&reply(7, SMC_GEN_STATS, &nest), &mut stats);
        assert_eq!(step, Step::stop(vec![BAD_RMB_NEST, BAD_PLOAD_NEST]));
        assert_eq!(stats.smc[SMC_TYPE_R].tx_cnt, 5);
        assert_eq!(stats.smc[SMC_TYPE_D].rx_cnt, 6);
        let tech = attr(SMC_NLA_STATS_SMCR_TECH | 0x8000, &attr(19, &[0; 4]));
        assert_eq!(
            apply_stats_reply(&reply(7, SMC_GEN_STATS, &tech), &mut stats).errors,
            vec![BAD_TECH_NEST]
        );
    }

    fn scenario() -> (Stats, Fallbacks) {
        let mut rsn = Fallbacks::default();
        apply_fback_reply(&fback_msg(true, Some((1, 3)), 0x0301_0000, 1), &mut rsn);
        apply_fback_reply(&fback_msg(false, None, 0x0301_0000, 3), &mut rsn);
        (Stats::default(), rsn)
    }

    #[test]
    fn text_after_four_fallbacks() {
        let (stats, rsn) = scenario();
        let text = format_text(Flavor::Smcr, &stats, &rsn, false);
        let want = "\
SMC-R Connections Summary
  Total connections handled             4
  SMC connections                       0
  Handshake errors                      0
  Avg requests per SMC conn             0.0
  TCP fallback                          4

RX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer full                           0 (0.00%)
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

TX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer full                           0 (0.00%)
  Buffer full (remote)                  0 (0.00%)
  Buffer too small                      0 (0.00%)
  Buffer too small (remote)             0 (0.00%)
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

Extras
  Special socket calls                  0
";
        assert_eq!(text, want);
        let d = format_text(Flavor::Smcr, &stats, &rsn, true);
        assert!(d.contains(
            "  SMC connections                       0 (client 0, server 0)\n\
             \x20   v1                                  0\n\
             \x20   v2                                  0\n\
             \x20 Handshake errors                      0 (client 0, server 0)\n\
             \x20 Avg requests per SMC conn             0.0\n\
             \x20 TCP fallback                          4 (client 3, server 1)\n\
             \x20   Server\n\
             \x20    PEER_NO_SMC                        1\n\
             \x20   Client\n\
             \x20    PEER_NO_SMC                        3\n\n"
        ));
        assert!(format_text(Flavor::Smcd, &stats, &rsn, false)
            .starts_with("SMC-D Connections Summary\n  Total connections handled             4\n"));
    }

    #[test]
    fn text_with_traffic() {
        let mut stats = Stats::default();
        let t = &mut stats.smc[SMC_TYPE_R];
        t.clnt_v1_succ_cnt = 2;
        t.srv_v2_succ_cnt = 1;
        t.rx_bytes = 1_295_000;
        t.tx_bytes = 18_130_000;
        t.rx_cnt = 10;
        t.tx_cnt = 3;
        t.rmb_rx.buf_full_cnt = 1;
        t.rmb_tx.buf_full_cnt = 1;
        t.rmb_tx.buf_full_peer_cnt = 2;
        t.rx_rmbsize[0] = 1234;
        t.rx_rmbsize[7] = 1;
        t.rx_rmbsize[8] = 2;
        t.cork_cnt = 4;
        t.urg_data_cnt = 1;
        t.rmb_tx.dgrade_cnt = 6;
        stats.srv_hshake_err_cnt = 2;
        let mut rsn = Fallbacks::default();
        for (i, n) in [2, 5, 5, 1].iter().enumerate() {
            rsn.clnt[i] = Reason {
                code: [0x0301_0000, 0x0303_0002, 0x0500_0000, 0x0303_0000][i],
                count: *n,
            };
        }
        rsn.clnt_fback_cnt = 13;
        let text = format_text(Flavor::Smcr, &stats, &rsn, true);
        for line in [
            "  Total connections handled            18\n",
            "  SMC connections                       3 (client 2, server 1)\n",
            "    v1                                  2\n",
            "    v2                                  1\n",
            "  Handshake errors                      2 (client 0, server 2)\n",
            "  Avg requests per SMC conn             4.3\n",
            "  TCP fallback                         13 (client 13, server 0)\n    Client\n     \
             NOSMCRDEV                          5\n     PEERDECL                           5\n     \
             PEER_NO_SMC                        2\n\nRX Stats\n",
            "  Data transmitted (Bytes)        1295000 (1.295M)\n",
            "  Buffer full                           1 (10.00%)\n",
            "  Bufs   1.234K       0       0       0       0       0       0       3\n",
            "  Data transmitted (Bytes)       18130000 (18.13M)\n",
            "  Buffer full                           1 (33.33%)\n",
            "  Buffer full (remote)                  2 (66.67%)\n",
            "  Buffer downgrades                     6\n",
            "  Special socket calls                  5\n    cork                                4\n",
            "    urgent data                         1\n",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
    }

    #[test]
    fn json_names_follow_the_layout() {
        let mut stats = Stats::default();
        for (i, w) in stats.smc[SMC_TYPE_D].words_mut().enumerate() {
            *w = i as u64;
        }
        let j = format_json(Flavor::Smcd, &stats);
        assert!(j.starts_with("{\"SMCD\": {\"SMC_INT_TX_BUF_8K\":0,\"SMC_INT_TX_BUF_16K\":1,"));
        assert!(j.contains(",\"SMC_INT_TX_BUF_SIZE_SM_PEER_CNT\":36,"));
        assert!(j.contains(",\"SMC_CLNT_V1_SUCC_CNT\":50,"));
        assert!(j.contains(",\"SMC_SENDPAGE_CNT\":54,\"SMC_URG_DATA_CNT\":55,"));
        assert!(j.ends_with(",\"SMC_RX_CNT\":61,\"SMC_TX_CNT\":62}}\n"));
        assert_eq!(stats.smc[SMC_TYPE_D].tx_cnt, 62);
        assert_eq!(stats.smc[SMC_TYPE_D].rmb_rx.dgrade_cnt, 49);
        assert!(
            format_json(Flavor::Smcr, &stats).starts_with("{\"SMCR\": {\"SMC_INT_TX_BUF_8K\":0,")
        );
    }

    #[test]
    fn cache_round_trip_and_layout() {
        let (mut stats, rsn) = scenario();
        stats.smc[SMC_TYPE_D].tx_cnt = 77;
        stats.srv_hshake_err_cnt = 5;
        let text = cache_text(&stats, &rsn);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), STATS_WORDS + 60 + 2);
        assert_eq!(lines[0], "0           0               ");
        assert_eq!(lines[125], "125         77              ");
        assert_eq!(lines[127], "127         5               ");
        assert_eq!(lines[128], "0           50397184        1               ");
        assert_eq!(lines[129], "1           0               0               ");
        assert_eq!(lines[158], "30          50397184        3               ");
        assert_eq!(lines[188], "               1");
        assert_eq!(lines[189], "               3");
        let back = parse_cache(text.as_bytes())
            .expect("parses")
            .expect("lines");
        assert_eq!(back, Cache { stats, rsn });
        assert_eq!(parse_cache(b""), Ok(None));
        // A short file leaves the rest zero.
        let short = parse_cache(b"0 5\n1 6").expect("parses").expect("lines");
        assert_eq!(short.stats.smc[SMC_TYPE_R].tx_rmbsize[..3], [5, 6, 0]);
    }

    #[test]
    fn bad_cache_files() {
        assert_eq!(parse_cache(b"x\n"), Err(CacheError::Stats));
        assert_eq!(parse_cache(b"0\n"), Err(CacheError::Stats));
        assert_eq!(parse_cache(b"1 5\n"), Err(CacheError::Index));
        let good = cache_text(&Stats::default(), &Fallbacks::default());
        let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
        lines[130] = "61 1 1".into();
        assert_eq!(
            parse_cache(lines.join("\n").as_bytes()),
            Err(CacheError::FbackIndex)
        );
        lines[130] = "5 1".into();
        assert_eq!(
            parse_cache(lines.join("\n").as_bytes()),
            Err(CacheError::Fback)
        );
        lines[130] = "-3 1 1".into();
        assert!(parse_cache(lines.join("\n").as_bytes()).is_ok());
        lines[189] = "x".into();
        assert_eq!(
            parse_cache(lines.join("\n").as_bytes()),
            Err(CacheError::Counters)
        );
        lines[189] = "0".into();
        lines.push("0".into());
        assert_eq!(
            parse_cache(lines.join("\n").as_bytes()),
            Err(CacheError::Corrupt)
        );
        assert_eq!(CacheError::Corrupt.message(), "Error: cache file corrupt");
    }

    #[test]
    fn sscanf_numbers() {
        let mut s = Scan(b"  -12 +7 18446744073709551615 99999999999999999999 -1\n");
        assert_eq!(s.int(), Some(-12));
        assert_eq!(s.int(), Some(7));
        assert_eq!(s.ull(), Some(u64::MAX));
        assert_eq!(s.ull(), Some(u64::MAX));
        assert_eq!(s.ull(), Some(u64::MAX));
        assert_eq!(s.int(), None);
        assert_eq!(Scan(b"4294967297").int(), Some(1));
        assert_eq!(Scan(b"12abc").int(), Some(12));
        let lines: Vec<&[u8]> = fgets_lines(b"a\nb\0c\n\nd").collect();
        assert_eq!(lines, [&b"a\n"[..], b"b", b"\n", b"d"]);
        let long = vec![b'1'; 5000];
        assert_eq!(
            fgets_lines(&long).map(<[u8]>::len).collect::<Vec<_>>(),
            [4095, 905]
        );
    }

    #[test]
    fn reset_subtracts_and_checks() {
        let (stats, rsn) = scenario();
        let cache = Cache { stats, rsn };
        let mut later = (stats, rsn);
        later.0.smc[SMC_TYPE_R].tx_cnt = 10;
        later.1.clnt[0].count = 5;
        later.1.clnt[1] = Reason {
            code: 0x0303_0002,
            count: 2,
        };
        later.1.clnt_fback_cnt = 7;
        assert!(consistent(&later.0, &later.1, &cache));
        subtract(&mut later.0, &mut later.1, &cache);
        assert_eq!(later.0.smc[SMC_TYPE_R].tx_cnt, 10);
        assert_eq!(later.1.srv[0].count, 0);
        assert_eq!(later.1.clnt[0].count, 2);
        assert_eq!(later.1.clnt[1].count, 2);
        assert_eq!((later.1.srv_fback_cnt, later.1.clnt_fback_cnt), (0, 4));
        // A module loaded again: counters below the cache.
        let fresh = Fallbacks::default();
        assert!(!consistent(&Stats::default(), &fresh, &cache));
        let mut fewer = rsn;
        fewer.clnt[0].count = 2;
        assert!(!consistent(&stats, &fewer, &cache));
        let mut lower = stats;
        let cache_hi = Cache {
            stats: Stats {
                clnt_hshake_err_cnt: 1,
                ..stats
            },
            rsn,
        };
        lower.clnt_hshake_err_cnt = 0;
        assert!(!consistent(&lower, &rsn, &cache_hi));
    }
}
