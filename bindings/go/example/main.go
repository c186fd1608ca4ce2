// SPDX-License-Identifier: MIT
//
// The Go example plugin, on bindings/go/rpcd: go.hello (a plain call, and a tool that declares
// its input and output schemas, title, annotations and icons), go.count (progress, stopped by
// cancellation), go.later (completed later from a goroutine; a tool that may run as an MCP
// task, MethodTask), go.fail (panics: the binding turns it into an error), go.meta (the
// request's _meta in a complete tool result), go.notes (an MCP resource, go://notes), go.touch
// (tells subscribed clients it changed) and go.greet (an MCP prompt) and go.confirm (asks the
// client for a confirmation, and finishes on the retry with the answer and the state it kept).
// Build: see docs/plugins-go.md.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"rpcd.local/rpcd"
)

func main() {}

func init() {
	rpcd.Define(rpcd.Plugin{Name: "go_example", Version: "1.0.0", Init: setup})
}

func invalid(message string) error {
	return &rpcd.Error{Status: rpcd.ErrInvalidParams, Message: message}
}

// decode reads params (nil when the request had none) into v.
func decode(params []byte, v interface{}) error {
	if params == nil {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalid(err.Error())
	}
	return nil
}

func hello(call rpcd.Call, params []byte) (string, error) {
	var p struct {
		Name *string `json:"name"`
	}
	if err := decode(params, &p); err != nil {
		return "", invalid("name must be a string")
	}
	name := "world"
	if p.Name != nil {
		name = *p.Name
	}
	out, err := json.Marshal(map[string]string{"greeting": "hello, " + name})
	return string(out), err
}

func count(call rpcd.Call, params []byte) (string, error) {
	p := struct {
		Steps   uint `json:"steps"`
		DelayMs uint `json:"delay_ms"`
	}{Steps: 3}
	if err := decode(params, &p); err != nil {
		return "", err
	}
	for step := uint(1); step <= p.Steps; step++ {
		if call.Cancelled() {
			return "", &rpcd.Error{Status: rpcd.ErrCancelled, Message: "cancelled"}
		}
		_ = call.Progress(float64(step), float64(p.Steps), fmt.Sprintf("step %d of %d", step, p.Steps))
		time.Sleep(time.Duration(p.DelayMs) * time.Millisecond)
	}
	return fmt.Sprintf(`{"steps":%d}`, p.Steps), nil
}

func later(call rpcd.Call, params []byte) (string, error) {
	var p struct {
		DelayMs uint `json:"delay_ms"`
	}
	if err := decode(params, &p); err != nil {
		return "", err
	}
	return rpcd.Later(call, func() (string, error) {
		time.Sleep(time.Duration(p.DelayMs) * time.Millisecond)
		return `{"deferred":true}`, nil
	})
}

// meta answers with a complete tool result carrying the request's trace context: its
// traceparent as text, its whole _meta as structuredContent.
func meta(call rpcd.Call, params []byte) (string, error) {
	traceparent, ok, err := call.Meta("traceparent")
	if err != nil {
		return "", err
	}
	if !ok {
		traceparent = `"none"`
	}
	whole, ok, err := call.Meta("")
	if err != nil {
		return "", err
	}
	if !ok {
		whole = "null"
	}
	return call.ToolResult(fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"structuredContent":{"meta":%s},"isError":false}`,
		traceparent, whole))
}

// notes is the text of the resource go://notes.
func notes(call rpcd.Call, params []byte) (string, error) {
	return `"a note"`, nil
}

// touch tells the clients subscribed to go://notes that it changed.
func touch(call rpcd.Call, params []byte) (string, error) {
	if err := rpcd.ResourceUpdated("go://notes"); err != nil {
		return "", err
	}
	return "true", nil
}

// greet is the prompt go.greet: prompts/get hands over {"name":...,"arguments":{"who":...}},
// and a string result is one user message.
func greet(call rpcd.Call, params []byte) (string, error) {
	var p struct {
		Arguments struct {
			Who string `json:"who"`
		} `json:"arguments"`
	}
	if err := decode(params, &p); err != nil {
		return "", err
	}
	out, err := json.Marshal("Please greet " + p.Arguments.Who + ".")
	return string(out), err
}

// confirmForm is the question go.confirm asks: MCP's ElicitRequest params, a form.
const confirmForm = `{"message":"Go on?","requestedSchema":{"type":"object",` +
	`"properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`

// confirm asks the client to confirm (round 1) and keeps a state; the retry (round 2) finds
// the answer and the state, and reports both. A client that cannot be asked gets -32021.
func confirm(call rpcd.Call, params []byte) (string, error) {
	answer, answered, err := call.Input("confirm")
	if err != nil {
		return "", err
	}
	if answered {
		state, _, err := call.State()
		if err != nil {
			return "", err
		}
		kept, _ := json.Marshal(string(state))
		return fmt.Sprintf(`{"answer":%s,"state":%s}`, answer, kept), nil
	}
	var refused *rpcd.Error
	if err := call.Ask("confirm", "elicitation/create", confirmForm); errors.As(err, &refused) &&
		refused.Status == rpcd.ErrUnsupported {
		return "", &rpcd.CodeError{Code: -32021, Message: "Missing required client capability",
			Data: `{"requiredCapabilities":{"elicitation":{}}}`}
	} else if err != nil {
		return "", err
	}
	if err := call.SetState([]byte("kept by go")); err != nil {
		return "", err
	}
	return "", rpcd.InputRequired
}

func fail(call rpcd.Call, params []byte) (string, error) {
	panic("deliberate failure, from a Go panic")
}

func setup(r rpcd.Registrar) error {
	// A tool that says all MCP lets it: what it takes, what it gives, and how to show it.
	if err := r.Register("go.hello", rpcd.MethodOptions{
		Description:  `Greets {"name": ...}.`,
		ParamsSchema: `{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}}}`,
		Title:        "Say hello",
		Annotations:  `{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`,
		OutputSchema: `{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}`,
		Icons:        `[{"src":"https://example.org/hello.png","mimeType":"image/png","sizes":["48x48"]}]`,
	}, hello); err != nil {
		return err
	}
	methods := []struct {
		name        string
		flags       uint32
		description string
		handler     rpcd.Handler
	}{
		{"go.count", 0, "Counts steps, with progress, until cancelled.", count},
		{"go.later", rpcd.MethodTask, "Answers later, from a goroutine.", later},
		{"go.fail", 0, "Panics.", fail},
		{"go.confirm", 0, "Asks the client to confirm, then says so.", confirm},
		{"go.meta", 0, "Hands back the request's _meta.", meta},
		{"go.touch", 0, "Tells subscribers that go://notes changed.", touch},
	}
	for _, m := range methods {
		if err := r.Method(m.name, m.flags, m.description, m.handler); err != nil {
			return err
		}
	}
	if err := r.McpMethod("go.notes", 0, "Notes.", rpcd.McpResource,
		`{"uri":"go://notes","name":"notes","mimeType":"text/plain"}`, notes); err != nil {
		return err
	}
	// A prompt: MCP clients see it in prompts/list, not among the tools.
	if err := r.Register("go.greet", rpcd.MethodOptions{
		Description: "A prompt asking for a greeting.",
		McpRole:     rpcd.McpPrompt,
		McpDescriptor: `{"name":"go.greet","title":"Greeting","description":"Asks for a greeting.",` +
			`"arguments":[{"name":"who","description":"who to greet","required":true}]}`,
	}, greet); err != nil {
		return err
	}
	rpcd.Log(rpcd.LogInfo, "ready")
	return nil
}
