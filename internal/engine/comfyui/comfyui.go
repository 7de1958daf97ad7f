package comfyui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // decodes PNG outputs for the JPEG conversion
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// DefaultBaseURL is ComfyUI's default listening address.
const DefaultBaseURL = "http://127.0.0.1:8188"

// First poll delays: images usually take seconds, videos minutes.
const (
	imageDelay = 2 * time.Second
	videoDelay = 10 * time.Second
	maxDelay   = time.Minute
)

// clientID is sent with every prompt (ComfyUI keys its websocket
// messages by it; gengate only polls).
const clientID = "gengate"

var (
	_ gengate.Engine    = (*Engine)(nil)
	_ gengate.Validator = (*Engine)(nil)
	_ gengate.Canceler  = (*Engine)(nil)

	_ gengate.InputStreamer = (*Engine)(nil)
)

// Config configures the engine: BaseURL is the server (COMFYUI_URL,
// default DefaultBaseURL); APIKey, when set, is sent as a bearer token for
// servers behind an authenticating proxy (ComfyUI itself has none).
type Config = upstream.Config

// Engine runs jobs on a ComfyUI server. It keeps no state between calls.
type Engine struct {
	client *upstream.Client
}

// New returns a ComfyUI engine.
func New(cfg Config) *Engine {
	return &Engine{client: upstream.NewClient("comfyui", cfg, DefaultBaseURL, "Authorization", "Bearer ", explain)}
}

// Name returns "comfyui".
func (e *Engine) Name() string { return "comfyui" }

// Repeatable returns false: GPU time is not free and outputs are not
// deterministic. (Submit still finds a prompt an earlier call queued.)
func (e *Engine) Repeatable() bool { return false }

// StreamsInputs says Submit reads large inputs from storage as it uploads
// them (gengate.InputStreamer).
func (e *Engine) StreamsInputs() bool { return true }

// Find looks for the prompt a submit whose outcome is unknown may have
// queued (gengate.Finder): by its prompt id, the task id, in the queue and
// then the history. Found, the task follows it; absent, the task goes to
// review rather than to a second POST /prompt: a server older than
// client-chosen prompt ids (2025) queues under an id of its own, so a
// prompt it took is not found by ours and a second submit would run it
// twice.
func (e *Engine) Find(ctx context.Context, job gengate.Job, since time.Time) (string, error) {
	id, err := promptID(job)
	if err != nil {
		return "", gengate.Errorf(gengate.EFailed, "comfyui: %s", gengate.ErrorMessage(err))
	}
	st, err := e.find(ctx, id, false)
	if err != nil || !st.known() {
		return "", err
	}
	return id, nil
}

var _ gengate.Finder = (*Engine)(nil)

// Validate reports, before any charge, whether the route's workflow
// template can do every option and input of the job.
func (e *Engine) Validate(job gengate.Job) error {
	return unsupported(planJob(job))
}

func unsupported(p plan) error {
	if len(p.fields) == 0 {
		return nil
	}
	return &gengate.Error{Code: gengate.EUnsupportedOption,
		Message: "the model's ComfyUI route cannot do " + p.fields[0].Field, Fields: p.fields}
}

// promptID returns the prompt id gengate uses for the job: its task id.
func promptID(job gengate.Job) (string, error) {
	if job.TaskID == "" || !validID(job.TaskID) {
		return "", gengate.Errorf(gengate.EInvalid, "comfyui: task id %q cannot name a prompt", job.TaskID)
	}
	return job.TaskID, nil
}

func validID(id string) bool {
	return id != "" && len(id) <= 128 && !strings.ContainsAny(id, "/?#%\\ \t\r\n")
}

