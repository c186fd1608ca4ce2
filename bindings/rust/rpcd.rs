// SPDX-License-Identifier: MIT
//! The Rust binding of rpcd's plugin ABI (<rpcd/plugin.h>), with std alone: `sys` declares the
//! C structures, checked at build time against the layout of the installed header (RPCD_LAYOUT,
//! the output of bindings/rust/layout.c); the rest is a small safe wrapper in which a panic
//! becomes RPCD_ERR_INTERNAL instead of unwinding into rpcd's C frames, a deferred call is
//! always completed, and the threads a plugin spawns are joined before rpcd unloads its code.
//! Built for rustc 1.63 (Debian 12) and later, edition 2018.
#![allow(non_camel_case_types)]

use std::any::Any;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// The C declarations of <rpcd/plugin.h>, member for member.
pub mod sys {
    use std::os::raw::{c_char, c_int, c_void};

    /// The ABI this binding was written for: what the plugin declares.
    pub const RPCD_ABI_MAJOR: u32 = 1;
    pub const RPCD_ABI_MINOR: u32 = 7;

    pub const RPCD_OK: c_int = 0;
    pub const RPCD_DEFERRED: c_int = 1;
    pub const RPCD_INPUT_REQUIRED: c_int = 2;
    pub const RPCD_ERR_INVALID_PARAMS: c_int = -1;
    pub const RPCD_ERR_METHOD_NOT_FOUND: c_int = -2;
    pub const RPCD_ERR_INTERNAL: c_int = -3;
    pub const RPCD_ERR_NO_MEMORY: c_int = -4;
    pub const RPCD_ERR_CANCELLED: c_int = -5;
    pub const RPCD_ERR_APPLICATION: c_int = -6;
    pub const RPCD_ERR_INVALID_ARGUMENT: c_int = -7;
    pub const RPCD_ERR_STALE: c_int = -8;
    pub const RPCD_ERR_EXISTS: c_int = -9;
    pub const RPCD_ERR_UNSUPPORTED: c_int = -10;

    pub const RPCD_LOG_ERROR: c_int = 0;
    pub const RPCD_LOG_WARNING: c_int = 1;
    pub const RPCD_LOG_INFO: c_int = 2;
    pub const RPCD_LOG_DEBUG: c_int = 3;

    pub const RPCD_METHOD_SERIALIZED: u32 = 0x1;
    pub const RPCD_METHOD_QUICK: u32 = 0x2;
    pub const RPCD_METHOD_VALIDATES_ITSELF: u32 = 0x4;
    pub const RPCD_METHOD_TASK: u32 = 0x8;
    pub const RPCD_METHOD_TASK_REQUIRED: u32 = 0x10;

    pub const RPCD_MCP_TOOL: u32 = 0;
    pub const RPCD_MCP_RESOURCE: u32 = 1;
    pub const RPCD_MCP_PROMPT: u32 = 2;
    pub const RPCD_MCP_COMPLETION: u32 = 3;
    pub const RPCD_MCP_HIDDEN: u32 = 4;

    /// Opaque: only ever behind a pointer.
    #[repr(C)]
    pub struct rpcd_plugin {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct rpcd_call {
        _private: [u8; 0],
    }

    pub type rpcd_handler_fn =
        Option<unsafe extern "C" fn(*mut rpcd_call, *const c_char, usize, *mut c_void) -> c_int>;

    #[repr(C)]
    pub struct rpcd_method {
        pub size: usize,
        pub name: *const c_char,
        pub handler: rpcd_handler_fn,
        pub user_data: *mut c_void,
        pub free_user_data: Option<unsafe extern "C" fn(*mut c_void)>,
        pub flags: u32,
        pub description: *const c_char,
        pub params_schema: *const c_char,
        // 1.4
        pub title: *const c_char,
        pub annotations: *const c_char,
        pub output_schema: *const c_char,
        pub icons: *const c_char,
        // 1.5
        pub mcp_role: u32,
        pub mcp_descriptor: *const c_char,
    }

