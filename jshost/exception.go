package jshost

import (
	"errors"
	"fmt"
	"math"
)

// Exception is a JavaScript value thrown to Go: by a function the host
// called, or as the reason a Promise was rejected.
//
// Name, Message, Code and Index are copied from Value when it is an
// object with those properties (Code empty and Index -1 when absent);
// for any other thrown value, Message is its string form.
type Exception struct {
	Value   Value
	Name    string
	Message string
	Code    string
	Index   int
}

// Error returns "Name: Message", with " [Code]" and " (index N)" when set.
func (e *Exception) Error() string {
	s := e.Message
	if e.Name != "" {
		s = e.Name + ": " + s
	}
	if e.Code != "" {
		s += " [" + e.Code + "]"
	}
	if e.Index >= 0 {
		s += fmt.Sprintf(" (index %d)", e.Index)
	}
	return s
}

func newException(v Value) *Exception {
	e := &Exception{Value: v, Index: -1}
	o, ok := v.(*Object)
	if !ok {
		e.Message = toString(v)
		return e
	}
	if s, ok := o.Get("name").(string); ok {
		e.Name = s
	} else if o.IsError() {
		e.Name = o.Class
	}
	if s, ok := o.Get("message").(string); ok {
		e.Message = s
	}
	if s, ok := o.Get("code").(string); ok {
		e.Code = s
	}
	if f, ok := o.Get("index").(float64); ok && f >= 0 && f == math.Trunc(f) && f < 1<<31 {
		e.Index = int(f)
	}
	return e
}

// throwf returns a new error object of class as a thrown exception.
func throwf(class, format string, a ...any) error {
	return newException(newError(class, fmt.Sprintf(format, a...)))
}

// asException turns any Go error into a thrown JavaScript value.
func asException(err error) *Exception {
	var ex *Exception
	if errors.As(err, &ex) {
		return ex
	}
	return newException(newError("Error", err.Error()))
}

// guestAbort carries an error out of nested calls when the guest exits or
// traps inside a call that was made from a host function: the outer wasm
// call must stop too.
type guestAbort struct{ err error }

func (g guestAbort) Error() string { return g.err.Error() }

func (g guestAbort) Unwrap() error { return g.err }
