package core

// AfterFunc schedules f to run once after ms milliseconds and returns a
// function that unschedules it. f must not block. Runtimes use it for
// run timeouts; see Config.AfterFunc.
type AfterFunc func(ms int64, f func()) (stop func())
