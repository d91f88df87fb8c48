package core

import "github.com/agentrt/agentrt/internal/decimal"

// Code is a stable, machine-readable error code. Hosts switch on it; the
// JavaScript edge copies it to Error.code and the worker maps it to an
// HTTP status. Codes never change meaning once released.
type Code string

// The error codes of the runtime; docs/contract.md lists what each means
// and where it is used.
const (
	CodeInvalidArgument Code = "invalid_argument"
	CodeInvalidHistory  Code = "invalid_history"
	CodeSessionBusy     Code = "session_busy"
	CodeLimitExceeded   Code = "limit_exceeded"
	CodeModelError      Code = "model_error"
	CodeToolError       Code = "tool_error"
	CodeCancelled       Code = "cancelled"
	CodeTimeout         Code = "timeout"
	CodeInternal        Code = "internal"
	// CodeHistoryDiverged refuses a run whose IfHead is not the head of
	// the conversation it would run on (Error.Head, Error.Missing).
	CodeHistoryDiverged Code = "history_diverged"
)

// NoIndex is the value of Error.Index when no single message is at fault.
const NoIndex = -1

// Error is the one error type of the runtime. Every error a Runtime
// returns, or a Run ends with, is an *Error.
//
// Index is the position, in the array the host passed, of the message at
// fault, or NoIndex. Message is for people and may change between
// versions; Code is for programs and does not.
type Error struct {
	Code    Code
	Message string
	Index   int
	// Appended are the messages a failed or cancelled run leaves in its
	// session, nil for most failures: a resume keeps the result of each
	// tool call a person approved, and every message before it, once the
	// tool has run, whatever fails later in the run
	// (docs/adr/0019-tool-approvals.md, "Amendment: nothing paid twice").
	// The host stores them as it stores Result.Appended.
	Appended []Message
	// Head is, on CodeHistoryDiverged, the head of the conversation the
	// run would have run on.
	Head string
	// Missing are, on CodeHistoryDiverged when the run's IfHead names an
	// earlier state of that conversation, the messages after it, in
	// order: the caller appends them to its copy and retries with Head.
	// It is nil when the caller's head is not an earlier state.
	Missing []Message
}

// Error implements the error interface as "code: message" with the index
// appended when there is one. A nil *Error (a host's func that returns a
// typed nil as its error) has a text too, so that it fails a run typed
// instead of panicking.
func (e *Error) Error() string {
	if e == nil {
		return "a nil *core.Error"
	}
	if e.Code == "" {
		return "a *core.Error without a code: " + e.Message
	}
	s := string(e.Code) + ": " + e.Message
	if e.Index >= 0 {
		s += " (index " + itoa(e.Index) + ")"
	}
	return s
}

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, &core.Error{Code: core.CodeTimeout}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError returns an *Error with no index. message is used as it is.
//
// NewError and NewIndexError are not inlined: they are called from some
// eighty places, all off the hot path, and their inlined copies cost the
// module about 2.8 KB of gzip.
//
//go:noinline
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message, Index: NoIndex}
}

// NewIndexError returns an *Error naming the message at index.
//
//go:noinline
func NewIndexError(code Code, index int, message string) *Error {
	return &Error{Code: code, Message: message, Index: index}
}

// ErrorCode returns the code of err: its Code if err is (or wraps) an
// *Error, "" for nil, and CodeInternal for anything else.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	if e := findError(err); e != nil {
		return e.Code
	}
	return CodeInternal
}

// AsError converts any error to an *Error: an *Error is returned as it is,
// anything else becomes CodeInternal with err's text. nil stays nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	if e := findError(err); e != nil {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error(), Index: NoIndex}
}

// findError returns the first *Error in err's chain of Unwrap() error
// methods, or nil. A nil *Error or one without a code (a host's) is not
// one of ours: the caller gives the failure its own code. It does what
// errors.As does for this one type, without the reflection errors.As
// brings into the module.
func findError(err error) *Error {
	for err != nil {
		if e, ok := err.(*Error); ok {
			if e == nil || e.Code == "" {
				return nil
			}
			return e
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil
		}
		err = u.Unwrap()
	}
	return nil
}

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa
