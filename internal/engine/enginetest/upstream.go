package enginetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// Fake is what Upstream needs of a provider fake: the shared knobs of
// upstreamtest.Knobs (every fake embeds them) and where the fake listens.
type Fake interface {
	URL() string
	Key() string
	Submissions() int
	SetPolls(n int)
	Hold()
	Release()
	FailSubmits(status, n int)
	FailPolls(status, n int)
	ResetNextSubmit()
	FailJobs(reason string) // "error" or "content_policy"
	DeleteOutputs()
}

// Answer is a status a provider answers a submit with and the code the
// engine must give the *gengate.UpstreamError it makes of it.
type Answer struct {
	Status int
	Code   string
}

// UpstreamCase describes one provider engine and its fake for Upstream.
type UpstreamCase struct {
	// NewFake starts a fake of the provider; NewEngine makes an engine
	// that calls baseURL with key. A "fresh" engine (as after a restart)
	// is NewEngine called again with the same arguments.
	NewFake   func(t *testing.T) Fake
	NewEngine func(key, baseURL string) gengate.Engine

	// Job is an asynchronous job: Submit returns an upstream id and a
	// later Check the outputs.
	Job gengate.Job
	// Sync are jobs the upstream answers in the submit call (Submit
	// returns the outputs). The submit, failure and reset scenarios run
	// for them as well as for Job.
	Sync []Case

	// BusyStatuses are the statuses the provider answers when busy, at
	// submit and at poll; nil means 429, 500, 502 and 503. A 429 must
	// give RetryAfter 1s (the fakes send Retry-After: 1), others none.
	BusyStatuses []int
	// Refusals are the other submit answers the engine must report as
	// Refused with the given code (the fake creates nothing).
	Refusals []Answer
	// SubmitBusy are the BusyStatuses that prove at submit that the
	// provider took nothing, by its own client's rule (nil: 429 only): the
	// engine reports them Busy. The other BusyStatuses, at submit, may
	// have started the work: the engine reports them ambiguous (a plain
	// error), after sending the submit again at most Resends times in the
	// same call where the provider's client does (openai-go).
	SubmitBusy []int
	Resends    int

	// WrongKey is a key the fake does not accept; WrongKeyStatus what the
	// provider answers it (0 means 401). NoKeyStatus, when not 0, is what
	// it answers a request without a key.
	WrongKey       string
	WrongKeyStatus int
	NoKeyStatus    int

	// ResetResolves says the engine finds out by itself whether a submit
	// whose connection was reset was accepted (comfyui looks its prompt id
	// up): Submit then succeeds instead of returning an ambiguous error.
	ResetResolves bool
	// UpstreamID, when set, gives the upstream id Submit and Check must
	// return for a job (comfyui: the task id).
	UpstreamID func(gengate.Job) string
	// FailureText, when set, holds for a FailJobs reason a text the
	// failure message must contain.
	FailureText map[string]string

	// FreshJob is the job the fresh-engine scenario runs (nil: Job), and
	// FreshRetryAfter the delay a Check of it asks for while it runs (0:
	// any positive delay).
	FreshJob        *gengate.Job
	FreshRetryAfter time.Duration

	// DeleteBeforeCheck says DeleteOutputs also takes outputs no Check has
	// fetched yet, so the outputs-deleted scenario runs a second time
	// with the deletion right after Submit.
	DeleteBeforeCheck bool

	// HoldCancel runs the hold, cancel and release scenario: a cancelled
	// job's Check fails (Failed), a held one stays running until Release.
	// If the fake has Cancels() int, exactly one cancel must have reached it.
	HoldCancel bool
}

