package rig

import "strings"

// WithEnv sets in vars the "KEY=VALUE" settings of env, later ones winning, and returns vars: the environment a
// test hands a hub run in-process as its getenv.
func WithEnv(vars map[string]string, env []string) map[string]string {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return vars
}