// Submit queues the job's workflow under the task id as prompt_id. It
// first looks the id up, so a Submit that runs again (after a Busy answer
// from a proxy that did pass the prompt on) attaches to the queued prompt
// instead of queuing a second one; and when the POST /prompt was sent but
// its answer lost, it looks again before calling the outcome ambiguous.
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	id, err := promptID(job)
	if err != nil {
		return gengate.Progress{}, err
	}
	p := planJob(job)
	if err := unsupported(p); err != nil {
		return gengate.Progress{}, err
	}
	st, err := e.find(ctx, id, true)
	if err != nil {
		return gengate.Progress{}, err
	}
	if st.known() {
		return gengate.Progress{UpstreamID: id, RetryAfter: delay(job, st)}, nil
	}

	names := map[string]string{}
	for _, ph := range sortedKeys(p.uploads) {
		field := p.uploads[ph]
		name, err := e.upload(ctx, id, field, job.Inputs[field])
		if err != nil {
			return gengate.Progress{}, err
		}
		names[ph] = name
	}
	graph, err := p.graph(names)
	if err != nil {
		return gengate.Progress{}, err
	}
	var ans struct {
		PromptID   string          `json:"prompt_id"`
		Number     float64         `json:"number"`
		NodeErrors json.RawMessage `json:"node_errors"`
	}
	body := map[string]any{"prompt": graph, "client_id": clientID, "prompt_id": id}
	err = e.client.Submit(ctx, upstream.Request{Method: http.MethodPost, Path: "/prompt", JSON: body}, &ans)
	var ue *gengate.UpstreamError
	if err != nil && !errors.As(err, &ue) {
		// Sent, answer lost: ComfyUI queues before it answers, so a prompt
		// it accepted is in its queue or history now. Absent from both, it
		// may still arrive: the outcome stays ambiguous.
		if st, lerr := e.find(ctx, id, false); lerr == nil && st.known() {
			return gengate.Progress{UpstreamID: id, RetryAfter: delay(job, st)}, nil
		}
		return gengate.Progress{}, err
	}
	if err != nil {
		return gengate.Progress{}, err
	}
	if ans.PromptID != "" && ans.PromptID != id {
		// A server older than client-chosen prompt ids made its own.
		if !validID(ans.PromptID) {
			return gengate.Progress{}, fmt.Errorf("comfyui: prompt queued under an unusable id %q", ans.PromptID)
		}
		id = ans.PromptID
	}
	return gengate.Progress{UpstreamID: id, RetryAfter: delay(job, state{pending: true})}, nil
}

// get reads path into out. Before a submit (atSubmit) its failures are
// Submit answers: nothing was queued by this call, so a lost or unreadable
// answer is Busy, and a 4xx (an auth proxy's 401) or an unreachable server
// is Refused, as the POST would be; otherwise they are Poll's.
func (e *Engine) get(ctx context.Context, p string, out any, atSubmit bool) error {
	req := upstream.Request{Method: http.MethodGet, Path: p}
	if !atSubmit {
		return e.client.Poll(ctx, req, out)
	}
	err := e.client.Submit(ctx, req, out)
	var ue *gengate.UpstreamError
	if err != nil && !errors.As(err, &ue) {
		return &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Message: err.Error()}
	}
	return err
}

// upload sends one input image with POST /upload/image (overwrite on, under
// a name made of the task id and the field) and returns the name LoadImage
// reads it by.
func (e *Engine) upload(ctx context.Context, id, field string, in gengate.Input) (string, error) {
	// The file part is read from the input (its bytes, or the stored file
	// of a large one) as the request goes, not copied into the body first.
	r, size, err := upstream.InputReader(ctx, in)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if size == 0 {
		return "", gengate.Errorf(gengate.EInvalid, "comfyui: input %s is empty", field)
	}
	ct := in.ContentType
	if ct == "" {
		ct = http.DetectContentType(in.Data)
	}
	ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}[ct]
	if ext == "" {
		ext = ".png"
	}
	fname := "gengate-" + safeName(id) + "-" + safeName(field) + ext
	form := upstream.NewForm()
	form.File("image", fname, ct, r, size)
	form.Field("overwrite", "true")
	form.Field("type", "input")
	var ans struct {
		Name      string `json:"name"`
		Subfolder string `json:"subfolder"`
		Type      string `json:"type"`
	}
	err = e.client.Submit(ctx, form.Request(upstream.Request{Method: http.MethodPost, Path: "/upload/image"}), &ans)
	var ue *gengate.UpstreamError
	if err != nil && !errors.As(err, &ue) {
		// An upload costs nothing: a lost answer is worth another try.
		return "", &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Message: err.Error()}
	}
	if err != nil {
		return "", err
	}
	if ans.Type != "" && ans.Type != "input" {
		// Nothing was queued: the next route may take the task.
		return "", &gengate.UpstreamError{Kind: gengate.Refused, Code: gengate.CodeUpstream,
			Message: fmt.Sprintf("comfyui stored input %s as %q, where LoadImage does not read it", field, ans.Type)}
	}
	if ans.Name == "" {
		ans.Name = fname
	}
	if ans.Subfolder != "" {
		return ans.Subfolder + "/" + ans.Name, nil
	}
	return ans.Name, nil
}

