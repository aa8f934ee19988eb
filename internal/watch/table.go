package watch

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// TableOptions is what the table is drawn for.
type TableOptions struct {
	Width, Height int  // the terminal's, in cells; the table uses at most Height-1 lines
	Color         bool // SGR colours (never with NO_COLOR)
	MultiTopic    bool // a TOPIC column
	Topics        string
	State         string // the connection's state and detail
}

// SGR sequences; only table.go and lines.go write them, and only when colour is on.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
)

// statusStyle is the colour of a shown status: what needs a human stands out.
var statusStyle = map[string]string{
	"failed": sgrBold + sgrRed, "stalled": sgrBold + sgrYellow, "succeeded": sgrGreen, "cancelled": sgrDim,
	"queued": sgrDim, "running": sgrCyan, "unknown": "",
}

func paint(on bool, style, s string) string {
	if !on || style == "" {
		return s
	}
	return style + s + sgrReset
}

// column is one column of the table: its heading, the widths it may take, and its cells.
type column struct {
	head          string
	min, want     int
	width         int
	drop          int // lower goes first when the terminal is narrow; 0 never goes
	cell          func(w *Workflow, width int) (text, style string)
	rightAligned  bool
	grow          int // the order in which flexible columns take the room left; 0 takes none
	hidden        bool
	naturalLength func(w *Workflow) string
}

// Table draws the model as lines of at most o.Width cells: a status line, the column headings, one row per workflow
// in the console's order, and the latest events when there is room.
func Table(m *Model, now time.Time, o TableOptions) []string {
	width, height := max(o.Width, 20), max(o.Height, 4)
	rows := m.Workflows()
	cols := layout(columns(now, o), rows, width)
	out := []string{statusLine(m, o, width)}
	out = append(out, headings(cols, o.Color))
	room := height - 1 - len(out)
	if len(rows) == 0 {
		out = append(out, paint(o.Color, sgrDim, fit("No workflows yet: rows appear with a topic's first progress event.", width)))
		room--
	}
	shown := rows
	if len(rows) > room {
		shown = rows[:max(0, room-1)]
	}
	for _, w := range shown {
		out = append(out, row(cols, w, o.Color))
	}
	if len(shown) < len(rows) {
		out = append(out, paint(o.Color, sgrDim, fit(fmt.Sprintf("… %d more", len(rows)-len(shown)), width)))
	}
	return append(out, footer(m, o, width, height-1-len(out))...)
}

func columns(now time.Time, o TableOptions) []*column {
	return []*column{
		{head: "TOPIC", min: 6, want: 24, drop: 1, grow: 4, hidden: !o.MultiTopic,
			naturalLength: func(w *Workflow) string { return w.Topic },
			cell:          func(w *Workflow, _ int) (string, string) { return w.Topic, "" }},
		{head: "WORKFLOW", min: 8, want: 40, grow: 1, naturalLength: func(w *Workflow) string { return oneLine(w.Label()) },
			cell: func(w *Workflow, _ int) (string, string) { return w.Label(), sgrBold }},
		{head: "PROGRESS", min: 10, want: 29, drop: 5, grow: 2, cell: progressCell},
		{head: "STEP", min: 6, want: 30, drop: 2, grow: 3, naturalLength: stepText,
			cell: func(w *Workflow, _ int) (string, string) { return stepText(w), "" }},
		{head: "STATUS", min: 9, want: 9, cell: func(w *Workflow, _ int) (string, string) {
			return w.Shown(), statusStyle[w.Shown()]
		}},
		{head: "ETA", min: 6, want: 6, drop: 3, rightAligned: true, cell: func(w *Workflow, _ int) (string, string) {
			if w.ETA.IsZero() {
				return "", ""
			}
			return Duration(w.ETA.Sub(now)), ""
		}},
		{head: "AGE", min: 6, want: 6, drop: 4, rightAligned: true, cell: func(w *Workflow, _ int) (string, string) {
			if d := now.Sub(w.LastAt); d >= 1500*time.Millisecond {
				return Duration(d), ""
			}
			return "now", ""
		}},
	}
}

func stepText(w *Workflow) string {
	switch {
	case w.Step != "":
		return oneLine(w.Step)
	case w.Status == "queued":
		return "waiting"
	}
	return "—"
}

