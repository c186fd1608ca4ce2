// SPDX-License-Identifier: MIT
//! The Rust example plugin, on bindings/rust/rpcd.rs: rust.hello (a plain call, and a tool that
//! declares its input and output schemas, title, annotations and icons), rust.count (progress,
//! stopped by cancellation), rust.later (completed later from a thread of its own; a tool that
//! may run as an MCP task, METHOD_TASK), rust.fail
//! (panics: the binding turns it into an error), rust.meta (the request's _meta in a complete
//! tool result), rust.notes (an MCP resource, rust://notes), rust.touch (tells subscribed
//! clients it changed), rust.greet (an MCP prompt) and rust.confirm (asks the client for a
//! confirmation, and finishes on the retry with the answer and the state it kept). Built as a
//! cdylib with rustc alone, see docs/plugins-rust.md.
use rpcd::json::{self, Value};
use rpcd::{Call, Method, Registrar};
use std::os::raw::c_int;
use std::time::Duration;

/// A member that must be a count when present.
fn count_member(params: &str, key: &str, fallback: u64) -> Result<u64, String> {
    match json::member(params, key) {
        None => Ok(fallback),
        Some(Value::Number(n)) if n >= 0.0 && n.fract() == 0.0 => Ok(n as u64),
        Some(_) => Err(format!("{} must be a count", key)),
    }
}