    #[repr(C)]
    pub struct rpcd_host_api {
        pub size: usize,
        pub abi_major: u32,
        pub abi_minor: u32,
        pub register_method:
            Option<unsafe extern "C" fn(*mut rpcd_plugin, *const rpcd_method) -> c_int>,
        pub config_get:
            Option<unsafe extern "C" fn(*mut rpcd_plugin, *const c_char) -> *const c_char>,
        /// Variadic: callable from Rust, but log_text is simpler.
        pub log: Option<unsafe extern "C" fn(*mut rpcd_plugin, c_int, *const c_char, ...)>,
        pub call_result:
            Option<unsafe extern "C" fn(*mut rpcd_call, *const c_char, usize) -> c_int>,
        pub call_fail: Option<
            unsafe extern "C" fn(
                *mut rpcd_call,
                c_int,
                *const c_char,
                *const c_char,
                usize,
            ) -> c_int,
        >,
        pub call_fail_code: Option<
            unsafe extern "C" fn(*mut rpcd_call, i64, *const c_char, *const c_char, usize) -> c_int,
        >,
        pub call_notify: Option<
            unsafe extern "C" fn(*mut rpcd_call, *const c_char, *const c_char, usize) -> c_int,
        >,
        pub call_progress:
            Option<unsafe extern "C" fn(*mut rpcd_call, f64, f64, *const c_char) -> c_int>,
        pub call_is_cancelled: Option<unsafe extern "C" fn(*mut rpcd_call) -> c_int>,
        pub call_method: Option<unsafe extern "C" fn(*mut rpcd_call) -> *const c_char>,
        /// Takes a C va_list, which Rust cannot make: never called, only kept in its place.
        pub log_v:
            Option<unsafe extern "C" fn(*mut rpcd_plugin, c_int, *const c_char, *mut c_void)>,
        // 1.1
        pub call_complete: Option<unsafe extern "C" fn(*mut rpcd_call, c_int) -> c_int>,
        // 1.3
        pub log_text: Option<unsafe extern "C" fn(*mut rpcd_plugin, c_int, *const c_char)>,
        // 1.4
        pub call_tool_result:
            Option<unsafe extern "C" fn(*mut rpcd_call, *const c_char, usize) -> c_int>,
        pub call_meta: Option<
            unsafe extern "C" fn(
                *mut rpcd_call,
                *const c_char,
                *mut c_char,
                usize,
                *mut usize,
            ) -> c_int,
        >,
        // 1.5
        pub resource_updated:
            Option<unsafe extern "C" fn(*mut rpcd_plugin, *const c_char) -> c_int>,
        // 1.6
        pub call_ask: Option<
            unsafe extern "C" fn(
                *mut rpcd_call,
                *const c_char,
                *const c_char,
                *const c_char,
                usize,
            ) -> c_int,
        >,
        pub call_input: Option<
            unsafe extern "C" fn(
                *mut rpcd_call,
                *const c_char,
                *mut c_char,
                usize,
                *mut usize,
            ) -> c_int,
        >,
        pub call_set_state:
            Option<unsafe extern "C" fn(*mut rpcd_call, *const c_char, usize) -> c_int>,
        pub call_state:
            Option<unsafe extern "C" fn(*mut rpcd_call, *mut c_char, usize, *mut usize) -> c_int>,
    }

    #[repr(C)]
    pub struct rpcd_plugin_info {
        pub size: usize,
        pub abi_major: u32,
        pub abi_minor: u32,
        pub name: *const c_char,
        pub version: *const c_char,
        pub init: Option<
            unsafe extern "C" fn(
                *mut rpcd_plugin,
                *const rpcd_host_api,
                *mut *mut c_void,
                *mut c_char,
                usize,
            ) -> c_int,
        >,
        pub shutdown: Option<unsafe extern "C" fn(*mut c_void)>,
    }

    /// Size of what a raw pointer points to, without reading it.
    pub fn size_of_pointee<T>(_: *const T) -> usize {
        std::mem::size_of::<T>()
    }
}

/// RPCD_HOST_HAS: the daemon's table is long enough to hold the member, and it is set.
#[macro_export]
macro_rules! host_has {
    ($host:expr, $member:ident) => {{
        let host: &$crate::sys::rpcd_host_api = $host;
        let base = host as *const $crate::sys::rpcd_host_api as usize;
        let member = ::std::ptr::addr_of!(host.$member);
        host.size >= member as usize - base + $crate::sys::size_of_pointee(member)
            && host.$member.is_some()
    }};
}

/// The layout of the header the plugin is built against (see layout.c); the offsets are
/// compared by the tests below (rustc --test), the rest here, at compile time.
#[allow(dead_code)]
mod layout {
    include!(env!("RPCD_LAYOUT"));
}

const _: () = assert!(
    layout::ABI_MAJOR == sys::RPCD_ABI_MAJOR,
    "the installed <rpcd/plugin.h> has another ABI major than this binding"
);
const _: () = assert!(
    layout::ABI_MINOR >= sys::RPCD_ABI_MINOR,
    "the installed <rpcd/plugin.h> is older than this binding"
);
const _: () = assert!(
    std::mem::size_of::<sys::rpcd_host_api>() == layout::HOST_API_END,
    "rpcd_host_api: the binding's members do not end where the header's do"
);
const _: () = assert!(
    std::mem::size_of::<sys::rpcd_method>() == layout::METHOD_END,
    "rpcd_method: the binding's members do not end where the header's do"
);
const _: () = assert!(
    std::mem::size_of::<sys::rpcd_plugin_info>() == layout::PLUGIN_INFO_END,
    "rpcd_plugin_info: the binding's members do not end where the header's do"
);

pub use sys::{
    RPCD_DEFERRED as DEFERRED, RPCD_ERR_CANCELLED as ERR_CANCELLED,
    RPCD_ERR_INTERNAL as ERR_INTERNAL, RPCD_ERR_INVALID_ARGUMENT as ERR_INVALID_ARGUMENT,
    RPCD_ERR_INVALID_PARAMS as ERR_INVALID_PARAMS, RPCD_ERR_NO_MEMORY as ERR_NO_MEMORY,
    RPCD_ERR_STALE as ERR_STALE, RPCD_ERR_UNSUPPORTED as ERR_UNSUPPORTED,
    RPCD_INPUT_REQUIRED as INPUT_REQUIRED, RPCD_LOG_DEBUG as LOG_DEBUG,
    RPCD_LOG_ERROR as LOG_ERROR, RPCD_LOG_INFO as LOG_INFO, RPCD_LOG_WARNING as LOG_WARNING,
    RPCD_MCP_COMPLETION as MCP_COMPLETION, RPCD_MCP_HIDDEN as MCP_HIDDEN,
    RPCD_MCP_PROMPT as MCP_PROMPT, RPCD_MCP_RESOURCE as MCP_RESOURCE, RPCD_MCP_TOOL as MCP_TOOL,
    RPCD_METHOD_QUICK as METHOD_QUICK, RPCD_METHOD_SERIALIZED as METHOD_SERIALIZED,
    RPCD_METHOD_TASK as METHOD_TASK, RPCD_METHOD_TASK_REQUIRED as METHOD_TASK_REQUIRED,
    RPCD_METHOD_VALIDATES_ITSELF as METHOD_VALIDATES_ITSELF, RPCD_OK as OK,
};

static HOST: AtomicPtr<sys::rpcd_host_api> = AtomicPtr::new(ptr::null_mut());
static PLUGIN: AtomicPtr<sys::rpcd_plugin> = AtomicPtr::new(ptr::null_mut());
static THREADS: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// The host table; set before init runs, valid until shutdown returns.
fn host() -> &'static sys::rpcd_host_api {
    unsafe { &*HOST.load(Ordering::Acquire) }
}

