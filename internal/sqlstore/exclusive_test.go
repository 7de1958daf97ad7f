package sqlstore_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestExclusiveOncePerCluster: on PostgreSQL, a job that one process runs
// keeps a second process (another connection pool on the same database)
// from running the same job at the same time, but not a job of another
// name; once it ends, the job may run again.
func TestExclusiveOncePerCluster(t *testing.T) {
	ctx := context.Background()
	url := sqltest.URL(t, "postgres")
	a, err := sqlstore.Open(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlstore.Open(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	ran, err := a.Exclusive(ctx, "purge", func(ctx context.Context) error {
		other, err := b.Exclusive(ctx, "purge", func(context.Context) error { return nil })
		if err != nil || other {
			t.Errorf("second process ran the job too (ran %v, err %v)", other, err)
		}
		different, err := b.Exclusive(ctx, "sweep", func(context.Context) error { return nil })
		if err != nil || !different {
			t.Errorf("a job of another name was blocked (ran %v, err %v)", different, err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("first process: ran %v, err %v", ran, err)
	}
	again, err := b.Exclusive(ctx, "purge", func(context.Context) error { return nil })
	if err != nil || !again {
		t.Fatalf("after release: ran %v, err %v", again, err)
	}
}
