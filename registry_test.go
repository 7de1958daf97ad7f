package gengate_test

import (
	"context"
	"net"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestRegistryUnreachableChangesNothing: a route fal's registry marks
// deprecated leaves routing; a later check that cannot reach the registry
// leaves it out (nothing is concluded) and says so; a check that finds it
// active again brings it back.
func TestRegistryUnreachableChangesNothing(t *testing.T) {
	f := faltest.New(t)
	f.Retire("fal-ai/bria/background/replace", "deprecated")
	reg := &gengate.Registry{}
	d := newEngineDomain(t, "sqlite", map[string]gengate.Engine{"fal": fal.New(fal.Config{APIKey: f.Key(), BaseURL: f.URL()})})
	d.svc.ProvidersConfigured, d.svc.Registry = true, reg
	m, _ := d.svc.Catalog.Model("ai-background-generator")
	if len(d.svc.RoutesFor(m)) != 1 {
		t.Fatal("no fal route before the check")
	}
	d.svc.CheckRegistries(context.Background())
	if rs := d.svc.RoutesFor(m); len(rs) != 0 {
		t.Fatalf("routes %v after fal deprecated the endpoint", rs)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	d.svc.Engines["fal"] = fal.New(fal.Config{APIKey: f.Key(), BaseURL: closed})
	d.svc.CheckRegistries(context.Background())
	if rs := d.svc.RoutesFor(m); len(rs) != 0 {
		t.Fatalf("an unreachable registry brought routes back: %v", rs)
	}
	// retiredBG counts the background generator's routes out of routing
	// (openai-sora-2's fal route is out too: fal no longer lists it).
	retiredBG := func(rep gengate.RegistryReport) int {
		n := 0
		for _, c := range rep.Retired {
			if c.ModelID == "ai-background-generator" {
				n++
			}
		}
		return n
	}
	if rep := reg.Report(); rep.Unreachable["fal"] == "" || retiredBG(rep) != 1 {
		t.Fatalf("report %+v: want fal unreachable and the route still retired", rep)
	}

	f.Retire("fal-ai/bria/background/replace", "active")
	d.svc.Engines["fal"] = fal.New(fal.Config{APIKey: f.Key(), BaseURL: f.URL()})
	d.svc.CheckRegistries(context.Background())
	if rs := d.svc.RoutesFor(m); len(rs) != 1 {
		t.Fatalf("routes %v after fal lists the endpoint again", rs)
	}
	if rep := reg.Report(); len(rep.Unreachable) != 0 || retiredBG(rep) != 0 {
		t.Fatalf("report %+v", rep)
	}
}