/// text as a C string; a NUL inside (which C cannot carry) is written as "\0".
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Writes one line to rpcd's log with log_text (control bytes come out escaped).
pub fn log(level: c_int, text: &str) {
    let api = HOST.load(Ordering::Acquire);
    if api.is_null() || !host_has!(host(), log_text) {
        return;
    }
    let text = c_string(text);
    unsafe { (host().log_text.unwrap())(PLUGIN.load(Ordering::Acquire), level, text.as_ptr()) };
}

/// Tells an MCP client subscribed to uri that the resource changed and may be read again
/// (nothing is sent when none is). Any thread, after init and until shutdown; ERR_UNSUPPORTED
/// from a daemon older than 1.5 and during init.
pub fn resource_updated(uri: &str) -> Result<(), c_int> {
    let api = HOST.load(Ordering::Acquire);
    if api.is_null() || !host_has!(host(), resource_updated) {
        return Err(sys::RPCD_ERR_UNSUPPORTED);
    }
    let uri = c_string(uri);
    status(unsafe {
        (host().resource_updated.unwrap())(PLUGIN.load(Ordering::Acquire), uri.as_ptr())
    })
}

/// A call's context: a handle that may be copied and sent to any thread. Once the call has
/// ended every function returns ERR_STALE (or reports it cancelled): harmless, never a crash.
#[derive(Clone, Copy)]
pub struct Call(*mut sys::rpcd_call);
unsafe impl Send for Call {}
unsafe impl Sync for Call {}

fn status(code: c_int) -> Result<(), c_int> {
    if code == OK {
        Ok(())
    } else {
        Err(code)
    }
}