// Upstream runs the protocol scenarios every provider engine must pass
// against its fake, each as a subtest: busy and refused answers at submit,
// busy answers at poll, a wrong key, a connection reset after submit,
// failed jobs, deleted outputs, a Check from a fresh engine and (with
// HoldCancel) hold, cancel and release.
func Upstream(t *testing.T, c UpstreamCase) {
	t.Helper()
	if c.BusyStatuses == nil {
		c.BusyStatuses = []int{429, 500, 502, 503}
	}
	if c.WrongKeyStatus == 0 {
		c.WrongKeyStatus = 401
	}
	if c.WrongKey == "" {
		c.WrongKey = "wrong-key-0123456789abcdef"
	}
	jobs := append([]Case{{Name: "async", Job: c.Job}}, c.Sync...)
	newPair := func(t *testing.T) (Fake, gengate.Engine) {
		f := c.NewFake(t)
		return f, c.NewEngine(f.Key(), f.URL())
	}
	ctx := context.Background()

	if c.SubmitBusy == nil {
		c.SubmitBusy = []int{429}
	}
	t.Run("SubmitAmbiguous", func(t *testing.T) {
		for _, j := range jobs {
			for _, status := range c.BusyStatuses {
				if slices.Contains(c.SubmitBusy, status) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d", j.Name, status), func(t *testing.T) {
					f, e := newPair(t)
					f.FailSubmits(status, c.Resends+1)
					_, err := e.Submit(ctx, j.Job)
					var ue *gengate.UpstreamError
					var ge *gengate.Error
					if err == nil || errors.As(err, &ue) || errors.As(err, &ge) {
						t.Fatalf("error %v is not ambiguous", err)
					}
					if f.Submissions() != 0 {
						t.Fatalf("%d submissions", f.Submissions())
					}
					if c.Resends > 0 {
						// Sent again as the provider's client would: the
						// last attempt is taken, once.
						f.FailSubmits(status, c.Resends)
						if _, err := e.Submit(ctx, j.Job); err != nil || f.Submissions() != 1 {
							t.Fatalf("after %d resends: %v, %d submissions", c.Resends, err, f.Submissions())
						}
					}
				})
			}
		}
	})

	t.Run("SubmitBusy", func(t *testing.T) {
		for _, j := range jobs {
			for _, status := range c.BusyStatuses {
				if !slices.Contains(c.SubmitBusy, status) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d", j.Name, status), func(t *testing.T) {
					f, e := newPair(t)
					f.FailSubmits(status, c.Resends+1)
					_, err := e.Submit(ctx, j.Job)
					ue := UpstreamErr(t, err)
					retry := time.Duration(0)
					if status == 429 {
						retry = time.Second
					}
					if ue.Kind != gengate.Busy || ue.Code != gengate.CodeUpstream || ue.Status != status || ue.RetryAfter != retry {
						t.Fatalf("got %+v, want busy %d, %s, RetryAfter %v", ue, status, gengate.CodeUpstream, retry)
					}
					if f.Submissions() != 0 {
						t.Fatalf("%d submissions after a busy answer", f.Submissions())
					}
					if _, err := RunJob(t, e, j.Job); err != nil {
						t.Fatalf("the next submit: %v", err)
					}
				})
			}
		}
	})

	t.Run("SubmitRefused", func(t *testing.T) {
		for _, j := range jobs {
			for _, a := range c.Refusals {
				t.Run(fmt.Sprintf("%s/%d", j.Name, a.Status), func(t *testing.T) {
					f, e := newPair(t)
					f.FailSubmits(a.Status, 1)
					_, err := e.Submit(ctx, j.Job)
					ue := UpstreamErr(t, err)
					if ue.Kind != gengate.Refused || ue.Code != a.Code || ue.Status != a.Status || ue.RetryAfter != 0 {
						t.Fatalf("got %+v, want refused %d, %s", ue, a.Status, a.Code)
					}
					if f.Submissions() != 0 {
						t.Fatalf("%d submissions after a refusal", f.Submissions())
					}
					if _, err := RunJob(t, e, j.Job); err != nil {
						t.Fatalf("the next submit: %v", err)
					}
				})
			}
		}
	})

	t.Run("PollBusy", func(t *testing.T) {
		for _, status := range c.BusyStatuses {
			t.Run(fmt.Sprint(status), func(t *testing.T) {
				f, e := newPair(t)
				p, err := e.Submit(ctx, c.Job)
				if err != nil {
					t.Fatal(err)
				}
				f.FailPolls(status, 2)
				for i := range 2 {
					_, err := e.Check(ctx, c.Job, p.UpstreamID)
					if ue := UpstreamErr(t, err); ue.Kind != gengate.Busy || ue.Status != status {
						t.Fatalf("check %d: got %+v, want busy %d", i, ue, status)
					}
				}
				p, err = e.Check(ctx, c.Job, p.UpstreamID)
				if err != nil || len(p.Outputs) != 1 {
					t.Fatalf("later check: %+v %v", p, err)
				}
			})
		}
	})

	t.Run("WrongKey", func(t *testing.T) {
		keys := []struct {
			name, key string
			status    int
		}{{"wrong key", c.WrongKey, c.WrongKeyStatus}}
		if c.NoKeyStatus != 0 {
			keys = append(keys, struct {
				name, key string
				status    int
			}{"no key", "", c.NoKeyStatus})
		}
		for _, k := range keys {
			t.Run(k.name, func(t *testing.T) {
				f := c.NewFake(t)
				e := c.NewEngine(k.key, f.URL())
				for _, j := range jobs {
					_, err := e.Submit(ctx, j.Job)
					ue := UpstreamErr(t, err)
					if ue.Kind != gengate.Refused || ue.Status != k.status || ue.Code != gengate.CodeUpstream {
						t.Fatalf("%s: got %+v, want refused %d", j.Name, ue, k.status)
					}
					noSecret(t, err, c.WrongKey)
				}
				if f.Submissions() != 0 {
					t.Fatalf("%d submissions with a wrong key", f.Submissions())
				}
			})
		}
	})

	t.Run("ResetAfterSubmit", func(t *testing.T) {
		for _, j := range jobs {
			t.Run(j.Name, func(t *testing.T) {
				f, e := newPair(t)
				f.ResetNextSubmit()
				job := j.Job
				p, err := e.Submit(ctx, job)
				if c.ResetResolves {
					if err != nil {
						t.Fatalf("submit: %v", err)
					}
					if p.UpstreamID == "" || (c.UpstreamID != nil && p.UpstreamID != c.UpstreamID(job)) {
						t.Fatalf("progress %+v", p)
					}
				} else {
					var ue *gengate.UpstreamError
					var ge *gengate.Error
					if err == nil || errors.As(err, &ue) || errors.As(err, &ge) {
						t.Fatalf("error %v is not ambiguous", err)
					}
					noSecret(t, err, f.Key())
				}
				if f.Submissions() != 1 {
					t.Fatalf("%d submissions, want 1", f.Submissions())
				}
				if c.ResetResolves {
					if p, err := e.Check(ctx, job, p.UpstreamID); err != nil || len(p.Outputs) != 1 {
						t.Fatalf("check: %+v %v", p, err)
					}
				}
			})
		}
	})

	t.Run("JobFailures", func(t *testing.T) {
		for _, j := range jobs {
			for _, r := range []struct{ reason, code string }{
				{"error", gengate.CodeUpstream},
				{"content_policy", gengate.CodeContentPolicy},
			} {
				t.Run(j.Name+"/"+r.reason, func(t *testing.T) {
					f, e := newPair(t)
					f.FailJobs(r.reason)
					_, err := RunJob(t, e, j.Job)
					ue := UpstreamErr(t, err)
					if ue.Kind != gengate.Failed || ue.Code != r.code || ue.Message == "" {
						t.Fatalf("got %+v, want failed %s", ue, r.code)
					}
					if text := c.FailureText[r.reason]; !strings.Contains(ue.Message, text) {
						t.Fatalf("message %q does not say %q", ue.Message, text)
					}
					if f.Submissions() != 1 {
						t.Fatalf("%d submissions", f.Submissions())
					}
					noSecret(t, err, f.Key())
				})
			}
		}
	})

	t.Run("OutputsDeleted", func(t *testing.T) {
		check := func(t *testing.T, f Fake, e gengate.Engine, id string) {
			t.Helper()
			f.DeleteOutputs()
			_, err := e.Check(ctx, c.Job, id)
			if ue := UpstreamErr(t, err); ue.Kind != gengate.Failed || ue.Code != gengate.CodeUpstream {
				t.Fatalf("got %+v, want failed %s", ue, gengate.CodeUpstream)
			}
		}
		t.Run("after completion", func(t *testing.T) {
			f, e := newPair(t)
			p, err := e.Submit(ctx, c.Job)
			if err != nil {
				t.Fatal(err)
			}
			id := p.UpstreamID
			for i := 0; len(p.Outputs) == 0; i++ {
				if i > 20 {
					t.Fatal("no outputs after 20 checks")
				}
				if p, err = e.Check(ctx, c.Job, id); err != nil {
					t.Fatal(err)
				}
			}
			check(t, f, e, id)
		})
		if !c.DeleteBeforeCheck {
			return
		}
		t.Run("before the first check", func(t *testing.T) {
			f, e := newPair(t)
			p, err := e.Submit(ctx, c.Job)
			if err != nil {
				t.Fatal(err)
			}
			check(t, f, e, p.UpstreamID)
		})
	})

	t.Run("CheckFromFreshEngine", func(t *testing.T) {
		f := c.NewFake(t)
		fresh := func() gengate.Engine { return c.NewEngine(f.Key(), f.URL()) }
		job := c.Job
		if c.FreshJob != nil {
			job = *c.FreshJob
		}
		f.SetPolls(2)
		p, err := fresh().Submit(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		p, err = fresh().Check(ctx, job, p.UpstreamID)
		if err != nil || len(p.Outputs) != 0 || p.UpstreamID == "" {
			t.Fatalf("first check: %+v %v, want still running", p, err)
		}
		if c.UpstreamID != nil && p.UpstreamID != c.UpstreamID(job) {
			t.Fatalf("first check: upstream id %q, want %q", p.UpstreamID, c.UpstreamID(job))
		}
		if (c.FreshRetryAfter != 0 && p.RetryAfter != c.FreshRetryAfter) || p.RetryAfter <= 0 {
			t.Fatalf("first check: RetryAfter %v, want %v", p.RetryAfter, c.FreshRetryAfter)
		}
		p, err = fresh().Check(ctx, job, p.UpstreamID)
		if err != nil || len(p.Outputs) != 1 {
			t.Fatalf("second check: %+v %v", p, err)
		}
	})

	if c.HoldCancel {
		t.Run("HoldCancelRelease", func(t *testing.T) {
			f, e := newPair(t)
			cancel, ok := e.(gengate.Canceler)
			if !ok {
				t.Fatal("HoldCancel set, but the engine is no gengate.Canceler")
			}
			f.Hold()
			a, err := e.Submit(ctx, c.Job)
			if err != nil {
				t.Fatal(err)
			}
			bJob := c.Job
			bJob.TaskID = freshTaskID(bJob.TaskID)
			b, err := e.Submit(ctx, bJob)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if p, err := e.Check(ctx, c.Job, a.UpstreamID); err != nil || len(p.Outputs) != 0 {
					t.Fatalf("held check: %+v %v", p, err)
				}
			}
			if err := cancel.Cancel(ctx, bJob, b.UpstreamID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Check(ctx, bJob, b.UpstreamID); UpstreamErr(t, err).Kind != gengate.Failed {
				t.Fatalf("cancelled job: %v", err)
			}
			f.Release()
			if p, err := e.Check(ctx, c.Job, a.UpstreamID); err != nil || len(p.Outputs) != 1 {
				t.Fatalf("after release: %+v %v", p, err)
			}
			if cf, ok := f.(interface{ Cancels() int }); ok && cf.Cancels() != 1 {
				t.Fatalf("%d cancels, want 1", cf.Cancels())
			}
		})
	}
}

