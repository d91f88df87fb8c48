package main

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
)

// The test-only fault switch. With AGENTRT_TEST_FAULTS set to "1" the
// worker also answers POST /_test/fault/{oom,panic,exit} by ending its Go
// instance that way, so that tests can check that the worker notices a
// dead instance, answers with a typed error and starts a fresh one; in
// the durable deployment POST /v1/sessions/{id}/_test/fault/{kind} ends
// the instance of that conversation's object, as an eviction would. Never
// set it in a deployment: whoever holds the token could stop the
// instance at will.
const (
	faultPrefix = "/_test/fault/"
	faultOOM    = "oom"
	faultPanic  = "panic"
	faultExit   = "exit"
)

// withFaults serves the fault routes with die and everything else with h.
// When token is not empty a fault needs "Authorization: Bearer <token>";
// without it the request goes to h (which answers 404).
func withFaults(h http.Handler, token string, die func(kind string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, ok := strings.CutPrefix(r.URL.Path, faultPrefix)
		if rest, found := strings.CutPrefix(r.URL.Path, "/v1/sessions/"); !ok && found {
			_, tail, _ := strings.Cut(rest, "/")
			kind, ok = strings.CutPrefix("/"+tail, faultPrefix)
		}
		authorized := token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) == 1
		if !ok || r.Method != http.MethodPost || (kind != faultOOM && kind != faultPanic && kind != faultExit) {
			if authorized {
				armToolExit(r)
			}
			h.ServeHTTP(w, r)
			return
		}
		if !authorized {
			h.ServeHTTP(w, r)
			return
		}
		die(kind)
	})
}

// FaultHeader, on a run request to the durable deployment with the fault
// switch on, injects a failure: "storage" fails the write after the
// model's answer, "exit" ends the Go instance there, and "tool-exit"
// ends it inside the next run of the test tool "count", after the
// decision to run it and before its result (see armToolExit).
const (
	FaultHeader   = "X-Agentrt-Test-Fault"
	faultStorage  = "storage"
	faultToolExit = "tool-exit"
)

// toolExit is armed by a request carrying FaultHeader "tool-exit": the
// next run of the test tool "count" in this Go instance ends the
// instance. The instance that dies takes the flag with it, so the
// request sent again runs the tool.
var toolExit atomic.Bool

// armToolExit arms toolExit when r carries FaultHeader "tool-exit".
func armToolExit(r *http.Request) {
	if r.Header.Get(FaultHeader) == faultToolExit {
		toolExit.Store(true)
	}
}

// crashIfArmed ends the instance with die's "exit" when toolExit is
// armed.
func crashIfArmed() {
	if toolExit.Load() {
		die(faultExit)
	}
}

// errInjectedStorage is the write failure FaultHeader "storage" injects.
var errInjectedStorage = errors.New("agentrt: injected storage fault")

// beforeWrite returns the durable handler's BeforeWrite hook for the
// fault switch: it fails or ends the instance (with die) as the run
// request's FaultHeader says, and does nothing without it.
func beforeWrite(die func(kind string)) func(r *http.Request) error {
	return func(r *http.Request) error {
		switch r.Header.Get(FaultHeader) {
		case faultStorage:
			return errInjectedStorage
		case faultExit:
			die(faultExit)
		}
		return nil
	}
}

// sink keeps the allocations of an injected out-of-memory fault alive.
var sink [][]byte

// die ends the Go instance the way kind says (see withFaults): "oom"
// allocates until Go's fatal "out of memory", "panic" panics in a
// goroutine nothing recovers, "exit" exits.
func die(kind string) {
	switch kind {
	case faultOOM:
		for {
			sink = append(sink, make([]byte, 256<<20))
		}
	case faultPanic:
		done := make(chan struct{})
		go func() {
			defer close(done)
			panic("agentrt: injected fault")
		}()
		<-done
	default:
		os.Exit(3)
	}
}