impl Call {
    /// Sets the result to JSON text (any JSON value).
    pub fn result(&self, json: &str) -> Result<(), c_int> {
        status(unsafe {
            (host().call_result.unwrap())(self.0, json.as_ptr() as *const c_char, json.len())
        })
    }
    /// Sets a complete MCP tool result (content blocks, isError, structuredContent, _meta) from
    /// JSON text; ERR_UNSUPPORTED from a daemon older than 1.4.
    pub fn tool_result(&self, json: &str) -> Result<(), c_int> {
        if !host_has!(host(), call_tool_result) {
            return Err(sys::RPCD_ERR_UNSUPPORTED);
        }
        status(unsafe {
            (host().call_tool_result.unwrap())(self.0, json.as_ptr() as *const c_char, json.len())
        })
    }
    /// The request's params._meta (name None) or one of its members, as JSON text; None when
    /// the client sent none (or the daemon is older than 1.4).
    pub fn meta(&self, name: Option<&str>) -> Result<Option<String>, c_int> {
        if !host_has!(host(), call_meta) {
            return Ok(None);
        }
        let name = name.map(c_string);
        let name_ptr = name.as_ref().map_or(ptr::null(), |n| n.as_ptr());
        let call_meta = host().call_meta.unwrap();
        let bytes = copy_out(|out, size, length| unsafe {
            call_meta(self.0, name_ptr, out, size, length)
        })?;
        Ok(bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }
    /// (1.6) Asks the client a question, which the next round of the call reads with
    /// `input(key)`: method is "elicitation/create", "sampling/createMessage" or "roots/list",
    /// params the JSON text of its params object (None for none). The handler then returns
    /// INPUT_REQUIRED, and runs again, from the top, with the answers. Err(ERR_UNSUPPORTED) when
    /// the client cannot be asked this (it did not declare the capability the method needs, or
    /// the call did not come from an MCP client that can be asked; a daemon older than 1.6):
    /// fail with `fail_code(-32021, ...)` when the tool cannot go on without it.
    pub fn ask(&self, key: &str, method: &str, params: Option<&str>) -> Result<(), c_int> {
        if !host_has!(host(), call_ask) {
            return Err(sys::RPCD_ERR_UNSUPPORTED);
        }
        let (key, method) = (c_string(key), c_string(method));
        let (params_ptr, params_length) =
            params.map_or((ptr::null(), 0), |p| (p.as_ptr() as *const c_char, p.len()));
        status(unsafe {
            (host().call_ask.unwrap())(
                self.0,
                key.as_ptr(),
                method.as_ptr(),
                params_ptr,
                params_length,
            )
        })
    }
    /// (1.6) The client's answer to the question key of the previous round, as JSON text (an
    /// ElicitResult such as {"action":"accept","content":{...}}); None in the first round, when
    /// the client did not answer that question, or from a daemon older than 1.6.
    pub fn input(&self, key: &str) -> Result<Option<String>, c_int> {
        if !host_has!(host(), call_input) {
            return Ok(None);
        }
        let key = c_string(key);
        let call_input = host().call_input.unwrap();
        let bytes = copy_out(|out, size, length| unsafe {
            call_input(self.0, key.as_ptr(), out, size, length)
        })?;
        Ok(bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }
    /// (1.6) Keeps bytes (at most 16 KiB) for the next round, which reads them with `state()`;
    /// rpcd keeps them, the client never sees them. An empty slice drops them.
    /// Err(ERR_UNSUPPORTED) from a daemon older than 1.6.
    pub fn set_state(&self, state: &[u8]) -> Result<(), c_int> {
        if !host_has!(host(), call_set_state) {
            return Err(sys::RPCD_ERR_UNSUPPORTED);
        }
        let state_ptr = if state.is_empty() {
            ptr::null()
        } else {
            state.as_ptr() as *const c_char
        };
        status(unsafe { (host().call_set_state.unwrap())(self.0, state_ptr, state.len()) })
    }
    /// (1.6) What the previous round kept with `set_state`; None when it kept nothing (the
    /// first round) or the daemon is older than 1.6.
    pub fn state(&self) -> Result<Option<Vec<u8>>, c_int> {
        if !host_has!(host(), call_state) {
            return Ok(None);
        }
        let call_state = host().call_state.unwrap();
        copy_out(|out, size, length| unsafe { call_state(self.0, out, size, length) })
    }
    /// Records an error with the plugin's own JSON-RPC code, message and data (JSON text, or
    /// None); returns the status, for `return call.fail_code(...)`. In tools/call it is a tool
    /// error, except a code in -32099..-32000 (1.6), sent as that JSON-RPC error: -32021 with
    /// {"requiredCapabilities":{...}} says which client capability the tool needs.
    pub fn fail_code(&self, code: i64, message: &str, data: Option<&str>) -> c_int {
        let message = c_string(message);
        let (data_ptr, data_length) =
            data.map_or((ptr::null(), 0), |d| (d.as_ptr() as *const c_char, d.len()));
        unsafe {
            (host().call_fail_code.unwrap())(self.0, code, message.as_ptr(), data_ptr, data_length)
        }
    }
    /// Records why the call failed; returns status, for `return call.fail(...)`.
    pub fn fail(&self, status: c_int, message: &str) -> c_int {
        let message = c_string(message);
        unsafe { (host().call_fail.unwrap())(self.0, status, message.as_ptr(), ptr::null(), 0) }
    }
    /// Reports progress (sent when the client gave a progressToken); total < 0: unknown.
    pub fn progress(&self, done: f64, total: f64, message: &str) -> Result<(), c_int> {
        let message = c_string(message);
        status(unsafe { (host().call_progress.unwrap())(self.0, done, total, message.as_ptr()) })
    }
    /// Whether the client cancelled the call, rpcd is stopping, or the call has ended.
    pub fn is_cancelled(&self) -> bool {
        unsafe { (host().call_is_cancelled.unwrap())(self.0) != 0 }
    }
    /// Makes the call deferred: return DEFERRED from the handler, and complete it later.
    pub fn defer(self) -> Deferred {
        Deferred(Some(self))
    }
}

/// What a host function that copies out (call_meta, call_input, call_state) has, read whole:
/// asked for its length first, then copied into a buffer of that length and its NUL; None when
/// there is nothing.
fn copy_out<F>(copy: F) -> Result<Option<Vec<u8>>, c_int>
where
    F: Fn(*mut c_char, usize, *mut usize) -> c_int,
{
    let mut length = 0usize;
    let code = copy(ptr::null_mut(), 0, &mut length);
    if length == 0 {
        return status(code).map(|_| None);
    }
    let mut buffer = vec![0u8; length + 1];
    status(copy(
        buffer.as_mut_ptr() as *mut c_char,
        buffer.len(),
        &mut length,
    ))?;
    buffer.truncate(length);
    Ok(Some(buffer))
}

/// A deferred call, completed once from any thread. Dropped without being completed (a panic,
/// a forgotten branch), it fails the call with ERR_INTERNAL: the client always gets a response.
pub struct Deferred(Option<Call>);

impl Deferred {
    /// Ends the call with a result (JSON text). Returns call_complete's status.
    pub fn complete(mut self, json: &str) -> c_int {
        let call = self.0.take().unwrap();
        let end = if call.result(json).is_ok() {
            OK
        } else {
            ERR_INTERNAL
        };
        unsafe { (host().call_complete.unwrap())(call.0, end) }
    }
    /// Ends the call with an error status and a message.
    pub fn fail(mut self, status: c_int, message: &str) -> c_int {
        let call = self.0.take().unwrap();
        let end = call.fail(status, message);
        unsafe { (host().call_complete.unwrap())(call.0, end) }
    }
    /// (1.6) Ends the round: the questions asked with `ask` go to the client, which retries
    /// the call with the answers.
    pub fn input_required(mut self) -> c_int {
        let call = self.0.take().unwrap();
        unsafe { (host().call_complete.unwrap())(call.0, INPUT_REQUIRED) }
    }
    pub fn call(&self) -> Call {
        self.0.unwrap()
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        if let Some(call) = self.0.take() {
            let end = call.fail(ERR_INTERNAL, "the plugin dropped a deferred call");
            unsafe { (host().call_complete.unwrap())(call.0, end) };
        }
    }
}

/// Starts a thread running f; the plugin's shutdown joins it before rpcd unloads the code.
pub fn spawn<F: FnOnce() + Send + 'static>(f: F) {
    let handle = std::thread::spawn(move || {
        // A panic ends the thread only; a Deferred it held fails its call as it unwinds.
        let _ = panic::catch_unwind(AssertUnwindSafe(f));
    });
    let mut threads = THREADS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (finished, running): (Vec<_>, Vec<_>) = threads.drain(..).partition(|t| t.is_finished());
    *threads = running;
    threads.push(handle);
    drop(threads);
    for thread in finished {
        let _ = thread.join();
    }
}

type Handler = Box<dyn Fn(Call, &str) -> c_int + Send + Sync + 'static>;

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic".to_string()
    }
}

