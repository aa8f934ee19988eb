package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ApplyEnv sets every key from its HUB_* variable (redis.url from HUB_REDIS_URL, sse.client_buffer from
// HUB_SSE_CLIENT_BUFFER, ...), a secret also from the file its _FILE variable names, and reports every bad value at
// once.
func ApplyEnv(cfg *Config, getenv func(string) string) error { return applyEnv(cfg, getenv, nil) }

func applyEnv(cfg *Config, getenv func(string) string, src Sources) error {
	var errs []error
	walk(reflect.ValueOf(cfg).Elem(), "", func(key string, v reflect.Value) {
		name := EnvName(key)
		raw, from, err := lookupEnv(key, name, getenv)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if raw == "" {
			return
		}
		if err := setValue(v, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, raw, err))
			return
		}
		src.set(key, from)
	})
	return errors.Join(errs...)
}

// lookupEnv reads key's variable, or for a secret the file its _FILE variable names (a mounted container secret),
// without the newline that ends the file. from says which, for config check.
func lookupEnv(key, name string, getenv func(string) string) (raw, from string, err error) {
	raw, from = getenv(name), "environment "+name
	fileVar := name + "_FILE"
	path := ""
	if IsSecret(key) {
		path = getenv(fileVar)
	}
	switch {
	case path == "":
		return raw, from, nil
	case raw != "":
		return "", "", fmt.Errorf("%s and %s are both set: keep one", name, fileVar)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", "", fmt.Errorf("%s: cannot read %s: %w", fileVar, path, err)
	}
	raw = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if raw == "" {
		return "", "", fmt.Errorf("%s: %s is empty", fileVar, path)
	}
	return raw, "file " + path + " (" + fileVar + ")", nil
}

// IsSecret is true for the keys that carry a secret: each may come from a file through its variable's _FILE form,
// and config check masks it. A webhook's URL is one: a Slack incoming-webhook URL is its own credential.
func IsSecret(key string) bool {
	switch key {
	case "auth.hmac_secret", "redis.url", "notify.webhook.url", "notify.webhook.secret":
		return true
	}
	return false
}

// EnvName is a key's variable: redis.url is HUB_REDIS_URL.
func EnvName(key string) string { return "HUB_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_")) }

// EnvNames lists every HUB_* variable the configuration reads, the _FILE forms of the secrets included.
func EnvNames() []string {
	var names []string
	walk(reflect.ValueOf(&Config{}).Elem(), "", func(key string, _ reflect.Value) {
		names = append(names, EnvName(key))
		if IsSecret(key) {
			names = append(names, EnvName(key)+"_FILE")
		}
	})
	return names
}

// walk calls fn with the dotted key (sse.client_buffer) of every setting that is not a section of others.
func walk(v reflect.Value, prefix string, fn func(key string, v reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			walk(f, key, fn)
			continue
		}
		fn(key, f)
	}
}

func setValue(v reflect.Value, raw string) error {
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(&b))
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return errors.New("not a number")
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return errors.New("not a whole number")
		}
		v.SetInt(n)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		parts := strings.Split(raw, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		v.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("unsupported setting type %s", v.Type())
	}
	return nil
}
