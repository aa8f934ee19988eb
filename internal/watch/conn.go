package watch

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/syncverse/hub/internal/cli"
)

// URLVar and TokenVar are the client commands' variables (see package cli).
const (
	URLVar   = cli.URLVar
	TokenVar = cli.TokenVar
)

// tokenHint names every way of giving a client command its token, for the message of a 401.
const tokenHint = "--token-file FILE, --token-env NAME or the HUB_TOKEN variable"

// Conn is where a client command finds the hub and the token to show it: --url, else HUB_URL, else the hub's
// default listen address; --token-file or --token-env, else HUB_TOKEN, else no token.
type Conn struct {
	URL, TokenFile, TokenEnv string
}

// Flags defines --url, --token-file and --token-env on fs; --url defaults to HUB_URL when it is set.
func (c *Conn) Flags(fs *flag.FlagSet, env Env) {
	def := env.DefaultURL
	if u := strings.TrimSpace(env.Getenv(URLVar)); u != "" {
		def = u
	}
	fs.StringVar(&c.URL, "url", def, "the hub's `URL` (default $HUB_URL, else the hub's default listen address)")
	fs.StringVar(&c.TokenFile, "token-file", "", "read the bearer token from this `file` (again at every reconnect)")
	fs.StringVar(&c.TokenEnv, "token-env", "", "read the bearer token from the environment variable `NAME` (default HUB_TOKEN)")
}

// Problems are what is wrong with the flags Flags defined, for a usage error.
func (c *Conn) Problems() []string {
	var problems []string
	if c.TokenFile != "" && c.TokenEnv != "" {
		problems = append(problems, "--token-file and --token-env: give one")
	}
	if _, err := NewClient(c.URL, nil); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// Client is a client of the hub c names, showing the token c names.
func (c *Conn) Client(getenv func(string) string) (*Client, error) {
	return NewClient(c.URL, TokenSource(c.TokenFile, c.TokenEnv, getenv))
}

// TokenSource is where a client finds its token: a file (read at every request, trimmed), else the environment
// variable named by env, else HUB_TOKEN, else none.
func TokenSource(file, env string, getenv func(string) string) func() (string, error) {
	return func() (string, error) {
		switch {
		case file != "":
			b, err := os.ReadFile(file)
			if err != nil {
				return "", fmt.Errorf("--token-file: %w", err)
			}
			tok := strings.TrimSpace(string(b))
			if tok == "" {
				return "", fmt.Errorf("--token-file %s is empty", file)
			}
			return tok, nil
		case env != "":
			tok := strings.TrimSpace(getenv(env))
			if tok == "" {
				return "", fmt.Errorf("--token-env: the environment variable %s is empty or not set", env)
			}
			return tok, nil
		}
		return strings.TrimSpace(getenv(TokenVar)), nil
	}
}

// authHint is what a 401 adds to the hub's words: how to give a token, or that the one given was refused.
func authHint(req *http.Request) string {
	if req != nil && req.Header.Get("Authorization") != "" {
		return "the token was refused (expired, or not for this hub?): give a valid one with " + tokenHint
	}
	return "this hub wants a token: give one with " + tokenHint
}
