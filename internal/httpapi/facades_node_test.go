package httpapi_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/fetch"
)

// The npm clients the node tests install, pinned.
const (
	npmReplicate = "1.4.0"
	npmFalClient = "1.10.1"
)

// nodeClients installs the pinned npm clients in a temporary directory and
// returns it; it skips the test where node or npm is absent. npm's cache
// is kept between runs (npm_config_cache) so that a second run installs
// from it.
func nodeClients(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the npm clients' tests need it")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the npm clients' tests need it")
	}
	dir := t.TempDir()
	pkg := `{"name": "gengate-facades-check", "private": true, "type": "module",
  "dependencies": {"replicate": "` + npmReplicate + `", "@fal-ai/client": "` + npmFalClient + `"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", "--loglevel=error")
	cmd.Dir = dir
	cache, _ := os.UserCacheDir()
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(cache, "gengate-npm"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install of replicate@%s and @fal-ai/client@%s: %v\n%s", npmReplicate, npmFalClient, err, out)
	}
	return dir
}

// runNode runs a module script in dir with env and decodes the JSON its
// last output line holds.
func runNode(t *testing.T, dir, script string, env map[string]string, out any) {
	t.Helper()
	path := filepath.Join(dir, "check.mjs")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", path)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	data, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, data)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("node's answer: %v\n%s", err, data)
	}
}

// TestNodeClients: the npm replicate client's run gets flux-schnell's two
// 16:9 images, and @fal-ai/client's subscribe through /fal/proxy gets
// two landscape images, each charged; the clients' errors carry the
// statuses (401 bad key, 422 invalid input, 402 short balance). A
// @fal-ai/client queue submit with a webhookUrl gets fal's webhook,
// verified as fal's docs say with gengate's key set.
func TestNodeClients(t *testing.T) {
	dir := nodeClients(t)
	s := newStack(t, stackOpts{})
	s.svc.Webhooks.Guard = fetch.TargetGuard(true)
	s.startWebhooks([]time.Duration{10 * time.Millisecond})
	hook := newReceiver(t)
	acct, key := s.account(100)
	_, poorKey := s.account(1)
	// A stack whose workers do not run: its requests stay queued.
	idle := newStack(t, stackOpts{noWorkers: true})
	idleAcct, idleKey := idle.account(100)
	env := map[string]string{"GENGATE_URL": s.URL, "GENGATE_KEY": key, "GENGATE_POOR_KEY": poorKey,
		"GENGATE_IDLE_URL": idle.URL, "GENGATE_IDLE_KEY": idleKey, "GENGATE_HOOK": hook.URL + "/fal"}

	t.Run("replicate", func(t *testing.T) {
		var got struct {
			Output        []string `json:"output"`
			BadKeyStatus  int      `json:"badKeyStatus"`
			InvalidStatus int      `json:"invalidStatus"`
			PoorStatus    int      `json:"poorStatus"`
			Prediction    struct {
				Status string `json:"status"`
			} `json:"prediction"`
		}
		before := s.balance(acct)
		runNode(t, dir, replicateScript, env, &got)
		if len(got.Output) != 2 {
			t.Fatalf("run's output: %v", got.Output)
		}
		for _, u := range got.Output {
			wantImage(t, u, "png", 16, 9)
		}
		if got.Prediction.Status != "succeeded" || got.BadKeyStatus != 401 || got.InvalidStatus != 422 || got.PoorStatus != 402 {
			t.Errorf("answers: %+v", got)
		}
		m, _ := s.svc.Catalog.Model("flux-schnell")
		if spent, want := before-s.balance(acct), m.Quote(map[string]any{"numOutputs": int64(2)})+m.Credits; spent != want {
			t.Errorf("charged %d credits, want %d", spent, want)
		}
	})

	t.Run("fal", func(t *testing.T) {
		var got struct {
			Browser struct {
				Data struct {
					Images []struct {
						URL string `json:"url"`
					} `json:"images"`
				} `json:"data"`
				RequestID string `json:"requestId"`
			} `json:"browser"`
			Node struct {
				Data struct {
					Images []struct {
						URL string `json:"url"`
					} `json:"images"`
				} `json:"data"`
				Updates []string `json:"updates"`
			} `json:"node"`
			Queue struct {
				Submitted  map[string]any `json:"submitted"`
				Status     map[string]any `json:"status"`
				Canceled   bool           `json:"canceled"`
				ResultCode int            `json:"resultStatus"`
			} `json:"queue"`
			Hooked struct {
				RequestID string `json:"request_id"`
			} `json:"hooked"`
			InvalidStatus int            `json:"invalidStatus"`
			InvalidBody   map[string]any `json:"invalidBody"`
			BadKeyStatus  int            `json:"badKeyStatus"`
			PoorStatus    int            `json:"poorStatus"`
			UnknownStatus int            `json:"unknownStatus"`
		}
		before := s.balance(acct)
		runNode(t, dir, falScript, env, &got)
		if len(got.Browser.Data.Images) != 2 || got.Browser.RequestID == "" {
			t.Fatalf("subscribe with proxyUrl (browser): %+v", got.Browser)
		}
		for _, img := range got.Browser.Data.Images {
			wantImage(t, img.URL, "png", 16, 9)
		}
		if len(got.Node.Data.Images) != 1 || len(got.Node.Updates) == 0 || got.Node.Updates[len(got.Node.Updates)-1] != "COMPLETED" {
			t.Fatalf("subscribe with proxyUrl when always (node): %+v", got.Node)
		}
		wantImage(t, got.Node.Data.Images[0].URL, "png", 9, 16)
		if !strings.HasPrefix(got.Queue.Submitted["status_url"].(string), "https://queue.fal.run/fal-ai/flux/requests/") ||
			got.Queue.Status["status"] != "IN_QUEUE" || got.Queue.Status["queue_position"] != 0.0 || !got.Queue.Canceled || got.Queue.ResultCode != 400 {
			t.Errorf("queue calls: %+v", got.Queue)
		}
		if idle.balance(idleAcct) != 100 {
			t.Errorf("the request canceled in the queue left a balance of %d, want 100", idle.balance(idleAcct))
		}
		if got.InvalidStatus != 422 || got.BadKeyStatus != 401 || got.PoorStatus != 402 || got.UnknownStatus != 404 {
			t.Errorf("errors: %+v", got)
		}
		if d, _ := got.InvalidBody["detail"].([]any); len(d) != 1 || !strings.Contains(mustJSON(d[0]), `"num_images"`) {
			t.Errorf("422 body: %v", got.InvalidBody)
		}
		m, _ := s.svc.Catalog.Model("flux-schnell")
		// Two images, one, and the one of the submit with a webhook.
		if spent, want := before-s.balance(acct), m.Quote(map[string]any{"numOutputs": int64(2)})+2*m.Credits; spent != want {
			t.Errorf("charged %d credits, want %d", spent, want)
		}
		var d delivery
		waitFor(t, "the fal webhook", func() bool {
			got := hook.deliveries()
			if len(got) > 0 {
				d = got[0]
			}
			return len(got) > 0
		})
		if err := verifyFalWebhook(fetchJWKS(t, s.URL+"/fal/.well-known/jwks.json"), d.header, d.body, time.Now()); err != nil {
			t.Fatalf("the webhook of fal's client's submit does not verify: %v", err)
		}
		if h := decodeFalHook(t, d.body); h.RequestID != got.Hooked.RequestID || h.Status != "OK" {
			t.Errorf("the webhook of fal's client's submit: %+v; want request %s, OK", h, got.Hooked.RequestID)
		}
	})
	s.ledgerCheck(acct)
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// replicateScript uses the npm replicate client as its README shows, with
// gengate's /v1 as baseUrl.
const replicateScript = `
import Replicate from "replicate";
const { GENGATE_URL: url, GENGATE_KEY: key, GENGATE_POOR_KEY: poor } = process.env;
const replicate = new Replicate({ auth: key, baseUrl: url + "/v1", useFileOutput: false });
const output = await replicate.run("black-forest-labs/flux-schnell",
  { input: { prompt: "a lighthouse at dusk", num_outputs: 2, aspect_ratio: "16:9" } });
