//go:build js && wasm

// Command worker is agentrt as a Cloudflare Worker: the HTTP API of
// package httpapi over one core.Runtime per isolate, built with
// github.com/syumai/workers and started by its own entry module,
// worker.mjs, which instantiates this module once per isolate. In the
// durable deployment (AGENTRT_SESSIONS=durable) worker.mjs also starts
// one instance per Durable Object, handing it the object's storage, and
// that instance serves its one conversation with package durable.
//
// Build and run it locally with `go run ./cmd/agentrt worker`; deploy it
// with wrangler (docs/worker.md).
package main

import (
	"encoding/json"
	"net/http"
	"syscall/js"

	"github.com/syumai/workers"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
	"github.com/agentrt/agentrt/wasm/worker/bridge"
	"github.com/agentrt/agentrt/wasm/worker/durable"
)

func main() {
	ctx := js.Global().Get("context")
	env := ctx.Get("env")
	get := func(name string) string {
		v := env.Get(name)
		if v.Type() != js.TypeString {
			return ""
		}
		return v.String()
	}
	cfg, err := configFrom(get)
	var h http.Handler
	var b *jsBridge
	if err != nil {
		h = misconfigured(err.Error())
	} else {
		if cfg.Model != nil {
			cfg.Model.Client = bridge.FetchClient{}
		}
		rt, rerr := core.New(cfg.runtimeConfig())
		switch storage := ctx.Get("binding").Get(storageName); {
		case rerr != nil:
			h = misconfigured(rerr.Error())
		case storage.Type() == js.TypeObject:
			// A Durable Object's instance: one conversation, kept in the
			// object's storage.
			api := httpapi.New(httpapi.Config{Runtime: rt, Token: cfg.Token, MaxBodyBytes: durable.APIBodyLimit(cfg.MaxBodyBytes, cfg.MaxStoredBytes), Version: core.Version})
			dc := durable.Config{API: api, Runtime: rt, Store: jsStore{storage}, MaxBodyBytes: cfg.MaxBodyBytes, MaxStoredBytes: cfg.MaxStoredBytes, TestRoutes: cfg.TestFaults,
				MaxRunEvents: cfg.RunEvents, MaxRunEventBytes: cfg.RunEventBytes}
			if cfg.TestFaults {
				dc.BeforeWrite = beforeWrite(die)
				dc.Queued = func() (int, int64) { return b.s.Queued() }
			}
			h = durable.New(dc)
		default:
			h = httpapi.New(httpapi.Config{Runtime: rt, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, Version: core.Version})
		}
	}
	if cfg.TestFaults {
		h = withFaults(h, cfg.Token, die)
	}
	b = newJSBridge(h, cfg.MaxBodyBytes)
	b.export(ctx.Get("binding"))
	workers.Ready()
	<-b.closed
}

// misconfigured answers every request with 500 and says what is wrong
// with the configuration (never a secret's value).
func misconfigured(reason string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		msg, _ := json.Marshal("the worker is misconfigured: " + reason)
		_, _ = w.Write([]byte(`{"error":{"code":"internal","message":` + string(msg) + `}}`))
	})
}
