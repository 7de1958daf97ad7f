package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docBlock is the first fenced block of the language in docs/proxy.md.
func docBlock(t *testing.T, lang string) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("docs/proxy.md has no %s block", lang)
	}
	return m[1]
}

// replaceAll replaces each old string, failing when one is not there (the
// sample changed: the test must follow it).
func replaceAll(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("the sample no longer holds %q:\n%s", pairs[i], s)
		}
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// TestProxySamples runs docs/proxy.md's nginx and Caddy samples with the
// real servers, in front of gengate --trusted-proxies 127.0.0.1/32: a
// 2 MB upload from a client on 127.0.0.5 goes through (over nginx's 1 MB
// default), and gengate's request log names 127.0.0.5, not the proxy.
func TestProxySamples(t *testing.T) {
	t.Run("nginx", func(t *testing.T) {
		if _, err := exec.LookPath("nginx"); err != nil {
			t.Skip("nginx is not installed (apt-get install nginx-light): the sample is not run")
		}
		p := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--trusted-proxies", "127.0.0.1/32")
		listen := freeAddr(t)
		dir := t.TempDir()
		server := replaceAll(t, docBlock(t, "nginx"),
			"server 127.0.0.1:8080;", "server "+strings.TrimPrefix(p.base, "http://")+";",
			"listen 443 ssl;", "listen "+listen+";",
			"ssl_certificate     /etc/letsencrypt/live/gen.example.com/fullchain.pem;", "",
			"ssl_certificate_key /etc/letsencrypt/live/gen.example.com/privkey.pem;", "")
		conf := "daemon off;\nmaster_process off;\npid " + dir + "/nginx.pid;\nerror_log " + dir + "/error.log;\n" +
			"events {}\nhttp {\n  access_log off;\n  client_body_temp_path " + dir + "/body;\n  proxy_temp_path " + dir + "/proxy;\n" +
			"  fastcgi_temp_path " + dir + "/fcgi;\n  uwsgi_temp_path " + dir + "/uwsgi;\n  scgi_temp_path " + dir + "/scgi;\n" + server + "}\n"
		path := filepath.Join(dir, "nginx.conf")
		os.WriteFile(path, []byte(conf), 0o644)
		if out, err := exec.Command("nginx", "-t", "-p", dir, "-c", path).CombinedOutput(); err != nil {
			t.Fatalf("nginx -t refuses the sample: %v\n%s", err, out)
		}
		startProxy(t, exec.Command("nginx", "-p", dir, "-c", path), dir+"/error.log")
		checkThroughProxy(t, p, "http://"+listen)
	})
	t.Run("caddy", func(t *testing.T) {
		if _, err := exec.LookPath("caddy"); err != nil {
			t.Skip("caddy is not installed (apt-get install caddy): the sample is not run")
		}
		p := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--trusted-proxies", "127.0.0.1/32")
		listen := freeAddr(t)
		dir := t.TempDir()
		site := replaceAll(t, docBlock(t, "caddyfile"),
			"gen.example.com {", "http://"+listen+" {",
			"reverse_proxy 127.0.0.1:8080 {", "reverse_proxy "+strings.TrimPrefix(p.base, "http://")+" {")
		path := filepath.Join(dir, "Caddyfile")
		os.WriteFile(path, []byte("{\n\tadmin off\n\tstorage file_system "+dir+"\n}\n"+site), 0o644)
		if out, err := exec.Command("caddy", "validate", "--adapter", "caddyfile", "--config", path).CombinedOutput(); err != nil {
			t.Fatalf("caddy validate refuses the sample: %v\n%s", err, out)
		}
		cmd := exec.Command("caddy", "run", "--adapter", "caddyfile", "--config", path)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
		startProxy(t, cmd, "")
		checkThroughProxy(t, p, "http://"+listen)
	})
}

// startProxy starts a proxy and stops it when the test ends.
func startProxy(t *testing.T, cmd *exec.Cmd, errorLog string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			logs, _ := os.ReadFile(errorLog)
			t.Logf("proxy output:\n%s\n%s", out.String(), logs)
		}
	})
}

// checkThroughProxy uploads a 2 MB PNG through the proxy from 127.0.0.5
// and finds gengate's request line naming that client.
func checkThroughProxy(t *testing.T, p *process, proxy string) {
	t.Helper()
	body := pngBytes(t, noise(900, 900))
	if len(body) < 2_000_000 {
		t.Fatalf("the upload is %d bytes, want over 2 MB", len(body))
	}
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.5")}}).DialContext}}
	var resp *http.Response
	poll(t, 10*time.Second, 50*time.Millisecond, "the proxy to answer", func() bool {
		req, _ := http.NewRequestWithContext(context.Background(), "POST", proxy+"/api/v1/files", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "image/png")
		var err error
		resp, err = client.Do(req)
		if err != nil {
			return false
		}
		if resp.StatusCode == http.StatusBadGateway { // the proxy is up before it reaches gengate
			resp.Body.Close()
			return false
		}
		return true
	})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a 2 MB upload through the proxy answered %d, want 201", resp.StatusCode)
	}
	poll(t, 5*time.Second, 20*time.Millisecond, "the request line naming 127.0.0.5", func() bool {
		logs, _ := os.ReadFile(p.stderr)
		for _, line := range strings.Split(string(logs), "\n") {
			var l struct{ Msg, Path, Client string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "request" && l.Path == "/api/v1/files" && l.Client == "127.0.0.5" {
				return true
			}
		}
		return false
	})
}
