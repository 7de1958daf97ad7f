package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gengate/gengate/client"
)

// A synchronous generation: Generate waits for the images (polling if the
// server answers 202) and DownloadTo saves them. serverURL and apiKey name
// a gengate on loopback here; use your server's address and key.
func Example() {
	ctx := context.Background()
	c := client.New(serverURL, apiKey)
	job, err := c.Generate(ctx, client.Request{
		ModelID: "flux",
		Prompt:  "a lighthouse at dusk",
		Options: map[string]any{"aspectRatio": "16:9"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "gengate-example")
	defer os.RemoveAll(dir)
	for _, url := range job.Outputs() {
		path, err := c.DownloadTo(ctx, url, dir)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(job.Status, filepath.Ext(path))
	}
	// Output: succeeded .png
}

// Errors are *client.Error values with the problem's code, status and
// fields.
func ExampleError() {
	c := client.New(serverURL, apiKey)
	_, err := c.Generate(context.Background(), client.Request{ModelID: "flux", Prompt: "x", Options: map[string]any{"numOutputs": 9}})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Fields[0].Field)
	}
	// Output: 400 UNSUPPORTED_MODEL_OPTION numOutputs
}

// Asynchronous use: Submit with Async answers at once with the task; Wait
// polls it as its Retry-After says.
func ExampleClient_Wait() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := client.New(serverURL, apiKey)
	job, err := c.Submit(ctx, client.Request{ModelID: "flux", Prompt: "a harbour"}, client.CallOptions{Async: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(job.Status)
	job, err = c.Wait(ctx, job.ID, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(job.Status, len(job.Images))
	// Output:
	// processing
	// succeeded 1
}

// An upload is an input like any URL; so is a previous output.
func ExampleClient_Upload() {
	ctx := context.Background()
	c := client.New(serverURL, apiKey)
	first, err := c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a red door"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var picture []byte
	// Any PNG, JPEG, WebP or GIF; here the first output, downloaded.
	if _, err := c.Download(ctx, first.Images[0], writerFunc(func(p []byte) { picture = append(picture, p...) })); err != nil {
		fmt.Println(err)
		return
	}
	f, err := c.Upload(ctx, picture, "image/png")
	if err != nil {
		fmt.Println(err)
		return
	}
	job, err := c.Generate(ctx, client.Request{ModelID: "image-upscaler",
		Inputs: map[string]string{"imageUrl": f.URL}, Options: map[string]any{"scale": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.ContentType, job.Status)
	// Output: image/png succeeded
}

type writerFunc func([]byte)

func (w writerFunc) Write(p []byte) (int, error) { w(p); return len(p), nil }
