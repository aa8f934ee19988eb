package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/lease"
)

// errTableExists is the registry's TableAlreadyExists: the error of the incident.
var errTableExists = errors.New("TableAlreadyExists")

// registry stands for the database whose tables the workflows create. Every operation goes through the entity's fence
// guard, so a holder whose lease has passed to another cannot act on the entity any more.
//
// An unfenced run passes fence 0 to the same scripts: a guard that has only seen 0 admits 0, so the check is inert.
type registry struct {
	locker *lease.Locker
	prefix string
	fenced bool
}

// tableExists is the workflow's "does my table exist yet?": fenced like a write, because reading under a fence is what
// lets the resource refuse the older holder's write that follows the newer holder's read.
var tableExists = lease.NewFencedScript(`return redis.call('HEXISTS', KEYS[2], ARGV[2])`)

var createTable = lease.NewFencedScript(`
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  return redis.error_reply('TABLEEXISTS ' .. ARGV[2])
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1
`)

func (r registry) keys(entity string) (guard, tables string) {
	base := r.prefix + "db:{" + entity + "}"
	return base + ":fence", base + ":tables"
}

func (r registry) fence(f int64) int64 {
	if r.fenced {
		return f
	}
	return 0
}

// exists reports whether the entity's table exists.
func (r registry) exists(ctx context.Context, entity string, fence int64) (bool, error) {
	guard, tables := r.keys(entity)
	res, err := r.locker.Guard(guard).Run(ctx, r.fence(fence), tableExists, []string{tables}, "table_"+entity)
	if err != nil {
		return false, err
	}
	n, _ := res.(int64)
	return n == 1, nil
}

// create creates the entity's table, failing with errTableExists when it exists and lease.ErrStaleFence when a newer
// holder has touched the entity.
func (r registry) create(ctx context.Context, entity string, fence int64) error {
	guard, tables := r.keys(entity)
	_, err := r.locker.Guard(guard).Run(ctx, r.fence(fence), createTable, []string{tables}, "table_"+entity)
	var rerr redis.Error
	if errors.As(err, &rerr) && strings.Contains(rerr.Error(), "TABLEEXISTS") {
		return fmt.Errorf("create table_%s: %w", entity, errTableExists)
	}
	return err
}