let prediction = await replicate.predictions.create({ model: "black-forest-labs/flux-schnell", input: { prompt: "a cat" } });
prediction = await replicate.wait(prediction, { interval: 50 });
const status = async (client, ref, input) => {
  try { await client.run(ref, { input }); return 0; } catch (e) { return e.response ? e.response.status : -1; }
};
const badKeyStatus = await status(new Replicate({ auth: "gg_live_wrong", baseUrl: url + "/v1" }),
  "black-forest-labs/flux-schnell", { prompt: "a cat" });
const invalidStatus = await status(replicate, "black-forest-labs/flux-schnell", { prompt: "a cat", aspect_ratio: "7:3" });
const poorStatus = await status(new Replicate({ auth: poor, baseUrl: url + "/v1" }),
  "black-forest-labs/flux-schnell", { prompt: "a cat", num_outputs: 4 });
console.log(JSON.stringify({ output, prediction, badKeyStatus, invalidStatus, poorStatus }));
`

// falScript uses @fal-ai/client with proxyUrl and the key added by its
// requestMiddleware: first as in a browser (a plain proxyUrl proxies only
// there), then in node with the proxy's when: "always"; then the queue
// calls and the errors.
const falScript = `
const { GENGATE_URL: url, GENGATE_KEY: key, GENGATE_POOR_KEY: poor, GENGATE_IDLE_URL: idleURL, GENGATE_IDLE_KEY: idleKey } = process.env;
const withKey = (k) => async (req) => ({ ...req, headers: { ...req.headers, authorization: "Bearer " + k } });
globalThis.window = { document: {} };
const { fal, createFalClient } = await import("@fal-ai/client");
fal.config({ proxyUrl: url + "/fal/proxy", requestMiddleware: withKey(key), suppressLocalCredentialsWarning: true });
const browser = await fal.subscribe("fal-ai/flux/schnell",
  { input: { prompt: "a lighthouse at dusk", num_images: 2, image_size: "landscape_16_9" } });
