package sqlstore_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestWriteStages: every write the SQLite writer commits is counted once
// in each stage's histogram, and writes queued behind a busy writer spent
// time in the queue.
func TestWriteStages(t *testing.T) {
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 1000)
	before := s.WriteStages()
	batches0, _, _ := s.WriterWork()
	inOneBatch(t, s, 3, nil, func(int) {
		if _, err := s.CreateTask(context.Background(), newTask(a.ID, 1)); err != nil {
			t.Error(err)
		}
	})
	after := s.WriteStages()
	batches, _, _ := s.WriterWork()
	if len(after) != len(sqlstore.StageNames) {
		t.Fatalf("%d stages, want %d", len(after), len(sqlstore.StageNames))
	}
	const writes = 4 // the held write and the three queued behind it
	for i, h := range after {
		var n uint64
		for j, c := range h.Counts {
			n += c - before[i].Counts[j]
		}
		if h.Stage != sqlstore.StageNames[i] || n != writes {
			t.Errorf("stage %q counted %d writes, want %d", h.Stage, n, writes)
		}
	}
	if q := after[sqlstore.StageQueue]; q.Sum <= before[sqlstore.StageQueue].Sum {
		t.Errorf("the writes queued behind the held one spent no time in the queue (%v)", q.Sum)
	}
	if batches-batches0 != 2 {
		t.Errorf("%d batches, want 2 (the held write, then the three queued)", batches-batches0)
	}
}
