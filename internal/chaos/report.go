package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Row is one scenario's outcome.
type Row struct {
	Scenario   string
	Published  int // events in the streams (or acknowledged, where Redis lost some)
	Delivered  int // events received, summed over clients
	Lost       int
	Duplicated int
	Reordered  int
	Resets     int
	Reconnects int
	Recovery   time.Duration // from the fault (or its end) until every client had caught up
	Note       string        // the scenario's own figures
	Checked    bool          // delivery was compared with the streams (Fill); otherwise its columns read "-"
}

// Fill copies a tally's counts into the row.
func (r Row) Fill(t Tally) Row {
	r.Delivered, r.Lost, r.Duplicated, r.Reordered, r.Resets = t.Delivered, t.Lost+t.Unknown, t.Duplicated, t.Reordered, t.Resets
	r.Checked = true
	return r
}

// Report collects rows from concurrent tests.
type Report struct {
	mu   sync.Mutex
	rows []Row
}

// Add records a row.
func (r *Report) Add(row Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, row)
}

// Len is the number of rows.
func (r *Report) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rows)
}

// Markdown writes the rows as a Markdown table, in scenario order.
func (r *Report) Markdown(w io.Writer) {
	r.mu.Lock()
	rows := append([]Row(nil), r.rows...)
	r.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Scenario < rows[j].Scenario })
	fmt.Fprintln(w, "| scenario | published | delivered | lost | dup | reordered | resets | reconnects | recovery | figures |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, x := range rows {
		delivery := "- | - | - | - | -" // a scenario that did not check delivery claims nothing about it
		if x.Checked {
			delivery = fmt.Sprintf("%d | %d | %d | %d | %d", x.Delivered, x.Lost, x.Duplicated, x.Reordered, x.Resets)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %s |\n", x.Scenario, x.Published, delivery, x.Reconnects,
			fmtDur(x.Recovery), strings.ReplaceAll(x.Note, "|", "/"))
	}
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}
