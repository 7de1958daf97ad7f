package main

// The progress bar of gengate generate and gengate jobs wait: on a
// terminal, one line redrawn in place (\r) with a bar when the task record
// carries a percentage, an indeterminate bar (with the queue position when
// known) otherwise; elsewhere (a pipe, a file), a plain line per change.

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	gg "github.com/gengate/gengate/client"
)

// Progress bar limits.
const (
	barCells         = 20                     // cells of the bar
	barTick          = 120 * time.Millisecond // redraw period on a terminal
	defaultTermWidth = 80                     // when COLUMNS does not say
)

// isTerminal reports whether w is a terminal (a character device). A
// variable so that tests can decide it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// termWidth is the terminal's width from COLUMNS, else 80.
func termWidth(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n >= 20 {
		return n
	}
	return defaultTermWidth
}

// frame is what one progress line shows.
type frame struct {
	Status        string   // the upstream's status word, else the job's
	Route         string   // "engine upstream"; empty before a route took the task
	Percent       *float64 // nil: indeterminate
	QueuePosition *int
	Elapsed       time.Duration
	Tick          int // the indeterminate bar's phase
}

// frameOf reads a frame from a polled job (a finished job's record may
// keep its last report: the job's own status then wins).
func frameOf(j *gg.Job) frame {
	f := frame{Status: j.Status}
	if j.Route != nil {
		f.Route = strings.TrimSpace(j.Route.Engine + " " + j.Route.Upstream)
	}
	if p := j.Progress; p != nil && !j.Done() {
		if p.UpstreamStatus != "" {
			f.Status = p.UpstreamStatus
		}
		f.Percent, f.QueuePosition = p.Percent, p.QueuePosition
	}
	return f
}

// render draws f in at most width-1 columns (the last column is left free
// so that a terminal does not wrap; the route is cut first):
//
//	[########------------]  42% processing (replicate owner/model) 12s
//	[------###-----------] queue position 3 IN_QUEUE (fal fal-ai/flux/dev) 2s
func render(f frame, width int) string {
	var b strings.Builder
	b.WriteByte('[')
	if f.Percent != nil {
		pct := math.Max(0, math.Min(100, *f.Percent))
		full := int(pct * barCells / 100)
		b.WriteString(strings.Repeat("#", full) + strings.Repeat("-", barCells-full))
		fmt.Fprintf(&b, "] %3d%%", int(pct))
	} else {
		// A block of three cells bouncing from end to end.
		span := barCells - 3
		pos := f.Tick % (2 * span)
		if pos > span {
			pos = 2*span - pos
		}
		b.WriteString(strings.Repeat("-", pos) + "###" + strings.Repeat("-", span-pos))
		b.WriteByte(']')
		if f.QueuePosition != nil {
			fmt.Fprintf(&b, " queue position %d", *f.QueuePosition)
		}
	}
	if f.Status != "" {
		b.WriteString(" " + f.Status)
	}
	// The route gives way first when the line is too long for the width.
	tail := " " + f.Elapsed.Round(time.Second).String()
	if f.Route != "" {
		room := width - 1 - utf8.RuneCountInString(b.String()) - utf8.RuneCountInString(tail)
		if route := " (" + f.Route + ")"; utf8.RuneCountInString(route) <= room {
			b.WriteString(route)
		} else if room >= 6 {
			b.WriteString(truncate(route, room-1) + ")")
		}
	}
	b.WriteString(tail)
	return truncate(b.String(), width-1)
}

// truncate cuts s to n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// plainLine is the line written for a change of state when w is not a
// terminal: "job ID processing 42% (route)".
func plainLine(id string, f frame) string {
	s := "job " + id + " " + f.Status
	if f.QueuePosition != nil {
		s += fmt.Sprintf(" queue position %d", *f.QueuePosition)
	}
	if f.Percent != nil {
		s += fmt.Sprintf(" %d%%", int(math.Max(0, math.Min(100, *f.Percent))))
	}
	if f.Route != "" {
		s += " (" + f.Route + ")"
	}
	return s
}

// progress shows a waiting job on w: a bar redrawn in place on a
// terminal (at each poll and every barTick), a plain line per change of
// state otherwise.
type progress struct {
	w     io.Writer
	id    string
	tty   bool
	width int
	start time.Time

	mu   sync.Mutex
	cur  frame
	last string // the last plain line
	tick int

	done chan struct{}
	wg   sync.WaitGroup
}

func newProgress(w io.Writer, id string, width int) *progress {
	p := &progress{w: w, id: id, tty: isTerminal(w), width: width, start: time.Now(), done: make(chan struct{}),
		cur: frame{Status: "submitted"}}
	if p.tty {
		p.wg.Add(1)
		go p.spin()
	}
	return p
}

// draw redraws the line; p.mu is held.
func (p *progress) draw() {
	p.cur.Elapsed, p.cur.Tick = time.Since(p.start), p.tick
	p.tick++
	fmt.Fprint(p.w, "\r\033[K"+render(p.cur, p.width))
}

func (p *progress) spin() {
	defer p.wg.Done()
	tick := time.NewTicker(barTick)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case <-tick.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// update takes a polled job.
func (p *progress) update(j *gg.Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = frameOf(j)
	if p.tty {
		p.draw()
		return
	}
	if line := plainLine(p.id, p.cur); line != p.last {
		fmt.Fprintln(p.w, line)
		p.last = line
	}
}

func (p *progress) stop(j *gg.Job) {
	if p.tty {
		close(p.done)
		p.wg.Wait()
		if j != nil {
			fmt.Fprintf(p.w, "job %s %s in %s\n", p.id, j.Status, time.Since(p.start).Round(time.Second))
		}
	}
}