// state is where a prompt stands on the server.
type state struct {
	running, pending bool
	ahead            int // prompts before it in the queue
	done             *historyItem
}

func (s state) known() bool { return s.running || s.pending || s.done != nil }

// historyItem is one entry of GET /history/{id}.
type historyItem struct {
	Status *struct {
		StatusStr string              `json:"status_str"`
		Completed bool                `json:"completed"`
		Messages  [][]json.RawMessage `json:"messages"`
	} `json:"status"`
	Outputs map[string]map[string]json.RawMessage `json:"outputs"`
}

// history reads GET /history/{id}: nil while the prompt has not finished
// (or is unknown).
func (e *Engine) history(ctx context.Context, id string, atSubmit bool) (*historyItem, error) {
	var h map[string]*historyItem
	if err := e.get(ctx, "/history/"+url.PathEscape(id), &h, atSubmit); err != nil {
		return nil, err
	}
	return h[id], nil
}

// queued reads GET /queue for id.
func (e *Engine) queued(ctx context.Context, id string, atSubmit bool) (state, error) {
	var q struct {
		Running [][]json.RawMessage `json:"queue_running"`
		Pending [][]json.RawMessage `json:"queue_pending"`
	}
	if err := e.get(ctx, "/queue", &q, atSubmit); err != nil {
		return state{}, err
	}
	idOf := func(item []json.RawMessage) (string, float64) {
		var s string
		var n float64
		if len(item) > 1 {
			json.Unmarshal(item[1], &s)
			json.Unmarshal(item[0], &n)
		}
		return s, n
	}
	for _, it := range q.Running {
		if s, _ := idOf(it); s == id {
			return state{running: true}, nil
		}
	}
	for _, it := range q.Pending {
		if s, n := idOf(it); s == id {
			ahead := len(q.Running)
			for _, other := range q.Pending {
				if _, m := idOf(other); m < n {
					ahead++
				}
			}
			return state{pending: true, ahead: ahead}, nil
		}
	}
	return state{}, nil
}

// find looks id up in the queue, then in the history. In this order a
// prompt that finishes between the two reads is still found: ComfyUI adds
// it to the history before taking it off the queue.
func (e *Engine) find(ctx context.Context, id string, atSubmit bool) (state, error) {
	st, err := e.queued(ctx, id, atSubmit)
	if err != nil || st.known() {
		return st, err
	}
	h, err := e.history(ctx, id, atSubmit)
	return state{done: h}, err
}

