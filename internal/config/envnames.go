package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/syncverse/hub/internal/cli"
)

// EnvListKey is what a getenv answers, when it can list its environment, with the names of the HUB_* variables
// set, one per line (cli.Getenv does; a test's map may not). Commands take a getenv rather than an environment, and
// this keeps it so.
const EnvListKey = cli.EnvListKey

// CheckEnvNames refuses HUB_* variables the hub does not read (others, OTEL_* among them, are not its to check), naming the closest known one: a typo such as
// HUB_REDIS_ULR must not leave the hub running on its defaults.
func CheckEnvNames(getenv func(string) string) error {
	var errs []error
	for _, p := range UnknownEnvNames(getenv) {
		errs = append(errs, errors.New(p))
	}
	return errors.Join(errs...)
}

// UnknownEnvNames are the HUB_* variables set that no command reads, each as "NAME: unknown variable (did you mean
// KNOWN?)". The known ones are the configuration's, HUB_CONFIG, and the client commands' HUB_URL and HUB_TOKEN.
func UnknownEnvNames(getenv func(string) string) []string {
	list := getenv(EnvListKey)
	if list == "" {
		return nil
	}
	known := append(EnvNames(), "HUB_CONFIG", cli.URLVar, cli.TokenVar)
	var problems []string
	for _, name := range strings.Split(list, "\n") {
		// Only the hub's own: OTEL_* (tracing) and the rest belong to others, whoever lists them.
		if !strings.HasPrefix(name, "HUB_") || slices.Contains(known, name) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s: unknown variable (did you mean %s?)", name, closest(name, known)))
	}
	return problems
}

// closest returns the name in known nearest to name by edit distance.
func closest(name string, known []string) string {
	best, dist := "", -1
	for _, k := range known {
		if d := editDistance(name, k); dist < 0 || d < dist {
			best, dist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
