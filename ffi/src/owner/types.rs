//! The owner ABI's constants and structs, and their conversions to and from core types.

use std::ffi::c_void;

use wkcore::owner::{Claim, Owner, OwnerHandle, OwnerKey, OwnerSnapshot, RetiredBoot, Stage};

use super::status::WK_STATUS_OWNER_INVALID;
use crate::handle::check_ptr;
use crate::status::{wk_status, WK_STATUS_NULL_ARGUMENT};

/// `timeout_ns` of a blocking call that waits for as long as it takes (no deadline).
pub const WK_OWNER_WAIT_FOREVER: u64 = u64::MAX;
/// The most bytes a namespace, client id or UID may have.
pub const WK_OWNER_IDENTITY_MAX: usize = 1024;
/// The most bytes a boot id may have.
pub const WK_OWNER_BOOT_ID_MAX: usize = 128;
/// The most owners one sweep visits (`limit` is `1..=WK_OWNER_SWEEP_LIMIT_MAX`).
pub const WK_OWNER_SWEEP_LIMIT_MAX: u32 = 256;
/// The most operations one `wk_owner_op_done_batch` takes.
pub const WK_OWNER_OP_BATCH_MAX: usize = 4096;
/// The most retirement proofs one `wk_owner_isolation_quiesce` takes.
pub const WK_OWNER_PROOFS_MAX: usize = 4096;

/// `wk_owner_info.stage`: reserved, not yet activated.
pub const WK_OWNER_STAGE_PENDING: u32 = 1;
/// `wk_owner_info.stage`: activated; admits operations while its lease lasts.
pub const WK_OWNER_STAGE_ACTIVE: u32 = 2;
/// `wk_owner_info.stage`: fenced; admits nothing, waits for its close and its operations.
pub const WK_OWNER_STAGE_CLOSING: u32 = 3;

/// `wk_owner_op.state`: the operation is admitted and not yet done.
pub const WK_OWNER_OP_LIVE: u64 = 1;
/// `wk_owner_op.state`: the operation is done (its place released).
pub const WK_OWNER_OP_DONE: u64 = 2;

/// Node RPC service id of the MQTT owner RPC.
pub const WK_OWNER_RPC_SERVICE_ID: u8 = 107;
/// The largest owner frame the codec writes or reads, in bytes.
pub const WK_OWNER_FRAME_MAX: usize = 2304;
/// Response status byte: the owner quiesced.
pub const WK_OWNER_RPC_QUIESCED: u8 = 1;
/// Response status byte: isolation unknown or unproved (or the node has no owner runtime).
pub const WK_OWNER_RPC_UNKNOWN: u8 = 2;
/// Response status byte: the transport close failed.
pub const WK_OWNER_RPC_CLOSE_FAILED: u8 = 3;
/// Response status byte: the quiesce was cancelled on the owner node.
pub const WK_OWNER_RPC_CANCELED: u8 = 4;
/// Response status byte: the quiesce's deadline passed on the owner node.
pub const WK_OWNER_RPC_DEADLINE_EXCEEDED: u8 = 5;

// cbindgen writes only literal constants; these pin them to the core's.
const _: () = {
    assert!(WK_OWNER_IDENTITY_MAX == wkcore::owner::IDENTITY_MAX);
    assert!(WK_OWNER_BOOT_ID_MAX == wkcore::owner::BOOT_ID_MAX);
    assert!(WK_OWNER_SWEEP_LIMIT_MAX as usize == wkcore::owner::SWEEP_LIMIT_MAX);
    assert!(WK_OWNER_RPC_SERVICE_ID == wkcore::codec::owner_frame::SERVICE_ID);
    assert!(WK_OWNER_FRAME_MAX == wkcore::codec::owner_frame::MAX_FRAME);
};
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<wk_owner_options>() == 64);
    assert!(std::mem::size_of::<wk_owner_claim>() == 64);
    assert!(std::mem::size_of::<wk_owner_identity>() == 80);
    assert!(std::mem::size_of::<wk_owner_info>() == 40);
    assert!(std::mem::size_of::<wk_owner_op>() == 16);
    assert!(std::mem::size_of::<wk_owner_sweep_result>() == 12);
    assert!(std::mem::size_of::<wk_owner_snapshot>() == 64);
    assert!(std::mem::size_of::<wk_retired_boot>() == 152);
};

