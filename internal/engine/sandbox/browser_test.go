package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestBrowserPlaysVideo plays a sandbox MP4 to its end in headless
// Chromium (Debian's package; .ci/run installs it) and checks its size and
// length and that every frame was decoded. Frames the browser dropped for
// being late (on a busy machine) are logged, not failed: ffmpeg checks the
// decode bit-exact. Without Chromium on the machine it skips, saying so.
func TestBrowserPlaysVideo(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); the MP4 is still checked by the mp4ff and ffmpeg tests")
	}
	for _, c := range []struct {
		aspect, class string
		w, h          int
	}{{"16:9", "", 256, 144}, {"9:16", "", 144, 256}, {"1:1", "", 144, 144}, {"16:9", "1080p", 384, 216}} {
		t.Run(c.aspect+" "+c.class, func(t *testing.T) {
			opts := map[string]any{"duration": int64(3)}
			if c.class != "" {
				opts["resolution"] = c.class // 216 rows: the SPS crops the coded 224
			}
			p, err := New(0).Submit(context.Background(), gengate.Job{ModelID: "kling-2-1", Type: "video", Prompt: "browser",
				AspectRatio: c.aspect, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "v.mp4"), p.Outputs[0].Data, 0o644); err != nil {
				t.Fatal(err)
			}
			page := `<html><body><video id=v src="v.mp4" muted playsinline></video><script>
const v = document.getElementById('v');
const report = (r) => fetch('/report?r=' + encodeURIComponent(r));
v.addEventListener('error', () => report('error ' + (v.error && v.error.code)));
v.addEventListener('loadeddata', () => v.play().catch((e) => report('play refused: ' + e)));
v.addEventListener('ended', () => { const q = v.getVideoPlaybackQuality();
  report(v.videoWidth + 'x' + v.videoHeight + ' ' + v.duration + 's ended frames=' + q.totalVideoFrames + ' dropped=' + q.droppedVideoFrames); });
</script></body></html>`
			if err := os.WriteFile(filepath.Join(dir, "play.html"), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			// The page reports to the server when the video ends (or fails):
			// playback runs in real time, and the test waits for the report.
			reports := make(chan string, 1)
			mux := http.NewServeMux()
			mux.Handle("/", http.FileServer(http.Dir(dir)))
			mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
				select {
				case reports <- r.URL.Query().Get("r"):
				default:
				}
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			// The profile is removed best-effort: a helper process may still
			// be writing to it as the group dies.
			profile, err := os.MkdirTemp("", "gengate-chromium-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(profile)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--user-data-dir="+profile, "--autoplay-policy=no-user-gesture-required",
				srv.URL+"/play.html")
			// Chromium starts helper processes; a group of its own lets the
			// test end them all.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			if err := cmd.Start(); err != nil {
				t.Fatalf("chromium: %v", err)
			}
			defer func() { cancel(); _ = cmd.Wait() }()
			want := fmt.Sprintf("%dx%d 3s ended frames=36", c.w, c.h) // 3 s at 12 fps
			select {
			case got := <-reports:
				played, dropped, _ := strings.Cut(got, " dropped=")
				if played != want {
					t.Fatalf("the browser reported %q, want %q", got, want+" dropped=N")
				}
				if dropped != "0" {
					t.Logf("the browser dropped %s late frames (a busy machine)", dropped)
				}
			case <-ctx.Done():
				t.Fatal("the browser reported nothing within 60 s")
			}
		})
	}
}