// progressCell is a bar of the cell's width less the percentage, in the status's colour.
func progressCell(w *Workflow, width int) (string, string) {
	bar := width - 5
	filled := 0
	pct := ""
	if w.HasProgress {
		filled = int(w.Progress*float64(bar) + 0.5)
		pct = Percent(w.Progress)
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", bar-filled) + fmt.Sprintf(" %4s", pct), barStyle[w.Shown()]
}

var barStyle = map[string]string{"failed": sgrRed, "stalled": sgrYellow, "succeeded": sgrGreen, "running": sgrCyan}

// layout gives each shown column its width: columns that do not fit go (least useful first), then what is left
// goes to the flexible ones up to what their content wants.
func layout(cols []*column, rows []*Workflow, width int) []*column {
	var shown []*column
	for _, c := range cols {
		if !c.hidden {
			shown = append(shown, c)
		}
	}
	need := func() int {
		n := 2 * (len(shown) - 1)
		for _, c := range shown {
			n += c.min
		}
		return n
	}
	for need() > width {
		drop := -1
		for i, c := range shown {
			if c.drop > 0 && (drop < 0 || c.drop < shown[drop].drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		shown = append(shown[:drop], shown[drop+1:]...)
	}
	extra := width - need()
	growing := make([]*column, 0, len(shown))
	for _, c := range shown {
		c.width = c.min
		if c.grow > 0 {
			growing = append(growing, c)
		}
	}
	sort.Slice(growing, func(i, j int) bool { return growing[i].grow < growing[j].grow })
	for _, c := range growing {
		want := c.want
		if c.naturalLength != nil {
			natural := textWidth(c.head)
			for _, w := range rows {
				natural = max(natural, textWidth(c.naturalLength(w)))
			}
			want = min(want, natural)
		}
		add := max(0, min(extra, want-c.width))
		c.width += add
		extra -= add
	}
	return shown
}

func headings(cols []*column, color bool) string {
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = pad(c.head, c.width, c.rightAligned)
	}
	return paint(color, sgrDim, strings.TrimRight(strings.Join(cells, "  "), " "))
}

func row(cols []*column, w *Workflow, color bool) string {
	cells := make([]string, len(cols))
	for i, c := range cols {
		text, style := c.cell(w, c.width)
		// What agents publish never reaches the terminal as control: no line break, no escape sequence.
		cells[i] = paint(color, style, pad(oneLine(text), c.width, c.rightAligned))
	}
	return strings.TrimRight(strings.Join(cells, "  "), " ")
}

// statusLine names the topics, the connection's state and the counts per status.
func statusLine(m *Model, o TableOptions, width int) string {
	c := m.Counts()
	parts := []string{"hub watch " + o.Topics, paint(o.Color, stateStyle(o.State), oneLine(o.State)),
		fmt.Sprintf("%d workflows", m.Len())}
	for _, st := range []string{"failed", "stalled", "running", "queued", "succeeded", "cancelled", "unknown"} {
		if c[st] > 0 {
			parts = append(parts, paint(o.Color, statusStyle[st], fmt.Sprintf("%d %s", c[st], st)))
		}
	}
	if n, ok := m.Watching(); ok {
		parts = append(parts, fmt.Sprintf("%d watching", n))
	}
	if m.Resets > 0 {
		parts = append(parts, fmt.Sprintf("%d resets", m.Resets))
	}
	if cut := m.Truncated(); len(cut) > 0 {
		parts = append(parts, paint(o.Color, sgrYellow, "snapshot cut short: "+strings.Join(cut, ", ")))
	}
	return fitStyled(strings.Join(parts, " · "), width)
}

func stateStyle(state string) string {
	if strings.HasPrefix(state, "live") {
		return sgrGreen
	}
	return sgrYellow
}

// footer is the latest events, as many as fit in room lines (at most five), under a rule.
func footer(m *Model, o TableOptions, width, room int) []string {
	n := min(room-1, 5)
	recent := m.Recent(n)
	if n <= 0 || len(recent) == 0 {
		return nil
	}
	const title = "── latest events "
	out := []string{paint(o.Color, sgrDim, title+strings.Repeat("─", max(0, width-textWidth(title))))}
	for _, l := range recent {
		out = append(out, logLine(l, o.MultiTopic, o.Color, width))
	}
	return out
}
