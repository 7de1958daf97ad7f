// Package upstreamtest is what the provider fakes share: the knobs tests
// turn (hold, fail submits or polls, reset after submit, fail jobs, delete
// outputs) and the counters they read.
//
// A fake embeds Knobs, so the knob methods (Submissions, LastRequest,
// Hold, Release, SetPolls, FailSubmits, FailPolls, ResetNextSubmit,
// FailJobs, DeleteOutputs) are its own, and asks Knobs in its handlers
// what the test wants (TakeSubmitFailure, TakePollFailure, Accept, Held,
// Polls, JobFailReason, Deleted). What a knob looks like on the wire
// (status codes, error bodies, job states) stays in each fake.
//
// Knobs has its own mutex and calls nothing outside itself, so a fake may
// call it while holding its own lock (never the other way round).
package upstreamtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net"
	"net/http"
	"sync"
)

// Knobs is the shared knob state of a fake. The zero value is ready: no
// hold, jobs complete on their first poll, no failures.
type Knobs struct {
	mu          sync.Mutex
	replace     bool // FailSubmits and FailPolls replace pending failures
	submissions int
	last        map[string]any
	held        bool
	release     chan struct{} // closed by Release; WaitRelease waits on it
	polls       int
	failSubmit  []int
	failCreated []int
	failPoll    []int
	reset       bool
	failReason  string
	deleted     bool
}

// ReplacePendingFailures makes FailSubmits and FailPolls replace the
// failures still pending instead of queuing after them. For fakes, in New.
func (k *Knobs) ReplacePendingFailures() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.replace = true
}

// Submissions returns how many submits the fake accepted.
func (k *Knobs) Submissions() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.submissions
}

// LastRequest returns the body of the last accepted submit.
func (k *Knobs) LastRequest() map[string]any {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last
}

// Hold keeps accepted jobs in progress until Release (what "held" means
// for a job is the fake's to say).
func (k *Knobs) Hold() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.held {
		k.held, k.release = true, make(chan struct{})
	}
}

// Release ends Hold.
func (k *Knobs) Release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held {
		k.held = false
		close(k.release)
	}
}

// SetPolls sets how many status reads a job takes to complete (1 by
// default: the first read finds it completed).
func (k *Knobs) SetPolls(n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.polls = max(n, 1)
}

// FailSubmits makes the next n submits answer status and create nothing.
func (k *Knobs) FailSubmits(status, n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failSubmit = k.add(k.failSubmit, status, n)
}

// FailSubmitsAfterCreate makes the next n submits create their job (and
// count as submissions) and then answer status: a provider whose create
// failed after the work was made, so that the answer does not tell. Each
// fake says whether it models this.
func (k *Knobs) FailSubmitsAfterCreate(status, n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failCreated = k.add(k.failCreated, status, n)
}

// TakeCreatedFailure takes one pending FailSubmitsAfterCreate failure:
// its status, and whether there was one. For the fakes' handlers, once
// the job is created.
func (k *Knobs) TakeCreatedFailure() (status int, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return take(&k.failCreated)
}

// FailPolls makes the next n status reads answer status.
func (k *Knobs) FailPolls(status, n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failPoll = k.add(k.failPoll, status, n)
}

func (k *Knobs) add(pending []int, status, n int) []int {
	if k.replace {
		pending = nil
	}
	for range n {
		pending = append(pending, status)
	}
	return pending
}

// ResetNextSubmit makes the next submit be accepted (and counted) and then
// reset the connection without an answer.
func (k *Knobs) ResetNextSubmit() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reset = true
}

// FailJobs makes jobs accepted from now on fail for reason: "error" (the
// work failed) or "content_policy" (a safety refusal), each in the
// provider's own way. "" restores success.
func (k *Knobs) FailJobs(reason string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failReason = reason
}

// DeleteOutputs makes the outputs served so far gone, as after the
// provider's retention period.
func (k *Knobs) DeleteOutputs() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.deleted = true
}

// TakeSubmitFailure takes one pending FailSubmits failure: its status, and
// whether there was one. For the fakes' handlers.
func (k *Knobs) TakeSubmitFailure() (status int, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return take(&k.failSubmit)
}

// TakePollFailure takes one pending FailPolls failure: its status, and
// whether there was one. For the fakes' handlers.
func (k *Knobs) TakePollFailure() (status int, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return take(&k.failPoll)
}

func take(pending *[]int) (int, bool) {
	if len(*pending) == 0 {
		return 0, false
	}
	status := (*pending)[0]
	*pending = (*pending)[1:]
	return status, true
}

// Accept counts an accepted submit, keeps body for LastRequest and reports
// whether ResetNextSubmit asked to reset its connection instead of
// answering. For the fakes' handlers.
func (k *Knobs) Accept(body map[string]any) (reset bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.submissions++
	k.last = body
	reset, k.reset = k.reset, false
	return reset
}

// Held reports whether Hold is in force.
func (k *Knobs) Held() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held
}

// WaitRelease waits while Hold is in force, until Release; false if ctx
// ended first. For fakes that answer synchronously.
func (k *Knobs) WaitRelease(ctx context.Context) bool {
	k.mu.Lock()
	held, release := k.held, k.release
	k.mu.Unlock()
	if !held {
		return true
	}
	select {
	case <-release:
		return true
	case <-ctx.Done():
		return false
	}
}

// Polls returns the status reads a job takes to complete (SetPolls).
func (k *Knobs) Polls() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return max(k.polls, 1)
}

// JobFailReason returns the FailJobs reason for jobs accepted now.
func (k *Knobs) JobFailReason() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failReason
}

// Deleted reports whether DeleteOutputs was called.
func (k *Knobs) Deleted() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deleted
}

// ResetConn closes the request's connection with a TCP reset (SO_LINGER
// 0) and no answer.
func ResetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if errors.Is(err, http.ErrNotSupported) {
		panic("upstreamtest: connection cannot be hijacked")
	}
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// WriteJSON answers status with v as JSON, as Content-Type
// application/json unless the handler set one.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Picture is a w×h gradient (red across, green down, the given blue) as
// JPEG of jpegQuality, or as PNG when jpegQuality is 0.
func Picture(w, h int, blue uint8, jpegQuality int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), blue, 255})
		}
	}
	var b bytes.Buffer
	if jpegQuality > 0 {
		jpeg.Encode(&b, img, &jpeg.Options{Quality: jpegQuality})
		return b.Bytes()
	}
	png.Encode(&b, img)
	return b.Bytes()
}

// MP4 is a small file an MP4 sniffer accepts: an ftyp box followed by an
// empty mdat box.
func MP4() []byte {
	b := []byte{0, 0, 0, 24, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm', 0, 0, 2, 0, 'i', 's', 'o', 'm', 'm', 'p', '4', '1'}
	return append(b, 0, 0, 0, 8, 'm', 'd', 'a', 't')
}
