package main

import (
	"io"
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
