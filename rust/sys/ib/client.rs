// SPDX-License-Identifier: GPL-2.0

//! Registration as an ib_core client: ib_core calls `add` for every RDMA
//! device, present and future, and `remove` before a device goes.

use super::super::bindings;
use super::super::errno::{EBUSY, EOPNOTSUPP};
use super::device::IbDevice;
use core::ffi::{c_int, c_void};
use core::marker::PhantomData;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{to_result, Result};
use kernel::prelude::*;
use kernel::types::{ForeignOwnable, Opaque};

/// What a client does with devices.
pub(crate) trait IbClientOps: 'static {
    /// The client's state for one device, kept by ib_core as the device's
    /// client data from `add` to `remove`.
    type Device: Send + Sync;

    /// A device appeared (or was there when the client registered). An
    /// error means the client does not use this device.
    fn add(dev: &IbDevice) -> Result<KBox<Self::Device>>;

    /// The device goes away: its state comes back to be dropped. Once this
    /// returns, nothing of the client may touch the device.
    fn remove(dev: &IbDevice, state: KBox<Self::Device>);
}

/// The registered client, for the trampolines (ib_core passes no context to
/// `add`, and `ib_set_client_data` needs it).
static CLIENT: AtomicPtr<bindings::ib_client> = AtomicPtr::new(null_mut());

/// A registered ib_core client; unregisters on drop, which calls `remove`
/// for every device first.
pub(crate) struct IbClient<T: IbClientOps> {
    client: Pin<KBox<Opaque<bindings::ib_client>>>,
    _ops: PhantomData<T>,
}

// SAFETY: the C table is written before registration and only read after.
unsafe impl<T: IbClientOps> Send for IbClient<T> {}
// SAFETY: as above.
unsafe impl<T: IbClientOps> Sync for IbClient<T> {}

impl<T: IbClientOps> IbClient<T> {
    /// Registers the client `name`; `add` runs for the present devices
    /// before this returns.
    pub(crate) fn register(name: &'static CStr) -> Result<Self> {
        let client = KBox::pin(Opaque::<bindings::ib_client>::uninit(), GFP_KERNEL)?;
        let raw = client.get();
        // All-zero is "no callback" for the entries we leave out.
        // SAFETY: not shared yet, so writing it is exclusive.
        unsafe {
            raw.write(core::mem::zeroed());
            (*raw).name = name.as_char_ptr().cast();
            (*raw).add = Some(add_trampoline::<T>);
            (*raw).remove = Some(remove_trampoline::<T>);
        }
        CLIENT
            .compare_exchange(null_mut(), raw, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| EBUSY)?;
        // SAFETY: the table is filled and pinned until `drop` unregisters it.
        if let Err(e) = to_result(unsafe { bindings::ib_register_client(raw) }) {
            CLIENT.store(null_mut(), Ordering::Release);
            return Err(e);
        }
        Ok(IbClient {
            client,
            _ops: PhantomData,
        })
    }
}

impl<T: IbClientOps> Drop for IbClient<T> {
    fn drop(&mut self) {
        // Calls `remove` for every device that `add` accepted and waits for
        // running callbacks.
        // SAFETY: registered in `register`, unregistered once.
        unsafe { bindings::ib_unregister_client(self.client.get()) };
        CLIENT.store(null_mut(), Ordering::Release);
    }
}

/// # Safety
///
/// `ib_client::add`: called by ib_core with a registered device.
unsafe extern "C" fn add_trampoline<T: IbClientOps>(dev: *mut bindings::ib_device) -> c_int {
    // SAFETY: live for the call (contract).
    let ibdev = unsafe { IbDevice::from_raw(dev) };
    match T::add(ibdev) {
        Ok(state) => {
            let client = CLIENT.load(Ordering::Acquire);
            // ib_core keeps the pointer until it hands it to `remove`, which
            // takes the box back.
            // SAFETY: `client` is the registered client (set before registering).
            unsafe { bindings::ib_set_client_data(dev, client, state.into_foreign().cast_mut()) };
            0
        }
        // "Not for this client": ib_core goes on with the device.
        Err(_) => EOPNOTSUPP.to_neg(),
    }
}

/// # Safety
///
/// `ib_client::remove`: called by ib_core for a device `add` accepted, with
/// the client data it set.
unsafe extern "C" fn remove_trampoline<T: IbClientOps>(
    dev: *mut bindings::ib_device,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: live for the call (contract).
    let ibdev = unsafe { IbDevice::from_raw(dev) };
    // SAFETY: `data` came from `into_foreign` in `add_trampoline`, once.
    let state = unsafe { KBox::<T::Device>::from_foreign(data) };
    T::remove(ibdev, state);
}
