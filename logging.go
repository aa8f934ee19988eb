package main

import (
	"io"
	"net/url"
	"time"

	"github.com/rs/zerolog"
)

// newLogger returns the process's logger; nothing else writes logs, and nothing uses zerolog's global logger.
func newLogger(cfg LogConfig, w io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(cfg.Level)
	if err != nil || cfg.Level == "" {
		level = zerolog.InfoLevel
	}
	if cfg.Format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// redactURL hides a URL's password, so credentials never reach a log line or an error message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil {
			return "(unparsable URL)"
		}
		return raw
	}
	return u.Redacted()
}