fn hello(call: Call, params: &str) -> c_int {
    let name = match json::member(params, "name") {
        None => "world".to_string(),
        Some(Value::Str(name)) => name,
        Some(_) => return call.fail(rpcd::ERR_INVALID_PARAMS, "name must be a string"),
    };
    let result = format!(
        "{{\"greeting\":{}}}",
        json::string(&format!("hello, {}", name))
    );
    match call.result(&result) {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

fn count(call: Call, params: &str) -> c_int {
    let (steps, delay) = match (
        count_member(params, "steps", 3),
        count_member(params, "delay_ms", 0),
    ) {
        (Ok(steps), Ok(delay)) => (steps, delay),
        (Err(why), _) | (_, Err(why)) => return call.fail(rpcd::ERR_INVALID_PARAMS, &why),
    };
    for step in 1..=steps {
        if call.is_cancelled() {
            return rpcd::ERR_CANCELLED;
        }
        let _ = call.progress(
            step as f64,
            steps as f64,
            &format!("step {} of {}", step, steps),
        );
        std::thread::sleep(Duration::from_millis(delay));
    }
    match call.result(&format!("{{\"steps\":{}}}", steps)) {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

fn later(call: Call, params: &str) -> c_int {
    let delay = match count_member(params, "delay_ms", 0) {
        Ok(delay) => delay,
        Err(why) => return call.fail(rpcd::ERR_INVALID_PARAMS, &why),
    };
    // The deferred call moves into the thread; dropped uncompleted, it would fail the call.
    let pending = call.defer();
    rpcd::spawn(move || {
        std::thread::sleep(Duration::from_millis(delay));
        pending.complete("{\"deferred\":true}");
    });
    rpcd::DEFERRED
}

/// A complete tool result carrying the request's trace context: its traceparent as text, its
/// whole _meta as structuredContent.
fn meta(call: Call, _params: &str) -> c_int {
    let (traceparent, whole) = match (call.meta(Some("traceparent")), call.meta(None)) {
        (Ok(traceparent), Ok(whole)) => (traceparent, whole),
        _ => return call.fail(rpcd::ERR_INTERNAL, "cannot read _meta"),
    };
    let result = format!(
        "{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"structuredContent\":{{\"meta\":{}}},\"isError\":false}}",
        traceparent.unwrap_or_else(|| "\"none\"".to_string()),
        whole.unwrap_or_else(|| "null".to_string())
    );
    match call.tool_result(&result) {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

/// The text of the resource rust://notes.
fn notes(call: Call, _params: &str) -> c_int {
    match call.result("\"a note\"") {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

/// Tells the clients subscribed to rust://notes that it changed.
fn touch(call: Call, _params: &str) -> c_int {
    match rpcd::resource_updated("rust://notes").and_then(|()| call.result("true")) {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

/// The prompt rust.greet: prompts/get hands over {"name":...,"arguments":{"who":...}}, and a
/// string result is one user message.
fn greet(call: Call, params: &str) -> c_int {
    let who = match json::member(params, "arguments").and_then(|arguments| match arguments {
        Value::Other(object) => json::member(&object, "who"),
        _ => None,
    }) {
        Some(Value::Str(who)) => who,
        _ => return call.fail(rpcd::ERR_INVALID_PARAMS, "arguments.who must be a string"),
    };
    match call.result(&json::string(&format!("Please greet {}.", who))) {
        Ok(()) => rpcd::OK,
        Err(status) => status,
    }
}

/// Asks the client to confirm (round 1) and keeps a state; the retry (round 2) finds the answer
/// and the state, and reports both. A client that cannot be asked gets -32021.
fn confirm(call: Call, _params: &str) -> c_int {
    let (answer, state) = match (call.input("confirm"), call.state()) {
        (Ok(answer), Ok(state)) => (answer, state),
        _ => return call.fail(rpcd::ERR_INTERNAL, "cannot read the round"),
    };
    if let Some(answer) = answer {
        let state = String::from_utf8_lossy(&state.unwrap_or_default()).into_owned();
        let result = format!(
            "{{\"answer\":{},\"state\":{}}}",
            answer,
            json::string(&state)
        );
        return match call.result(&result) {
            Ok(()) => rpcd::OK,
            Err(status) => status,
        };
    }
    let form = r#"{"message":"Go on?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}"#;
    match call.ask("confirm", "elicitation/create", Some(form)) {
        Ok(()) => {}
        Err(rpcd::ERR_UNSUPPORTED) => {
            return call.fail_code(
                -32021,
                "Missing required client capability",
                Some(r#"{"requiredCapabilities":{"elicitation":{}}}"#),
            )
        }
        Err(status) => return call.fail(status, "cannot ask"),
    }
    match call.set_state(b"kept by rust") {
        Ok(()) => rpcd::INPUT_REQUIRED,
        Err(status) => call.fail(status, "cannot keep the state"),
    }
}

fn fail(_call: Call, _params: &str) -> c_int {
    panic!("deliberate failure, from a Rust panic");
}

fn init(plugin: &mut Registrar) -> Result<(), String> {
    // A tool that says all MCP lets it: what it takes, what it gives, and how to show it.
    plugin
        .register(
            Method::new("rust.hello")
                .description("Greets {\"name\": ...}.")
                .params_schema(
                    r#"{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}}}"#,
                )
                .title("Say hello")
                .annotations(r#"{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}"#)
                .output_schema(
                    r#"{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}"#,
                )
                .icons(r#"[{"src":"https://example.org/hello.png","mimeType":"image/png","sizes":["48x48"]}]"#),
            hello,
        )
        .map_err(|status| format!("cannot register rust.hello (status {})", status))?;
    let methods: [(&str, u32, &str, fn(Call, &str) -> c_int); 6] = [
        (
            "rust.count",
            0,
            "Counts steps, with progress, until cancelled.",
            count,
        ),
        (
            "rust.later",
            rpcd::METHOD_TASK,
            "Answers later, from a thread of its own.",
            later,
        ),
        ("rust.fail", 0, "Panics.", fail),
        (
            "rust.confirm",
            0,
            "Asks the client to confirm, then says so.",
            confirm,
        ),
        ("rust.meta", 0, "Hands back the request's _meta.", meta),
        (
            "rust.touch",
            0,
            "Tells subscribers that rust://notes changed.",
            touch,
        ),
    ];
    for (name, flags, description, handler) in methods {
        plugin
            .method(name, flags, description, handler)
            .map_err(|status| format!("cannot register {} (status {})", name, status))?;
    }
    plugin
        .mcp_method(
            "rust.notes",
            0,
            "Notes.",
            rpcd::MCP_RESOURCE,
            Some(r#"{"uri":"rust://notes","name":"notes","mimeType":"text/plain"}"#),
            notes,
        )
        .map_err(|status| format!("cannot register rust.notes (status {})", status))?;
    plugin
        .register(
            Method::new("rust.greet")
                .description("A prompt asking for a greeting.")
                .mcp_role(rpcd::MCP_PROMPT)
                .mcp_descriptor(
                    r#"{"name":"rust.greet","title":"Greeting","description":"Asks for a greeting.","arguments":[{"name":"who","description":"who to greet","required":true}]}"#,
                ),
            greet,
        )
        .map_err(|status| format!("cannot register rust.greet (status {})", status))?;
    rpcd::log(rpcd::LOG_INFO, "ready");
    Ok(())
}

rpcd::plugin!("rust_example", "1.0.0", init, None);