// Check reads the prompt's history and, once it has finished, downloads
// its outputs.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	if !validID(upstreamID) {
		return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "comfyui: malformed upstream id %q", upstreamID)
	}
	h, err := e.history(ctx, upstreamID, false)
	if err != nil {
		return gengate.Progress{}, err
	}
	if h == nil {
		st, err := e.find(ctx, upstreamID, false)
		if err != nil {
			return gengate.Progress{}, err
		}
		if st.done == nil {
			if st.known() {
				return gengate.Progress{UpstreamID: upstreamID, RetryAfter: delay(job, st), Report: st.report()}, nil
			}
			// ComfyUI keeps its queue and history in memory: a restart
			// (or a deleted queue item) loses the prompt for good.
			return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
				Message: "comfyui no longer knows the prompt (the server restarted, or the prompt was deleted from its queue)"}
		}
		h = st.done
	}
	if err := failure(h, e.client); err != nil {
		return gengate.Progress{}, err
	}
	files := outputFiles(h, job.Type)
	if len(files) == 0 {
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "comfyui finished the prompt with no " + job.Type + " output (does the workflow end in a save node?)"}
	}
	outs := make([]gengate.Output, 0, len(files))
	for _, f := range files {
		q := url.Values{"filename": {f.Filename}, "subfolder": {f.Subfolder}, "type": {f.Type}}
		o, err := e.client.Download(ctx, "/view?"+q.Encode(), job.Type)
		if err == nil {
			o, err = convert(o, job.OutputFormat)
		}
		if err != nil {
			gengate.CloseOutputs(outs)
			return gengate.Progress{}, err
		}
		outs = append(outs, o)
	}
	return gengate.Progress{UpstreamID: upstreamID, Outputs: outs}, nil
}

// Cancel deletes the prompt from the queue when it is waiting, or
// interrupts it when it is running (naming it, so that a server recent
// enough interrupts nothing else; an older one interrupts whatever runs).
func (e *Engine) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	if !validID(upstreamID) {
		return gengate.Errorf(gengate.EInvalid, "comfyui: malformed upstream id %q", upstreamID)
	}
	st, err := e.queued(ctx, upstreamID, false)
	if err != nil {
		return err
	}
	switch {
	case st.pending:
		return e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/queue", JSON: map[string]any{"delete": []string{upstreamID}}}, nil)
	case st.running:
		return e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/interrupt", JSON: map[string]any{"prompt_id": upstreamID}}, nil)
	}
	return nil
}

// delay is when to look again: the type's usual delay, longer the more
// prompts wait before this one.
func delay(job gengate.Job, st state) time.Duration {
	d := imageDelay
	if job.Type == "video" {
		d = videoDelay
	}
	if st.pending {
		d *= time.Duration(1 + min(st.ahead, 30))
	}
	return min(d, maxDelay)
}

// file is one saved output of a history entry.
type file struct {
	Filename  string `json:"filename"`
	Subfolder string `json:"subfolder"`
	Type      string `json:"type"`
}

var videoExts = []string{".mp4", ".webm", ".mov", ".mkv"}

