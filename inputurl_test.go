package gengate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/blob/s3test"
	upclient "github.com/gengate/gengate/internal/engine/upstream"
)

// TestLargeInputsGoByPresignedURL: with S3 storage, an input of at least
// InputURLMinBytes reaches the engine with a presigned URL of the stored
// file (which fal and Replicate are sent instead of a data: URI); a
// smaller one, or URLs turned off, keeps only the bytes. The URL serves
// the input's bytes without credentials.
func TestLargeInputsGoByPresignedURL(t *testing.T) {
	srv := s3test.Start(t)
	store, err := blob.Open(srv.Spec("inputs-by-url"), "", srv.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	png := pngOutputs(1)[0].Data
	size := int64(len(png))
	for _, c := range []struct {
		min     int64
		wantURL bool
	}{
		{size, true},
		{size + 1, false},
		{-1, false},
	} {
		t.Run(strconv.FormatInt(c.min, 10), func(t *testing.T) {
			var got gengate.Input
			var fetched []byte
			var fetchErr error
			up := &upstream{submit: func(job gengate.Job) (gengate.Progress, error) {
				// The upstream fetches the URL while it works (the
				// stored input is deleted once the task finishes).
				got = job.Inputs["imageUrl"]
				if got.URL != "" {
					fetched, fetchErr = get(got.URL)
				}
				return gengate.Progress{Outputs: pngOutputs(1)}, nil
			}}
			d := newDomain(t, "sqlite", up)
			d.svc.Blobs, d.svc.InputURLs.MinBytes = store, c.min
			body := `{"type":"image","modelId":"flux-kontext-pro","prompt":"x","imageUrl":"data:image/png;base64,` +
				base64.StdEncoding.EncodeToString(png) + `"}`
			o, err := d.svc.Generate(context.Background(), d.key, []byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			d.runNext()
			d.wantState(o.Task.ID, gengate.StatusSucceeded, "", 100-o.Task.Cost, 0)
			if !bytes.Equal(got.Data, png) {
				t.Fatalf("the engine got %d bytes of input, want the %d sent", len(got.Data), len(png))
			}
			if (got.URL != "") != c.wantURL || got.Large != c.wantURL {
				t.Fatalf("input URL %q, large %v; want a URL and large: %v", got.URL, got.Large, c.wantURL)
			}
			uri := upclient.DataURI(got)
			if !c.wantURL {
				if !strings.HasPrefix(uri, "data:image/png;base64,") {
					t.Fatalf("the upstream is sent %.40q, want a data: URI", uri)
				}
				return
			}
			if uri != got.URL || strings.Contains(uri, srv.Secret) {
				t.Fatalf("the upstream is sent %.60q, want the presigned URL (without the secret)", uri)
			}
			if fetchErr != nil || !bytes.Equal(fetched, png) {
				t.Fatalf("GET of the input URL: %d bytes, %v; want the input", len(fetched), fetchErr)
			}
		})
	}
}

// TestLargeInputsMarkedWithoutURL: with local storage and no public URL,
// no URL can be made, but an input of at least InputURLMinBytes is still
// marked Large, so that an engine with an upload API of its own (the
// Gemini API's Files API) sends it there rather than inline.
func TestLargeInputsMarkedWithoutURL(t *testing.T) {
	png := pngOutputs(1)[0].Data
	for _, c := range []struct {
		min       int64
		wantLarge bool
	}{{int64(len(png)), true}, {int64(len(png)) + 1, false}, {-1, false}} {
		var got gengate.Input
		d := newDomain(t, "sqlite", &upstream{submit: func(job gengate.Job) (gengate.Progress, error) {
			got = job.Inputs["imageUrl"]
			return gengate.Progress{Outputs: pngOutputs(1)}, nil
		}})
		d.svc.InputURLs.MinBytes = c.min
		body := `{"type":"image","modelId":"flux-kontext-pro","prompt":"x","imageUrl":"data:image/png;base64,` +
			base64.StdEncoding.EncodeToString(png) + `"}`
		if _, err := d.svc.Generate(context.Background(), d.key, []byte(body), ""); err != nil {
			t.Fatal(err)
		}
		d.runNext()
		if got.Large != c.wantLarge || got.URL != "" || !bytes.Equal(got.Data, png) {
			t.Errorf("min %d: input large %v, URL %q, %d bytes; want large %v, no URL, the bytes", c.min, got.Large, got.URL, len(got.Data), c.wantLarge)
		}
	}
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET answered %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}
