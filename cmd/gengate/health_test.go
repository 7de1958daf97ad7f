package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestProviderHealthAtStart: a provider whose key is refused and one whose
// address does not answer are reported in the log at start and in /readyz
// detail; the service is ready and the healthy provider serves.
func TestProviderHealthAtStart(t *testing.T) {
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1beta"
	ln.Close()
	const wrongKey = "r8_wrongWrongWrong0000000000"
	yaml := falConfig(fal) +
		fmt.Sprintf("  replicate:\n    apiKey: %s\n    baseUrl: %s\n", wrongKey, rep.URL()) +
		fmt.Sprintf("  google:\n    apiKey: AIzaFakeKey0000\n    baseUrl: %s\n", closed)
	s := providerServer(t, yaml, nil)

	var providers map[string]any
	poll(t, 30*time.Second, 20*time.Millisecond, "every provider checked", func() bool {
		r := mustAPI(t, s.base, "GET", "/readyz", "", nil, nil)
		if r.status != 200 || r.str("status") != "ready" {
			t.Fatalf("readyz %d %v", r.status, r.json)
		}
		providers, _ = r.json["providers"].(map[string]any)
		for _, p := range providers {
			if p.(map[string]any)["status"] == "checking" {
				return false
			}
		}
		return len(providers) == 3
	})
	want := map[string]string{"fal": "ok", "replicate": "key_refused", "google": "unreachable"}
	for name, status := range want {
		p, _ := providers[name].(map[string]any)
		if p["status"] != status {
			t.Errorf("%s: %v, want %s", name, p, status)
		}
	}
	log := s.stderr.String()
	for _, name := range []string{"replicate", "google"} {
		if !strings.Contains(log, `"msg":"provider check failed`) || !strings.Contains(log, `"provider":"`+name+`"`) {
			t.Errorf("no warning for %s in the log:\n%s", name, log)
		}
	}
	if strings.Contains(log, wrongKey) || strings.Contains(log, fal.Key()) {
		t.Error("a key is in the log")
	}
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	if images, _ := r.json["images"].([]any); r.status != 200 || len(images) != 1 {
		t.Fatalf("flux on fal: %d %v", r.status, r.json)
	}
}
