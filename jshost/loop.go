package jshost

import (
	"context"
	"sort"
	"time"
)

type timer struct {
	at   time.Time
	fire func()
	goID bool // a runtime.scheduleTimeoutEvent timer
}

func (in *Instance) loop() {
	defer close(in.loopOK)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		var timerC <-chan time.Time
		if at, ok := in.nextDue(); ok {
			t.Reset(time.Until(at))
			timerC = t.C
		}
		select {
		case <-in.wake:
			for {
				in.qmu.Lock()
				q := in.queue
				in.queue = nil
				in.qmu.Unlock()
				if len(q) == 0 {
					break
				}
				for _, f := range q {
					f()
					in.w.drain()
				}
			}
		case <-timerC:
			in.fireTimers()
		case <-in.quit:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// post queues f to run on the loop; it never blocks.
func (in *Instance) post(f func()) {
	in.qmu.Lock()
	in.queue = append(in.queue, f)
	in.qmu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// do runs f on the loop and waits for it.
func (in *Instance) do(ctx context.Context, f func() error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case <-in.quit:
		return ErrClosed
	default:
	}
	done := make(chan error, 1)
	in.post(func() { done <- f() })
	select {
	case err := <-done:
		return err
	case <-in.loopOK:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (in *Instance) nextDue() (time.Time, bool) {
	var at time.Time
	ok := false
	for _, t := range in.timers {
		if !ok || t.at.Before(at) {
			at, ok = t.at, true
		}
	}
	return at, ok
}

func (in *Instance) addTimer(d time.Duration, fire func(), goID bool) int64 {
	in.nextTimer++
	if in.nextTimer > 1<<31-1 {
		in.nextTimer = 1
	}
	in.timers[in.nextTimer] = &timer{at: time.Now().Add(d), fire: fire, goID: goID}
	return in.nextTimer
}

func (in *Instance) addGoTimer(d time.Duration) int64 {
	var id int64
	id = in.addTimer(d, func() {
		// As wasm_exec.js does: resume, and again while the runtime has
		// not cleared the event (it clears it when it handles it).
		for i := 0; i < 100; i++ {
			if in.resume() != nil {
				break
			}
			if _, still := in.timers[id]; !still {
				break
			}
			in.timers[id].at = time.Now() // keep it due
		}
		delete(in.timers, id)
	}, true)
	return id
}

func (in *Instance) clearTimer(id int64) { delete(in.timers, id) }

// fireTimers runs every due timer in order of due time, each followed by
// the microtasks it queued.
func (in *Instance) fireTimers() {
	now := time.Now()
	var due []int64
	for id, t := range in.timers {
		if !t.at.After(now) {
			due = append(due, id)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		a, b := in.timers[due[i]], in.timers[due[j]]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return due[i] < due[j]
	})
	for _, id := range due {
		t, ok := in.timers[id]
		if !ok {
			continue // cleared by an earlier one
		}
		if !t.goID {
			delete(in.timers, id)
		}
		t.fire()
		in.w.drain()
	}
}
