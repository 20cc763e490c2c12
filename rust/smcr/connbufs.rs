// SPDX-License-Identifier: GPL-2.0

//! A new connection's buffers: an RMB and a send buffer from the link
//! group's pool, or new ones mapped on every link of the group and
//! registered, their keys told to the peer on the links the CLC message
//! does not name (see [`rkeys`](super::rkeys)).

use super::bufs::{BufKind, LgrBuf};
use super::lgr::LinkGroup;
use super::link::{Link, LinkState};
use crate::stats::tech::{self, BufferSource, Dir, Tech};
use crate::sys::print::smc_dbg;
use crate::sys::tcp::TcpSock;
use crate::wire::bufsize;
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::Arc;

/// The largest buffer: one physically contiguous allocation of the
/// largest page order (4 MiB with 4 KiB pages).
const MAX_BUF_SIZE: u32 = 4 << 20;

/// The group's `conf` held.
pub(crate) type ConfGuard<'a> = Guard<'a, (), MutexBackend>;

/// Buffers of a new connection ([`new_buffers`]) on every active link,
/// with `conf` held: a link added before `conf` was taken again (the peer
/// knows the RMB on the links it had) has them retired and new ones made.
pub(crate) fn buffers_under_conf<'a>(
    lgr: &'a LinkGroup,
    register: bool,
    sock: &TcpSock,
) -> Option<(Arc<LgrBuf>, Arc<LgrBuf>, ConfGuard<'a>)> {
    for _ in 0..3 {
        let (rmb, sndbuf) = new_buffers(lgr, register, sock)
            .inspect_err(|e| smc_dbg!("smcr: no buffers for a connection ({:?})", e))
            .ok()?;
        let conf = lgr.conf.lock();
        let on = |l: &Arc<Link>| rmb.rkey(l.idx).is_some() && sndbuf.on(l.idx).is_some();
        if lgr.with_links(|s| s.active().all(on)) {
            return Some((rmb, sndbuf, conf));
        }
        drop(conf);
        smc_dbg!("smcr: a link came while a connection's buffers were made, again");
        super::rkeys::retire(lgr, (rmb, sndbuf));
    }
    None
}

/// Buffers of a new connection: an RMB and a send buffer of the default
/// size, from the link group's pool when it has some (registered already),
/// else new ones, registered now when the link is up (a new link registers
/// them once it is).
fn new_buffers(
    lgr: &LinkGroup,
    register: bool,
    sock: &TcpSock,
) -> Result<(Arc<LgrBuf>, Arc<LgrBuf>)> {
    let (snd, rcv) = sock.user_buf_sizes();
    let class = |sock_buf: u32, is_rmb: bool| {
        bufsize::size_class_for(sock_buf, is_rmb).min(bufsize::compress(MAX_BUF_SIZE))
    };
    // Without SO_RCVBUF/SO_SNDBUF, twice `net.smc.rmem`/`wmem`, as
    // upstream's initial `sk_rcvbuf`/`sk_sndbuf`.
    let net = sock.net();
    let rcv = rcv.unwrap_or(crate::sysctl::rmem(net).saturating_mul(2));
    let snd = snd.unwrap_or(crate::sysctl::wmem(net).saturating_mul(2));
    let mut rmb_class = class(rcv, true);
    let mut snd_class = class(snd, false);
    // No link comes or goes meanwhile: a new buffer is on every link.
    let conf = lgr.conf.lock();
    // Buffers of earlier connections, registered already.
    let (rmb_size, snd_size) = (
        bufsize::uncompress(rmb_class),
        bufsize::uncompress(snd_class),
    );
    if let Some(pair) = lgr.take_pooled_buffers(rmb_size, snd_size) {
        tech::buffer_taken(net, Tech::Smcr, Dir::Rx, rmb_size, BufferSource::Reused);
        tech::buffer_taken(net, Tech::Smcr, Dir::Tx, snd_size, BufferSource::Reused);
        // The peer has their keys on every link (ADD LINK carries the
        // keys of pooled RMBs too).
        return Ok(pair);
    }
    // A pooled pair of another size goes, its RMB's row at the peer first.
    let conf = match lgr.take_misfit() {
        Some(old) => {
            drop(conf);
            super::rkeys::let_go(lgr, old);
            lgr.conf.lock()
        }
        None => conf,
    };
    let (rmb_wanted, snd_wanted) = (rmb_class, snd_class);
    let link = &lgr.link();
    let links = lgr.links();
    let others = || {
        links
            .iter()
            .flatten()
            .filter(|l| l.idx != link.idx && l.state() == LinkState::Active)
    };
    let make = |kind: BufKind, class: &mut u8| -> Result<Arc<LgrBuf>> {
        // Physically contiguous: a size the allocator cannot give is
        // tried a class smaller, down to the smallest, as upstream does.
        let buf = loop {
            match LgrBuf::new(link, bufsize::uncompress(*class) as usize, kind) {
                Ok(b) => break b,
                Err(e) if *class == 0 => return Err(e),
                Err(_) => *class -= 1,
            }
        };
        if register {
            buf.register(link)?;
        }
        for l in others() {
            buf.add_link(l, register)?;
        }
        Ok(buf)
    };
    let rmb = make(BufKind::Rmb, &mut rmb_class)?;
    // The send buffer is only read by our device: the domain's local key
    // reaches it, no region to register (as upstream).
    let sndbuf = make(BufKind::Send, &mut snd_class)?;
    for (dir, class, wanted) in [
        (Dir::Rx, rmb_class, rmb_wanted),
        (Dir::Tx, snd_class, snd_wanted),
    ] {
        let source = BufferSource::New {
            downgraded: class < wanted,
        };
        tech::buffer_taken(net, Tech::Smcr, dir, bufsize::uncompress(class), source);
    }
    // Whenever the group has or may get another link: a link added
    // between now and the CLC message would otherwise list the RMB's
    // keys in its ADD LINK to a peer that may take that message before
    // the CLC one, find no row for the RMB and drop its new key (and
    // write nothing on that link after a failover). Not on a link still
    // being confirmed (a first contact), which carries no flow yet.
    let confirm = others().next().is_some()
        || (lgr.max_links() > 1 && link.state() == LinkState::Active);
    drop(conf);
    // The peer learns the RMB's keys on every link before the CLC
    // message that names it (upstream's `smcr_lgr_reg_rmbs`), in a flow
    // of its own, which waits for others (outside `conf`, which they
    // take).
    if register && confirm {
        super::rkeys::confirm_rkey(lgr, &rmb)?;
    }
    Ok((rmb, sndbuf))
}