/// The handler rpcd calls: a panic stops here, as ERR_INTERNAL with its message.
unsafe extern "C" fn run_handler(
    call: *mut sys::rpcd_call,
    params: *const c_char,
    length: usize,
    data: *mut c_void,
) -> c_int {
    let handler = &*(data as *const Handler);
    let bytes: &[u8] = if params.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(params as *const u8, length)
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| match std::str::from_utf8(bytes) {
        Ok(text) => handler(Call(call), text),
        Err(_) => ERR_INVALID_PARAMS,
    }));
    outcome.unwrap_or_else(|payload| {
        Call(call).fail(ERR_INTERNAL, &format!("panic: {}", panic_text(&*payload)))
    })
}

unsafe extern "C" fn free_handler(data: *mut c_void) {
    drop(Box::from_raw(data as *mut Handler));
}

/// Everything a method's descriptor (rpcd_method, ABI 1.5, unchanged since) says beyond its
/// handler, as a builder: `Method::new(name)` then the members to set. The JSON members are JSON
/// text, as the C ABI takes them; rpcd checks them when the method is registered and refuses it
/// (ERR_INVALID_ARGUMENT, the reason in its log) when one is not what its member asks for.
///
/// ```ignore
/// plugin.register(
///     rpcd::Method::new("weather.get")
///         .description("Gets the weather of a city.")
///         .params_schema(r#"{"type":"object","properties":{"city":{"type":"string"}}}"#)
///         .title("Get weather")
///         .annotations(r#"{"readOnlyHint":true,"openWorldHint":true}"#),
///     weather,
/// )?;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Method {
    name: String,
    flags: u32,
    description: Option<String>,
    params_schema: Option<String>,
    title: Option<String>,
    annotations: Option<String>,
    output_schema: Option<String>,
    icons: Option<String>,
    mcp_role: u32,
    mcp_descriptor: Option<String>,
}

impl Method {
    /// A method called name (UTF-8, unique across every plugin), a tool unless mcp_role says
    /// otherwise, with nothing else declared.
    pub fn new(name: impl Into<String>) -> Method {
        Method {
            name: name.into(),
            ..Method::default()
        }
    }
    /// METHOD_SERIALIZED, METHOD_QUICK, METHOD_VALIDATES_ITSELF (1.6), METHOD_TASK and
    /// METHOD_TASK_REQUIRED (1.7: the tool may, or must, run as an MCP task), or'ed together.
    pub fn flags(mut self, flags: u32) -> Method {
        self.flags = flags;
        self
    }
    /// One or two sentences for people (MCP's description).
    pub fn description(mut self, text: impl Into<String>) -> Method {
        self.description = Some(text.into());
        self
    }
    /// JSON Schema text of the params: a tool's inputSchema when it describes an object.
    pub fn params_schema(mut self, json: impl Into<String>) -> Method {
        self.params_schema = Some(json.into());
        self
    }
    /// (1.4) A name for people: MCP's Tool.title.
    pub fn title(mut self, text: impl Into<String>) -> Method {
        self.title = Some(text.into());
        self
    }
    /// (1.4) JSON text of MCP's ToolAnnotations object ({"readOnlyHint":true,...}).
    pub fn annotations(mut self, json: impl Into<String>) -> Method {
        self.annotations = Some(json.into());
        self
    }
    /// (1.4) JSON Schema text of the result, with "type": "object": the result must then be an
    /// object, which tools/call sends as structuredContent.
    pub fn output_schema(mut self, json: impl Into<String>) -> Method {
        self.output_schema = Some(json.into());
        self
    }
    /// (1.4) JSON text of MCP's icons array ([{"src":"...","mimeType":"image/png"}]).
    pub fn icons(mut self, json: impl Into<String>) -> Method {
        self.icons = Some(json.into());
        self
    }
    /// (1.5) What the method is to an MCP client: MCP_TOOL (the default), MCP_RESOURCE,
    /// MCP_PROMPT, MCP_COMPLETION (each with an mcp_descriptor) or MCP_HIDDEN.
    pub fn mcp_role(mut self, role: u32) -> Method {
        self.mcp_role = role;
        self
    }
    /// (1.5) JSON text of MCP's Resource (or ResourceTemplate), Prompt, or a completion's
    /// {"ref":...}, for the role mcp_role gives (see rpcd_method.mcp_descriptor).
    pub fn mcp_descriptor(mut self, json: impl Into<String>) -> Method {
        self.mcp_descriptor = Some(json.into());
        self
    }
}

