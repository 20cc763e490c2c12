// SPDX-License-Identifier: GPL-2.0

//! Asynchronous events of an RDMA device (port up and down, GID changes,
//! device fatal), delivered to an owner while a registration lives.

use super::super::bindings;
use super::device::IbDevice;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::{ARef, Opaque};

/// An event, as much of it as SMC uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IbEvent {
    /// A port came up.
    PortActive(u32),
    /// A port went down.
    PortError(u32),
    /// The GID table of a port changed.
    GidChange(u32),
    /// The device failed as a whole.
    DeviceFatal,
    /// Anything else, by `enum ib_event_type` number.
    Other(u32),
}

/// An owner of device events.
pub(crate) trait IbEventSink: Send + Sync + 'static {
    /// Called by ib_core for each event of the device, in process context
    /// under the device's event lock: no waiting for other device events,
    /// no (un)registration of handlers.
    fn event(&self, event: IbEvent);
}

/// A registered event handler that delivers to `owner`; unregisters on drop.
///
/// # Invariants
///
/// `raw` is the first field and registered with ib_core for `dev`.
#[repr(C)]
pub(crate) struct IbEventRegistration<T: IbEventSink> {
    raw: Opaque<bindings::ib_event_handler>,
    owner: Arc<T>,
    /// Keeps the device allocated while the handler points at it.
    _dev: ARef<IbDevice>,
}

// SAFETY: after registration only ib_core touches `raw` (under its own
// lock); `owner` and the device reference are `Send`.
unsafe impl<T: IbEventSink> Send for IbEventRegistration<T> {}
// SAFETY: shared access only reads `owner`, which is `Sync`.
unsafe impl<T: IbEventSink> Sync for IbEventRegistration<T> {}

impl<T: IbEventSink> IbEventRegistration<T> {
    /// Delivers the events of `dev` to `owner` from now on.
    pub(crate) fn new(dev: &IbDevice, owner: Arc<T>) -> Result<Pin<KBox<Self>>> {
        let reg = KBox::pin(
            IbEventRegistration {
                raw: Opaque::uninit(),
                owner,
                _dev: ARef::from(dev),
            },
            GFP_KERNEL,
        )?;
        let raw = reg.raw.get();
        // The handler lives pinned in the box until `drop` unregisters it.
        // SAFETY: so ib_core may keep and call it meanwhile.
        unsafe {
            bindings::smc_rs_init_ib_event_handler(
                raw,
                dev.as_raw(),
                Some(handler_trampoline::<T>),
            );
            bindings::ib_register_event_handler(raw);
        }
        // INVARIANT: registered above.
        Ok(reg)
    }
}

impl<T: IbEventSink> Drop for IbEventRegistration<T> {
    fn drop(&mut self) {
        // Waits for a running handler (it takes the event lock for writing).
        // SAFETY: registered in `new` (invariant), unregistered once.
        unsafe { bindings::ib_unregister_event_handler(self.raw.get()) };
    }
}

/// # Safety
///
/// Called by ib_core with a handler registered by [`IbEventRegistration`]
/// and a valid event.
unsafe extern "C" fn handler_trampoline<T: IbEventSink>(
    handler: *mut bindings::ib_event_handler,
    event: *mut bindings::ib_event,
) {
    // `raw` is the first field of a live `IbEventRegistration<T>` (`repr(C)`).
    // SAFETY: so the registration, and its owner, are live for the call.
    let reg = unsafe { &*handler.cast::<IbEventRegistration<T>>() };
    // SAFETY: a valid event for the call (contract).
    let (kind, port) = unsafe { ((*event).event, (*event).element.port_num) };
    let event = match kind {
        bindings::ib_event_type_IB_EVENT_PORT_ACTIVE => IbEvent::PortActive(port),
        bindings::ib_event_type_IB_EVENT_PORT_ERR => IbEvent::PortError(port),
        bindings::ib_event_type_IB_EVENT_GID_CHANGE => IbEvent::GidChange(port),
        bindings::ib_event_type_IB_EVENT_DEVICE_FATAL => IbEvent::DeviceFatal,
        other => IbEvent::Other(other),
    };
    reg.owner.event(event);
}
