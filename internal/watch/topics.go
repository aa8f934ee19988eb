package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncverse/hub/hub"
)

// Topics is `hub topics`: GET /topics, as a table on a terminal, else the hub's JSON.
func Topics(ctx context.Context, fs *flag.FlagSet, args []string, env Env) error {
	var c Conn
	asJSON := fs.Bool("json", false, "print the hub's JSON even on a terminal")
	c.Flags(fs, env)
	bad, err := parse(fs, args, &c)
	if err == nil {
		err = usageError(fs, bad)
	}
	if err != nil {
		return err
	}
	body, err := fetch(ctx, &c, env, "/topics")
	if err != nil || passJSON(env, *asJSON, body) {
		return err
	}
	var list struct {
		Topics []struct {
			Name         string    `json:"name"`
			Length       int64     `json:"length"`
			LastID       string    `json:"last_id"`
			LastActivity time.Time `json:"last_activity"`
		} `json:"topics"`
		Truncated bool `json:"truncated"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("GET /topics: %w", err)
	}
	now := time.Now()
	rows := [][]string{}
	names := make([]string, 0, len(list.Topics))
	for _, t := range list.Topics {
		names = append(names, t.Name)
	}
	watching := watchers(ctx, &c, env, names)
	// The WATCHING column only when the hub counts watchers: with presence off every count is unknown.
	counted := slices.ContainsFunc(watching, func(n string) bool { return n != "" })
	for i, t := range list.Topics {
		active := ""
		if !t.LastActivity.IsZero() {
			active = Duration(now.Sub(t.LastActivity)) + " ago"
		}
		row := []string{t.Name, strconv.FormatInt(t.Length, 10), watching[i], t.LastID, active}
		if !counted {
			row = slices.Delete(row, 2, 3)
		}
		rows = append(rows, row)
	}
	header := []string{"TOPIC", "EVENTS", "WATCHING", "LAST ID", "LAST ACTIVITY"}
	if !counted {
		header = slices.Delete(header, 2, 3)
	}
	printTable(env.Stdout, header, rows, env.width(), env.color())
	switch {
	case len(rows) == 0:
		fmt.Fprintln(env.Stdout, "No topics with history yet: publish an event to create one.")
	case list.Truncated:
		fmt.Fprintln(env.Stdout, "The list was cut short (limits.max_topics_listed, limits.max_topics_scan_keys).")
	}
	return nil
}

// maxWatchersAsked bounds the presence requests of one `hub topics`: the topics past it show no count.
const maxWatchersAsked = 200

// watchers asks GET /topics/{topic}/presence of each topic in turn, and gives each its count ("" unknown). The first
// refusal (presence off: 404) ends the asking: the column stays empty.
func watchers(ctx context.Context, c *Conn, env Env, topics []string) []string {
	out := make([]string, len(topics))
	client, err := c.Client(env.Getenv)
	if err != nil {
		return out
	}
	defer client.Close()
	for i, t := range topics[:min(len(topics), maxWatchersAsked)] {
		body, err := client.GetJSON(ctx, "/topics/"+url.PathEscape(t)+"/presence")
		var p struct {
			Count *int `json:"count"`
		}
		if err != nil || json.Unmarshal(body, &p) != nil || p.Count == nil {
			return out
		}
		out[i] = strconv.Itoa(*p.Count)
	}
	return out
}

// History is `hub history`: GET /topics/{topic}/history, a page of stored events oldest first.
func History(ctx context.Context, fs *flag.FlagSet, args []string, env Env) error {
	var c Conn
	topic := fs.String("topic", "", "`topic` to read (required)")
	limit := fs.Int("limit", 100, "at most `N` events; the hub's limits.max_history_query caps it")
	after := fs.String("after", "", "start after this event `id` (default: the oldest stored event)")
	asJSON := fs.Bool("json", false, "print the hub's JSON even on a terminal")
	c.Flags(fs, env)
	bad, err := parse(fs, args, &c)
	if err != nil {
		return err
	}
	var topics []string
	if *topic != "" {
		topics = []string{*topic}
	}
	bad = append(bad, checkTopics(topics))
	if *limit < 1 {
		bad = append(bad, "--limit must be at least 1")
	}
	if _, perr := hub.ParseID(*after); *after != "" && perr != nil {
		bad = append(bad, "--after: "+perr.Error())
	}
	if err := usageError(fs, bad); err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *after != "" {
		q.Set("after", *after)
	}
	body, err := fetch(ctx, &c, env, "/topics/"+url.PathEscape(*topic)+"/history?"+q.Encode())
	if err != nil || passJSON(env, *asJSON, body) {
		return err
	}
	return historyTable(env, *topic, body)
}

func historyTable(env Env, topic string, body []byte) error {
	var page struct {
		Events []struct {
			ID   string          `json:"id"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
		Next string `json:"next"`
		More bool   `json:"more"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return fmt.Errorf("GET /topics/%s/history: %w", topic, err)
	}
	rows := [][]string{}
	for _, ev := range page.Events {
		var d progressData
		wf := ""
		if decodeLoose(ev.Data, &d) {
			wf = oneLine(d.workflowID())
		}
		at := ""
		if t := idTime(ev.ID); !t.IsZero() {
			at = t.Local().Format("2006-01-02 15:04:05.000")
		}
		rows = append(rows, []string{ev.ID, at, ev.Type, wf, Summarize(ev.Type, ev.Data)})
	}
	printTable(env.Stdout, []string{"ID", "TIME", "TYPE", "WORKFLOW", "SUMMARY"}, rows, env.width(), env.color())
	switch {
	case len(rows) == 0:
		fmt.Fprintln(env.Stdout, "No stored events here.")
	case page.More:
		fmt.Fprintf(env.Stdout, "More: hub history --topic %s --after %s\n", topic, page.Next)
	}
	return nil
}

// fetch GETs path from the hub named by c.
func fetch(ctx context.Context, c *Conn, env Env, path string) ([]byte, error) {
	client, err := c.Client(env.Getenv)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	return client.GetJSON(ctx, path)
}

// passJSON writes body as it came when stdout is no terminal or JSON was asked for, and says whether it did.
func passJSON(env Env, asked bool, body []byte) bool {
	_, tty := env.terminal()
	if tty && !asked {
		return false
	}
	body = bytes.TrimRight(body, " \r\n")
	if tty {
		body = escapeJSONForTerminal(body)
	}
	env.Stdout.Write(append(body, '\n'))
	return true
}

// width is the terminal's width, 80 when it does not say.
func (e Env) width() int {
	if fd, ok := e.terminal(); ok {
		if w, _ := termSize(fd); w > 0 {
			return w
		}
	}
	return 80
}

// printTable writes rows under headers in columns as wide as their widest cell; the last column is cut to the width.
func printTable(w io.Writer, headers []string, rows [][]string, width int, color bool) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = textWidth(h)
	}
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], textWidth(oneLine(cell)))
		}
	}
	line := func(cells []string) string {
		parts := make([]string, len(cells))
		for i, cell := range cells {
			parts[i] = pad(oneLine(cell), widths[i], false)
		}
		return fit(strings.TrimRight(strings.Join(parts, "  "), " "), width)
	}
	fmt.Fprintln(w, paint(color, sgrDim, line(headers)))
	for _, r := range rows {
		fmt.Fprintln(w, line(r))
	}
}
