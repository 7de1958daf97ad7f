package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// This file is built in every configuration because two users share the
// fake below: "gengate bench outputs" (bench_outputs.go, -tags bench) and
// TestCrashMidOutputStream (the default build's tests). Nothing in the
// default binary calls it, so the linker leaves it out
// (TestDefaultBuildHasNoBench checks).

// fakeReplicate is a Replicate upstream for the benchmark, after
// Replicate's HTTP API reference (https://replicate.com/docs/reference/http:
// "Create a prediction using an official model", "Get a prediction"):
// every prediction has succeeded by its first read, and its output is one
// URL whose file is an MP4 of size bytes generated as it is sent. With
// hold, the first file request stops after half the file until hold is
// closed (tests kill the server mid-stream).
type fakeReplicate struct {
	*http.Server
	Addr    string
	size    int64
	next    chan int
	written chan int64
	files   atomic.Int64 // file requests so far
}

func startFakeReplicate(size int64, hold chan struct{}) (*fakeReplicate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeReplicate{Addr: ln.Addr().String(), size: size, next: make(chan int, 1), written: make(chan int64, 1)}
	f.next <- 1
	f.written <- 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/models/{owner}/{name}/predictions", func(w http.ResponseWriter, r *http.Request) {
		n := <-f.next
		f.next <- n + 1
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("bench%d", n), "status": "starting"})
	})
	// The models API that serve's registry check reads at start
	// (Replicate's "Get a model" and "Get a model version"): every model
	// and version is known, so no route leaves routing.
	mux.HandleFunc("GET /v1/models/{owner}/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"owner": r.PathValue("owner"), "name": r.PathValue("name"), "visibility": "public"})
	})
	mux.HandleFunc("GET /v1/models/{owner}/{name}/versions/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": r.PathValue("id")})
	})
	mux.HandleFunc("GET /v1/predictions/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "status": "succeeded",
			"output": fmt.Sprintf("http://%s/v1/files/%s.mp4", f.Addr, id)})
	})
	mux.HandleFunc("GET /v1/files/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", strconv.FormatInt(f.size, 10))
		chunk := make([]byte, 256<<10)
		copy(chunk, "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41")
		held := hold
		if f.files.Add(1) > 1 {
			held = nil // only the first request is held
		}
		var sent int64
		for sent < f.size {
			if held != nil && sent >= f.size/2 {
				<-held
				held = nil
			}
			n := min(f.size-sent, int64(len(chunk)))
			if _, err := w.Write(chunk[:n]); err != nil {
				break
			}
			sent += n
			clear(chunk[:32]) // the header once, then filler
		}
		f.written <- <-f.written + sent
	})
	f.Server = &http.Server{Handler: mux}
	go f.Serve(ln)
	return f, nil
}

// sent is how many file bytes the fake has served.
func (f *fakeReplicate) sent() int64 {
	n := <-f.written
	f.written <- n
	return n
}