delete globalThis.window;

const client = (k, base = url) => createFalClient({ proxyUrl: { url: base + "/fal/proxy", when: "always" }, requestMiddleware: withKey(k) });
const c = client(key);
const updates = [];
const node = await c.subscribe("fal-ai/flux/schnell", { input: { prompt: "a fox", image_size: "portrait_16_9" },
  logs: true, pollInterval: 50, onQueueUpdate: (u) => updates.push(u.status) });

// The queue's calls one by one, on a server whose workers do not run: a
// request canceled while queued.
const q = client(idleKey, idleURL);
const submitted = await q.queue.submit("fal-ai/flux/schnell", { input: { prompt: "an owl" } });
const status = await q.queue.status("fal-ai/flux/schnell", { requestId: submitted.request_id, logs: true });
const hooked = await c.queue.submit("fal-ai/flux/schnell", { input: { prompt: "a heron" }, webhookUrl: process.env.GENGATE_HOOK });
let canceled = false, resultStatus = 0;
try { await q.queue.cancel("fal-ai/flux/schnell", { requestId: submitted.request_id }); canceled = true; } catch (e) { canceled = e.status; }
try { await q.queue.result("fal-ai/flux/schnell", { requestId: submitted.request_id }); } catch (e) { resultStatus = e.status; }

const fail = async (cl, id, input) => {
  try { await cl.subscribe(id, { input }); return [0, null]; } catch (e) { return [e.status, e.body]; }
};
const [invalidStatus, invalidBody] = await fail(c, "fal-ai/flux/schnell", { prompt: "a cat", num_images: 9 });
const [badKeyStatus] = await fail(client("gg_live_wrong"), "fal-ai/flux/schnell", { prompt: "a cat" });
const [poorStatus] = await fail(client(poor), "fal-ai/flux/schnell", { prompt: "a cat", num_images: 4 });
const [unknownStatus] = await fail(c, "fal-ai/no-such-endpoint", { prompt: "a cat" });
console.log(JSON.stringify({ browser, node: { data: node.data, updates },
  queue: { submitted, status, canceled, resultStatus }, hooked, invalidStatus, invalidBody, badKeyStatus, poorStatus, unknownStatus }));
`