/// A registry's configuration (`wk_owner_registry_new`). Every field is required; upstream's
/// bounds apply (else `WK_STATUS_OWNER_INVALID`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_owner_options {
    /// `sizeof(wk_owner_options)`; a smaller value gives `WK_STATUS_INVALID_ARGUMENT` (the
    /// struct may grow: a larger value from a newer header is accepted).
    pub struct_size: u32,
    /// This node (non-zero); every issued owner carries it.
    pub node_id: u64,
    /// This process's boot id: 1..=`WK_OWNER_BOOT_ID_MAX` bytes of UTF-8, not blank, no NUL.
    pub boot_id: *const u8,
    /// Length of `boot_id` in bytes.
    pub boot_id_len: usize,
    /// The most owners held at once (1..=1 000 000).
    pub capacity: u32,
    /// The most admitted operations per owner (1..=1024).
    pub max_operations: u32,
    /// How long a reservation may stay pending before it is fenced (0 < t ≤ 60 s), ns.
    pub pending_timeout_ns: u64,
    /// The longest lease an activation or renewal may install (0 < t ≤ 60 s), ns.
    pub max_lease_ns: u64,
    /// How long after a fence or a failed close an owner is due again (0 < t ≤ 60 s), ns.
    pub close_retry_ns: u64,
}

/// What a host reserves an owner with (`wk_owner_reserve`). Strings are pointer + byte length,
/// UTF-8, 1..=`WK_OWNER_IDENTITY_MAX` bytes, not blank, no NUL; read only during the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_owner_claim {
    /// The tenant namespace.
    pub namespace_ptr: *const u8,
    /// Length of the namespace in bytes.
    pub namespace_len: usize,
    /// The MQTT client id.
    pub client_id: *const u8,
    /// Length of the client id in bytes.
    pub client_id_len: usize,
    /// The authenticated user.
    pub uid: *const u8,
    /// Length of the UID in bytes.
    pub uid_len: usize,
    /// The session generation (non-zero).
    pub session_generation: u64,
    /// The owner generation (non-zero).
    pub owner_generation: u64,
}

/// A full owner identity: what the by-identity calls and the frame codec take, and what the
/// decoders write. Strings are pointer + byte length (a NULL pointer with length 0 is the empty
/// string, which no valid identity has).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_owner_identity {
    /// The tenant namespace (1..=`WK_OWNER_IDENTITY_MAX` bytes).
    pub namespace_ptr: *const u8,
    /// Length of the namespace in bytes.
    pub namespace_len: usize,
    /// The MQTT client id (1..=`WK_OWNER_IDENTITY_MAX` bytes).
    pub client_id: *const u8,
    /// Length of the client id in bytes.
    pub client_id_len: usize,
    /// The session generation (non-zero).
    pub session_generation: u64,
    /// The owner generation (non-zero).
    pub owner_generation: u64,
    /// The issuing node (non-zero).
    pub node_id: u64,
    /// The issuing boot (1..=`WK_OWNER_BOOT_ID_MAX` bytes).
    pub boot_id: *const u8,
    /// Length of the boot id in bytes.
    pub boot_id_len: usize,
    /// The registry-issued connection id (non-zero).
    pub connection_id: u64,
}

/// An owner's identity numbers and its state now (`wk_owner_info`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_owner_info {
    /// The registry-issued connection id.
    pub connection_id: u64,
    /// The claim's session generation.
    pub session_generation: u64,
    /// The claim's owner generation.
    pub owner_generation: u64,
    /// The issuing node.
    pub node_id: u64,
    /// `WK_OWNER_STAGE_PENDING`, `_ACTIVE` or `_CLOSING`.
    pub stage: u32,
    /// Marked uncertain (never cleared).
    pub uncertain: bool,
    /// Retired, or (uncertain) at its final barrier.
    pub complete: bool,
    /// The owner's operations are cancelled: fenced, or admission stopped.
    pub cancelled: bool,
}

/// One admitted operation scope, kept in host memory (`wk_owner_begin` writes it). It does not
/// own a reference to its owner: the host keeps the `wk_owner` handle alive while the operation
/// is live. `state` is updated atomically by the library (8-byte aligned).
#[repr(C)]
#[derive(Debug)]
pub struct wk_owner_op {
    /// The owner the operation runs for.
    pub owner: *const super::handle::wk_owner,
    /// `WK_OWNER_OP_LIVE` or `WK_OWNER_OP_DONE`; hosts do not write it.
    pub state: u64,
}

