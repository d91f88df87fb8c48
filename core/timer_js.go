//go:build js

package core

// defaultAfterFunc is nil under GOOS=js: the edge that builds the Runtime
// passes the host's timers (setTimeout) in Config.AfterFunc, which keeps
// package time, and its start-up cost, out of the module.
var defaultAfterFunc AfterFunc
