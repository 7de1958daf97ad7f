package httpapi_test

import (
	"strings"
	"testing"
	"time"
)

// falCall sends one request through /fal/proxy as fal's clients do:
// the target in x-fal-target-url, the key as Authorization: Key.
func (s *stack) falCall(method, target, key, body string) response {
	s.t.Helper()
	h := map[string]string{"X-Fal-Target-Url": target}
	if key != "" {
		h["Authorization"] = "Key " + key
	}
	return s.rawJSON(method, "/fal/proxy", "", h, body)
}

// TestFalProxy: fal's server-proxy protocol by plain HTTP: the run on
// fal.run that waits, the queue's addresses and fal's error shapes, and no
// cross-account view; fal's clients themselves are TestNodeClients'.
func TestFalProxy(t *testing.T) {
	s := newStack(t, stackOpts{})
	acct, key := s.account(100)
	_, otherKey := s.account(100)

	// fal.run waits and answers the result; a custom image_size runs at
	// the model's nearest aspect ratio; the video shape for video models.
	r := s.falCall("POST", "https://fal.run/fal-ai/flux/schnell", key,
		`{"prompt": "a fox", "image_size": {"width": 1200, "height": 800}, "output_format": "jpeg"}`)
	imgs, _ := r.JSON["images"].([]any)
	if r.Status != 200 || len(imgs) != 1 || r.Header.Get("X-Fal-Request-Id") == "" {
		t.Fatalf("fal.run: %s", r)
	}
	wantImage(t, imgs[0].(map[string]any)["url"].(string), "jpeg", 3, 2)
	v := s.falCall("POST", "https://fal.run/fal-ai/kling-video/v2.1/master/text-to-video", key,
		`{"prompt": "waves", "duration": "5", "aspect_ratio": "16:9"}`)
	if video, _ := v.JSON["video"].(map[string]any); v.Status != 200 || video == nil {
		t.Fatalf("video: %s", v)
	} else {
		wantVideo(t, video["url"].(string))
	}

	// The queue: submit, then status and result by the addresses given.
	sub := s.falCall("POST", "https://queue.fal.run/fal-ai/flux/schnell", key, `{"prompt": "an owl", "num_images": 2}`)
	id := sub.str("request_id")
	if sub.Status != 200 || sub.str("status") != "IN_QUEUE" || sub.str("status_url") != "https://queue.fal.run/fal-ai/flux/requests/"+id+"/status" {
		t.Fatalf("submit: %s", sub)
	}
	if _, err := s.svc.Wait(t.Context(), acct, id, time.Minute); err != nil { // until it is done
		t.Fatal(err)
	}
	res := s.falCall("GET", sub.str("response_url"), key, "")
	if imgs, _ := res.JSON["images"].([]any); res.Status != 200 || len(imgs) != 2 {
		t.Fatalf("result: %s", res)
	}
	st := s.falCall("GET", sub.str("status_url")+"?logs=1", key, "")
	if st.Status != 200 || st.str("status") != "COMPLETED" || st.JSON["logs"] == nil {
		t.Errorf("status: %s", st)
	}
	if c := s.falCall("PUT", sub.str("cancel_url"), key, ""); c.Status != 400 || c.str("status") != "ALREADY_COMPLETED" {
		t.Errorf("cancel of a completed request: %s", c)
	}

	// Another account, another app, an unknown id: 404.
	for _, c := range []struct{ name, target, key string }{
		{"another account", sub.str("status_url"), otherKey},
		{"another app", "https://queue.fal.run/fal-ai/nano-banana/requests/" + id + "/status", key},
		{"unknown id", "https://queue.fal.run/fal-ai/flux/requests/nope/status", key},
	} {
		if r := s.falCall("GET", c.target, c.key, ""); r.Status != 404 || r.str("error_type") != "not_found" {
			t.Errorf("%s: %s", c.name, r)
		}
	}
	if r := s.falCall("PUT", "https://queue.fal.run/fal-ai/flux/requests/nope/cancel", key, ""); r.Status != 404 || r.str("status") != "NOT_FOUND" {
		t.Errorf("cancel unknown: %s", r)
	}

	// fal's error shapes, each with gengate's code; nothing charged.
	before := s.balance(acct)
	cases := []struct {
		name, method, target, key, body string
		status                          int
		code                            string
	}{
		{"no target", "POST", "", key, `{}`, 400, "INVALID_REQUEST"},
		{"another host", "POST", "https://example.com/fal-ai/flux/schnell", key, `{}`, 412, "INVALID_REQUEST"},
		{"no key", "POST", "https://queue.fal.run/fal-ai/flux/schnell", "", `{"prompt": "a"}`, 401, "UNAUTHORIZED"},
		{"unknown endpoint", "POST", "https://queue.fal.run/fal-ai/nope", key, `{"prompt": "a"}`, 404, "NOT_FOUND"},
		{"unknown parameter", "POST", "https://queue.fal.run/fal-ai/flux/schnell", key, `{"prompt": "a", "num_inference_steps": 4}`, 422, "INVALID_REQUEST"},
		{"too many images", "POST", "https://queue.fal.run/fal-ai/flux/schnell", key, `{"prompt": "a", "num_images": 9}`, 422, "UNSUPPORTED_MODEL_OPTION"},
		{"bad image_size", "POST", "https://queue.fal.run/fal-ai/flux/schnell", key, `{"prompt": "a", "image_size": "huge"}`, 422, "INVALID_REQUEST"},
		{"wrong method", "GET", "https://queue.fal.run/fal-ai/flux/schnell", key, ``, 405, "METHOD_NOT_ALLOWED"},
		{"status stream", "GET", "https://queue.fal.run/fal-ai/flux/requests/" + id + "/status/stream", key, ``, 404, "NOT_FOUND"},
	}
	for _, c := range cases {
		h := map[string]string{}
		if c.target != "" {
			h["X-Fal-Target-Url"] = c.target
		}
		if c.key != "" {
			h["Authorization"] = "Bearer " + c.key
		}
		r := s.rawJSON(c.method, "/fal/proxy", "", h, c.body)
		if r.Status != c.status || r.str("code") != c.code {
			t.Errorf("%s: %s", c.name, r)
		}
		if r.Status == 422 {
			d, _ := r.JSON["detail"].([]any)
			if len(d) == 0 || !strings.Contains(mustJSON(d[0]), `"body"`) || r.Header.Get("X-Fal-Retryable") != "false" {
				t.Errorf("%s: not fal's validation shape: %s", c.name, r)
			}
		} else if r.JSON["detail"] == nil || r.Header.Get("X-Fal-Error-Type") == "" {
			t.Errorf("%s: not fal's request error shape: %s %v", c.name, r, r.Header)
		}
	}
	if s.balance(acct) != before {
		t.Errorf("refusals moved credits: %d → %d", before, s.balance(acct))
	}
	s.ledgerCheck(acct)
}