/// What `wk_owner_registry_sweep` / `_sweep_turn` did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct wk_owner_sweep_result {
    /// Owners visited (the failing one included).
    pub visited: u32,
    /// `WK_STATUS_OK`, or the status the sweep stopped on.
    pub error: wk_status,
    /// True when this call ran a sweep (false: `_sweep_turn` skipped the interval).
    pub ran: bool,
}

/// A registry's counts (`wk_owner_registry_snapshot`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_owner_snapshot {
    /// Owners held: pending, active, closing and uncertain.
    pub held: u64,
    /// Reserved, not activated.
    pub pending: u64,
    /// Activated.
    pub active: u64,
    /// Fenced, not retired (uncertain owners included).
    pub closing: u64,
    /// Admitted operation scopes.
    pub operations: u64,
    /// Deadline index entries (one per held owner).
    pub deadlines: u64,
    /// Owners marked uncertain.
    pub uncertain: u64,
    /// Admission stopped.
    pub stopped: bool,
}

/// The proof that a boot holds no owner any more (pointer-free, so a host may persist it as
/// bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct wk_retired_boot {
    /// The node.
    pub node_id: u64,
    /// The last connection id the boot issued.
    pub last_connection_id: u64,
    /// The retired boot id; the first `boot_id_len` bytes are used.
    pub boot_id: [u8; 128],
    /// Length of `boot_id` in bytes (1..=`WK_OWNER_BOOT_ID_MAX`).
    pub boot_id_len: usize,
}

/// A host's transport close: seal writes, close the socket, give up after `timeout_ns`
/// (`WK_OWNER_WAIT_FOREVER`: no deadline). `user_data` is the reservation's; `call_data` is the
/// one the host passed to the blocking call that runs the close (a quiesce, a sweep, a close of
/// the registry — for a sweep or a registry close, the owner it visits is not necessarily the
/// one the host named), for the host's own context (its cancellation, its values). Returns `WK_STATUS_OK` when the transport is closed;
/// `WK_STATUS_OWNER_CANCELED` or `WK_STATUS_OWNER_DEADLINE_EXCEEDED` are passed through to the
/// quiesce; any other status is a failed close (`WK_STATUS_OWNER_CLOSE`). Called synchronously
/// on the thread that called quiesce, sweep or close, outside every lock, at most once per close
/// attempt; it must not call back into a quiesce of the registry.
pub type wk_owner_close_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        call_data: *mut c_void,
        timeout_ns: u64,
    ) -> wk_status,
>;

/// Called once with the `user_data` of `wk_owner_reserve` when the owner's last reference is
/// dropped (the registry's and every `wk_owner` handle's), on whichever thread drops it: one
/// that called `wk_owner_free`, `wk_owner_op_done`, a quiesce, a sweep, `wk_owner_registry_close`
/// or `wk_owner_registry_free`.
pub type wk_owner_release_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Borrows an input struct: NULL → `NULL_ARGUMENT`, misaligned → `INVALID_ARGUMENT`.
///
/// # Safety
///
/// `ptr` must be NULL or point to a readable, initialised `T` for `'a`.
pub(crate) unsafe fn in_ref<'a, T>(ptr: *const T) -> Result<&'a T, wk_status> {
    check_ptr(ptr)?;
    // SAFETY: non-NULL and aligned; readable per the contract.
    Ok(unsafe { &*ptr })
}

/// The string at `(ptr, len)`: `len > max` → `OWNER_INVALID` (nothing read); NULL with length
/// 0 is the empty string, NULL with a length `NULL_ARGUMENT`; invalid UTF-8 → `OWNER_INVALID`.
///
/// # Safety
///
/// `ptr` must be NULL or point to `len` readable bytes for `'a`.
pub(crate) unsafe fn text<'a>(
    ptr: *const u8,
    len: usize,
    max: usize,
) -> Result<&'a str, wk_status> {
    if len > max {
        return Err(WK_STATUS_OWNER_INVALID);
    }
    if ptr.is_null() {
        return if len == 0 {
            Ok("")
        } else {
            Err(WK_STATUS_NULL_ARGUMENT)
        };
    }
    // SAFETY: non-NULL, `len` bounded by `max`, readable per the contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    std::str::from_utf8(bytes).map_err(|_| WK_STATUS_OWNER_INVALID)
}

