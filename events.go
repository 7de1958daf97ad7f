package gengate

import "sync"

// Events tells waiting requests that a task changed and wakes workers when
// work arrives, inside one process. cmd/gengate bridges it to PostgreSQL
// LISTEN/NOTIFY so that API and worker processes hear each other.
type Events struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	work chan struct{}
}

// NewEvents returns an empty Events.
func NewEvents() *Events {
	return &Events{subs: map[string]map[chan struct{}]struct{}{}, work: make(chan struct{}, 1)}
}

// Subscribe returns a channel that receives after each change of the task
// and a function that ends the subscription.
func (e *Events) Subscribe(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	e.mu.Lock()
	if e.subs[taskID] == nil {
		e.subs[taskID] = map[chan struct{}]struct{}{}
	}
	e.subs[taskID][ch] = struct{}{}
	e.mu.Unlock()
	return ch, func() {
		e.mu.Lock()
		delete(e.subs[taskID], ch)
		if len(e.subs[taskID]) == 0 {
			delete(e.subs, taskID)
		}
		e.mu.Unlock()
	}
}

// Publish tells the task's subscribers that it changed.
func (e *Events) Publish(taskID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for ch := range e.subs[taskID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Kick wakes one idle worker loop.
func (e *Events) Kick() {
	select {
	case e.work <- struct{}{}:
	default:
	}
}

// Work receives after Kick.
func (e *Events) Work() <-chan struct{} { return e.work }
