//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"syscall/js"

	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// The storage adapter worker.mjs hands a Durable Object's instance, at
// binding.storage. Keep in sync with sqlStore in worker.mjs.
//
//	storage.stat()              -> [count, bytes]
//	storage.load()              -> "[body,...]" (one string: a JSON array, oldest first)
//	storage.write(from, bodies) -> rows written (removes from `from` on first)
//	storage.clear()
//
// Each call is synchronous (SQLite-backed storage) and throws on failure.
// The storage belongs to the object, not to a request, so Go may call it
// from whichever request it is running in: the one exception to "Go
// never calls back into JavaScript" (docs/adr/0014-durable-sessions.md).
const storageName = "storage"

// jsStore is a durable.Store over the adapter.
type jsStore struct{ v js.Value }

func (s jsStore) Stat() (n int, size int64, err error) {
	defer caught(&err)
	r := s.v.Call("stat")
	return r.Index(0).Int(), int64(r.Index(1).Float()), nil
}

func (s jsStore) Load() (a []byte, err error) {
	defer caught(&err)
	return []byte(s.v.Call("load").String()), nil
}

func (s jsStore) Write(from int, msgs [][]byte) (rows int64, err error) {
	defer caught(&err)
	a := jsutil.Array.New(len(msgs))
	for i, m := range msgs {
		a.SetIndex(i, string(m))
	}
	return int64(s.v.Call("write", from, a).Float()), nil
}

func (s jsStore) Clear() (err error) {
	defer caught(&err)
	s.v.Call("clear")
	return nil
}

// caught turns a JavaScript exception thrown by a storage call into err.
func caught(err *error) {
	p := recover()
	if p == nil {
		return
	}
	if e, ok := p.(js.Error); ok {
		*err = errors.New(e.Error())
		return
	}
	*err = fmt.Errorf("%v", p)
}
