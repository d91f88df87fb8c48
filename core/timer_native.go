//go:build !js

package core

import "time"

// defaultAfterFunc schedules with package time.
func defaultAfterFunc(ms int64, f func()) func() {
	t := time.AfterFunc(time.Duration(ms)*time.Millisecond, f)
	return func() { t.Stop() }
}