/// The owner `id` names (not validated: the core's calls validate it).
///
/// # Safety
///
/// Every string of `id` must satisfy [`text`]'s contract.
pub(crate) unsafe fn owner_of(id: &wk_owner_identity) -> Result<Owner, wk_status> {
    // SAFETY: forwarded contract.
    let (namespace, client_id, boot_id) = unsafe {
        (
            text(id.namespace_ptr, id.namespace_len, WK_OWNER_IDENTITY_MAX)?,
            text(id.client_id, id.client_id_len, WK_OWNER_IDENTITY_MAX)?,
            text(id.boot_id, id.boot_id_len, WK_OWNER_BOOT_ID_MAX)?,
        )
    };
    Ok(Owner {
        key: OwnerKey::new(namespace, client_id),
        session_generation: id.session_generation,
        owner_generation: id.owner_generation,
        node_id: id.node_id,
        boot_id: boot_id.into(),
        connection_id: id.connection_id,
    })
}

/// The claim `c` describes (not validated: reserve validates it).
///
/// # Safety
///
/// Every string of `c` must satisfy [`text`]'s contract.
pub(crate) unsafe fn claim_of(c: &wk_owner_claim) -> Result<Claim, wk_status> {
    // SAFETY: forwarded contract.
    let (namespace, client_id, uid) = unsafe {
        (
            text(c.namespace_ptr, c.namespace_len, WK_OWNER_IDENTITY_MAX)?,
            text(c.client_id, c.client_id_len, WK_OWNER_IDENTITY_MAX)?,
            text(c.uid, c.uid_len, WK_OWNER_IDENTITY_MAX)?,
        )
    };
    Ok(Claim {
        key: OwnerKey::new(namespace, client_id),
        uid: uid.to_owned(),
        session_generation: c.session_generation,
        owner_generation: c.owner_generation,
    })
}

/// The proof `p` carries: its boot id must be UTF-8 of at most `WK_OWNER_BOOT_ID_MAX` bytes
/// (else `OWNER_INVALID`).
pub(crate) fn proof_of(p: &wk_retired_boot) -> Result<RetiredBoot, wk_status> {
    let bytes = p
        .boot_id
        .get(..p.boot_id_len)
        .ok_or(WK_STATUS_OWNER_INVALID)?;
    let boot_id = std::str::from_utf8(bytes).map_err(|_| WK_STATUS_OWNER_INVALID)?;
    Ok(RetiredBoot {
        node_id: p.node_id,
        boot_id: boot_id.into(),
        last_connection_id: p.last_connection_id,
    })
}

impl wk_retired_boot {
    /// The C form of a proof (a boot id is at most 128 bytes: the registry validated it).
    pub(crate) fn of(p: &RetiredBoot) -> Self {
        let mut boot_id = [0u8; 128];
        let src = p.boot_id.as_bytes();
        let n = src.len().min(boot_id.len());
        boot_id[..n].copy_from_slice(&src[..n]);
        Self {
            node_id: p.node_id,
            last_connection_id: p.last_connection_id,
            boot_id,
            boot_id_len: n,
        }
    }
}

impl wk_owner_info {
    /// The info of `h` now.
    pub(crate) fn of(h: &OwnerHandle) -> Self {
        let o = h.owner();
        Self {
            connection_id: o.connection_id,
            session_generation: o.session_generation,
            owner_generation: o.owner_generation,
            node_id: o.node_id,
            stage: match h.stage() {
                Stage::Pending => WK_OWNER_STAGE_PENDING,
                Stage::Active => WK_OWNER_STAGE_ACTIVE,
                Stage::Closing => WK_OWNER_STAGE_CLOSING,
            },
            uncertain: h.is_uncertain(),
            complete: h.is_complete(),
            cancelled: h.is_cancelled(),
        }
    }
}

impl From<OwnerSnapshot> for wk_owner_snapshot {
    fn from(s: OwnerSnapshot) -> Self {
        Self {
            held: s.held,
            pending: s.pending,
            active: s.active,
            closing: s.closing,
            operations: s.operations,
            deadlines: s.deadlines,
            uncertain: s.uncertain,
            stopped: s.stopped,
        }
    }
}
