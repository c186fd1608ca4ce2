// SPDX-License-Identifier: MIT
//
// Package rpcd is the Go binding of rpcd's plugin ABI: a plugin is a main package, built with
// `go build -buildmode=c-shared`, that calls rpcd.Define in its init() and registers its methods
// from Plugin.Init. Handlers return a JSON result or an error; a panic becomes
// RPCD_ERR_INTERNAL instead of crashing rpcd; deferred calls and the goroutines started with
// rpcd.Go are waited for before rpcd unloads the plugin. See docs/plugins-go.md.
package rpcd

/*
#include "glue.h"
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"os/signal"
	"sync"
	"syscall"
	"unsafe"
)

// Status codes of <rpcd/plugin.h>.
const (
	OK                 = int(C.RPCD_OK)
	Deferred           = int(C.RPCD_DEFERRED)
	ErrInvalidParams   = int(C.RPCD_ERR_INVALID_PARAMS)
	ErrMethodNotFound  = int(C.RPCD_ERR_METHOD_NOT_FOUND)
	ErrInternal        = int(C.RPCD_ERR_INTERNAL)
	ErrNoMemory        = int(C.RPCD_ERR_NO_MEMORY)
	ErrCancelled       = int(C.RPCD_ERR_CANCELLED)
	ErrInvalidArgument = int(C.RPCD_ERR_INVALID_ARGUMENT)
	ErrStale           = int(C.RPCD_ERR_STALE)
	ErrUnsupported     = int(C.RPCD_ERR_UNSUPPORTED)
)

// Log levels.
const (
	LogError   = int(C.RPCD_LOG_ERROR)
	LogWarning = int(C.RPCD_LOG_WARNING)
	LogInfo    = int(C.RPCD_LOG_INFO)
	LogDebug   = int(C.RPCD_LOG_DEBUG)
)

// Method flags, or'ed together; see rpcd_method.flags in <rpcd/plugin.h>.
const (
	MethodSerialized      = uint32(C.RPCD_METHOD_SERIALIZED)
	MethodQuick           = uint32(C.RPCD_METHOD_QUICK)
	MethodValidatesItself = uint32(C.RPCD_METHOD_VALIDATES_ITSELF) // ABI 1.6
	// ABI 1.7: the tool may run as an MCP task (2026-07-28's Tasks extension), or must.
	MethodTask         = uint32(C.RPCD_METHOD_TASK)
	MethodTaskRequired = uint32(C.RPCD_METHOD_TASK_REQUIRED)
)

// What a method is to an MCP client (ABI 1.5; see rpcd_method.mcp_role in <rpcd/plugin.h>).
const (
	McpTool       = uint32(C.RPCD_MCP_TOOL)
	McpResource   = uint32(C.RPCD_MCP_RESOURCE)
	McpPrompt     = uint32(C.RPCD_MCP_PROMPT)
	McpCompletion = uint32(C.RPCD_MCP_COMPLETION)
	McpHidden     = uint32(C.RPCD_MCP_HIDDEN)
)

// Error fails a call with an rpcd status and a message (error.data.detail).
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// CodeError fails a call with the plugin's own JSON-RPC code, message and data (JSON text, or
// "" for none), through call_fail_code. In tools/call it is a tool error, except a code in
// -32099..-32000 (ABI 1.6), sent as that JSON-RPC error: -32021 with
// {"requiredCapabilities":{...}} tells the client which capability the tool needs.
type CodeError struct {
	Code    int64
	Message string
	Data    string
}

func (e *CodeError) Error() string { return e.Message }

// InputRequired is what a handler (or Later's work) returns after Ask (ABI 1.6): the round
// ends, the client gets the questions, and the handler runs again, from the top, when the
// client retries the call with the answers (read them with Input, and the state with State).
//
//	if err := call.Ask("confirm", "elicitation/create", form); err != nil { ... }
//	return "", rpcd.InputRequired
var InputRequired = errors.New("input required")

// Call is a call's context. It may be copied and used from any goroutine; once the call has
// ended every method returns ErrStale (or reports it cancelled).
type Call struct{ c *C.rpcd_call }

func status(code C.int) error {
	if int(code) == OK {
		return nil
	}
	return &Error{Status: int(code), Message: fmt.Sprintf("rpcd refused it (status %d)", int(code))}
}

// Result sets the call's result to JSON text.
func (call Call) Result(json string) error {
	text := C.CString(json)
	defer C.free(unsafe.Pointer(text))
	return status(C.rpcd_go_result(call.c, text, C.size_t(len(json))))
}

// ToolResult answers with a complete MCP tool result (content blocks, isError,
// structuredContent, _meta) from JSON text; a handler (or Later's work) returns what it returns:
//
//	return call.ToolResult(`{"content":[{"type":"text","text":"done"}]}`)
//
// A result rpcd refuses (or a daemon older than 1.4) gives an error, and the call fails.
func (call Call) ToolResult(json string) (string, error) {
	text := C.CString(json)
	defer C.free(unsafe.Pointer(text))
	if err := status(C.rpcd_go_tool_result(call.c, text, C.size_t(len(json)))); err != nil {
		return "", err
	}
	return "", errToolResult
}

// Meta returns the request's params._meta (name "") or one of its members as JSON text, and
// false when the client sent none (or the daemon is older than 1.4).
func (call Call) Meta(name string) (string, bool, error) {
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var length C.size_t
	C.rpcd_go_meta(call.c, cname, nil, 0, &length)
	if length == 0 {
		return "", false, nil
	}
	out := (*C.char)(C.malloc(length + 1))
	defer C.free(unsafe.Pointer(out))
	if err := status(C.rpcd_go_meta(call.c, cname, out, length+1, &length)); err != nil {
		return "", false, err
	}
	return C.GoStringN(out, C.int(length)), true, nil
}

// copyOut reads what a host function that copies out (call_meta, call_input, call_state) has:
// its length first, then the bytes; false when there is nothing.
func copyOut(copy func(out *C.char, size C.size_t, length *C.size_t) C.int) ([]byte, bool, error) {
	var length C.size_t
	code := copy(nil, 0, &length)
	if length == 0 {
		return nil, false, status(code)
	}
	out := (*C.char)(C.malloc(length + 1))
	defer C.free(unsafe.Pointer(out))
	if err := status(copy(out, length+1, &length)); err != nil {
		return nil, false, err
	}
	return C.GoBytes(unsafe.Pointer(out), C.int(length)), true, nil
}

// Ask asks the client a question (ABI 1.6), which the next round of the call reads with
// Input(key): method is "elicitation/create", "sampling/createMessage" or "roots/list", params
// the JSON text of its params object ("" for none). The handler then returns InputRequired.
// An *Error with Status ErrUnsupported when the client cannot be asked this (it did not declare
// the capability the method needs, the call did not come from an MCP client that can be asked,
// or the daemon is older than 1.6): return a *CodeError -32021 when the tool needs it.
func (call Call) Ask(key, method, params string) error {
	ckey, cmethod := C.CString(key), C.CString(method)
	defer C.free(unsafe.Pointer(ckey))
	defer C.free(unsafe.Pointer(cmethod))
	var cparams *C.char
	if params != "" {
		cparams = C.CString(params)
		defer C.free(unsafe.Pointer(cparams))
	}
	return status(C.rpcd_go_ask(call.c, ckey, cmethod, cparams, C.size_t(len(params))))
}

// Input returns the client's answer to the question key of the previous round as JSON text (an
// ElicitResult such as {"action":"accept","content":{...}}), and false in the first round, when
// the client did not answer that question, or from a daemon older than 1.6.
func (call Call) Input(key string) (string, bool, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	answer, found, err := copyOut(func(out *C.char, size C.size_t, length *C.size_t) C.int {
		return C.rpcd_go_input(call.c, ckey, out, size, length)
	})
	return string(answer), found, err
}

// SetState keeps bytes (at most 16 KiB) for the next round, which reads them with State; rpcd
// keeps them, the client never sees them. Empty drops them. An error from a daemon older than
// 1.6.
func (call Call) SetState(state []byte) error {
	var cstate *C.char
	if len(state) > 0 {
		cstate = (*C.char)(C.CBytes(state))
		defer C.free(unsafe.Pointer(cstate))
	}
	return status(C.rpcd_go_set_state(call.c, cstate, C.size_t(len(state))))
}

// State returns what the previous round kept with SetState, and false when it kept nothing
// (the first round) or the daemon is older than 1.6.
func (call Call) State() ([]byte, bool, error) {
	return copyOut(func(out *C.char, size C.size_t, length *C.size_t) C.int {
		return C.rpcd_go_state(call.c, out, size, length)
	})
}

func (call Call) fail(code int, message string) int {
	text := C.CString(message)
	defer C.free(unsafe.Pointer(text))
	return int(C.rpcd_go_fail(call.c, C.int(code), text))
}

func (call Call) failCode(failure *CodeError) int {
	message := C.CString(failure.Message)
	defer C.free(unsafe.Pointer(message))
	var data *C.char
	if failure.Data != "" {
		data = C.CString(failure.Data)
		defer C.free(unsafe.Pointer(data))
	}
	return int(C.rpcd_go_fail_code(call.c, C.int64_t(failure.Code), message, data,
		C.size_t(len(failure.Data))))
}

// Progress reports progress (sent when the client gave a progressToken); total < 0: unknown.
func (call Call) Progress(done, total float64, message string) error {
	text := C.CString(message)
	defer C.free(unsafe.Pointer(text))
	return status(C.rpcd_go_progress(call.c, C.double(done), C.double(total), text))
}

// Cancelled says whether the client cancelled the call, rpcd is stopping, or the call ended.
func (call Call) Cancelled() bool { return C.rpcd_go_is_cancelled(call.c) != 0 }

// Handler serves a method: params is the request's params as JSON text (nil when none). It
// returns the result as JSON text, or an error: an *Error with its status, any other error
// as ErrInternal. A handler that answers later returns call.Later(...).
type Handler func(call Call, params []byte) (string, error)

var errDeferred = errors.New("deferred")

// errToolResult: the result is set already, by ToolResult.
var errToolResult = errors.New("complete tool result set")

// finish records what a handler (or a deferred function) gave, and returns its status.
func finish(call Call, result string, err error) int {
	var failure *Error
	var coded *CodeError
	switch {
	case err == nil:
		if e := call.Result(result); e != nil {
			return ErrInternal
		}
		return OK
	case errors.Is(err, errToolResult):
		return OK
	case errors.Is(err, InputRequired):
		return int(C.RPCD_INPUT_REQUIRED)
	case errors.As(err, &failure):
		return call.fail(failure.Status, failure.Message)
	case errors.As(err, &coded):
		return call.failCode(coded)
	default:
		return call.fail(ErrInternal, err.Error())
	}
}

// Later answers the call from a goroutine of its own, which rpcd waits for at shutdown: work's
// result or error completes it, as a handler's would (a panic in work too, as ErrInternal).
// The handler returns what Later returns.
func Later(call Call, work func() (string, error)) (string, error) {
	Go(func() {
		var result string
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			result, err = work()
		}()
		C.rpcd_go_complete(call.c, C.int(finish(call, result, err)))
	})
	return "", errDeferred
}

var goroutines sync.WaitGroup

// Go starts f on a goroutine that the plugin's shutdown waits for, so that no Go code of the
// plugin runs once rpcd starts to unload it. A panic in f is logged and ends only f.
func Go(f func()) {
	goroutines.Add(1)
	go func() {
		defer goroutines.Done()
		defer func() {
			if p := recover(); p != nil {
				Log(LogError, fmt.Sprintf("panic in a goroutine: %v", p))
			}
		}()
		f()
	}()
}

// ResourceUpdated tells an MCP client subscribed to uri that the resource changed and may be
// read again (nothing is sent when none is). Any goroutine, after Init and until Shutdown; an
// error from a daemon older than 1.5, during Init, or for a URI that is not UTF-8.
func ResourceUpdated(uri string) error {
	text := C.CString(uri)
	defer C.free(unsafe.Pointer(text))
	return status(C.rpcd_go_resource_updated(text))
}

// Log writes one line to rpcd's log (log_text: control bytes come out escaped).
func Log(level int, text string) {
	line := C.CString(text)
	defer C.free(unsafe.Pointer(line))
	C.rpcd_go_log(C.int(level), line)
}

// Registrar is what Init gets: it registers methods and reads the plugin's config section.
type Registrar struct{}

var handlers []Handler

// MethodOptions is what a method declares besides its name and handler: every member of the
// C descriptor (rpcd_method, ABI 1.5). A string left empty is not declared. The JSON members
// are JSON text, as the C ABI takes them; rpcd checks them when the method is registered and
// refuses the method (the reason in its log) when one is not what its member asks for.
type MethodOptions struct {
	Flags         uint32 // MethodSerialized, MethodQuick, MethodValidatesItself, MethodTask...
	Description   string // one or two sentences for people (MCP's description)
	ParamsSchema  string // JSON Schema text of params: a tool's inputSchema when it is an object
	Title         string // (1.4) a name for people: MCP's Tool.title
	Annotations   string // (1.4) JSON text of MCP's ToolAnnotations: {"readOnlyHint":true,...}
	OutputSchema  string // (1.4) JSON Schema text of the result, "type": "object" (structuredContent)
	Icons         string // (1.4) JSON text of MCP's icons array: [{"src":"...","mimeType":"..."}]
	McpRole       uint32 // (1.5) McpTool (the zero value), McpResource, McpPrompt, McpCompletion, McpHidden
	McpDescriptor string // (1.5) JSON text of the Resource, the Prompt or the completion's {"ref":...}
}

// Method registers a method (only from Init).
func (r Registrar) Method(name string, flags uint32, description string, handler Handler) error {
	return r.McpMethod(name, flags, description, McpTool, "", handler)
}

// McpMethod registers a method MCP clients see in another role (only from Init): McpResource,
// McpPrompt or McpCompletion with its descriptor (JSON text, see rpcd_method.mcp_descriptor),
// or McpHidden (and McpTool) with descriptor "".
func (Registrar) McpMethod(name string, flags uint32, description string, role uint32,
	descriptor string, handler Handler) error {
	options := MethodOptions{Flags: flags, Description: description, McpRole: role,
		McpDescriptor: descriptor}
	// The description is declared even when empty, as these two always did.
	return register(name, options, true, handler)
}

// Register registers a method with everything options declares (only from Init):
//
//	r.Register("weather.get", rpcd.MethodOptions{
//		Description:  "Gets the weather of a city.",
//		ParamsSchema: `{"type":"object","properties":{"city":{"type":"string"}}}`,
//		Title:        "Get weather",
//		Annotations:  `{"readOnlyHint":true,"openWorldHint":true}`,
//	}, weather)
func (Registrar) Register(name string, options MethodOptions, handler Handler) error {
	return register(name, options, false, handler)
}

func register(name string, options MethodOptions, describeEmpty bool, handler Handler) error {
	var copies []*C.char
	defer func() {
		for _, text := range copies {
			C.free(unsafe.Pointer(text))
		}
	}()
	// A C copy of text, freed on return (register_method copies it); NULL when not declared.
	text := func(value string, declared bool) *C.char {
		if !declared {
			return nil
		}
		copied := C.CString(value)
		copies = append(copies, copied)
		return copied
	}
	method := C.rpcd_go_method{
		name:           text(name, true),
		description:    text(options.Description, describeEmpty || options.Description != ""),
		params_schema:  text(options.ParamsSchema, options.ParamsSchema != ""),
		title:          text(options.Title, options.Title != ""),
		annotations:    text(options.Annotations, options.Annotations != ""),
		output_schema:  text(options.OutputSchema, options.OutputSchema != ""),
		icons:          text(options.Icons, options.Icons != ""),
		mcp_descriptor: text(options.McpDescriptor, options.McpDescriptor != ""),
		flags:          C.uint32_t(options.Flags),
		mcp_role:       C.uint32_t(options.McpRole),
	}
	handlers = append(handlers, handler)
	if err := status(C.rpcd_go_register(&method, C.uintptr_t(len(handlers)-1))); err != nil {
		return fmt.Errorf("cannot register %s: %w", name, err)
	}
	return nil
}

// Config returns a key of the plugin's config section (only from Init).
func (Registrar) Config(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	value := C.rpcd_go_config(ckey)
	if value == nil {
		return "", false
	}
	return C.GoString(value), true
}

// Plugin describes the plugin to rpcd.
type Plugin struct {
	Name, Version string
	Init          func(r Registrar) error // registers the methods
	Shutdown      func()                  // optional; after every goroutine of Go has ended
}

var (
	plugin                Plugin
	cachedName, cachedVer *C.char
)

// Define describes the plugin; call it from the main package's init().
func Define(p Plugin) {
	plugin = p
	cachedName, cachedVer = C.CString(p.Name), C.CString(p.Version)
}

//export rpcdGoName
func rpcdGoName() *C.char { return cachedName }

//export rpcdGoVersion
func rpcdGoVersion() *C.char { return cachedVer }

//export rpcdGoInit
func rpcdGoInit(message *C.char, size C.size_t) (code C.int) {
	// Go's runtime ends the process on a write to a closed fd 1 or 2 unless SIGPIPE is ignored;
	// rpcd ignores it too, and checks after init that it still is.
	signal.Ignore(syscall.SIGPIPE)
	defer func() {
		if p := recover(); p != nil {
			code = C.int(ErrInternal)
			writeError(message, size, fmt.Sprintf("panic: %v", p))
		}
	}()
	if plugin.Init == nil {
		return C.int(OK)
	}
	if err := plugin.Init(Registrar{}); err != nil {
		writeError(message, size, err.Error())
		return C.int(ErrInternal)
	}
	return C.int(OK)
}

func writeError(message *C.char, size C.size_t, text string) {
	if size == 0 {
		return
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(message)), int(size))
	n := copy(out[:len(out)-1], text)
	out[n] = 0
}

//export rpcdGoShutdown
func rpcdGoShutdown() {
	goroutines.Wait()
	if plugin.Shutdown != nil {
		plugin.Shutdown()
	}
}

//export rpcdGoHandle
func rpcdGoHandle(index C.uintptr_t, c *C.rpcd_call, params *C.char, length C.size_t) (code C.int) {
	call := Call{c}
	defer func() {
		if p := recover(); p != nil {
			code = C.int(call.fail(ErrInternal, fmt.Sprintf("panic: %v", p)))
		}
	}()
	var body []byte
	if params != nil {
		body = C.GoBytes(unsafe.Pointer(params), C.int(length))
	}
	result, err := handlers[int(index)](call, body)
	if err == errDeferred {
		return C.int(Deferred)
	}
	return C.int(finish(call, result, err))
}