/// What init gets: registers methods and reads the plugin's config section.
pub struct Registrar {
    plugin: *mut sys::rpcd_plugin,
}

/// An optional string as C wants it: NULL when absent.
fn optional_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |text| text.as_ptr())
}

impl Registrar {
    /// Registers a method (the strings are copied). handler gets the params as JSON text
    /// ("" when there were none) and returns OK after call.result(), DEFERRED, INPUT_REQUIRED
    /// after call.ask() (1.6), or an error.
    pub fn method<F>(
        &mut self,
        name: &str,
        flags: u32,
        description: &str,
        handler: F,
    ) -> Result<(), c_int>
    where
        F: Fn(Call, &str) -> c_int + Send + Sync + 'static,
    {
        self.register(
            Method::new(name).flags(flags).description(description),
            handler,
        )
    }

    /// Registers a method MCP clients see in another role (1.5): MCP_RESOURCE, MCP_PROMPT or
    /// MCP_COMPLETION with its descriptor (JSON text, see rpcd_method.mcp_descriptor), or
    /// MCP_HIDDEN (and MCP_TOOL) without one.
    pub fn mcp_method<F>(
        &mut self,
        name: &str,
        flags: u32,
        description: &str,
        role: u32,
        descriptor: Option<&str>,
        handler: F,
    ) -> Result<(), c_int>
    where
        F: Fn(Call, &str) -> c_int + Send + Sync + 'static,
    {
        let mut method = Method::new(name)
            .flags(flags)
            .description(description)
            .mcp_role(role);
        method.mcp_descriptor = descriptor.map(str::to_string);
        self.register(method, handler)
    }

    /// Registers the method method declares (its strings are copied), served by handler as for
    /// Registrar::method. The descriptor rpcd reads is the whole 1.5 rpcd_method, its size
    /// that of sys::rpcd_method, which the build checked against the header.
    pub fn register<F>(&mut self, method: Method, handler: F) -> Result<(), c_int>
    where
        F: Fn(Call, &str) -> c_int + Send + Sync + 'static,
    {
        let name = c_string(&method.name);
        // Owned here until register_method returns, which copies them.
        let text = |text: &Option<String>| text.as_deref().map(c_string);
        let description = text(&method.description);
        let params_schema = text(&method.params_schema);
        let title = text(&method.title);
        let annotations = text(&method.annotations);
        let output_schema = text(&method.output_schema);
        let icons = text(&method.icons);
        let mcp_descriptor = text(&method.mcp_descriptor);
        let data = Box::into_raw(Box::new(Box::new(handler) as Handler));
        let descriptor = sys::rpcd_method {
            size: std::mem::size_of::<sys::rpcd_method>(),
            name: name.as_ptr(),
            handler: Some(run_handler),
            user_data: data as *mut c_void,
            free_user_data: Some(free_handler),
            flags: method.flags,
            description: optional_ptr(&description),
            params_schema: optional_ptr(&params_schema),
            title: optional_ptr(&title),
            annotations: optional_ptr(&annotations),
            output_schema: optional_ptr(&output_schema),
            icons: optional_ptr(&icons),
            mcp_role: method.mcp_role,
            mcp_descriptor: optional_ptr(&mcp_descriptor),
        };
        let code = unsafe { (host().register_method.unwrap())(self.plugin, &descriptor) };
        if code != OK {
            // Refused: the plugin still owns the handler.
            unsafe { free_handler(data as *mut c_void) };
        }
        status(code)
    }

