// Package webhook delivers the webhook events of the outbox (the
// webhook_events table, written by the store in the transaction that
// changes a task's state) following the Standard Webhooks specification. Every
// worker process runs the loop; an event is claimed with a lease, so two
// processes never send the same attempt at once, and its state lives in
// the database, so delivery survives restarts and SIGKILL (at-least-once:
// an attempt cut short by a kill is sent again once its lease runs out).
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// Store is what the loop needs of the database (internal/sqlstore).
type Store interface {
	ClaimWebhookEvent(ctx context.Context, now time.Time, lease time.Duration, perAccount int) (*gengate.WebhookEvent, error)
	RecordWebhookAttempt(ctx context.Context, e *gengate.WebhookEvent, a gengate.WebhookAttempt, o gengate.WebhookOutcome) error
}

// Config sets the loop.
type Config struct {
	// Client sends the POSTs; it must guard addresses
	// (fetch.TargetClient). Its timeout bounds one attempt.
	Client *http.Client
	// Data builds the event's data member, the task record
	// (httpapi.WebhookData).
	Data func(ctx context.Context, accountID, taskID string) (map[string]any, error)
	// Body, when set, builds each event's whole body instead of Data
	// (httpapi.WebhookBody: the Replicate-compatible API's events are the
	// prediction object, as Replicate sends them).
	Body func(ctx context.Context, e *gengate.WebhookEvent) ([]byte, error)
	// Secrets returns the secrets an attempt is signed with, each giving
	// one v1 signature (Service.WebhookSigningSecrets: two during a
	// rotation's overlap).
	Secrets func(ctx context.Context, e *gengate.WebhookEvent) ([]string, error)
	// Sign, when set, may sign an attempt another way: given its body and
	// time, it returns the headers that carry the signature, sent instead
	// of Standard Webhooks' (Secrets is then not asked), or nil headers
	// to leave it to Secrets (httpapi.WebhookSigner: a fal queue
	// request's event is signed as fal signs one).
	Sign func(ctx context.Context, e *gengate.WebhookEvent, body []byte, at time.Time) (http.Header, error)
	// Schedule is the delay after each failed attempt (default
	// gengate.WebhookSchedule); a target that failed pauses on it too
	// (gengate.WebhookBackoff).
	Schedule []time.Duration
	// Workers is how many deliveries the process runs at once (default
	// gengate.DefaultWebhookWorkers, --webhook-workers); AccountWorkers
	// how many of one account's run at once over every process (default
	// gengate.DefaultWebhookAccountWorkers, --webhook-account-workers).
	Workers        int
	AccountWorkers int
	// PollInterval is how often an idle loop looks for due events
	// (default 1s); Lease how long a claimed attempt may take before
	// another process may send it again (default 1m; longer than the
	// client's timeout).
	PollInterval time.Duration
	Lease        time.Duration
	Now          func() time.Time
	Log          *slog.Logger
}

// DefaultTimeout bounds one delivery attempt (--webhook-timeout).
const DefaultTimeout = 15 * time.Second

