package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

func TestOpenBothDialects(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			a := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: time.Now()}
			if err := s.CreateAccount(context.Background(), a, 40); err != nil {
				t.Fatal(err)
			}
			got, err := s.FindAccount(context.Background(), a.ID)
			if err != nil || got.Balance != 40 {
				t.Fatalf("FindAccount = %+v, %v; want balance 40", got, err)
			}
		})
	}
}