    /// A key of the plugin's config section.
    pub fn config(&self, key: &str) -> Option<String> {
        let key = c_string(key);
        let value = unsafe { (host().config_get.unwrap())(self.plugin, key.as_ptr()) };
        if value.is_null() {
            None
        } else {
            Some(
                unsafe { std::ffi::CStr::from_ptr(value) }
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    }
}

/// For plugin!: the description, in static storage the entry point returns.
pub struct PluginInfo(pub sys::rpcd_plugin_info);
unsafe impl Sync for PluginInfo {}

/// For plugin!: runs the plugin's init, any panic turned into a failed init.
pub unsafe fn run_init(
    plugin: *mut sys::rpcd_plugin,
    api: *const sys::rpcd_host_api,
    error: *mut c_char,
    error_size: usize,
    init: fn(&mut Registrar) -> Result<(), String>,
) -> c_int {
    HOST.store(api as *mut sys::rpcd_host_api, Ordering::Release);
    PLUGIN.store(plugin, Ordering::Release);
    // A panic's report goes to rpcd's log, as one line, rather than to stderr in pieces.
    panic::set_hook(Box::new(|info| log(LOG_ERROR, &info.to_string())));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| init(&mut Registrar { plugin })));
    let message = match outcome {
        Ok(Ok(())) => return OK,
        Ok(Err(message)) => message,
        Err(payload) => format!("panic: {}", panic_text(&*payload)),
    };
    if error_size > 0 {
        let bytes = message.as_bytes();
        let length = bytes.len().min(error_size - 1);
        ptr::copy_nonoverlapping(bytes.as_ptr(), error as *mut u8, length);
        *error.add(length) = 0;
    }
    ERR_INTERNAL
}