// freshTaskID returns another task id of the same form as id, for a second
// job where the upstream id is the task id.
func freshTaskID(id string) string {
	if len(id) < 4 {
		return id + "-b"
	}
	return id[:len(id)-4] + "bbbb"
}

// RunJob submits job and checks it until it has outputs or fails (at most
// 20 checks), and returns the last progress and error.
func RunJob(t *testing.T, e gengate.Engine, job gengate.Job) (gengate.Progress, error) {
	t.Helper()
	ctx := context.Background()
	p, err := e.Submit(ctx, job)
	for i := 0; err == nil && len(p.Outputs) == 0; i++ {
		if i > 20 {
			t.Fatal("no outputs after 20 checks")
		}
		p, err = e.Check(ctx, job, p.UpstreamID)
	}
	return p, err
}

// UpstreamErr returns err as an *gengate.UpstreamError, failing t if it is
// none.
func UpstreamErr(t *testing.T, err error) *gengate.UpstreamError {
	t.Helper()
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an *UpstreamError", err, err)
	}
	return ue
}

// noSecret fails if err's text holds secret or, for a long one, its last
// 16 characters.
func noSecret(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil || secret == "" {
		return
	}
	if strings.Contains(err.Error(), secret) || (len(secret) > 16 && strings.Contains(err.Error(), secret[len(secret)-16:])) {
		t.Fatalf("error shows the key: %v", err)
	}
}

// WantValidate checks what Validate answered for a table case: nil when
// field is "", else UNSUPPORTED_MODEL_OPTION whose first field is field,
// coded unsupported, with a message.
func WantValidate(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var ge *gengate.Error
	if !errors.As(err, &ge) || ge.Code != gengate.EUnsupportedOption {
		t.Fatalf("got %v, want UNSUPPORTED_MODEL_OPTION", err)
	}
	if ge.Fields[0].Field != field || ge.Fields[0].Code != gengate.FieldUnsupported || ge.Fields[0].Message == "" {
		t.Fatalf("fields %+v, want %s", ge.Fields, field)
	}
}

// WithOptions returns j with exactly the options given as name, value
// pairs (Validate tables).
func WithOptions(j gengate.Job, kv ...any) gengate.Job {
	j.Options = map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		j.Options[kv[i].(string)] = kv[i+1]
	}
	return j
}

// WithInputNames returns j with the named inputs present but empty, as
// Validate sees them before the inputs are fetched.
func WithInputNames(j gengate.Job, names ...string) gengate.Job {
	j.Inputs = map[string]gengate.Input{}
	for _, n := range names {
		j.Inputs[n] = gengate.Input{}
	}
	return j
}
