package app

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/pubsub"
)

// scriptCommand is `hub script`: the publish script's SHA1 and call layout for a publisher in another language, and
// with --load, SCRIPT LOAD into redis.url (every master of a cluster) so EVALSHA finds it.
func scriptCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	load := fs.Bool("load", false, "load the script into redis.url with SCRIPT LOAD (on every master of a cluster) and print its SHA1")
	cfg, _, err := config.LoadFlags(fs, args, c.Getenv, config.FlagConfig|config.FlagRedisURL)
	if err != nil {
		return err
	}
	script := pubsub.PublishScriptFor(cfg.Redis.ShardedPubSub)
	if !*load {
		variant := ""
		if cfg.Redis.ShardedPubSub {
			variant = " with SPUBLISH: redis.sharded_pubsub"
		}
		sha := pubsub.ScriptSHA(script)
		fmt.Fprintf(c.Stdout, "sha1 %s (pubsub/publish.lua%s)\n\nEVALSHA %s <numkeys: 2, or 3 with KEYS[3]> KEYS... ARGV...\n%s",
			sha, variant, sha, pubsub.ScriptLayout())
		fmt.Fprintln(c.Stdout, "\nA NOSCRIPT reply means the server has not loaded it (a restart, a failover, SCRIPT FLUSH): send EVAL with the script then. See docs/publishing.md.")
		return nil
	}
	if cfg.Redis.URL == "" {
		return fmt.Errorf("hub script --load: redis.url (HUB_REDIS_URL, --redis-url) is empty; point it at the Redis the hub reads")
	}
	rdb, err := pubsub.NewClient(cfg.Redis.URL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	ctx, loud := quietRedis(ctx)
	defer loud()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sha, err := pubsub.LoadScript(ctx, rdb, script)
	if err != nil {
		return fmt.Errorf("load the publish script into %s: %w", pubsub.RedactURL(cfg.Redis.URL), err)
	}
	fmt.Fprintln(c.Stdout, sha)
	return nil
}
