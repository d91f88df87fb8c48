package main

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a long step says it is still running.
const progressEvery = 10 * time.Second

// progress runs fn and tells w about it: what is starting, a line every
// progressEvery while it runs, and how long it took. A first build of the
// module compiles the Go standard library for GOOS=js and takes about a
// minute; later builds come from Go's build cache.
func progress(w io.Writer, what, hint string, fn func() error) error {
	start := time.Now()
	if hint != "" {
		fmt.Fprintf(w, "%s (%s)...\n", what, hint)
	} else {
		fmt.Fprintf(w, "%s...\n", what)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(w, "  still %s (%ds)\n", what, int(time.Since(start).Seconds()))
			}
		}
	}()
	err := fn()
	close(done)
	<-stopped
	if err == nil {
		fmt.Fprintf(w, "%s: done in %.1fs\n", what, time.Since(start).Seconds())
	}
	return err
}

// buildHint is shown when the module starts compiling.
const buildHint = "the first build takes about a minute; later ones come from Go's cache"