func (cfg *Config) defaults() {
	if cfg.Schedule == nil {
		cfg.Schedule = gengate.WebhookSchedule
	}
	if cfg.Workers <= 0 {
		cfg.Workers = gengate.DefaultWebhookWorkers
	}
	if cfg.AccountWorkers <= 0 {
		cfg.AccountWorkers = gengate.DefaultWebhookAccountWorkers
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
}

// Run delivers due events until ctx ends. One goroutine claims (one event
// at a time, so the account cap holds within the process) and hands each
// event to a delivery of its own, at most cfg.Workers at once; it claims
// again as soon as a delivery ends, and every PollInterval while idle.
func Run(ctx context.Context, store Store, cfg Config) {
	cfg.defaults()
	slots := make(chan struct{}, cfg.Workers) // one per delivery in flight
	freed := make(chan struct{}, 1)           // a delivery ended: its account may have room again
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		e, err := store.ClaimWebhookEvent(ctx, cfg.Now(), cfg.Lease, cfg.AccountWorkers)
		if err != nil && ctx.Err() == nil {
			cfg.Log.Error("claim webhook event", "err", err)
		}
		if e == nil {
			<-slots
			select {
			case <-ctx.Done():
				return
			case <-freed:
			case <-time.After(cfg.PollInterval):
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := attempt(ctx, store, cfg, e); err != nil && ctx.Err() == nil {
				cfg.Log.Error("record webhook attempt", "event", e.ID, "err", err)
			}
			<-slots
			select {
			case freed <- struct{}{}:
			default:
			}
		}()
	}
}

// DeliverOne claims one due event and makes one attempt; it reports
// whether there was one.
func DeliverOne(ctx context.Context, store Store, cfg Config) (bool, error) {
	cfg.defaults()
	e, err := store.ClaimWebhookEvent(ctx, cfg.Now(), cfg.Lease, cfg.AccountWorkers)
	if err != nil || e == nil {
		return false, err
	}
	return true, attempt(ctx, store, cfg, e)
}

// attempt sends the claimed event once and records the attempt.
func attempt(ctx context.Context, store Store, cfg Config, e *gengate.WebhookEvent) error {
	code, sendErr := send(ctx, cfg, e)
	at := cfg.Now()
	a := gengate.WebhookAttempt{N: e.Attempts, At: at, Status: code}
	o := gengate.WebhookOutcome{Status: "delivered", KeepAttempts: gengate.WebhookAttemptsKept(cfg.Schedule),
		Backoff: func(failures int) time.Duration { return gengate.WebhookBackoff(cfg.Schedule, failures) }}
	if sendErr != nil {
		a.Error = sendErr.Error()
		// A prediction's start, output and logs events get one attempt
		// (gengate.WebhookRetried); a replay gives them one more.
		if d, ok := gengate.WebhookDelay(cfg.Schedule, e.Attempts-e.ScheduleFrom); ok && gengate.WebhookRetried(e.Type) {
			o.Status, o.Next = "pending", at.Add(d)
		} else {
			o.Status = "failed"
		}
		cfg.Log.Warn("webhook attempt failed", "event", e.ID, "jobId", e.TaskID, "attempt", e.Attempts, "status", code,
			"err", sendErr, "next", o.Status)
	}
	if ctx.Err() != nil {
		// Shutting down: the attempt's lease runs out and another
		// process (or this one restarted) sends it again.
		return nil
	}
	return store.RecordWebhookAttempt(context.WithoutCancel(ctx), e, a, o)
}

// send makes one attempt: the signed POST. It returns the receiver's
// status (0 for none) and why the attempt failed, nil for a 2xx.
func send(ctx context.Context, cfg Config, e *gengate.WebhookEvent) (int, error) {
	body, err := payload(ctx, cfg, e)
	if err != nil {
		return 0, err
	}
	ts := cfg.Now()
	var signed http.Header
	if cfg.Sign != nil {
		if signed, err = cfg.Sign(ctx, e, body, ts); err != nil {
			return 0, fmt.Errorf("sign: %s", gengate.ErrorMessage(err))
		}
	}
	if signed == nil {
		if signed, err = standardSignature(ctx, cfg, e, body, ts); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gengate-webhooks")
	for k, v := range signed {
		req.Header[k] = v
	}
	resp, err := cfg.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// standardSignature is Standard Webhooks' headers of an attempt at ts:
// webhook-id, webhook-timestamp and webhook-signature, one v1 signature
// for each of Secrets' secrets.
func standardSignature(ctx context.Context, cfg Config, e *gengate.WebhookEvent, body []byte, ts time.Time) (http.Header, error) {
	secrets, err := cfg.Secrets(ctx, e)
	if err != nil {
		return nil, fmt.Errorf("signing secret: %s", gengate.ErrorMessage(err))
	}
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		sig, err := gengate.SignWebhook(secret, e.ID, ts, body)
		if err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set("webhook-id", e.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", strings.Join(sigs, " ")) // space-separated, as the specification has it
	return h, nil
}

// payload is an event's body: Body's, or the Standard Webhooks payload
// {type, timestamp, data} with Data's task record.
func payload(ctx context.Context, cfg Config, e *gengate.WebhookEvent) ([]byte, error) {
	if cfg.Body != nil {
		body, err := cfg.Body(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("build payload: %s", gengate.ErrorMessage(err))
		}
		return body, nil
	}
	data, err := cfg.Data(ctx, e.AccountID, e.TaskID)
	if err != nil {
		return nil, fmt.Errorf("build payload: %s", gengate.ErrorMessage(err))
	}
	return json.Marshal(map[string]any{"type": e.Type, "timestamp": gengate.FormatTime(e.CreatedAt), "data": data})
}
