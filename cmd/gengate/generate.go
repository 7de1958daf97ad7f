package main

// gengate generate and gengate jobs: the API's client side, through package
// client, for a running server (--url, --key or GENGATE_URL, GENGATE_KEY).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	gg "github.com/gengate/gengate/client"
)

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// clientFlags adds --url and --key and returns a function that builds the
// client once the flags are parsed.
func clientFlags(f *flags) func() (*gg.Client, error) {
	var url, key string
	f.str(&url, "url", "http://127.0.0.1:8080", "the gengate server")
	f.str(&key, "key", "", "API key")
	return func() (*gg.Client, error) {
		if key == "" {
			return nil, errors.New("an API key is required: --key or GENGATE_KEY")
		}
		return gg.New(url, key), nil
	}
}

func generateCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f := newFlags("generate", getenv, stderr)
	newClient := clientFlags(f)
	var model, prompt, out, idem string
	var async bool
	var images, options multiFlag
	f.StringVar(&model, "model", "", "model id (GET /api/v1/models)")
	f.StringVar(&prompt, "prompt", "", "prompt")
	f.Var(&images, "image", "input image: a local file (uploaded) or an http(s) or data: URL; repeat for models with several image inputs, in their order")
	f.Var(&options, "option", "model option as key=value (numbers and true/false as JSON); repeatable")
	f.StringVar(&out, "out", "", "directory to download the outputs into (default: print their URLs)")
	f.BoolVar(&async, "async", false, "print the job id at once instead of waiting")
	f.StringVar(&idem, "idempotency-key", "", "Idempotency-Key (default: a fresh one, reused on retries)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	if model == "" {
		return errors.New("--model is required")
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	m, err := c.Model(ctx, model)
	if err != nil {
		return err
	}
	req := gg.Request{Type: m.Type, ModelID: model, Prompt: prompt, Inputs: map[string]string{}, Options: map[string]any{}}
	for _, o := range options {
		k, v, ok := strings.Cut(o, "=")
		if !ok || k == "" {
			return fmt.Errorf("--option %q: want key=value", o)
		}
		var val any
		if json.Unmarshal([]byte(v), &val) != nil {
			val = v
		}
		req.Options[k] = val
	}
	slots := m.ImageInputs()
	if len(images) > len(slots) {
		return fmt.Errorf("model %s takes %d input image(s); %d --image given", model, len(slots), len(images))
	}
	for i, img := range images {
		u := img
		if !strings.HasPrefix(img, "http://") && !strings.HasPrefix(img, "https://") && !strings.HasPrefix(img, "data:") {
			file, err := c.UploadFile(ctx, img)
			if err != nil {
				return fmt.Errorf("upload %s: %w", img, err)
			}
			u = file.URL
		}
		req.Inputs[slots[i]] = u
	}
	job, err := c.Submit(ctx, req, gg.CallOptions{Async: true, IdempotencyKey: idem})
	if err != nil {
		return err
	}
	if async {
		fmt.Fprintf(stderr, "job %s %s; follow it with: gengate jobs wait %s\n", job.ID, job.Status, job.ID)
		fmt.Fprintln(stdout, job.ID)
		return nil
	}
	return waitAndPrint(ctx, c, job.ID, out, termWidth(getenv), stdout, stderr)
}

// waitAndPrint waits for a job with a progress bar on stderr (progressbar.go) and
// prints its outputs: URLs, or the paths they were downloaded to.
func waitAndPrint(ctx context.Context, c *gg.Client, id, out string, width int, stdout, stderr io.Writer) error {
	p := newProgress(stderr, id, width)
	job, err := c.Wait(ctx, id, p.update)
	p.stop(job)
	if err != nil {
		return err
	}
	for i, u := range job.Outputs() {
		if out == "" {
			fmt.Fprintln(stdout, u)
			continue
		}
		path, err := downloadOutput(ctx, c, u, out, fmt.Sprintf("%s-%d", job.ID, i))
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, path)
	}
	fmt.Fprintf(stderr, "cost %d credits\n", job.Cost)
	return nil
}

// downloadOutput downloads an output into dir as <name>.<ext> (the job's
// id and the output's index, the URL's extension), written whole or not
// at all.
func downloadOutput(ctx context.Context, c *gg.Client, u, dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+path.Ext(strings.SplitN(u, "?", 2)[0]))
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := c.Download(ctx, u, tmp); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(tmp.Name(), p)
}

func jobsCmd(ctx context.Context, sub string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f := newFlags("jobs "+sub, getenv, stderr)
	newClient := clientFlags(f)
	var out string
	if sub == "wait" {
		f.StringVar(&out, "out", "", "directory to download the outputs into (default: print their URLs)")
	}
	// The job id may come before or after the flags.
	var ids []string
	for {
		if err := f.Parse(args); err != nil {
			return err
		}
		if f.NArg() == 0 {
			break
		}
		ids, args = append(ids, f.Arg(0)), f.Args()[1:]
	}
	if len(ids) != 1 {
		return fmt.Errorf("usage: gengate jobs %s JOB-ID", sub)
	}
	id := ids[0]
	c, err := newClient()
	if err != nil {
		return err
	}
	switch sub {
	case "get":
		job, err := c.Job(ctx, id)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := json.Indent(&b, job.Raw, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(stdout, b.String())
		return nil
	case "wait":
		return waitAndPrint(ctx, c, id, out, termWidth(getenv), stdout, stderr)
	case "cancel":
		job, err := c.Cancel(ctx, id)
		if errors.Is(err, gg.ErrCancelUnsupported) {
			return errors.New("this server does not support canceling tasks yet; the task goes on")
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, job.ID, job.Status)
		return nil
	}
	return fmt.Errorf("unknown jobs command %q: get, wait or cancel", sub)
}