/// For plugin!: joins every thread spawn() started, then runs the plugin's own shutdown.
pub fn run_shutdown(shutdown: Option<fn()>) {
    // Taken whole, buffer included: the static that holds it is unmapped with the plugin.
    let threads = std::mem::take(
        &mut *THREADS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    for thread in threads {
        let _ = thread.join();
    }
    if let Some(shutdown) = shutdown {
        let _ = panic::catch_unwind(shutdown);
    }
}

/// Defines the entry point, rpcd_plugin_entry:
/// `rpcd::plugin!("name", "1.0.0", init, None);` with `fn init(&mut Registrar) -> Result<(), String>`
/// and an `Option<fn()>` run at shutdown, after the threads are joined.
#[macro_export]
macro_rules! plugin {
    ($name:literal, $version:literal, $init:expr, $shutdown:expr) => {
        #[no_mangle]
        pub extern "C" fn rpcd_plugin_entry() -> *const $crate::sys::rpcd_plugin_info {
            unsafe extern "C" fn rpcd_binding_init(
                plugin: *mut $crate::sys::rpcd_plugin,
                host: *const $crate::sys::rpcd_host_api,
                _state: *mut *mut ::std::os::raw::c_void,
                error: *mut ::std::os::raw::c_char,
                error_size: usize,
            ) -> ::std::os::raw::c_int {
                $crate::run_init(plugin, host, error, error_size, $init)
            }
            unsafe extern "C" fn rpcd_binding_shutdown(_state: *mut ::std::os::raw::c_void) {
                $crate::run_shutdown($shutdown)
            }
            static INFO: $crate::PluginInfo = $crate::PluginInfo($crate::sys::rpcd_plugin_info {
                size: ::std::mem::size_of::<$crate::sys::rpcd_plugin_info>(),
                abi_major: $crate::sys::RPCD_ABI_MAJOR,
                abi_minor: $crate::sys::RPCD_ABI_MINOR,
                name: concat!($name, "\0").as_ptr() as *const ::std::os::raw::c_char,
                version: concat!($version, "\0").as_ptr() as *const ::std::os::raw::c_char,
                init: Some(rpcd_binding_init),
                shutdown: Some(rpcd_binding_shutdown),
            });
            &INFO.0
        }
    };
}

/// Just enough JSON for params without a crate: the members of a flat object, and strings.
pub mod json {
    /// A member's value: a string (unescaped), a number, or the raw text of anything else.
    #[derive(Debug, PartialEq)]
    pub enum Value {
        Str(String),
        Number(f64),
        Other(String),
    }

    /// text as a JSON string, quotes included.
    pub fn string(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    struct Reader<'a> {
        text: &'a [u8],
        at: usize,
    }

    impl<'a> Reader<'a> {
        fn skip_space(&mut self) {
            while self.at < self.text.len() && b" \t\r\n".contains(&self.text[self.at]) {
                self.at += 1;
            }
        }
        fn peek(&mut self) -> Option<u8> {
            self.skip_space();
            self.text.get(self.at).copied()
        }
        fn string(&mut self) -> Option<String> {
            self.at += 1; // the opening quote
            let mut out = Vec::new();
            while let Some(&c) = self.text.get(self.at) {
                self.at += 1;
                match c {
                    b'"' => return String::from_utf8(out).ok(),
                    b'\\' => {
                        let e = *self.text.get(self.at)?;
                        self.at += 1;
                        let simple = match e {
                            b'n' => Some(b'\n'),
                            b't' => Some(b'\t'),
                            b'r' => Some(b'\r'),
                            b'b' => Some(8),
                            b'f' => Some(12),
                            b'u' => None,
                            other => Some(other),
                        };
                        match simple {
                            Some(byte) => out.push(byte),
                            None => {
                                let hex = std::str::from_utf8(self.text.get(self.at..self.at + 4)?)
                                    .ok()?;
                                self.at += 4;
                                let mut unit = u32::from_str_radix(hex, 16).ok()?;
                                if (0xd800..0xdc00).contains(&unit)
                                    && self.text.get(self.at..self.at + 2) == Some(b"\\u")
                                {
                                    let low = std::str::from_utf8(
                                        self.text.get(self.at + 2..self.at + 6)?,
                                    )
                                    .ok()?;
                                    let low = u32::from_str_radix(low, 16).ok()?;
                                    self.at += 6;
                                    unit = 0x10000
                                        + ((unit - 0xd800) << 10)
                                        + (low.wrapping_sub(0xdc00) & 0x3ff);
                                }
                                let c = char::from_u32(unit).unwrap_or('\u{fffd}');
                                out.extend_from_slice(c.to_string().as_bytes());
                            }
                        }
                    }
                    c => out.push(c),
                }
            }
            None
        }
        /// Skips any value (rpcd has checked that the text is valid JSON).
        fn skip_value(&mut self) -> Option<()> {
            let mut depth = 0usize;
            loop {
                match self.peek()? {
                    b'"' => {
                        self.string()?;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        self.at += 1;
                    }
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        self.at += 1;
                    }
                    b',' | b':' if depth > 0 => self.at += 1,
                    _ => {
                        while self.at < self.text.len()
                            && !b",}] \t\r\n".contains(&self.text[self.at])
                        {
                            self.at += 1;
                        }
                    }
                }
                if depth == 0 {
                    return Some(());
                }
            }
        }
    }

    /// The value of member key of the object params, or None when absent (or params is not an
    /// object).
    pub fn member(params: &str, key: &str) -> Option<Value> {
        let mut reader = Reader {
            text: params.as_bytes(),
            at: 0,
        };
        if reader.peek()? != b'{' {
            return None;
        }
        reader.at += 1;
        loop {
            match reader.peek()? {
                b'}' => return None,
                b',' => reader.at += 1,
                b'"' => {
                    let name = reader.string()?;
                    if reader.peek()? != b':' {
                        return None;
                    }
                    reader.at += 1;
                    let start = {
                        reader.skip_space();
                        reader.at
                    };
                    if name != key {
                        reader.skip_value()?;
                        continue;
                    }
                    if reader.peek()? == b'"' {
                        return reader.string().map(Value::Str);
                    }
                    reader.skip_value()?;
                    let raw = std::str::from_utf8(&reader.text[start..reader.at]).ok()?;
                    return Some(match raw.parse::<f64>() {
                        Ok(number) => Value::Number(number),
                        Err(_) => Value::Other(raw.to_string()),
                    });
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! offsets {
        ($type:ty; $($member:ident),*) => {{
            let value = std::mem::MaybeUninit::<$type>::uninit();
            let base = value.as_ptr();
            vec![$((stringify!($member),
                    unsafe { ptr::addr_of!((*base).$member) as usize - base as usize })),*]
        }};
    }

    #[test]
    fn host_api_members_sit_where_the_header_puts_them() {
        let actual = offsets!(sys::rpcd_host_api; size, abi_major, abi_minor, register_method,
            config_get, log, call_result, call_fail, call_fail_code, call_notify, call_progress,
            call_is_cancelled, call_method, log_v, call_complete, log_text, call_tool_result,
            call_meta, resource_updated, call_ask, call_input, call_set_state, call_state);
        assert_eq!(actual, layout::HOST_API_OFFSETS.to_vec());
    }

    #[test]
    fn method_members_sit_where_the_header_puts_them() {
        let actual = offsets!(sys::rpcd_method; size, name, handler, user_data, free_user_data,
            flags, description, params_schema, title, annotations, output_schema, icons,
            mcp_role, mcp_descriptor);
        assert_eq!(actual, layout::METHOD_OFFSETS.to_vec());
    }

    #[test]
    fn plugin_info_members_sit_where_the_header_puts_them() {
        let actual = offsets!(sys::rpcd_plugin_info; size, abi_major, abi_minor, name, version,
            init, shutdown);
        assert_eq!(actual, layout::PLUGIN_INFO_OFFSETS.to_vec());
    }

    #[test]
    fn method_flags_are_the_headers() {
        let actual = vec![
            ("RPCD_METHOD_SERIALIZED", METHOD_SERIALIZED),
            ("RPCD_METHOD_QUICK", METHOD_QUICK),
            ("RPCD_METHOD_VALIDATES_ITSELF", METHOD_VALIDATES_ITSELF),
            ("RPCD_METHOD_TASK", METHOD_TASK),
            ("RPCD_METHOD_TASK_REQUIRED", METHOD_TASK_REQUIRED),
        ];
        assert_eq!(actual, layout::METHOD_FLAGS.to_vec());
    }

    #[test]
    fn json_members() {
        let params = r#"{"a": [1, {"b": "}"}], "name": "A\"d\u00e9", "n": 12, "x": null}"#;
        assert_eq!(
            json::member(params, "name"),
            Some(json::Value::Str("A\"dé".to_string()))
        );
        assert_eq!(json::member(params, "n"), Some(json::Value::Number(12.0)));
        assert_eq!(
            json::member(params, "x"),
            Some(json::Value::Other("null".to_string()))
        );
        assert_eq!(json::member(params, "missing"), None);
        assert_eq!(json::member("[1]", "n"), None);
        assert_eq!(json::string("a\"\n"), "\"a\\\"\\u000a\"");
    }
}
