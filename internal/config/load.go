package config

import (
	"errors"
	"flag"
	"fmt"

	"github.com/syncverse/hub/internal/cli"
)

// ErrUsage marks a command line that could not be parsed; what was wrong was printed on the flag set's output. It is
// the one usage error of every command (cli.ErrUsage).
var ErrUsage = cli.ErrUsage

// Flags chooses the common flags a command takes besides its own.
type Flags uint8

const (
	FlagConfig   Flags = 1 << iota // --config FILE (default $HUB_CONFIG)
	FlagListen                     // --listen ADDR
	FlagRedisURL                   // --redis-url URL
	AllFlags     = FlagConfig | FlagListen | FlagRedisURL
)

// Sources says where each key's value came from: "file config.yaml:3", "environment HUB_REDIS_URL", "flag
// --listen". A key it does not name has its default.
type Sources map[string]string

// Of is where key's value came from.
func (s Sources) Of(key string) string {
	if from, ok := s[key]; ok {
		return from
	}
	return "default"
}

// set records a key's source; a nil Sources records nothing.
func (s Sources) set(key, from string) {
	if s != nil {
		s[key] = from
	}
}

// Parse parses a command's arguments. Commands take flags only, so a positional argument is an error that names it.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q (flags only; run \"%s -h\" for help)\n", fs.Name(), fs.Arg(0), fs.Name())
		return ErrUsage
	}
	return nil
}

// Load builds the configuration from defaults, the --config file, HUB_* variables and flags, in that order, with
// every common flag. fs may define more flags (a command's own); they are parsed too.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, error) {
	cfg, _, err := LoadFlags(fs, args, getenv, AllFlags)
	return cfg, err
}

// LoadFlags is Load with only the common flags in which, and the source of every value set. Every problem of the
// file and the environment is reported at once; the values are validated only when there is none.
func LoadFlags(fs *flag.FlagSet, args []string, getenv func(string) string, which Flags) (Config, Sources, error) {
	cfg, src := Default(), Sources{}
	var path, listen, redisURL *string
	if which&FlagConfig != 0 {
		path = fs.String("config", getenv("HUB_CONFIG"), "YAML configuration `file` (unknown keys are errors; default $HUB_CONFIG)")
	}
	if which&FlagListen != 0 {
		listen = fs.String("listen", "", "listen `address` (overrides listen)")
	}
	if which&FlagRedisURL != 0 {
		redisURL = fs.String("redis-url", "", "Redis `URL` (overrides redis.url; empty config = embedded server)")
	}
	if err := Parse(fs, args); err != nil {
		return cfg, src, err
	}
	var errs []error
	if path != nil && *path != "" {
		errs = append(errs, loadFile(&cfg, *path, src))
	}
	errs = append(errs, CheckEnvNames(getenv), applyEnv(&cfg, getenv, src))
	if listen != nil && *listen != "" {
		cfg.Listen = *listen
		src.set("listen", "flag --listen")
	}
	if redisURL != nil && *redisURL != "" {
		cfg.Redis.URL = *redisURL
		src.set("redis.url", "flag --redis-url")
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, src, err
	}
	return cfg, src, cfg.Validate()
}
