package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Published is POST /publish's 202: the event's id; for an idempotency key seen before, the first event's id and
// Duplicate; and what events.validation: warn found wrong with the data (the event was stored all the same).
type Published struct {
	ID        string   `json:"id"`
	Duplicate bool     `json:"duplicate"`
	Warnings  []string `json:"warnings"`
}

// Publish is POST /publish of one event under an Idempotency-Key: the hub answers 202 once Redis stored it, and
// the same key sent again stores nothing. A refusal is a *StatusError.
func (c *Client) Publish(ctx context.Context, topic, typ string, data json.RawMessage, key string) (*Published, error) {
	body, err := json.Marshal(struct {
		Topic string          `json:"topic"`
		Type  string          `json:"type"`
		Data  json.RawMessage `json:"data"`
	}{topic, typ, data})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/publish", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	tok, err := c.Token()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s/publish: %w", c.Base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return nil, refusal(resp, "/publish")
	}
	var out Published
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.ID == "" {
		return nil, fmt.Errorf("POST /publish: the answer is not the hub's {\"id\"}")
	}
	return &out, nil
}