// outputFiles lists the saved files of the kind the job wants, node by
// node in id order. Save nodes list files under "images" (SaveImage, and
// SaveVideo with "animated"), "gifs" (Video Helper Suite) or "videos";
// previews (type "temp") are skipped.
func outputFiles(h *historyItem, kind string) []file {
	nodes := sortedKeys(h.Outputs)
	slices.SortStableFunc(nodes, func(a, b string) int {
		x, errx := strconv.Atoi(a)
		y, erry := strconv.Atoi(b)
		if errx == nil && erry == nil {
			return x - y
		}
		return strings.Compare(a, b)
	})
	var out []file
	for _, node := range nodes {
		for _, key := range []string{"images", "gifs", "videos"} {
			var fs []file
			if json.Unmarshal(h.Outputs[node][key], &fs) != nil {
				continue
			}
			for _, f := range fs {
				if f.Filename == "" || f.Type == "temp" {
					continue
				}
				if f.Type == "" {
					f.Type = "output"
				}
				isVideo := slices.Contains(videoExts, strings.ToLower(path.Ext(f.Filename)))
				if isVideo == (kind == "video") {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// failure reads a finished history entry: nil when it succeeded, else a
// Failed error from its execution_error (or execution_interrupted)
// message.
func failure(h *historyItem, c *upstream.Client) error {
	if h.Status == nil || h.Status.StatusStr != "error" {
		return nil
	}
	msg := "the workflow failed"
	for _, m := range h.Status.Messages {
		if len(m) < 2 {
			continue
		}
		var event string
		json.Unmarshal(m[0], &event)
		var d struct {
			NodeID           string `json:"node_id"`
			NodeType         string `json:"node_type"`
			ExceptionMessage string `json:"exception_message"`
			ExceptionType    string `json:"exception_type"`
		}
		json.Unmarshal(m[1], &d)
		switch event {
		case "execution_error":
			msg = fmt.Sprintf("node %s (%s) failed: %s", d.NodeID, d.NodeType, strings.TrimSpace(d.ExceptionMessage))
		case "execution_interrupted":
			msg = fmt.Sprintf("the prompt was interrupted at node %s (%s)", d.NodeID, d.NodeType)
		}
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: classify(msg), Message: "comfyui: " + c.Clean(msg)}
}

// classify reads a failure text. ComfyUI has no content policy of its
// own; a workflow may include a safety-checker node, whose failure is a
// content-policy refusal only when its text says so (NSFW, unsafe
// content); any other node failure is UPSTREAM_ERROR.
func classify(msg string) string {
	m := strings.ToLower(msg)
	for _, w := range []string{"nsfw", "unsafe content", "content policy", "safety check failed", "flagged as"} {
		if strings.Contains(m, w) {
			return gengate.CodeContentPolicy
		}
	}
	return gengate.CodeUpstream
}

// convert makes a PNG output a JPEG when the job asked for one: ComfyUI's
// SaveImage writes PNG only.
func convert(o gengate.Output, format string) (gengate.Output, error) {
	if format != "jpeg" || o.ContentType != "image/png" {
		return o, nil
	}
	// The PNG is decoded as it streams in; only the decoded image is held.
	var src io.Reader = bytes.NewReader(o.Data)
	if o.Body != nil {
		defer o.Body.Close()
		src = o.Body
	}
	img, _, err := image.Decode(src)
	var ue *gengate.UpstreamError
	if errors.As(err, &ue) {
		return o, err // the download broke off
	}
	if err != nil {
		return o, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "comfyui delivered an undecodable PNG: " + err.Error()}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 92}); err != nil {
		return o, err
	}
	return gengate.Output{Data: b.Bytes(), ContentType: "image/jpeg", Ext: "jpeg"}, nil
}

// explain reads ComfyUI's error answers: {"error": {"type", "message",
// "details"}, "node_errors": {id: {"errors": [...], "class_type"}}} for a
// graph that fails validation (older servers: {"error": "no prompt"}).
// Failures of the server's own set-up (a node type or model file it lacks,
// a graph without outputs) are UPSTREAM_ERROR; other validation failures
// are the input's (UPSTREAM_REJECTED_INPUT). Other answers (an auth proxy's
// 401, a 502) keep the usual reading.
func explain(status int, body []byte) (code, message string) {
	var v struct {
		Error      json.RawMessage `json:"error"`
		NodeErrors json.RawMessage `json:"node_errors"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Error) == 0 {
		return "", ""
	}
	var nodeErrors map[string]struct {
		ClassType string `json:"class_type"`
		Errors    []struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			Details   string `json:"details"`
			ExtraInfo struct {
				InputName string `json:"input_name"`
			} `json:"extra_info"`
		} `json:"errors"`
	}
	json.Unmarshal(v.NodeErrors, &nodeErrors) // older servers send a list
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details string `json:"details"`
	}
	if json.Unmarshal(v.Error, &e) != nil {
		json.Unmarshal(v.Error, &e.Message)
	}
	message = e.Message
	setup := e.Type == "invalid_prompt" || e.Type == "prompt_no_outputs"
	for _, id := range sortedKeys(nodeErrors) {
		ne := nodeErrors[id]
		for _, x := range ne.Errors {
			message += fmt.Sprintf("; node %s (%s): %s: %s", id, ne.ClassType, x.Message, x.Details)
			if x.Type == "value_not_in_list" && strings.Contains(x.ExtraInfo.InputName, "_name") {
				setup = true // a model file the server does not have (ckpt_name, unet_name, clip_name1, ...)
			}
		}
	}
	if len(nodeErrors) == 0 && e.Details != "" {
		message += ": " + e.Details
	}
	if status == http.StatusBadRequest {
		code = gengate.CodeRejectedInput
		if setup {
			code = gengate.CodeUpstream
		}
	}
	return code, message
}
